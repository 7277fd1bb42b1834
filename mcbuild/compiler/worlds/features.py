"""Surface features of the playable area: quarry, ponds with sugar cane, patches, trees,
vegetation and snow, drawn on a ``terrain.World`` in a fixed order. ``generate`` runs the
whole pipeline for one world.
"""
from __future__ import annotations

import math

import numpy as np

from mcbuild.compiler.biome.layout import (
    POND_RIM,
    POND_SHORE,
    QUARRY_MARGIN,
    WorldArea,
    obsidian_cells,
    quarry_box,
    quarry_depths,
    quarry_faces,
)
from mcbuild.compiler.core.errors import CompileError
from mcbuild.compiler.rules.blockstates import block_states, format_state, parse_state
from mcbuild.compiler.rules.plants import leaves_layer_distances
from mcbuild.compiler.spec.biome import BiomeSpec
from mcbuild.compiler.spec.worldgen_catalog import catalog
from mcbuild.compiler.worlds.terrain import (
    ZONE_CLEARING,
    ZONE_POND,
    ZONE_QUARRY,
    ZONE_SHORE,
    ZONE_TREE,
    World,
    base_layers,
    place_ores,
    stream,
)

TREE_SPACING = 3        # no two trunks closer than this (Chebyshev)
TREE_CLEARANCE = 3      # trunks keep this far from the clearing and the quarry margin
PLANTS_PER_PATCH = 8
FAR_LEAF = 7            # LeavesBlock's distance of a leaf with no log near (the state trees are drawn with)
PATCH_SPREAD = 4


def generate(spec: BiomeSpec, seed: int, area: WorldArea) -> World:
    """The complete playable area of one world."""
    world = base_layers(spec, seed, area)
    place_ores(world)
    mark_zones(world)
    carve_quarry(world)
    place_ponds(world)
    place_patches(world)
    place_trees(world)
    place_vegetation(world)
    if "snow_layer" in spec.ecology.decorations and spec.ecology.policy != "minimal":
        place_snow(world)
    return world


def mark_zones(world: World) -> None:
    x, z = world.coords()
    spec = world.spec
    world.reserved[np.hypot(x, z) <= spec.terrain.clearing_radius] |= ZONE_CLEARING
    box = quarry_box(spec).grow(QUARRY_MARGIN)
    world.reserved[(x >= box.x0) & (x <= box.x1) & (z >= box.z0) & (z <= box.z1)] |= ZONE_QUARRY


def carve_quarry(world: World) -> None:
    """Terraced pit in flat ground; chosen stone faces become plain ores; obsidian in the floor."""
    spec, cat = world.spec, catalog()
    base = spec.terrain.base_height
    for (x, z), depth in sorted(quarry_depths(spec).items()):
        i, k = world.column(x, z)
        world.set_column(i, k, base - depth + 1, base, "minecraft:air")
        world.height[i, k] = base - depth
    faces = quarry_faces(spec)
    order = stream(world.seed, "quarry").permutation(len(faces))
    picked = iter(order)
    for exposure in spec.access.quarry.exposed:
        block = cat["ores"][exposure.ore]["stone"]
        for _ in range(exposure.count):
            x, y, z = faces[next(picked)]
            i, k = world.column(x, z)
            world.set_column(i, k, y, y, block)
    for x, y, z in obsidian_cells(spec):
        i, k = world.column(x, z)
        world.set_column(i, k, y, y, "minecraft:obsidian")


# ----------------------------------------------------------------------------- ponds
def _pond_fits(world: World, cx: float, cz: float, others: list[tuple[float, float]]) -> bool:
    spec = world.spec
    r = spec.ecology.water.radius + POND_RIM
    if not world.area.contains(cx, cz, margin=r + 2):
        return False
    if math.hypot(cx, cz) - r <= spec.terrain.clearing_radius + 1:
        return False
    if quarry_box(spec).grow(QUARRY_MARGIN).distance(cx, cz) <= r + 1:
        return False
    return all(math.hypot(cx - ox, cz - oz) > 2 * r + 2 for ox, oz in others)


