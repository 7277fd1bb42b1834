"""A small deterministic test world with every task resource, for tests and the benchmark.

It mirrors what a built benchmark world provides (paper §3.1, ``catalogs/tasks.yaml``
world_resources) on a 64x64 area: a grass plain with oak trees, a pond with sugar cane, a
terraced quarry whose faces expose coal, iron, diamond and lapis ore with an obsidian patch in its
floor, and a biome-like pack whose setup function applies the episode controls and summons cows.
Built worlds are read from saves instead (``loading.load_save``).
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from mcbuild.compiler.rules import functions
from mcbuild.compiler.rules.pack import pack_mcmeta, resource_path, to_bytes

from .world import StaticWorld, WorldData, derive

SIZE = 64
Y0 = 40
HEIGHT = 40
GROUND = 64                 # y of the grass surface
PACK_NAME = "file/synthetic.zip"

PALETTE = ("minecraft:air", "minecraft:stone", "minecraft:dirt", "minecraft:grass_block", "minecraft:oak_log",
           "minecraft:oak_leaves", "minecraft:water", "minecraft:sugar_cane", "minecraft:coal_ore",
           "minecraft:iron_ore", "minecraft:diamond_ore", "minecraft:lapis_ore", "minecraft:obsidian",
           "minecraft:sand", "minecraft:bedrock", "minecraft:deepslate")
B = {name.split(":")[1]: i for i, name in enumerate(PALETTE)}

# Quarry: a pit centred 14 blocks east of spawn; ore blocks sit in its walls and floor.
QUARRY = (8, 20, -6, 6, 56)          # x0, x1, z0, z1, floor y
ORES = {
    "coal_ore": [(8, 60, -2), (8, 61, 0), (8, 62, 2), (8, 60, 3), (9, 59, -6), (11, 58, -6)],
    "iron_ore": [(20, 60, -2), (20, 61, 0), (20, 59, 2), (20, 60, 4), (20, 62, -4), (13, 60, 6), (15, 59, 6)],
    "diamond_ore": [(10, 57, 6), (12, 57, 6), (14, 57, 6), (16, 57, 6), (18, 57, 6), (19, 57, -6)],
    "lapis_ore": [(10, 58, -6), (13, 58, -6), (16, 58, -6)],
}
OBSIDIAN = [(13 + dx, 55, -1 + dz) for dx in range(3) for dz in range(2)]
TREES = [(-12, -10), (-16, 4), (-8, 14), (-20, -18)]
POND = (-6, 6, -24, -16)              # x0, x1, z0, z1 (2 deep)
CANES = [(-7, -20), (-7, -18), (7, -22), (7, -17), (0, -25)]
EFFECTS = ("haste", "speed", "resistance", "strength")
COWS = [(6.5, 65, 10.5), (9.5, 65, 12.5), (-3.5, 65, 11.5), (2.5, 65, 14.5), (12.5, 65, 16.5), (-9.5, 65, 8.5)]


def _fill(blocks: np.ndarray, cells: Iterable[tuple[int, int, int]], block: str) -> None:
    for x, y, z in cells:
        blocks[x + SIZE // 2, y - Y0, z + SIZE // 2] = B[block]


def world_data() -> WorldData:
    blocks = np.zeros((SIZE, HEIGHT, SIZE), dtype=np.uint16)
    blocks[:, : GROUND - 3 - Y0, :] = B["stone"]
    blocks[:, : 48 - Y0, :] = B["deepslate"]
    blocks[:, 0, :] = B["bedrock"]
    blocks[:, GROUND - 3 - Y0: GROUND - Y0, :] = B["dirt"]
    blocks[:, GROUND - Y0, :] = B["grass_block"]
    x0, x1, z0, z1, floor = QUARRY
    for depth, y in enumerate(range(GROUND, floor, -1)):
        blocks[x0 + depth + SIZE // 2: x1 - depth + 1 + SIZE // 2, y - Y0, z0 + SIZE // 2: z1 + 1 + SIZE // 2] = 0
    for y in range(floor + 1, GROUND + 1):
        blocks[x0 + 1 + SIZE // 2: x1 + SIZE // 2, y - Y0, z0 + 1 + SIZE // 2: z1 + SIZE // 2] = 0
    for name, cells in ORES.items():
        _fill(blocks, cells, name)
    _fill(blocks, OBSIDIAN, "obsidian")
    px0, px1, pz0, pz1 = (v + SIZE // 2 for v in POND)
    blocks[px0:px1, GROUND - 1 - Y0: GROUND + 1 - Y0, pz0:pz1] = B["water"]
    blocks[px0 - 1:px1 + 1, GROUND - 2 - Y0, pz0 - 1:pz1 + 1] = B["sand"]
    for x, z in CANES:
        _fill(blocks, [(x, GROUND, z)], "sand")
        _fill(blocks, [(x, GROUND + 1, z), (x, GROUND + 2, z)], "sugar_cane")
    for x, z in TREES:
        for dx in range(-2, 3):
            for dz in range(-2, 3):
                _fill(blocks, [(x + dx, GROUND + h, z + dz) for h in (4, 5)], "oak_leaves")
        _fill(blocks, [(x, GROUND + h, z) for h in range(1, 6)], "oak_log")
    biomes = np.zeros((SIZE // 4, HEIGHT // 4, SIZE // 4), dtype=np.uint8)
    return WorldData(PALETTE, blocks, (-SIZE // 2, Y0, -SIZE // 2), (0, GROUND + 1, 0), ("minecraft:plains",), biomes)


def static_world() -> StaticWorld:
    return derive(world_data())


def biome_pack() -> tuple[str, dict[str, bytes]]:
    """Runtime functions shaped like a compiled biome pack (load, player setup, creatures)."""
    files: dict[str, str | dict[str, Any]] = {
        "pack.mcmeta": pack_mcmeta("synthetic test biome"),
        resource_path("function_tag", "minecraft:load"): {"values": [functions.LOAD]},
        resource_path("function", functions.LOAD, ".mcfunction"):
            "difficulty peaceful\ngamerule doDaylightCycle false\ntime set 1000\nweather clear\n",
        resource_path("function", functions.SETUP, ".mcfunction"):
            "".join(f"effect give @s minecraft:{e} 1000000 1 true\n" for e in EFFECTS)
            + f"experience set @s 100 levels\nfunction {functions.SPAWN}\n",
        resource_path("function", functions.SPAWN, ".mcfunction"):
            "".join(f"summon minecraft:cow {x} {y} {z}\n" for x, y, z in COWS),
    }
    return PACK_NAME, {path: to_bytes(value) for path, value in files.items()}
