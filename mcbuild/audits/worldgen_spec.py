"""Pre-compile audit of a biome spec (paper F.2): the checks that relate several fields of a
valid spec (an ore band above the terrain, a task resource the world lacks...). Returns
``Findings``; the compiler stops on a hard failure and copies them into ``report.json``.
"""
from __future__ import annotations

from typing import Any

from mcbuild.compiler.biome.layout import (
    POND_RIM,
    WORLD_AREA,
    creature_positions,
    obsidian_cells,
    quarry_box,
    quarry_faces,
    quarry_floor_depth,
    spawn_point,
)
from mcbuild.compiler.core.findings import Findings
from mcbuild.compiler.rules.plants import plant_rules
from mcbuild.compiler.spec.biome import BiomeSpec
from mcbuild.compiler.spec.worldgen_catalog import catalog, plain_floor


CANE = "minecraft:sugar_cane"


def surface_range(spec: BiomeSpec) -> tuple[int, int]:
    """Lowest and highest natural surface level of the terrain."""
    t = spec.terrain
    return t.base_height - t.relief.amplitude, t.base_height + t.relief.amplitude


def resource_categories(spec: BiomeSpec) -> dict[str, str]:
    """Task resource categories this spec provides -> how (for the report and the Judge)."""
    cat = catalog()
    _, top = surface_range(spec)
    out = {"stone": "stone below the surface soil"}
    eco = spec.ecology
    if eco.trees.per_chunk > 0:
        kinds = ", ".join(f"{t.kind} x{t.weight}" for t in eco.trees.kinds)
        out["wood"] = f"{eco.trees.per_chunk} trees per chunk ({kinds})"
    for entry in spec.resources.ores:
        category = cat["ores"][entry.ore]["category"]
        reachable = [b for b in entry.bands if b.min_y <= top]
        if category and reachable:
            out[category] = f"{entry.ore}: {len(reachable)} band(s) inside the terrain"
    if "fuel" not in out and "wood" in out:
        out["fuel"] = "wood (logs and planks burn)"
    out["obsidian"] = f"{spec.access.quarry.obsidian_size ** 2} obsidian in the quarry floor" + (
        "; " + out["obsidian"] if "obsidian" in out else "")
    cane = eco.water.sugar_cane
    out["sugar_cane"] = f"at least {cane.min_count} sugar cane at the margins of {eco.water.ponds} pond(s)"
    for c in eco.creatures:
        creature_cat = cat["creatures"][c.entity]["category"]
        if creature_cat and c.count > 0:
            out[creature_cat] = f"{c.count} x {c.entity} at fixed positions"
    if spec.runtime.experience_levels > 0:
        out["experience"] = f"players start at level {spec.runtime.experience_levels}"
    return out


def pre_compile(spec: BiomeSpec, file: str) -> Findings:
    """Check bounds that relate several fields, ore bands, ecology, runtime and task resources."""
    f = Findings()
    _terrain(spec, file, f)
    _ore_bands(spec, file, f)
    _access(spec, file, f)
    _ecology(spec, file, f)
    _plants(spec, file, f)
    _runtime(spec, file, f)
    _task_resources(spec, file, f)
    return f


def _terrain(spec: BiomeSpec, file: str, f: Findings) -> None:
    t = spec.terrain
    if t.base_height <= t.sea_level:
        f.hard("spawn_underwater", file, "terrain.base_height",
               f"spawn ground y {t.base_height} is not above sea level {t.sea_level}")
    low, _ = surface_range(spec)
    if low <= t.sea_level:
        f.warn("terrain_below_sea", file, "terrain.relief.amplitude",
               f"lowest terrain y {low} reaches sea level {t.sea_level}; beyond the area it floods")