def place_ponds(world: World) -> None:
    """Ponds at least ``nearest_distance`` from spawn (the first exactly there), each with a flat
    shore at water level, a slope back up to the terrain, and sugar cane along the water."""
    spec = world.spec
    water = spec.ecology.water
    rng = stream(world.seed, "ponds")
    low, high = world.area.x_min, world.area.x_min + world.area.size
    centres: list[tuple[float, float]] = []
    for n in range(water.ponds):
        for _ in range(500):
            if n == 0:
                angle = rng.uniform(0, 2 * math.pi)
                cx, cz = water.nearest_distance * math.cos(angle), water.nearest_distance * math.sin(angle)
            else:
                cx, cz = rng.uniform(low, high, 2)
                if math.hypot(cx, cz) < water.nearest_distance:
                    continue
            cx, cz = round(cx), round(cz)
            if _pond_fits(world, cx, cz, centres):
                break
        else:
            if n == 0:
                raise CompileError(spec.id, f"seed {world.seed}: no room for a pond {water.nearest_distance} blocks from spawn")
            break
        centres.append((cx, cz))
        canes = _carve_pond(world, cx, cz, rng)
        minimum = water.sugar_cane.min_count if n == 0 else 0
        _plant_sugar_cane(world, canes, rng, minimum)


