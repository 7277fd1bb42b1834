"""The world-generation JSON documents of a biome pack (Minecraft Java 1.19.0, pack_format 10).

Each builder returns plain data; ``mcbuild.compiler.biome.pack`` places it at its archive path. Our own
resources live in the ``mcbuild`` namespace under ``<biome id>/``; the only ``minecraft``
resource overridden is the base biome itself, so the chunks of the playable area, which name
that biome, and the terrain generated beyond the area share one biome definition.
"""
from __future__ import annotations

import math
from typing import Any

from mcbuild.compiler.spec.biome import BiomeSpec, OreBand, Trees
from mcbuild.compiler.spec.worldgen_catalog import catalog, plain_floor

NS = "mcbuild"
METADATA_FILE = "mcbuild.json"
DENSITY_SCALE = 64.0   # density units per block of height in the terrain gradient
# GenerationStep.Decoration order of 1.19: a biome's `features` holds one list per step.
STAGES = (
    "raw_generation", "lakes", "local_modifications", "underground_structures", "surface_structures",
    "strongholds", "underground_ores", "underground_decoration", "fluid_springs", "vegetal_decoration",
    "top_layer_modification",
)
SPAWN_GROUPS = ("monster", "creature", "ambient", "axolotls", "underground_water_creature",
                "water_creature", "water_ambient", "misc")
NOISE_ROUTER_FIELDS = ("barrier", "fluid_level_floodedness", "fluid_level_spread", "lava", "temperature",
                       "vegetation", "continents", "erosion", "depth", "ridges",
                       "initial_density_without_jaggedness", "final_density", "vein_toggle", "vein_ridged",
                       "vein_gap")


def rid(spec: BiomeSpec, name: str) -> str:
    """Namespaced id of one of this pack's resources."""
    return f"{NS}:{spec.id}/{name}"


def state(block: str) -> dict[str, Any]:
    """Block state object from ``name[key=value,...]``."""
    name, _, props = block.partition("[")
    out: dict[str, Any] = {"Name": name}
    if props:
        out["Properties"] = dict(p.split("=", 1) for p in props.rstrip("]").split(","))
    return out


def count(per_chunk: float) -> int | dict[str, Any]:
    """A placement count with mean ``per_chunk``: an int, or a two-value weighted list."""
    low = math.floor(per_chunk)
    frac = round(per_chunk - low, 2)
    if frac == 0:
        return low
    high_weight = round(frac * 100)
    return {"type": "minecraft:weighted_list",
            "distribution": [{"data": low, "weight": 100 - high_weight}, {"data": low + 1, "weight": high_weight}]}


# ----------------------------------------------------------------------------- dimension
def overworld_generator(spec: BiomeSpec) -> dict[str, Any]:
    return {"type": "minecraft:noise", "settings": f"{NS}:{spec.id}",
            "biome_source": {"type": "minecraft:fixed", "biome": spec.base_biome}}


def dimensions(spec: BiomeSpec) -> dict[str, Any]:
    """The world's three dimensions (the overworld from this spec, vanilla Nether and End)."""
    return {
        "minecraft:overworld": {"type": "minecraft:overworld", "generator": overworld_generator(spec)},
        "minecraft:the_nether": {"type": "minecraft:the_nether", "generator": {
            "type": "minecraft:noise", "settings": "minecraft:nether",
            "biome_source": {"type": "minecraft:multi_noise", "preset": "minecraft:nether"}}},
        "minecraft:the_end": {"type": "minecraft:the_end", "generator": {
            "type": "minecraft:noise", "settings": "minecraft:end",
            "biome_source": {"type": "minecraft:the_end"}}},
    }


def world_preset(spec: BiomeSpec) -> dict[str, Any]:
    return {"dimensions": dimensions(spec)}


# ----------------------------------------------------------------------------- terrain
def relief_noise(spec: BiomeSpec) -> dict[str, Any]:
    relief = spec.terrain.relief
    return {"firstOctave": -round(math.log2(relief.wavelength)),
            "amplitudes": [round(0.5 ** i, 6) for i in range(relief.octaves)]}


