"""World-gen audit of a generated world: every plant stands where vanilla 1.19 keeps it.

The rules are ``plant_survival`` of ``catalogs/game_facts.yaml`` (``mcbuild.compiler.rules.plants``):
sugar cane, grass, ferns, flowers and saplings on the blocks their class accepts (cane also
next to water), and leaves within the distance of a log the game keeps, each carrying the
``distance`` a server would compute. The world builder runs this on every world before writing
its save; a hard failure stops the build.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

import numpy as np

from mcbuild.compiler.core.findings import Findings
from mcbuild.compiler.rules.blockstates import parse_state
from mcbuild.compiler.rules.plants import PlantRules, StandsOn, leaves_layer_distances, palette_mask, plant_rules

HORIZONTAL = ((1, 0), (-1, 0), (0, 1), (0, -1))


def audit_plants(blocks: np.ndarray, names: Sequence[str], origin: tuple[int, int, int], file: str) -> Findings:
    """Findings for the block grid ``blocks`` (``[x, y, z]`` indices into ``names``, whose cell
    [0, 0, 0] is world position ``origin``): one hard failure per kind of misplaced plant."""
    rules = plant_rules()
    found = Findings()
    for rule in rules.stands_on:
        _stands_on(blocks, names, origin, file, rule, rules, found)
    _leaves(blocks, names, origin, file, rules, found)
    return found


def _where(origin: tuple[int, int, int], cell: np.ndarray) -> str:
    x, y, z = (int(c) + o for c, o in zip(cell, origin))
    return f"block {x} {y} {z}"


def _report(found: Findings, file: str, code: str, origin: tuple[int, int, int], cells: np.ndarray,
            labels: list[str], why: str) -> None:
    """One finding per label (e.g. plant and the block under it), naming the first cell and the count."""
    counts = Counter(labels)
    first: dict[str, Any] = {}
    for cell, label in zip(cells, labels):
        first.setdefault(label, cell)
    for label in sorted(counts):
        found.hard(code, file, _where(origin, first[label]), f"{label} ({counts[label]} such): {why}")


def _stands_on(blocks: np.ndarray, names: Sequence[str], origin: tuple[int, int, int], file: str,
               rule: StandsOn, rules: PlantRules, found: Findings) -> None:
    plant = palette_mask(names, rule.blocks)
    cells = np.argwhere(plant[blocks])
    if not len(cells):
        return
    under = cells - np.array([0, 1, 0])
    inside = under[:, 1] >= 0
    below = np.where(inside, blocks[under[:, 0], np.maximum(under[:, 1], 0), under[:, 2]], 0)
    ok = inside & palette_mask(names, rule.below)[below]
    ground = inside & palette_mask(names, rule.below_beside_water)[below]
    water = palette_mask(names, rules.beside_water, waterlogged=True)
    for dx, dz in HORIZONTAL:
        side = under + np.array([dx, 0, dz])
        within = ((side[:, 0] >= 0) & (side[:, 0] < blocks.shape[0])
                  & (side[:, 2] >= 0) & (side[:, 2] < blocks.shape[2]))
        side = np.clip(side, 0, np.array(blocks.shape) - 1)
        ok |= ground & within & water[blocks[side[:, 0], side[:, 1], side[:, 2]]]
    bad = np.nonzero(~ok)[0]
    labels = [f"{parse_state(names[blocks[tuple(cells[i])]])[0]} on {parse_state(names[below[i]])[0]}"
              + (" without water beside it" if ground[i] else "") for i in bad]
    _report(found, file, "plant_cannot_survive", origin, cells[bad], labels,
            "vanilla 1.19 breaks it at its next block update")


def _leaves(blocks: np.ndarray, names: Sequence[str], origin: tuple[int, int, int], file: str,
            rules: PlantRules, found: Findings) -> None:
    window = leaves_layer_distances(blocks, names)
    if window is None:
        return
    y0, actual = window
    grid = blocks[:, y0:y0 + actual.shape[1], :]
    limit = rules.max_leaf_distance
    props = [parse_state(n)[1] for n in names]
    stored = np.array([int(p.get("distance", 0)) for p in props])
    persistent = np.array([p.get("persistent") == "true" for p in props])
    cells = np.argwhere(palette_mask(names, rules.leaves)[grid])
    ids = grid[cells[:, 0], cells[:, 1], cells[:, 2]]
    true = actual[cells[:, 0], cells[:, 1], cells[:, 2]]
    shifted = cells + np.array([0, y0, 0])
    decays = np.nonzero((true > limit) & ~persistent[ids])[0]
    _report(found, file, "leaves_decay", origin, shifted[decays], [parse_state(names[ids[i]])[0] for i in decays],
            f"no log within {limit} steps through leaves and not persistent, so it decays")
    stale = np.nonzero(stored[ids] != true)[0]
    _report(found, file, "leaves_distance", origin, shifted[stale],
            [f"{names[ids[i]]} is {int(true[i])} steps from a log" for i in stale],
            "its distance is not the one a server computes")