def _carve_pond(world: World, cx: int, cz: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Carve one pond; returns the shore columns next to water (sugar cane candidates)."""
    spec = world.spec
    water, surface = spec.ecology.water, spec.terrain.surface
    r = water.radius
    cells = [(x, z, math.hypot(x - cx, z - cz)) for x in range(cx - r - POND_RIM, cx + r + POND_RIM + 1)
             for z in range(cz - r - POND_RIM, cz + r + POND_RIM + 1)]
    cells = [c for c in cells if c[2] < r + POND_RIM]
    level = min(int(world.height[world.column(x, z)]) for x, z, d in cells if d < r + POND_SHORE)
    wet = set()
    for x, z, d in cells:
        i, k = world.column(x, z)
        top = int(world.height[i, k])
        if d < r:
            depth = water.depth if d <= r - 1.5 else 1
            world.set_column(i, k, level + 1, top, "minecraft:air")
            world.set_column(i, k, level - depth + 1, level, "minecraft:water[level=0]")
            world.set_column(i, k, level - depth, level - depth, water.floor)
            world.height[i, k] = level - depth
            world.reserved[i, k] |= ZONE_POND
            wet.add((x, z))
        elif d < r + POND_SHORE:
            world.set_column(i, k, level + 1, top, "minecraft:air")
            world.set_column(i, k, level - 1, level, water.shore)
            world.height[i, k] = level
            world.reserved[i, k] |= ZONE_POND | ZONE_SHORE
        else:
            target = level + math.ceil(d - r - POND_SHORE)
            world.reserved[i, k] |= ZONE_POND
            if top > target:
                world.set_column(i, k, target + 1, top, "minecraft:air")
                world.set_column(i, k, target - surface.depth + 1, target - 1, surface.filler)
                world.set_column(i, k, target, target, surface.top)
                world.height[i, k] = target
    return sorted((x, z) for x, z, d in cells if r <= d < r + POND_SHORE
                  and any((x + dx, z + dz) in wet for dx, dz in ((1, 0), (-1, 0), (0, 1), (0, -1))))


def _plant_sugar_cane(world: World, candidates: list[tuple[int, int]], rng: np.random.Generator, minimum: int) -> None:
    cane = world.spec.ecology.water.sugar_cane
    chosen = [c for c, roll in zip(candidates, rng.random(len(candidates))) if roll < cane.density]
    if len(chosen) < minimum:
        rest = [c for c in candidates if c not in chosen]
        chosen += [rest[j] for j in sorted(rng.permutation(len(rest))[: minimum - len(chosen)])]
    if len(chosen) < minimum:
        raise CompileError(world.spec.id, f"seed {world.seed}: only {len(chosen)} sugar cane spots by the pond")
    heights = rng.integers(1, cane.max_height + 1, len(chosen))
    for (x, z), h in zip(sorted(chosen), heights):
        i, k = world.column(x, z)
        top = int(world.height[i, k])
        world.set_column(i, k, top + 1, top + int(h), "minecraft:sugar_cane[age=0]")


# ----------------------------------------------------------------------------- surface
def _scatter(world: World, rng: np.random.Generator, per_chunk: float) -> np.ndarray:
    """Random columns (array indices [n, 2]), about ``per_chunk`` per chunk."""
    n = int(round(per_chunk * world.area.chunks * world.area.chunks))
    return rng.integers(0, world.area.size, (n, 2))


def place_patches(world: World) -> None:
    """Discs of gravel, sand, podzol... replacing the top block and the one below it."""
    spec = world.spec
    if spec.ecology.policy == "minimal":
        return
    soil = world.palette.mask({spec.terrain.surface.top, spec.terrain.surface.filler})
    blocked = ZONE_CLEARING | ZONE_QUARRY | ZONE_POND
    for p, patch in enumerate(spec.ecology.patches):
        rng = stream(world.seed, f"patch/{p}")
        block = world.palette.id(patch.block)
        for ci, ck in _scatter(world, rng, patch.per_chunk):
            r = patch.radius
            for i in range(max(0, ci - r), min(world.area.size, ci + r + 1)):
                for k in range(max(0, ck - r), min(world.area.size, ck + r + 1)):
                    if (i - ci) ** 2 + (k - ck) ** 2 > r * r or world.reserved[i, k] & blocked:
                        continue
                    top = world.yi(int(world.height[i, k]))
                    for y in (top, top - 1):
                        if soil[world.blocks[i, y, k]]:
                            world.blocks[i, y, k] = block


def _tree_ok(world: World, i: int, k: int, soil: np.ndarray) -> bool:
    spec, size = world.spec, world.area.size
    if not (TREE_CLEARANCE <= i < size - TREE_CLEARANCE and TREE_CLEARANCE <= k < size - TREE_CLEARANCE):
        return False
    x, z = i + world.area.x_min, k + world.area.x_min
    if math.hypot(x, z) <= spec.terrain.clearing_radius + TREE_CLEARANCE:
        return False
    if quarry_box(spec).grow(QUARRY_MARGIN + TREE_CLEARANCE - 1).distance(x, z) == 0:
        return False
    near = world.reserved[i - TREE_SPACING:i + TREE_SPACING + 1, k - TREE_SPACING:k + TREE_SPACING + 1]
    if np.any(near & (ZONE_TREE | ZONE_POND)):
        return False
    return bool(soil[world.blocks[i, world.yi(int(world.height[i, k])), k]])


def place_trees(world: World) -> None:
    spec, cat = world.spec, catalog()
    trees = spec.ecology.trees
    if trees.per_chunk <= 0:
        return
    rng = stream(world.seed, "trees")
    soil = world.palette.mask(set(cat["plant_soil"]))
    weights = np.array([t.weight for t in trees.kinds], dtype=float)
    spots = _scatter(world, rng, trees.per_chunk)
    kinds = rng.choice(len(trees.kinds), size=len(spots), p=weights / weights.sum())
    for (i, k), kind_index in zip(spots, kinds):
        if not _tree_ok(world, int(i), int(k), soil):
            continue
        kind = cat["trees"][trees.kinds[kind_index].kind]
        height = int(rng.integers(kind["trunk"][0], kind["trunk"][1] + 1))
        _draw_tree(world, int(i), int(k), kind, height, rng)
        world.reserved[i, k] |= ZONE_TREE
    _settle_leaves(world)


def _leaf_state(block: str, distance: int) -> str:
    """A natural leaf (not persistent), as the game's tree features place them."""
    return f"{block}[distance={distance},persistent=false,waterlogged=false]"


def _settle_leaves(world: World) -> None:
    """Give every leaf LeavesBlock's distance to the nearest log (what a server would compute)."""
    window = leaves_layer_distances(world.blocks, world.palette.names)
    if window is None:
        return
    y0, distance = window
    grid = world.blocks[:, y0:y0 + distance.shape[1], :]
    drawn = {index: parse_state(name)[0] for index, name in enumerate(world.palette.names)
             if name == _leaf_state(parse_state(name)[0], FAR_LEAF)}
    for index, block in sorted(drawn.items()):
        cells = grid == index
        for d in np.unique(distance[cells]):
            grid[cells & (distance == d)] = world.palette.id(_leaf_state(block, int(d)))


def _leaf_layers(shape: str, top: int, height: int) -> list[tuple[int, int, bool]]:
    """(y, radius, round corners) of each foliage layer of a tree whose top log is at ``top``."""
    if shape == "cone":
        layers = [(top + 1, 0, False), (top, 1, False)]
        for n, y in enumerate(range(top - 1, top - height + 2, -1)):
            layers.append((y, 2 if n % 2 == 0 else 1, n % 2 == 0))
        return layers
    if shape == "flat":
        return [(top, 3, True), (top + 1, 2, True)]
    return [(top - 2, 2, True), (top - 1, 2, True), (top, 1, False), (top + 1, 1, True)]


def _draw_tree(world: World, i: int, k: int, kind: dict, height: int, rng: np.random.Generator) -> None:
    ground = int(world.height[i, k])
    top = ground + height
    if world.yi(top + 2) >= world.blocks.shape[1]:
        return
    world.set_column(i, k, ground, ground, "minecraft:dirt")
    leaves = world.palette.id(_leaf_state(kind["leaves"], FAR_LEAF))
    for y, radius, rounded in _leaf_layers(kind["shape"], top, height):
        yi = world.yi(y)
        for di in range(-radius, radius + 1):
            for dk in range(-radius, radius + 1):
                corner = abs(di) == radius and abs(dk) == radius and radius > 0
                if corner and (rounded or rng.random() < 0.5):
                    continue
                if kind["shape"] == "flat" and abs(di) + abs(dk) > radius + 1:
                    continue
                if world.blocks[i + di, yi, k + dk] == 0:
                    world.blocks[i + di, yi, k + dk] = leaves
    world.set_column(i, k, ground + 1, top, f"{kind['log']}[axis=y]")


def place_vegetation(world: World) -> None:
    """Small plant patches on free soil (never in the quarry, ponds or on shores)."""
    spec, cat = world.spec, catalog()
    if spec.ecology.policy == "minimal":
        return
    soil = world.palette.mask(set(cat["plant_soil"]))
    size = world.area.size
    for veg in spec.ecology.vegetation:
        rng = stream(world.seed, f"vegetation/{veg.kind}")
        plants = [world.palette.id(b) for b in cat["vegetation"][veg.kind]["blocks"]]
        centres = _scatter(world, rng, veg.per_chunk)
        offsets = rng.integers(-PATCH_SPREAD, PATCH_SPREAD + 1, (len(centres), PLANTS_PER_PATCH, 2))
        choice = rng.integers(0, len(plants), (len(centres), PLANTS_PER_PATCH)).reshape(-1)
        pts = (centres[:, None, :] + offsets).reshape(-1, 2)
        inside = np.all((pts >= 0) & (pts < size), axis=1)
        pts, choice = pts[inside], choice[inside]
        _, first = np.unique(pts[:, 0] * size + pts[:, 1], return_index=True)
        first.sort()
        pts, choice = pts[first], choice[first]
        i, k = pts[:, 0], pts[:, 1]
        ground = world.yi(world.height[i, k])
        free = (world.reserved[i, k] & (ZONE_QUARRY | ZONE_POND)) == 0
        ok = free & soil[world.blocks[i, ground, k]] & (world.blocks[i, ground + 1, k] == 0)
        world.blocks[i[ok], ground[ok] + 1, k[ok]] = np.array(plants, dtype=np.uint16)[choice[ok]]


def place_snow(world: World) -> None:
    """One snow layer on every open top surface (not on water or the shore); the block under it
    set snowy=true where it has that property (grass, podzol: what SnowyDirtBlock shows)."""
    pal = world.palette
    snowable = pal.mask({n for n in pal.names if "_leaves[" in n}
                        | set(catalog()["plant_soil"]) | set(catalog()["surface_blocks"]["patch"]))
    column_top = world.blocks.shape[1] - 1 - np.argmax(world.blocks[:, ::-1, :] != 0, axis=1)
    i, k = np.meshgrid(np.arange(world.area.size), np.arange(world.area.size), indexing="ij")
    top_block = world.blocks[i, column_top, k]
    ok = snowable[top_block] & ((world.reserved & ZONE_SHORE) == 0) & (column_top + 1 < world.blocks.shape[1])
    properties = block_states().values
    for index in np.unique(top_block[ok]):
        name, props = parse_state(pal.names[index])
        if "snowy" in properties[name]:
            under = ok & (top_block == index)
            world.blocks[i[under], column_top[under], k[under]] = pal.id(format_state(name, {**props, "snowy": "true"}))
    world.blocks[i[ok], column_top[ok] + 1, k[ok]] = pal.id(catalog()["decorations"]["snow_layer"]["block"])
