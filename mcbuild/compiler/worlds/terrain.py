"""Deterministic terrain of the playable area: height field, stone/deepslate layers, ore bands.

Everything is drawn with numpy generators seeded from the world seed and a fixed stage name
(``stream``), so a stage's randomness never depends on another stage, on dict order or on
the clock. Blocks are kept as one ``uint16`` array of palette indices, indexed
``[x - x_min, y - y_min, z - x_min]``; palette index 0 is air.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from mcbuild.compiler.biome.layout import QUARRY_MARGIN, WorldArea, quarry_box
from mcbuild.compiler.spec.biome import BiomeSpec, OreBand
from mcbuild.compiler.spec.worldgen_catalog import catalog

AIR = "minecraft:air"
BLEND = 12.0   # blocks over which the relief fades in around the flattened zones
MAX_STATES = 1024   # palette capacity; lookup tables have this size so later states stay valid
Y = TypeVar("Y", int, np.ndarray)   # a height, or an array of them


def stream(seed: int, stage: str) -> np.random.Generator:
    """The random generator of one generation stage of one world."""
    return np.random.default_rng([seed & 0xFFFFFFFFFFFFFFFF, zlib.crc32(stage.encode("utf-8"))])


@dataclass
class Palette:
    """Block states (``name[key=value,...]``) by index; index 0 is air."""

    names: list[str] = field(default_factory=lambda: [AIR])

    def id(self, block: str) -> int:
        try:
            return self.names.index(block)
        except ValueError:
            if len(self.names) == MAX_STATES:
                raise OverflowError(f"more than {MAX_STATES} block states") from None
            self.names.append(block)
            return len(self.names) - 1

    def mask(self, blocks: list[str] | set[str]) -> np.ndarray:
        """Boolean lookup table over palette indices (also valid for states added later)."""
        table = np.zeros(MAX_STATES, dtype=bool)
        for b in blocks:
            if b in self.names:
                table[self.names.index(b)] = True
        return table


@dataclass
class World:
    """The playable area of one world while it is being generated."""

    spec: BiomeSpec
    seed: int
    area: WorldArea
    palette: Palette
    blocks: np.ndarray        # uint16 [x, y, z]
    height: np.ndarray        # int32 [x, z]: y of the top solid ground block
    reserved: np.ndarray      # uint8 [x, z]: zone bits (see ZONE_*)

    def column(self, x: int, z: int) -> tuple[int, int]:
        """Array indices of world column (x, z)."""
        return x - self.area.x_min, z - self.area.x_min

    def yi(self, y: Y) -> Y:
        return y - self.area.y_min

    def coords(self) -> tuple[np.ndarray, np.ndarray]:
        """World x and z of every column, as two [x, z] arrays."""
        axis = np.arange(self.area.x_min, self.area.x_min + self.area.size)
        return np.meshgrid(axis, axis, indexing="ij")

    def set_column(self, i: int, k: int, y0: int, y1: int, block: str) -> None:
        """Fill world y ``y0..y1`` (inclusive) of array column (i, k) with ``block``."""
        if y1 >= y0:
            self.blocks[i, self.yi(y0):self.yi(y1) + 1, k] = self.palette.id(block)


ZONE_CLEARING, ZONE_QUARRY, ZONE_POND, ZONE_SHORE, ZONE_TREE = 1, 2, 4, 8, 16


def value_noise(rng: np.random.Generator, size: int, wavelength: float, octaves: int) -> np.ndarray:
    """Fractal value noise on a ``size`` x ``size`` grid, roughly in [-1, 1]."""
    total = np.zeros((size, size))
    weight, norm = 1.0, 0.0
    for octave in range(octaves):
        wl = max(2.0, wavelength / 2 ** octave)
        n = int(np.ceil(size / wl)) + 2
        lattice = rng.uniform(-1.0, 1.0, (n, n))
        pos = (np.arange(size) + rng.uniform(0, wl)) / wl
        i0 = np.floor(pos).astype(int)
        t = pos - i0
        t = t * t * (3 - 2 * t)
        a = lattice[np.ix_(i0, i0)]
        b = lattice[np.ix_(i0 + 1, i0)]
        c = lattice[np.ix_(i0, i0 + 1)]
        d = lattice[np.ix_(i0 + 1, i0 + 1)]
        tx, tz = t[:, None], t[None, :]
        total += weight * ((a * (1 - tx) + b * tx) * (1 - tz) + (c * (1 - tx) + d * tx) * tz)
        norm += weight
        weight *= 0.5
    return total / norm


def height_field(spec: BiomeSpec, seed: int, area: WorldArea) -> np.ndarray:
    """Surface height per column; flat at base_height in the clearing and around the quarry."""
    t = spec.terrain
    axis = np.arange(area.x_min, area.x_min + area.size)
    x, z = np.meshgrid(axis, axis, indexing="ij")
    box = quarry_box(spec).grow(QUARRY_MARGIN)
    to_clearing = np.hypot(x, z) - t.clearing_radius
    to_quarry = np.hypot(np.maximum(np.maximum(box.x0 - x, 0), x - box.x1),
                         np.maximum(np.maximum(box.z0 - z, 0), z - box.z1))
    fade = np.clip(np.minimum(to_clearing, to_quarry) / BLEND, 0.0, 1.0)
    fade = fade * fade * (3 - 2 * fade)
    relief = value_noise(stream(seed, "relief"), area.size, t.relief.wavelength, t.relief.octaves)
    return (t.base_height + np.rint(t.relief.amplitude * relief * fade)).astype(np.int32)


def base_layers(spec: BiomeSpec, seed: int, area: WorldArea) -> World:
    """Bedrock, deepslate, stone, filler and top blocks below the height field."""
    cat = catalog()
    palette = Palette()
    heights = height_field(spec, seed, area)
    ys = np.arange(area.y_min, area.y_max + 1, dtype=np.int32)
    stone, deepslate = palette.id("minecraft:stone"), palette.id("minecraft:deepslate[axis=y]")
    blocks = np.where(ys[None, :, None] <= heights[:, None, :], np.uint16(stone), np.uint16(0)).astype(np.uint16)
    rng = stream(seed, "layers")
    level, blend = cat["deepslate_level"], cat["deepslate_blend"]
    blocks[:, : level - area.y_min, :] = deepslate
    for y in range(level, level + blend):     # the game's deepslate gradient: y 0 always .. y 7 rarely
        slab = blocks[:, y - area.y_min, :]
        slab[(rng.random(slab.shape) < (level + blend - y) / (blend + 1)) & (slab == stone)] = deepslate
    bedrock = palette.id("minecraft:bedrock")
    blocks[:, 0, :] = bedrock
    for k in range(1, 5):
        slab = blocks[:, k, :]
        slab[rng.random(slab.shape) < 1 - k / 5] = bedrock
    i, kz = np.meshgrid(np.arange(area.size), np.arange(area.size), indexing="ij")
    surface = spec.terrain.surface
    for d in range(1, surface.depth):
        blocks[i, heights - d - area.y_min, kz] = palette.id(surface.filler)
    blocks[i, heights - area.y_min, kz] = palette.id(surface.top)
    reserved = np.zeros((area.size, area.size), dtype=np.uint8)
    return World(spec, seed, area, palette, blocks, heights, reserved)


def _band_heights(rng: np.random.Generator, band: OreBand, n: int) -> np.ndarray:
    if band.distribution == "trapezoid":
        u = (rng.random(n) + rng.random(n)) / 2
    else:
        u = rng.random(n)
    return np.rint(band.min_y + u * (band.max_y - band.min_y)).astype(np.int32)


def air_exposed(world: World, pts: np.ndarray) -> np.ndarray:
    """For [n, 3] array indices: does any of the six neighbours hold air?"""
    shape = np.array(world.blocks.shape)
    exposed = np.zeros(len(pts), dtype=bool)
    for axis in range(3):
        for step in (-1, 1):
            nb = pts.copy()
            nb[:, axis] += step
            inside = (nb[:, axis] >= 0) & (nb[:, axis] < shape[axis])
            nb = np.clip(nb, 0, shape - 1)
            exposed |= inside & (world.blocks[nb[:, 0], nb[:, 1], nb[:, 2]] == 0)
    return exposed


def place_ores(world: World) -> None:
    """Every ore band: veins of about ``vein_size`` blocks, ``attempts_per_chunk`` per chunk,
    replacing stone with the plain variant and deepslate with the deepslate variant."""
    cat = catalog()
    area, pal = world.area, world.palette
    stone, deepslate = pal.id("minecraft:stone"), pal.id("minecraft:deepslate[axis=y]")
    for entry in world.spec.resources.ores:
        ore = cat["ores"][entry.ore]
        plain = pal.id(ore["stone"])
        deep = pal.id(ore["deepslate"] + ("[axis=y]" if ore["deepslate"] == "minecraft:deepslate" else ""))
        for b, band in enumerate(entry.bands):
            rng = stream(world.seed, f"ore/{entry.ore}/{b}")
            n = band.attempts_per_chunk * area.chunks * area.chunks
            centres = np.stack([rng.integers(0, area.size, n), _band_heights(rng, band, n) - area.y_min,
                                rng.integers(0, area.size, n)], axis=1)
            spread = max(0.6, 0.55 * band.vein_size ** (1 / 3))
            offsets = np.rint(rng.normal(0.0, spread, (n, band.vein_size, 3))).astype(np.int64)
            pts = (centres[:, None, :] + offsets).reshape(-1, 3)
            keep = np.all((pts >= 0) & (pts < np.array(world.blocks.shape)), axis=1)
            pts = pts[keep]
            drop = rng.random(len(pts)) < band.discard_on_air_exposure
            pts = pts[~(drop & air_exposed(world, pts))]
            current = world.blocks[pts[:, 0], pts[:, 1], pts[:, 2]]
            for target, variant in ((stone, plain), (deepslate, deep)):
                hit = pts[current == target]
                world.blocks[hit[:, 0], hit[:, 1], hit[:, 2]] = variant
