"""Seed-independent layout of a biome's spawn area, computed from the spec alone.

Both worlds of a biome share one datapack, so everything the pack names by coordinates (the
spawn point and the creatures its ``mcbuild:spawn_entities`` function summons) must not depend
on the world seed. The terrain generator therefore flattens two zones to ``base_height``: the
clearing around spawn and the quarry (with a margin); this module defines their geometry.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from mcbuild.compiler.spec.biome import BiomeSpec
from mcbuild.compiler.spec.worldgen_catalog import plain_floor

QUARRY_MARGIN = 3      # flat ground kept around the quarry rim
CREATURE_RING = 0.6    # creatures stand on a ring at this fraction of the clearing radius
POND_SHORE = 2         # flat shore ring (at water level) around a pond
POND_RIM = 6           # shore plus the slope back up to the terrain


@dataclass(frozen=True)
class WorldArea:
    """The playable area written into every save: a square of chunks around spawn (0, 0) and
    the full overworld height. Beyond it, the biome pack's world generation takes over."""

    chunk_min: int = -8          # inclusive
    chunk_max: int = 7           # inclusive
    y_min: int = -64             # inclusive
    y_max: int = 319             # inclusive

    @property
    def chunks(self) -> int:
        """Chunks along one side."""
        return self.chunk_max - self.chunk_min + 1

    @property
    def x_min(self) -> int:
        """Lowest block x (and z) inside the area."""
        return self.chunk_min * 16

    @property
    def size(self) -> int:
        """Blocks along one side."""
        return self.chunks * 16

    @property
    def height(self) -> int:
        return self.y_max - self.y_min + 1

    def contains(self, x: float, z: float, margin: float = 0) -> bool:
        return self.x_min + margin <= x and x < self.x_min + self.size - margin \
            and self.x_min + margin <= z and z < self.x_min + self.size - margin


WORLD_AREA = WorldArea()


@dataclass(frozen=True)
class Box:
    """An inclusive block rectangle in x/z."""

    x0: int
    z0: int
    x1: int
    z1: int

    def __str__(self) -> str:
        return f"x {self.x0}..{self.x1}, z {self.z0}..{self.z1}"

    def grow(self, by: int) -> "Box":
        return Box(self.x0 - by, self.z0 - by, self.x1 + by, self.z1 + by)

    def distance(self, x: float, z: float) -> float:
        """Horizontal distance from a point to the nearest cell of the box (0 inside)."""
        dx = max(self.x0 - x, 0.0, x - self.x1)
        dz = max(self.z0 - z, 0.0, z - self.z1)
        return math.hypot(dx, dz)

    def farthest(self, x: float, z: float) -> float:
        return max(math.hypot(cx - x, cz - z) for cx in (self.x0, self.x1) for cz in (self.z0, self.z1))


@dataclass(frozen=True)
class Creature:
    entity: str
    x: float
    y: int
    z: float


def spawn_point(spec: BiomeSpec) -> tuple[int, int, int]:
    """World spawn (block coordinates of the player's feet) at the centre of the clearing."""
    return 0, spec.terrain.base_height + 1, 0


def quarry_box(spec: BiomeSpec) -> Box:
    q = spec.access.quarry
    x0 = q.offset_x - q.width // 2
    z0 = q.offset_z - q.width // 2
    return Box(x0, z0, x0 + q.width - 1, z0 + q.width - 1)


def quarry_floor_depth(spec: BiomeSpec) -> int:
    """Depth of the quarry's central floor below base_height (terraces are one block per ring)."""
    q = spec.access.quarry
    return min(q.depth, (q.width - 1) // 2 + 1)


def quarry_depths(spec: BiomeSpec) -> dict[tuple[int, int], int]:
    """(x, z) -> blocks removed below base_height: one more per ring towards the centre."""
    box, deepest = quarry_box(spec), quarry_floor_depth(spec)
    return {(x, z): min(deepest, 1 + min(x - box.x0, box.x1 - x, z - box.z0, box.z1 - z))
            for x in range(box.x0, box.x1 + 1) for z in range(box.z0, box.z1 + 1)}


def quarry_faces(spec: BiomeSpec) -> list[tuple[int, int, int]]:
    """Stone blocks (plain-ore level, below the soil) that touch the quarry's air: where exposed
    ores go. The quarry lies in flattened ground, so this list is the same in every world."""
    base = spec.terrain.base_height
    depths = quarry_depths(spec)
    lowest = plain_floor()
    highest = base - spec.terrain.surface.depth
    obsidian = set(obsidian_cells(spec))

    def solid(x: int, y: int, z: int) -> bool:
        return y <= base - depths.get((x, z), 0)

    faces = set()
    for (x, z), depth in depths.items():
        for y in range(base - depth + 1, base + 1):
            for dx, dy, dz in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)):
                cell = (x + dx, y + dy, z + dz)
                if solid(*cell) and lowest <= cell[1] <= highest and cell not in obsidian:
                    faces.add(cell)
    return sorted(faces)


def obsidian_cells(spec: BiomeSpec) -> list[tuple[int, int, int]]:
    """(x, y, z) of the obsidian patch: the floor blocks of the quarry's central cells."""
    box = quarry_box(spec)
    size = spec.access.quarry.obsidian_size
    cx, cz = (box.x0 + box.x1) // 2, (box.z0 + box.z1) // 2
    depths = quarry_depths(spec)
    base = spec.terrain.base_height
    lo = -(size // 2)
    return [(cx + dx, base - depths[(cx + dx, cz + dz)], cz + dz)
            for dx in range(lo, lo + size) for dz in range(lo, lo + size)]


def creature_positions(spec: BiomeSpec) -> list[Creature]:
    """Fixed creature positions on a ring in the clearing, in spec order (cows first if listed first)."""
    entities = [c.entity for c in spec.ecology.creatures for _ in range(c.count)]
    if not entities:
        return []
    radius = max(3.0, spec.terrain.clearing_radius * CREATURE_RING)
    y = spec.terrain.base_height + 1
    taken: set[tuple[int, int]] = {(0, 0)}
    out = []
    for i, entity in enumerate(entities):
        angle = 2 * math.pi * i / len(entities)
        r = radius
        while True:
            cell = (round(r * math.cos(angle)), round(r * math.sin(angle)))
            if cell not in taken:
                break
            r += 1.0
        taken.add(cell)
        out.append(Creature(entity, cell[0] + 0.5, y, cell[1] + 0.5))
    return out
