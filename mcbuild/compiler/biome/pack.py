"""Biome specs (kind: biome) -> the world-generation datapack of one controlled biome.

``build_pack`` instantiates the world preset, noise settings, density functions, biome,
configured and placed features and the runtime functions and packages them deterministically.
The audits around it run in ``mcbuild.pipeline.build.compile_biome``.

Runtime functions (every backend runs them; the simulator reads positions from them):
``#minecraft:load`` -> ``mcbuild:world_load`` (difficulty, fixed time, weather, game rules);
``mcbuild:setup_player`` (run as the player at episode start: effects, experience, then
``function mcbuild:spawn_entities``, which summons the creatures at fixed positions).
"""
from __future__ import annotations

from typing import Any

from mcbuild.compiler.biome import files as wf
from mcbuild.compiler.biome.layout import creature_positions, spawn_point
from mcbuild.compiler.core.canonical import sha256
from mcbuild.compiler.rules import functions
from mcbuild.compiler.rules.pack import MINECRAFT_VERSION, PACK_FORMAT, build_zip, pack_mcmeta, resource_path
from mcbuild.compiler.spec.biome import BiomeSpec
from mcbuild.compiler.spec.worldgen_catalog import catalog


# ----------------------------------------------------------------------------- functions
def load_lines(spec: BiomeSpec) -> list[str]:
    rt = spec.runtime
    return [
        f"# {spec.id}: world controls, run by #minecraft:load on every (re)load",
        f"difficulty {rt.difficulty}",
        f"gamerule doDaylightCycle {str(rt.day_cycle).lower()}",
        f"time set {rt.initial_time}",
        f"gamerule doWeatherCycle {str(rt.weather_cycle).lower()}",
        f"weather {rt.weather}",
        f"gamerule doMobSpawning {str(rt.mob_spawning).lower()}",
        "gamerule spawnRadius 0",
    ]


def setup_lines(spec: BiomeSpec) -> list[str]:
    seconds = catalog()["runtime_bounds"]["effect_seconds"]
    lines = [f"# {spec.id}: run as the player once at episode start"]
    lines += [f"effect give @s {e.effect} {seconds} {e.amplifier} true" for e in spec.runtime.effects]
    lines.append(f"experience set @s {spec.runtime.experience_levels} levels")
    lines.append(f"function {functions.SPAWN}")
    return lines


def spawn_lines(spec: BiomeSpec) -> list[str]:
    lines = [f"# {spec.id}: creatures at fixed positions (same in every world of this biome)"]
    lines += [f"summon {c.entity} {c.x} {c.y} {c.z}" for c in creature_positions(spec)]
    return lines


def _text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- pack files
def _features(spec: BiomeSpec, files: dict[str, Any]) -> list[list[str]]:
    """Add configured/placed features to ``files``; return the biome's per-stage feature lists."""
    cat = catalog()
    stages: dict[str, list[str]] = {s: [] for s in wf.STAGES}
    eco = spec.ecology

    def add(kind: str, name: str, data: dict[str, Any]) -> str:
        ident = wf.rid(spec, name)
        files[resource_path(f"worldgen/{kind}", ident)] = data
        return ident

    if eco.water.lakes_rarity:
        lake = add("configured_feature", "lake_water", wf.lake_feature(spec))
        stages["lakes"].append(add("placed_feature", "lake_water", wf.lake_placement(lake, eco.water.lakes_rarity)))
    if eco.policy == "vanilla_backbone":
        stages["underground_ores"].extend(cat["vanilla_backbone"])
    for entry in spec.resources.ores:
        for i, band in enumerate(entry.bands):
            name = f"ore_{entry.ore}_{i}"
            ore = add("configured_feature", name, wf.ore_feature(spec, entry.ore, band))
            stages["underground_ores"].append(add("placed_feature", name, wf.ore_placement(ore, band)))
    if eco.policy != "minimal":
        for patch in eco.patches:
            name = f"patch_{patch.block.split(':')[1]}"
            feature = add("configured_feature", name, wf.patch_feature(spec, patch.block, patch.radius))
            stages["underground_ores"].append(
                add("placed_feature", name, wf.surface_placement(feature, patch.per_chunk, "WORLD_SURFACE_WG")))
    if eco.trees.per_chunk > 0:
        trees = add("configured_feature", "trees", wf.trees_feature(eco.trees))
        stages["vegetal_decoration"].append(add("placed_feature", "trees", wf.trees_placement(trees, eco.trees.per_chunk)))
    if eco.policy != "minimal":
        for veg in eco.vegetation:
            feature = cat["vegetation"][veg.kind]["configured_feature"]
            stages["vegetal_decoration"].append(
                add("placed_feature", f"vegetation_{veg.kind}", wf.surface_placement(feature, veg.per_chunk, "MOTION_BLOCKING")))
    cane = wf.surface_placement(cat["sugar_cane_feature"], 4 * eco.water.sugar_cane.density, "MOTION_BLOCKING")
    stages["vegetal_decoration"].append(add("placed_feature", "sugar_cane", cane))
    if eco.policy != "minimal":
        stages["top_layer_modification"].extend(cat["decorations"][d]["placed_feature"] for d in eco.decorations)
    return [stages[s] for s in wf.STAGES]


def pack_files(spec: BiomeSpec) -> dict[str, Any]:
    """Every file of the biome pack (archive path -> JSON data or text), without metadata."""
    files: dict[str, Any] = {"pack.mcmeta": pack_mcmeta(f"MirrorCraft biome '{spec.id}': world generation and controls")}
    files[resource_path("worldgen/world_preset", f"mcbuild:{spec.id}")] = wf.world_preset(spec)
    files[resource_path("worldgen/noise_settings", f"mcbuild:{spec.id}")] = wf.noise_settings(spec)
    files[resource_path("worldgen/noise", wf.rid(spec, "relief"))] = wf.relief_noise(spec)
    files[resource_path("worldgen/density_function", wf.rid(spec, "relief"))] = wf.relief_density(spec)
    files[resource_path("worldgen/density_function", wf.rid(spec, "terrain"))] = wf.terrain_density(spec)
    features = _features(spec, files)
    files[resource_path("worldgen/biome", spec.base_biome)] = wf.biome(spec, features)
    files[resource_path("function_tag", "minecraft:load")] = {"values": [functions.LOAD]}
    files[resource_path("function", functions.LOAD, ".mcfunction")] = _text(load_lines(spec))
    files[resource_path("function", functions.SETUP, ".mcfunction")] = _text(setup_lines(spec))
    files[resource_path("function", functions.SPAWN, ".mcfunction")] = _text(spawn_lines(spec))
    return files


def metadata(spec: BiomeSpec) -> dict[str, Any]:
    """Artifact metadata stored in the zip (outside ``data/``, so the game ignores it)."""
    return {"schema_version": "1.0", "kind": "biome", "id": spec.id, "base_biome": spec.base_biome,
            "minecraft_version": MINECRAFT_VERSION, "pack_format": PACK_FORMAT,
            "spec_sha256": sha256(spec.normalized()), "spawn": list(spawn_point(spec))}


def build_pack(spec: BiomeSpec) -> bytes:
    """The deterministic datapack zip of a biome spec (no audits)."""
    files = pack_files(spec)
    files[wf.METADATA_FILE] = metadata(spec)
    return build_zip(files)
