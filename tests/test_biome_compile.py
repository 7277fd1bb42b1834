"""Biome specs and the biome compiler: validation, pack contents, audits, determinism."""
from __future__ import annotations

import copy
import json

import pytest
import yaml

from mcbuild.audits import worldgen_pack
from mcbuild.compiler.biome.layout import creature_positions
from mcbuild.compiler.biome.pack import build_pack
from mcbuild.pipeline.build import compile_biome
from mcbuild.compiler.core.errors import CompileError, SpecError
from mcbuild.compiler.core.paths import SPECS
from mcbuild.compiler.rules.pack import read_zip
from mcbuild.compiler.spec.kinds import parse_spec

BIOMES = ["plains", "taiga", "snowy_plains", "jungle", "savanna"]


def raw(biome: str = "plains") -> dict:
    return yaml.safe_load((SPECS / f"{biome}.yaml").read_text())


def compile_data(data: dict) -> dict[str, bytes]:
    return compile_biome(parse_spec(data, "specs/test.yaml"), "specs/test.yaml")


@pytest.mark.parametrize("biome", BIOMES)
def test_biome_specs_compile_cleanly_and_deterministically(biome):
    first = compile_data(raw(biome))
    second = compile_data(raw(biome))
    assert first == second
    report = json.loads(first["report.json"])
    assert report["pre_compile"] == {"hard_failures": [], "warnings": []}
    assert report["post_package"]["hard_failures"] == []
    assert report["artifact"]["pack_format"] == 10
    for task in ("iron_armor", "diamond", "enchantment"):
        assert all(report["world"]["task_resources"][task].values()), task


def test_pack_layout_and_runtime_functions():
    spec = parse_spec(raw(), "specs/plains.yaml")
    files = read_zip(build_pack(spec))
    assert json.loads(files["pack.mcmeta"])["pack"]["pack_format"] == 10
    preset = json.loads(files["data/mcbuild/worldgen/world_preset/plains.json"])
    overworld = preset["dimensions"]["minecraft:overworld"]
    assert overworld["generator"]["settings"] == "mcbuild:plains"
    assert overworld["generator"]["biome_source"] == {"type": "minecraft:fixed", "biome": "minecraft:plains"}
    biome = json.loads(files["data/minecraft/worldgen/biome/plains.json"])
    assert len(biome["features"]) == 11
    assert "mcbuild:plains/ore_diamond_0" in biome["features"][6]
    assert json.loads(files["data/minecraft/tags/functions/load.json"]) == {"values": ["mcbuild:world_load"]}
    load = files["data/mcbuild/functions/world_load.mcfunction"].decode().splitlines()
    for line in ("difficulty peaceful", "gamerule doDaylightCycle false", "time set 6000",
                 "gamerule doWeatherCycle false", "weather clear"):
        assert line in load
    setup = files["data/mcbuild/functions/setup_player.mcfunction"].decode().splitlines()
    for effect in ("haste", "speed", "resistance", "strength"):
        assert f"effect give @s minecraft:{effect} 1000000 1 true" in setup
    assert "experience set @s 100 levels" in setup
    assert setup[-1] == "function mcbuild:spawn_entities"
    summons = [ln for ln in files["data/mcbuild/functions/spawn_entities.mcfunction"].decode().splitlines()
               if ln.startswith("summon ")]
    cows = [c for c in creature_positions(spec) if c.entity == "minecraft:cow"]
    assert f"summon minecraft:cow {cows[0].x} {cows[0].y} {cows[0].z}" in summons
    assert len(summons) == 9


def test_plain_and_deepslate_ore_variants_both_placed():
    files = read_zip(build_pack(parse_spec(raw(), "specs/plains.yaml")))
    ore = json.loads(files["data/mcbuild/worldgen/configured_feature/plains/ore_diamond_0.json"])
    states = [t["state"]["Name"] for t in ore["config"]["targets"]]
    assert states == ["minecraft:diamond_ore", "minecraft:deepslate_diamond_ore"]


