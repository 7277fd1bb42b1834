"""Reading a compiled pack back through the rule engines: what each skill would yield.

Used by the per-rule tests; independent of the simulator, it exercises the same rulebook,
crafting matcher, loot evaluator and the pack's own advancement/function files.
"""
from __future__ import annotations

import random
from collections import Counter

from mcbuild.compiler.rules.crafting import craft
from mcbuild.compiler.rules.loot import LootContext, expected, roll
from mcbuild.compiler.rules.pack import read_zip
from mcbuild.compiler.rules.player import PlayerState
from mcbuild.compiler.rules.rulebook import Rulebook, vanilla


def rulebook_of(artifact) -> Rulebook:
    return Rulebook(vanilla().catalog, [(f"file/{artifact.id}.zip", read_zip(artifact.files["datapack.zip"]))])


def crafted(rb: Rulebook, grid) -> tuple[str, int] | None:
    res = craft(rb, grid)
    return None if res is None else (res.item, res.count)


def smelted(rb: Rulebook, item: str, station: str, n: int) -> Counter:
    """Inventory after taking ``n`` cooked items out at once (load functions run first)."""
    found = rb.cooking_recipe(item, station)
    if found is None:
        return Counter()
    player = PlayerState(rb)
    player.run_load()
    player.add_items({found[1]["result"]: n})
    return Counter(player.inventory)


def mined(rb: Rulebook, block: str, tool: str = "minecraft:diamond_pickaxe") -> dict[str, tuple[int, int]]:
    table = rb.block_loot(block)
    return {i: (d.min, d.max) for i, d in expected(rb, table, LootContext(tool=tool)).items()}


def killed(rb: Rulebook, entity: str) -> dict[str, tuple[int, int]]:
    return {i: (d.min, d.max) for i, d in expected(rb, rb.entity_loot(entity), LootContext()).items()}


def rolled(rb: Rulebook, block: str, seed: int = 0) -> Counter:
    return roll(rb, rb.block_loot(block), LootContext(tool="minecraft:diamond_pickaxe"), random.Random(seed))
