"""Physical block classes the body needs: air, fluids, no-collision, unbreakable and instant blocks.

These are facts of the game's code, not rules a datapack can change; they come from
``catalogs/block_physics.yaml`` (generated from minecraft-data 1.19). A palette of block
ids is turned into numpy lookup tables so terrain code can classify whole arrays at once.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Collection, Mapping, Sequence

import numpy as np
import yaml

from mcbuild.compiler.core.paths import CATALOGS
from mcbuild.runtime.contract.skills import FACILITIES

PHYSICS_FILE = CATALOGS / "block_physics.yaml"


@dataclass(frozen=True)
class BlockPhysics:
    air: frozenset[str]
    fluids: frozenset[str]
    no_collision: frozenset[str]
    unbreakable: frozenset[str]
    instant: frozenset[str]         # hardness 0: breaking one wears no tool

    def solid(self, block: str) -> bool:
        """Has a collision box: the body cannot move through it."""
        return block not in self.no_collision

    def minable(self, block: str) -> bool:
        """A block the body can break (not air, not a fluid, not unbreakable)."""
        return block not in self.air and block not in self.fluids and block not in self.unbreakable

    def wears(self, block: str) -> bool:
        """Whether breaking ``block`` wears the tool that breaks it (its hardness is not 0)."""
        return block not in self.instant

    def scaffold(self, inventory: Mapping[str, int], placeable: Collection[str]) -> str | None:
        """The owned block the body pillars with (both backends): the most plentiful placeable
        solid, breakable non-facility."""
        options = [(n, i) for i, n in inventory.items()
                   if n > 0 and i in placeable and self.solid(i) and self.minable(i) and i not in FACILITIES]
        return max(options)[1] if options else None

    def tables(self, palette: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(solid, minable, ground) boolean lookup tables indexed by palette index; ground is what
        the body stands on or swims in (solid blocks and fluids)."""
        solid = np.array([self.solid(b) for b in palette], dtype=bool)
        minable = np.array([self.minable(b) for b in palette], dtype=bool)
        ground = solid | np.array([b in self.fluids for b in palette], dtype=bool)
        return solid, minable, ground


@lru_cache(maxsize=1)
def physics() -> BlockPhysics:
    raw = yaml.safe_load(PHYSICS_FILE.read_text())
    return BlockPhysics(frozenset(raw["air"]), frozenset(raw["fluids"]), frozenset(raw["no_collision"]),
                        frozenset(raw["unbreakable"]), frozenset(raw["instant"]))
