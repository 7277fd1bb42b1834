"""Plants a server keeps: the 1.19 survival rules (``plant_survival`` in catalogs/game_facts.yaml)
on small hand-made grids, the world-gen audits that enforce them, and the catalogs and specs
they constrain."""
from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from mcbuild.audits.worldgen_plants import audit_plants
from mcbuild.audits.worldgen_spec import pre_compile
from mcbuild.compiler.biome.layout import WorldArea
from mcbuild.compiler.core.paths import SPECS
from mcbuild.compiler.rules.blockstates import BLOCKS_JSON, block_states
from mcbuild.compiler.rules.plants import leaf_distances, plant_rules
from mcbuild.compiler.spec.kinds import parse_spec
from mcbuild.compiler.spec.worldgen_catalog import catalog
from mcbuild.compiler.worlds.features import generate

AIR, SAND, GRAVEL, WATER, CANE, GRASS_BLOCK, GRASS, LOG = range(8)
NAMES = ["minecraft:air", "minecraft:sand", "minecraft:gravel", "minecraft:water[level=0]",
         "minecraft:sugar_cane[age=0]", "minecraft:grass_block[snowy=false]", "minecraft:grass",
         "minecraft:oak_log[axis=y]"]
BIOMES = ["plains", "taiga", "snowy_plains", "jungle", "savanna"]


def grid(*cells: tuple[int, int, int, int]) -> np.ndarray:
    blocks = np.zeros((5, 5, 5), dtype=np.uint16)
    for x, y, z, block in cells:
        blocks[x, y, z] = block
    return blocks


def codes(blocks: np.ndarray, names: list[str] = NAMES) -> list[str]:
    return [f.code for f in audit_plants(blocks, names, (0, 0, 0), "test").hard_failures]


def test_sugar_cane_needs_its_ground_beside_water_on_the_same_level():
    assert codes(grid((2, 0, 2, SAND), (2, 1, 2, CANE), (2, 2, 2, CANE), (3, 0, 2, WATER))) == []
    assert codes(grid((2, 0, 2, GRASS_BLOCK), (2, 1, 2, CANE), (2, 0, 1, WATER))) == []
    # water beside the cane rather than beside the block under it does not count
    assert codes(grid((2, 0, 2, SAND), (2, 1, 2, CANE), (3, 1, 2, WATER))) == ["plant_cannot_survive"]
    assert codes(grid((2, 0, 2, GRAVEL), (2, 1, 2, CANE), (3, 0, 2, WATER))) == ["plant_cannot_survive"]
    assert codes(grid((2, 0, 2, CANE))) == ["plant_cannot_survive"]          # nothing under it at all
    waterlogged = NAMES + ["minecraft:oak_slab[type=bottom,waterlogged=true]"]
    assert codes(grid((2, 0, 2, SAND), (2, 1, 2, CANE), (2, 0, 3, len(NAMES))), waterlogged) == []


def test_grass_and_flowers_need_dirt_or_farmland():
    assert codes(grid((1, 0, 1, GRASS_BLOCK), (1, 1, 1, GRASS))) == []
    found = audit_plants(grid((1, 0, 1, SAND), (1, 1, 1, GRASS), (3, 0, 3, SAND), (3, 1, 3, GRASS)),
                         NAMES, (10, 60, 10), "test").hard_failures
    assert len(found) == 1 and found[0].field == "block 11 61 11"
    assert "minecraft:grass on minecraft:sand (2 such)" in found[0].message
    rules = plant_rules()
    bush = rules.rule_for("minecraft:poppy")
    assert bush is rules.rule_for("minecraft:oak_sapling") and "minecraft:farmland" in bush.below
    assert rules.rule_for("minecraft:wither_rose") is None       # its own wider rule


def test_leaf_distance_is_the_walk_through_leaves_to_a_log():
    line = np.zeros((9, 1, 1), dtype=bool)
    log, leaf = line.copy(), line.copy()
    log[0], leaf[1:] = True, True
    assert leaf_distances(log, leaf, 6)[:, 0, 0].tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 7]
    leaf[4] = False                     # a gap: the leaves beyond it have no log within reach
    assert leaf_distances(log, leaf, 6)[:, 0, 0].tolist() == [0, 1, 2, 3, 7, 7, 7, 7, 7]


