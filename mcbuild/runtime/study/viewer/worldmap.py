"""Top-down map of a world: the highest non-air block of every column, one pixel per block (PNG)."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np

#: Colours by block-name fragment (first match wins); anything else is grey.
_COLOURS = (
    ("water", (52, 96, 201)), ("lava", (220, 90, 20)), ("ice", (160, 190, 240)), ("snow", (240, 240, 245)),
    ("leaves", (40, 110, 40)), ("log", (105, 80, 45)), ("wood", (105, 80, 45)), ("grass_block", (100, 160, 70)),
    ("grass", (120, 175, 80)), ("fern", (90, 150, 70)), ("sand", (215, 200, 140)), ("gravel", (135, 130, 125)),
    ("dirt", (130, 95, 65)), ("podzol", (110, 80, 50)), ("cane", (140, 190, 100)), ("vine", (60, 120, 50)),
    ("bamboo", (110, 170, 60)), ("melon", (100, 150, 40)), ("ore", (200, 120, 120)), ("stone", (125, 125, 125)),
    ("terracotta", (160, 90, 60)), ("planks", (170, 135, 85)), ("clay", (160, 165, 180)),
)
_FLOWER = (200, 180, 90)


def _colour(block: str) -> tuple[int, int, int]:
    name = block.removeprefix("minecraft:")
    for frag, rgb in _COLOURS:
        if frag in name:
            return rgb
    if any(f in name for f in ("tulip", "poppy", "daisy", "dandelion", "bluet", "orchid", "allium", "cornflower",
                               "lily", "bush", "flower")):
        return _FLOWER
    return (150, 150, 150)


def world_map(save: Path) -> tuple[bytes, dict]:
    """(PNG bytes, bounds) of a save: ``bounds`` gives the world x/z of the image's top-left pixel and its size."""
    from PIL import Image

    from mcbuild.runtime.backends.sim.save import read

    w = read(save)
    solid = w.blocks != 0
    ny = w.blocks.shape[1]
    top = ny - 1 - np.argmax(solid[:, ::-1, :], axis=1)
    ids = np.take_along_axis(w.blocks, top[:, None, :], axis=1)[:, 0, :]
    lut = np.array([_colour(b) for b in w.palette], dtype=np.float32)
    rgb = lut[ids]                                   # (nx, nz, 3), x then z
    height = (top - top.mean()) / max(1.0, float(top.std()) * 4)
    rgb = np.clip(rgb * (1.0 + np.clip(height, -0.3, 0.3))[..., None], 0, 255).astype(np.uint8)
    img = Image.fromarray(np.ascontiguousarray(rgb.transpose(1, 0, 2)), "RGB")   # rows = z, columns = x
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    bounds = {"x0": int(w.origin[0]), "z0": int(w.origin[2]), "nx": int(w.blocks.shape[0]),
              "nz": int(w.blocks.shape[2]), "spawn": list(w.spawn)}
    return buf.getvalue(), bounds