def relief_density(spec: BiomeSpec) -> dict[str, Any]:
    """Relief in density units: amplitude blocks per unit of noise."""
    return {"type": "minecraft:mul", "argument1": round(spec.terrain.relief.amplitude / DENSITY_SCALE, 6),
            "argument2": {"type": "minecraft:noise", "noise": rid(spec, "relief"), "xz_scale": 1.0, "y_scale": 0.0}}


def terrain_density(spec: BiomeSpec) -> dict[str, Any]:
    """Solid below ``base_height + relief``: a linear height gradient plus the relief."""
    dim = catalog()["dimension"]
    low, high = dim["min_y"], dim["min_y"] + dim["height"]
    base = spec.terrain.base_height
    return {"type": "minecraft:add",
            "argument1": {"type": "minecraft:y_clamped_gradient", "from_y": low, "to_y": high,
                          "from_value": round((base - low) / DENSITY_SCALE, 6),
                          "to_value": round((base - high) / DENSITY_SCALE, 6)},
            "argument2": rid(spec, "relief")}


def _block(name: str) -> dict[str, Any]:
    return {"type": "minecraft:block", "result_state": state(name)}


def _cond(test: dict[str, Any], then: dict[str, Any]) -> dict[str, Any]:
    return {"type": "minecraft:condition", "if_true": test, "then_run": then}


def _stone_depth(offset: int) -> dict[str, Any]:
    return {"type": "minecraft:stone_depth", "offset": offset, "add_surface_depth": False,
            "secondary_depth_range": 0, "surface_type": "floor"}


def surface_rule(spec: BiomeSpec) -> dict[str, Any]:
    surface, water = spec.terrain.surface, spec.ecology.water
    deepslate = catalog()["deepslate_level"]
    dry = {"type": "minecraft:water", "offset": -1, "surface_depth_multiplier": 0, "add_stone_depth": False}
    return {"type": "minecraft:sequence", "sequence": [
        _cond({"type": "minecraft:vertical_gradient", "random_name": "minecraft:bedrock_floor",
               "true_at_and_below": {"above_bottom": 0}, "false_at_and_above": {"above_bottom": 5}},
              _block("minecraft:bedrock")),
        _cond({"type": "minecraft:above_preliminary_surface"}, {"type": "minecraft:sequence", "sequence": [
            _cond(_stone_depth(0), {"type": "minecraft:sequence", "sequence": [
                _cond(dry, _block(surface.top)), _block(water.shore)]}),
            _cond(_stone_depth(surface.depth - 1), _block(surface.filler)),
        ]}),
        _cond({"type": "minecraft:vertical_gradient", "random_name": "minecraft:deepslate",
               "true_at_and_below": {"absolute": deepslate}, "false_at_and_above": {"absolute": plain_floor()}},
              _block("minecraft:deepslate[axis=y]")),
    ]}


def noise_settings(spec: BiomeSpec) -> dict[str, Any]:
    dim = catalog()["dimension"]
    router: dict[str, Any] = {name: 0.0 for name in NOISE_ROUTER_FIELDS}
    router["initial_density_without_jaggedness"] = rid(spec, "terrain")
    router["final_density"] = rid(spec, "terrain")
    return {
        "sea_level": spec.terrain.sea_level,
        "disable_mob_generation": False,
        "aquifers_enabled": False,
        "ore_veins_enabled": False,
        "legacy_random_source": False,
        "default_block": state("minecraft:stone"),
        "default_fluid": state("minecraft:water[level=0]"),
        "noise": {"min_y": dim["min_y"], "height": dim["height"], "size_horizontal": 1, "size_vertical": 2},
        "noise_router": router,
        "spawn_target": [],
        "surface_rule": surface_rule(spec),
    }


# ----------------------------------------------------------------------------- features
def ore_feature(spec: BiomeSpec, ore: str, band: OreBand) -> dict[str, Any]:
    blocks = catalog()["ores"][ore]
    return {"type": "minecraft:ore", "config": {
        "size": band.vein_size,
        "discard_chance_on_air_exposure": band.discard_on_air_exposure,
        "targets": [
            {"target": {"predicate_type": "minecraft:tag_match", "tag": "minecraft:stone_ore_replaceables"},
             "state": state(blocks["stone"])},
            {"target": {"predicate_type": "minecraft:tag_match", "tag": "minecraft:deepslate_ore_replaceables"},
             "state": state(blocks["deepslate"])},
        ]}}