def test_leaves_far_from_a_log_decay_unless_persistent_and_carry_the_true_distance():
    names = NAMES + [f"minecraft:oak_leaves[distance={d},persistent={p},waterlogged=false]"
                     for p in ("false", "true") for d in range(1, 8)]
    natural = {d: len(NAMES) + d - 1 for d in range(1, 8)}
    persistent = {d: len(NAMES) + 7 + d - 1 for d in range(1, 8)}
    assert codes(grid((2, 0, 2, LOG), (2, 1, 2, natural[1]), (2, 2, 2, natural[2])), names) == []
    assert codes(grid((2, 0, 2, LOG), (2, 1, 2, natural[1]), (2, 2, 2, natural[1])), names) == ["leaves_distance"]
    assert codes(grid((0, 0, 0, natural[7])), names) == ["leaves_decay"]
    assert codes(grid((0, 0, 0, persistent[7])), names) == []


def taiga_of_9c935a0() -> dict:
    """Today's taiga spec as it was at 9c935a0: sugar cane on a gravel shore."""
    data = yaml.safe_load((SPECS / "taiga.yaml").read_text())
    data["ecology"]["water"]["shore"] = "minecraft:gravel"
    return data


def test_the_taiga_spec_of_9c935a0_is_refused_by_both_world_gen_audits():
    spec = parse_spec(taiga_of_9c935a0(), "specs/taiga.yaml")
    found = pre_compile(spec, "specs/taiga.yaml").hard_failures
    assert [(f.code, f.field) for f in found] == [("plant_cannot_survive", "ecology.water.shore")]
    area = WorldArea(chunk_min=-3, chunk_max=2)
    world = generate(spec, 190611, area)
    found = audit_plants(world.blocks, world.palette.names, (area.x_min, area.y_min, area.x_min), "taiga-1").hard_failures
    assert [f.code for f in found] == ["plant_cannot_survive"]
    assert found[0].message.startswith("minecraft:sugar_cane on minecraft:gravel")


@pytest.mark.parametrize("biome", BIOMES)
def test_every_committed_biome_spec_plants_only_what_survives(biome):
    spec = parse_spec(yaml.safe_load((SPECS / f"{biome}.yaml").read_text()), f"specs/{biome}.yaml")
    assert [f.code for f in pre_compile(spec, biome).hard_failures] == []
    area = WorldArea(chunk_min=-3, chunk_max=2)
    world = generate(spec, 7, area)
    assert audit_plants(world.blocks, world.palette.names, (area.x_min, area.y_min, area.x_min), biome).ok


def test_every_plant_the_catalog_offers_has_a_rule_that_accepts_the_plant_soil():
    """A vegetation block without a collision box (minecraft-data) is a plant: it needs a rule, and
    the generator sets it only on ``plant_soil``, which that rule must accept."""
    shapes = {f"minecraft:{b['name']}": b["boundingBox"] for b in json.loads(BLOCKS_JSON.read_bytes())}
    rules = plant_rules()
    plants = {b for v in catalog()["vegetation"].values() for b in v["blocks"] if shapes[b] == "empty"}
    assert "minecraft:grass" in plants and "minecraft:melon" not in plants
    for block in sorted(plants):
        rule = rules.rule_for(block)
        assert rule is not None, block
        assert set(catalog()["plant_soil"]) <= rule.below, block


def test_default_states_decode_from_minecraft_data():
    states = block_states()
    assert states.complete("minecraft:oak_leaves") == (
        "minecraft:oak_leaves", {"distance": "7", "persistent": "false", "waterlogged": "false"})
    assert states.complete("minecraft:grass_block")[1] == {"snowy": "false"}
    assert states.complete("minecraft:deepslate")[1] == {"axis": "y"}
    assert states.complete("minecraft:redstone_ore")[1] == {"lit": "false"}
    assert states.complete("minecraft:snow[layers=1]")[1] == {"layers": "1"}
    for bad in ("minecraft:stone[axis=y]", "minecraft:snow[layers=9]", "minecraft:no_such_block"):
        with pytest.raises(ValueError, match=bad.split("[")[0]):
            states.complete(bad)