def _ore_bands(spec: BiomeSpec, file: str, f: Findings) -> None:
    cat = catalog()
    low_limit = cat["dimension"]["min_y"]
    deepslate = cat["deepslate_level"]
    _, top = surface_range(spec)
    for i, entry in enumerate(spec.resources.ores):
        for j, band in enumerate(entry.bands):
            where = f"resources.ores[{i}].bands[{j}]"
            if band.min_y > top:
                f.hard("band_outside_terrain", file, where,
                       f"{entry.ore} band y {band.min_y}..{band.max_y} lies above the highest terrain (y {top})")
            elif band.max_y <= low_limit:
                f.hard("band_outside_terrain", file, where,
                       f"{entry.ore} band y {band.min_y}..{band.max_y} lies in the bedrock floor")
            elif band.max_y > top:
                f.warn("band_partly_above_terrain", file, where,
                       f"{entry.ore} band reaches y {band.max_y}, above the highest terrain (y {top})")
        if entry.ore in cat["layered_ores"]:
            if not any(b.max_y >= plain_floor() and b.min_y <= top for b in entry.bands):
                f.hard("missing_plain_band", file, f"resources.ores[{i}].bands",
                       f"{entry.ore} needs a band above y {plain_floor()} (plain {cat['ores'][entry.ore]['stone']})")
            if not any(b.min_y < deepslate for b in entry.bands):
                f.hard("missing_deepslate_band", file, f"resources.ores[{i}].bands",
                       f"{entry.ore} needs a band below y {deepslate} ({cat['ores'][entry.ore]['deepslate']})")


def _access(spec: BiomeSpec, file: str, f: Findings) -> None:
    catalog()
    q = spec.access.quarry
    box = quarry_box(spec)
    if box.distance(0, 0) <= spec.terrain.clearing_radius + 1:
        f.hard("quarry_overlaps_clearing", file, "access.quarry",
               f"quarry {box} reaches into the spawn clearing (radius {spec.terrain.clearing_radius})")
    floor = spec.terrain.base_height - quarry_floor_depth(spec)
    if floor <= plain_floor():
        f.hard("quarry_in_deepslate", file, "access.quarry.depth",
               f"quarry floor y {floor} is too deep for plain ores (needs > {plain_floor()})")
    if quarry_floor_depth(spec) < q.depth:
        f.warn("quarry_shallow", file, "access.quarry.width",
               f"a {q.width}-wide quarry reaches only depth {quarry_floor_depth(spec)} of {q.depth}")
    faces = len(quarry_faces(spec))
    wanted = sum(e.count for e in q.exposed)
    if wanted > faces:
        f.hard("quarry_too_small", file, "access.quarry.exposed",
               f"{wanted} exposed ores requested but the quarry has {faces} stone faces")
    listed = {o.ore for o in spec.resources.ores}
    for i, exposure in enumerate(q.exposed):
        if exposure.ore not in listed:
            f.warn("exposure_without_band", file, f"access.quarry.exposed[{i}]",
                   f"{exposure.ore} is exposed in the quarry but has no ore band")


def _ecology(spec: BiomeSpec, file: str, f: Findings) -> None:
    cat = catalog()
    eco = spec.ecology
    native = cat["base_biomes"][spec.base_biome]["log_kinds"]
    if not any(t.kind in native for t in eco.trees.kinds):
        f.warn("unrecognizable_trees", file, "ecology.trees.kinds",
               f"none of the tree kinds is native to {spec.base_biome} ({', '.join(native)})")
    water = eco.water
    if water.nearest_distance - water.radius - POND_RIM <= spec.terrain.clearing_radius:
        f.hard("pond_overlaps_clearing", file, "ecology.water.nearest_distance",
               f"a pond {water.nearest_distance} blocks away with radius {water.radius} reaches the spawn clearing")
    if water.nearest_distance + water.radius + POND_RIM >= WORLD_AREA.size // 2:
        f.hard("pond_outside_area", file, "ecology.water.nearest_distance",
               f"the nearest pond does not fit inside the playable area ({WORLD_AREA.size // 2} blocks)")
    if not any(c.spawn_weight > 0 for c in eco.creatures):
        f.warn("no_spawners", file, "ecology.creatures", "no creature spawns in terrain beyond the playable area")
    climate = cat["base_biomes"][spec.base_biome]["precipitation"]
    if "snow_layer" in eco.decorations and climate != "snow":
        f.warn("decoration_climate", file, "ecology.decorations", f"snow layers in a {climate} biome")
    if eco.policy == "minimal" and (eco.vegetation or eco.patches or eco.decorations):
        f.warn("ignored_by_policy", file, "ecology.policy",
               "the minimal policy drops vegetation, patches and decorations from the pack")


