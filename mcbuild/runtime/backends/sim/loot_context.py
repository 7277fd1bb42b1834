"""What the loot tables see when the body breaks a block or kills a mob (``mcbuild.compiler.rules.loot``).

A broken block's table reads the block's state as the save holds it, and ``location_check`` reads
the biome and neighbouring blocks of the episode terrain. A killed mob's table is the mob's own
(:attr:`entities.Mob.loot_table`: a sheep's colour), killed by the player in melee. The tool or
weapon in hand brings the enchantments of the copy the body holds.
"""
from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from mcbuild.compiler.rules.loot import LootContext
from mcbuild.runtime.body.copies import Enchantments

if TYPE_CHECKING:
    from .body import Pos
    from .entities import Mob
    from .episode_terrain import Terrain


class TerrainPlace:
    """The spot a table is rolled at, for ``location_check``."""

    def __init__(self, terrain: "Terrain", pos: "Pos"):
        self.terrain, self.pos = terrain, pos

    @cached_property
    def biome(self) -> str:
        return self.terrain.biome(self.pos)

    def block_at(self, offset: tuple[int, int, int]) -> tuple[str, dict[str, str]]:
        at = (self.pos[0] + offset[0], self.pos[1] + offset[1], self.pos[2] + offset[2])
        return self.terrain.block(at) or "minecraft:void_air", self.terrain.state(at)


def block_context(terrain: "Terrain", pos: "Pos", tool: str | None, enchantments: Enchantments = ()) -> LootContext:
    """Breaking the block at ``pos`` holding ``tool`` with these ``enchantments`` (silk touch, fortune)."""
    return LootContext(tool=tool, enchantments=enchantments, block=terrain.block(pos),
                       block_state=terrain.state_items(pos), place=TerrainPlace(terrain, pos))


def mob_context(mob: "Mob", weapon: str | None, enchantments: Enchantments = ()) -> LootContext:
    """The player killing ``mob`` with ``weapon`` in hand, with these ``enchantments`` (looting)."""
    return LootContext(tool=weapon, enchantments=enchantments, killed_by_player=True, entity=mob.entity)