def test_unknown_block_is_rejected_with_its_field():
    data = raw()
    data["terrain"]["surface"]["top"] = "minecraft:diamond_block"
    with pytest.raises(SpecError) as err:
        compile_data(data)
    assert err.value.field == "terrain.surface.top"
    assert "unknown top block 'minecraft:diamond_block'" in str(err.value)
    assert "\n" not in str(err.value)


def test_out_of_bounds_number_is_rejected():
    data = raw()
    data["resources"]["ores"][0]["bands"][0]["vein_size"] = 99
    with pytest.raises(SpecError) as err:
        compile_data(data)
    assert err.value.field == "resources.ores[0].bands[0].vein_size"


def test_ore_band_above_the_terrain_is_rejected():
    data = raw()
    data["resources"]["ores"][3]["bands"][0].update(min_y=200, max_y=250)
    with pytest.raises(CompileError) as err:
        compile_data(data)
    message = str(err.value)
    assert "band_outside_terrain" in message and "resources.ores[3].bands[0]" in message
    assert "\n" not in message


def test_missing_required_resource_is_rejected():
    data = raw()
    data["resources"]["ores"] = [o for o in data["resources"]["ores"] if o["ore"] != "lapis"]
    data["access"]["quarry"]["exposed"] = [e for e in data["access"]["quarry"]["exposed"] if e["ore"] != "lapis"]
    with pytest.raises(CompileError, match="missing_resource.*enchantment needs lapis"):
        compile_data(data)


def test_missing_plain_band_is_rejected():
    data = raw()
    iron = next(o for o in data["resources"]["ores"] if o["ore"] == "iron")
    iron["bands"] = [b for b in iron["bands"] if b["max_y"] < 0]
    with pytest.raises(CompileError, match="missing_plain_band"):
        compile_data(data)


def test_only_iron_armor_needs_fewer_resources():
    data = raw()
    data["selected_tasks"] = ["iron_armor"]
    data["resources"]["ores"] = [o for o in data["resources"]["ores"] if o["ore"] in ("coal", "iron")]
    data["access"]["quarry"]["exposed"] = [e for e in data["access"]["quarry"]["exposed"] if e["ore"] in ("coal", "iron")]
    report = json.loads(compile_data(data)["report.json"])
    assert report["pre_compile"]["hard_failures"] == []


def _audit(files: dict[str, bytes]) -> list[str]:
    findings, _ = worldgen_pack.post_package(files, parse_spec(raw(), "specs/plains.yaml"))
    return sorted({f.code for f in findings.hard_failures})


def test_post_package_audit_catches_broken_packs():
    spec = parse_spec(raw(), "specs/plains.yaml")
    good = read_zip(build_pack(spec))
    assert _audit(good) == []

    broken = dict(good)
    del broken["data/mcbuild/worldgen/configured_feature/plains/ore_iron_0.json"]
    assert "unresolved_reference" in _audit(broken)

    broken = dict(good)
    broken["pack.mcmeta"] = b'{"pack": {"pack_format": 12, "description": "x"}}'
    assert "pack_format" in _audit(broken)

    broken = dict(good)
    broken["data/mcbuild/worldgen/noise/plains/relief.json"] = b"{not json"
    assert "json_parse" in _audit(broken)

    biome = json.loads(good["data/minecraft/worldgen/biome/plains.json"])
    moved = copy.deepcopy(biome)
    moved["features"][9].append(moved["features"][6].pop(0))
    broken = dict(good, **{"data/minecraft/worldgen/biome/plains.json": json.dumps(moved).encode()})
    assert "feature_stages" in _audit(broken)

    broken = dict(good)
    broken["data/mcbuild/functions/setup_player.mcfunction"] = b"effect give @s nonsense here\n"
    assert {"function_syntax", "runtime_setup"} <= set(_audit(broken))

    broken = dict(good)
    broken["data/minecraft/worldgen/biome/desert.json"] = good["data/minecraft/worldgen/biome/plains.json"]
    assert "unexpected_override" in _audit(broken)

    broken = dict(good)
    broken["data/minecraft/loot_tables/blocks/stone.json"] = b"{}"
    assert "unexpected_file" in _audit(broken)