def _plants(spec: BiomeSpec, file: str, f: Findings) -> None:
    """Sugar cane is planted on the pond shore beside the water: the shore must be a block it
    stands on (``plant_survival`` in catalogs/game_facts.yaml); the world audit checks every plant."""
    rule = plant_rules().rule_for(CANE)
    shore = spec.ecology.water.shore
    if rule is not None and shore not in rule.below | rule.below_beside_water:
        f.hard("plant_cannot_survive", file, "ecology.water.shore",
               f"sugar cane planted on a {shore} shore breaks at its next block update in 1.19 "
               f"(it stands on {', '.join(sorted(rule.below_beside_water))} beside water)")


def _runtime(spec: BiomeSpec, file: str, f: Findings) -> None:
    rt = spec.runtime
    if rt.day_cycle:
        f.warn("day_cycle_enabled", file, "runtime.day_cycle", "the benchmark controls fix the daytime")
    if rt.weather_cycle:
        f.warn("weather_cycle_enabled", file, "runtime.weather_cycle", "the benchmark controls keep the weather clear")
    given = {e.effect for e in rt.effects}
    for effect in catalog()["runtime_bounds"]["effects"]:
        if effect not in given:
            f.warn("missing_effect", file, "runtime.effects", f"agents normally receive {effect}")


def _task_resources(spec: BiomeSpec, file: str, f: Findings) -> None:
    cat = catalog()
    provided = resource_categories(spec)
    exposed = {e.ore for e in spec.access.quarry.exposed if e.count > 0}
    ore_of = {v["category"]: k for k, v in cat["ores"].items() if v["category"]}
    for task in spec.selected_tasks:
        for category in cat["task_requirements"][task]:
            if category not in provided:
                f.hard("missing_resource", file, "selected_tasks",
                       f"task {task} needs {category}, which this biome does not provide")
            ore = ore_of.get(category)
            if ore in cat["layered_ores"] and ore not in exposed:
                f.hard("missing_exposure", file, "access.quarry.exposed",
                       f"task {task} needs {category}: expose plain {ore} ore in the quarry near spawn")


def world_summary(spec: BiomeSpec) -> dict[str, Any]:
    """The seed-independent facts of every world of this biome (for the report and the Judge)."""
    low, high = surface_range(spec)
    box = quarry_box(spec)
    return {
        "spawn": list(spawn_point(spec)),
        "surface_range": [low, high],
        "quarry": {"box": [box.x0, box.z0, box.x1, box.z1],
                   "floor_y": spec.terrain.base_height - quarry_floor_depth(spec),
                   "farthest_distance": round(box.farthest(0, 0), 1),
                   "exposed": {e.ore: e.count for e in spec.access.quarry.exposed},
                   "obsidian": [list(c) for c in obsidian_cells(spec)]},
        "creatures": [{"entity": c.entity, "pos": [c.x, c.y, c.z]} for c in creature_positions(spec)],
        "ore_bands": [{"ore": o.ore, "min_y": b.min_y, "max_y": b.max_y, "vein_size": b.vein_size,
                       "attempts_per_chunk": b.attempts_per_chunk} for o in spec.resources.ores for b in o.bands],
        "task_resources": {task: {c: resource_categories(spec).get(c) for c in catalog()["task_requirements"][task]}
                           for task in spec.selected_tasks},
    }