def ore_placement(configured: str, band: OreBand) -> dict[str, Any]:
    return {"feature": configured, "placement": [
        {"type": "minecraft:count", "count": band.attempts_per_chunk},
        {"type": "minecraft:in_square"},
        {"type": "minecraft:height_range", "height": {
            "type": f"minecraft:{band.distribution}",
            "min_inclusive": {"absolute": band.min_y}, "max_inclusive": {"absolute": band.max_y}}},
        {"type": "minecraft:biome"},
    ]}


def patch_feature(spec: BiomeSpec, block: str, radius: int) -> dict[str, Any]:
    """A surface patch as an ore-type replacement of the top and filler blocks."""
    surface = spec.terrain.surface
    targets = [{"target": {"predicate_type": "minecraft:block_match", "block": b}, "state": state(block)}
               for b in dict.fromkeys((surface.top, surface.filler))]
    return {"type": "minecraft:ore", "config": {
        "size": min(64, 4 * radius * radius), "discard_chance_on_air_exposure": 0.0, "targets": targets}}


def surface_placement(feature: str, per_chunk: float, heightmap: str) -> dict[str, Any]:
    return {"feature": feature, "placement": [
        {"type": "minecraft:count", "count": count(per_chunk)},
        {"type": "minecraft:in_square"},
        {"type": "minecraft:heightmap", "heightmap": heightmap},
        {"type": "minecraft:biome"},
    ]}


def trees_feature(trees: Trees) -> dict[str, Any]:
    """A random selector whose sequential chances reproduce the spec's kind weights exactly."""
    kinds = catalog()["trees"]
    remaining = sum(t.weight for t in trees.kinds)
    options = []
    for tree in trees.kinds[:-1]:
        options.append({"feature": kinds[tree.kind]["placed_feature"], "chance": round(tree.weight / remaining, 6)})
        remaining -= tree.weight
    return {"type": "minecraft:random_selector",
            "config": {"features": options, "default": kinds[trees.kinds[-1].kind]["placed_feature"]}}


def trees_placement(configured: str, per_chunk: float) -> dict[str, Any]:
    return {"feature": configured, "placement": [
        {"type": "minecraft:count", "count": count(per_chunk)},
        {"type": "minecraft:in_square"},
        {"type": "minecraft:surface_water_depth_filter", "max_water_depth": 0},
        {"type": "minecraft:heightmap", "heightmap": "OCEAN_FLOOR"},
        {"type": "minecraft:biome"},
    ]}


def lake_feature(spec: BiomeSpec) -> dict[str, Any]:
    return {"type": "minecraft:lake", "config": {
        "fluid": {"type": "minecraft:simple_state_provider", "state": state("minecraft:water[level=0]")},
        "barrier": {"type": "minecraft:simple_state_provider", "state": state(spec.ecology.water.shore)}}}


def lake_placement(configured: str, rarity: int) -> dict[str, Any]:
    return {"feature": configured, "placement": [
        {"type": "minecraft:rarity_filter", "chance": rarity},
        {"type": "minecraft:in_square"},
        {"type": "minecraft:heightmap", "heightmap": "WORLD_SURFACE_WG"},
        {"type": "minecraft:biome"},
    ]}


# ----------------------------------------------------------------------------- biome
def spawners(spec: BiomeSpec) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {g: [] for g in SPAWN_GROUPS}
    groups["creature"] = [{"type": c.entity, "weight": c.spawn_weight, "minCount": 1, "maxCount": c.group}
                          for c in spec.ecology.creatures if c.spawn_weight > 0]
    return groups


def biome(spec: BiomeSpec, features: list[list[str]]) -> dict[str, Any]:
    climate = catalog()["base_biomes"][spec.base_biome]
    effects = dict(catalog()["biome_effects"])
    effects["sky_color"] = climate["sky_color"]
    effects["mood_sound"] = {"sound": "minecraft:ambient.cave", "tick_delay": 6000,
                             "block_search_extent": 8, "offset": 2.0}
    return {
        "precipitation": climate["precipitation"],
        "temperature": climate["temperature"],
        "downfall": climate["downfall"],
        "effects": effects,
        "spawners": spawners(spec),
        "spawn_costs": {},
        "carvers": {},
        "features": features,
    }
