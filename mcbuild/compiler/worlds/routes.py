"""Route validation of a generated world: every resource each selected task's route needs
exists inside the playable area, within reach of spawn, and (for the ores agents must meet
near the surface) air-exposed close to spawn. The report lands in build/worlds/<id>/report.json.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from mcbuild.compiler.biome.layout import creature_positions, spawn_point
from mcbuild.compiler.core.errors import CompileError
from mcbuild.compiler.rules.tasks import world_resources
from mcbuild.compiler.spec.worldgen_catalog import catalog
from mcbuild.compiler.worlds.terrain import World, air_exposed

LOG_STANDIN = "minecraft:oak_log"   # tasks.yaml names logs by oak; each biome has its own kinds
EXPOSURE_DEPTH = 48                 # exposed ores count as near spawn within this many blocks vertically


def _points(world: World, lut: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Array indices of the matching blocks inside the index box [lo, hi)."""
    lo, hi = np.maximum(lo, 0), np.minimum(hi, world.blocks.shape)
    window = world.blocks[lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]]
    return np.argwhere(lut[window]) + lo


def _nearest(world: World, lut: np.ndarray, at: np.ndarray) -> tuple[float, np.ndarray]:
    """Distance and array index of the matching block nearest to ``at``, scanning y-layers
    outwards from spawn level until no closer hit is possible."""
    best, best_at = math.inf, np.zeros(3, dtype=np.int64)
    for dy in range(world.blocks.shape[1]):
        if dy > best:
            break
        for y in sorted({int(at[1]) - dy, int(at[1]) + dy}):
            if not 0 <= y < world.blocks.shape[1]:
                continue
            hits = np.argwhere(lut[world.blocks[:, y, :]])
            if not len(hits):
                continue
            d2 = (hits[:, 0] - at[0]) ** 2 + (hits[:, 1] - at[2]) ** 2
            j = int(np.argmin(d2))
            d = math.sqrt(float(d2[j]) + dy * dy)
            if d < best:
                best, best_at = d, np.array([hits[j, 0], y, hits[j, 1]])
    return best, best_at


def _block_stats(world: World, block: str, count: int, spawn: np.ndarray, exposure_radius: int | None) -> dict[str, Any]:
    """Count, nearest instance and, for ores agents must meet near the surface, the air-exposed
    instances within ``exposure_radius`` horizontally (and ``EXPOSURE_DEPTH`` vertically)."""
    out: dict[str, Any] = {"count": count}
    if not count:
        return out
    lut = world.palette.mask({n for n in world.palette.names if n.split("[")[0] == block})
    dist, nearest = _nearest(world, lut, spawn)
    origin = np.array([world.area.x_min, world.area.y_min, world.area.x_min])
    out["nearest"] = round(dist, 1)
    out["nearest_at"] = [int(v) for v in nearest + origin]
    if exposure_radius is not None:
        reach = np.array([exposure_radius, EXPOSURE_DEPTH, exposure_radius])
        pts = _points(world, lut, spawn - reach, spawn + reach + 1)
        horizontal = np.hypot(pts[:, 0] - spawn[0], pts[:, 2] - spawn[2])
        pts, horizontal = pts[horizontal <= exposure_radius], horizontal[horizontal <= exposure_radius]
        exposed = air_exposed(world, pts)
        out["exposed_near_spawn"] = int(exposed.sum())
        if exposed.any():
            out["nearest_exposed_horizontal"] = round(float(horizontal[exposed].min()), 1)
    return out


def _entity_stats(world: World, entity: str, spawn: tuple[int, int, int]) -> dict[str, Any]:
    found = [c for c in creature_positions(world.spec) if c.entity == entity]
    out: dict[str, Any] = {"count": len(found)}
    if found:
        c = min(found, key=lambda c: math.dist((c.x, c.y, c.z), spawn))
        out["nearest"] = round(math.dist((c.x, c.y, c.z), spawn), 1)
        out["nearest_at"] = [c.x, c.y, c.z]
    return out


def route_report(world: World, world_id: str) -> dict[str, Any]:
    """Resources per task route with counts and distances; raises CompileError if a route lacks one."""
    cat, spec = catalog(), world.spec
    checks = cat["route_checks"]
    spawn = spawn_point(spec)
    logs = spec.log_blocks()
    targets: dict[str, list[str]] = {
        category: [t for raw in cat["route_targets"][category] for t in (logs if raw == "#logs" else [raw])]
        for category in cat["route_targets"]}
    needed = sorted({t for ts in targets.values() for t in ts}
                    | {b for b in world_resources()["blocks"] if b != LOG_STANDIN}
                    | set(world_resources()["entities"]))
    counts = np.bincount(world.blocks.ravel(), minlength=len(world.palette.names))
    at = np.array(spawn) - np.array([world.area.x_min, world.area.y_min, world.area.x_min])
    stats: dict[str, dict[str, Any]] = {}
    for t in needed:
        if t in cat["creatures"]:
            stats[t] = _entity_stats(world, t, spawn)
            continue
        count = sum(int(counts[i]) for i, n in enumerate(world.palette.names) if n.split("[")[0] == t)
        radius = checks["exposed_horizontal"] if t in checks["exposed_blocks"] else None
        stats[t] = _block_stats(world, t, count, at, radius)
    problems: list[str] = []
    routes: dict[str, Any] = {}
    for task in spec.selected_tasks:
        steps = {}
        for category in cat["task_requirements"][task]:
            found = [t for t in targets[category] if stats[t]["count"] > 0]
            steps[category] = found
            if targets[category] and not found:
                problems.append(f"{task}: no {category} ({', '.join(targets[category])}) in the playable area")
            for t in found:
                if stats[t]["nearest"] > checks["max_distance"]:
                    problems.append(f"{task}: nearest {t} is {stats[t]['nearest']} blocks from spawn")
                if t in checks["exposed_blocks"] and stats[t].get("nearest_exposed_horizontal", math.inf) > checks["exposed_horizontal"]:
                    problems.append(f"{task}: no exposed {t} within {checks['exposed_horizontal']} blocks of spawn")
        routes[task] = {"ok": not any(p.startswith(f"{task}:") for p in problems), "resources": steps}
    for block in world_resources()["blocks"]:
        present = logs if block == LOG_STANDIN else [block]
        if not any(stats[b]["count"] for b in present):
            problems.append(f"world resource {block} is missing")
    for entity in world_resources()["entities"]:
        if not stats[entity]["count"]:
            problems.append(f"world resource {entity} is missing")
    if problems:
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        raise CompileError(f"worlds/{world_id}", f"route validation failed (seed {world.seed}): {problems[0]}{more}")
    return {"spawn": list(spawn), "routes": routes, "resources": stats}
