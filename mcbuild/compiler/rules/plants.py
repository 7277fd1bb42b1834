"""Where plants survive in 1.19: the ``plant_survival`` rules of ``catalogs/game_facts.yaml`` with
their tags resolved from the game's data, and the leaves' distance to a log on a block grid.

The world generator writes each leaf's ``distance`` with :func:`leaf_distances`, as the game's
tree features do; ``audits/worldgen_plants.py`` checks every plant of a generated world against
these rules.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np

from mcbuild.compiler.rules.blockstates import parse_state
from mcbuild.compiler.rules.rulebook import Rulebook, vanilla


@dataclass(frozen=True)
class StandsOn:
    """A plant of ``blocks`` survives with a ``below`` block under it, or a ``below_beside_water``
    block with water beside that block."""

    blocks: frozenset[str]
    below: frozenset[str]
    below_beside_water: frozenset[str]


@dataclass(frozen=True)
class PlantRules:
    stands_on: tuple[StandsOn, ...]
    beside_water: frozenset[str]       # blocks holding water (or frosted ice); waterlogged=true counts too
    leaves: frozenset[str]
    logs: frozenset[str]
    max_leaf_distance: int

    def rule_for(self, block: str) -> StandsOn | None:
        return next((r for r in self.stands_on if block in r.blocks), None)


def _ids(book: Rulebook, entries: str | Iterable[str]) -> frozenset[str]:
    """Block ids, ``#tags`` expanded from the game's data."""
    entries = [entries] if isinstance(entries, str) else entries
    out: set[str] = set()
    for entry in entries:
        out |= book.tag("block", entry) if entry.startswith("#") else {entry}
    return frozenset(out)


@lru_cache(maxsize=1)
def plant_rules() -> PlantRules:
    book = vanilla()
    facts = book.facts["plant_survival"]
    rules = tuple(StandsOn(_ids(book, r["blocks"]) - _ids(book, r.get("except", [])),
                           _ids(book, r.get("below", [])), _ids(book, r.get("below_beside_water", [])))
                  for r in facts["stands_on"])
    leaves = facts["leaves"]
    return PlantRules(rules, _ids(book, facts["beside_water"]), _ids(book, leaves["blocks"]),
                      _ids(book, leaves["logs"]), int(leaves["max_distance"]))


def palette_mask(names: Sequence[str], blocks: frozenset[str], waterlogged: bool = False) -> np.ndarray:
    """Boolean table over palette indices: the states of ``blocks`` (and, with ``waterlogged``,
    every ``waterlogged=true`` state)."""
    parsed = [parse_state(n) for n in names]
    return np.array([name in blocks or (waterlogged and props.get("waterlogged") == "true")
                     for name, props in parsed], dtype=bool)


def leaf_distances(is_log: np.ndarray, is_leaf: np.ndarray, limit: int) -> np.ndarray:
    """LeavesBlock's ``distance`` on a 3-D grid: 0 at logs; at leaves the fewest steps through
    leaves (six neighbours) to a log, or ``limit + 1`` when there is none within ``limit``."""
    far = limit + 1
    dist = np.where(is_log, 0, far).astype(np.uint8)
    for _ in range(limit):
        padded = np.pad(dist, 1, constant_values=far)
        inner = (slice(1, -1),) * 3
        nearest = np.full_like(dist, far)
        for axis in range(3):
            for start in (0, 2):
                window = list(inner)
                window[axis] = slice(start, start + dist.shape[axis])
                np.minimum(nearest, padded[tuple(window)], out=nearest)
        step = np.where(is_leaf, np.minimum(dist, np.minimum(nearest + 1, far)), dist).astype(np.uint8)
        if np.array_equal(step, dist):
            break
        dist = step
    return dist


def leaves_layer_distances(blocks: np.ndarray, names: Sequence[str]) -> tuple[int, np.ndarray] | None:
    """:func:`leaf_distances` over the y-layers of ``blocks`` (``[x, y, z]`` indices into
    ``names``) that hold leaves, one layer added on each side: ``(y0, distances)`` for
    ``blocks[:, y0:y0 + len, :]``, or ``None`` when there are no leaves."""
    rules = plant_rules()
    leaf = palette_mask(names, rules.leaves)
    layers = np.nonzero(leaf[blocks].any(axis=(0, 2)))[0]
    if not len(layers):
        return None
    y0, y1 = max(int(layers[0]) - 1, 0), int(layers[-1]) + 2
    grid = blocks[:, y0:y1, :]
    return y0, leaf_distances(palette_mask(names, rules.logs)[grid], leaf[grid], rules.max_leaf_distance)
