"""Write a generated playable area into a Java 1.19 save with amulet-core.

The save is opened (``amulet.load_format``) on our own ``level.dat`` so amulet keeps y -64..319.
Every palette state is completed to the full 1.19 block state (every property, defaults from
minecraft-data: ``compiler.rules.blockstates``); each chunk is encoded in the 1.18+ layout a
1.19 server writes (every section has ``block_states`` and ``biomes``; palette index 0 is air
in the world palette) and stored through the format wrapper's ``put_raw_chunk_data``, which
writes the Anvil regions. Heightmaps and light are left for the server to compute on load
(``Heightmaps`` empty, ``isLightOn`` 0: docs/worlds.md, "What a chunk carries").

Afterwards the save is normalised into a plain, byte-reproducible save: the per-chunk write
timestamps in the region headers are zeroed, ``session.lock`` is removed and ``level.dat`` is
written last by ``compiler.worlds.save.level_dat``. Only ``level.dat``, ``region/*.mca`` and ``datapacks/``
remain.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from compiler.rules.blockstates import block_states
from compiler.worlds.save.level_dat import DATA_VERSION
from compiler.worlds.terrain import World

REGION_HEADER = 4096          # chunk locations; the next 4096 bytes are write timestamps
DIMENSION = "minecraft:overworld"


def _quiet_amulet() -> None:
    for name in ("amulet", "PyMCTranslate"):
        logging.getLogger(name).setLevel(logging.WARNING)


def _full_states(names: list[str]) -> list:
    """Palette entries (``CompoundTag`` Name/Properties) with every property of the 1.19 block."""
    from amulet_nbt import CompoundTag, StringTag

    states = block_states()
    out = []
    for state in names:
        name, properties = states.complete(state)
        entry = CompoundTag({"Name": StringTag(name)})
        if properties:
            entry["Properties"] = CompoundTag({k: StringTag(v) for k, v in sorted(properties.items())})
        out.append(entry)
    return out


def _section(blocks: np.ndarray, states: list, cy: int, biome: str):
    """One 16^3 section (array indexed [x, y, z]) in the 1.18+ chunk layout."""
    from amulet.utils.world_utils import encode_long_array
    from amulet_nbt import ByteTag, CompoundTag, ListTag, LongArrayTag, StringTag

    flat = np.transpose(blocks, (1, 2, 0)).ravel()          # index = y*256 + z*16 + x
    if flat.min() == flat.max():
        used, inverse = flat[:1], None
    else:
        used, inverse = np.unique(flat, return_inverse=True)
    block_states = CompoundTag({"palette": ListTag([states[i] for i in used])})
    if inverse is not None:
        block_states["data"] = LongArrayTag(encode_long_array(inverse, dense=False, min_bits_per_entry=4))
    return CompoundTag({"Y": ByteTag(cy), "biomes": CompoundTag({"palette": ListTag([StringTag(biome)])}),
                        "block_states": block_states})


def _chunk(world: World, states: list, cx: int, cz: int):
    from amulet_nbt import ByteTag, CompoundTag, IntTag, ListTag, LongTag, NamedTag, StringTag

    area = world.area
    i0, k0 = (cx - area.chunk_min) * 16, (cz - area.chunk_min) * 16
    column = world.blocks[i0:i0 + 16, :, k0:k0 + 16]
    first = area.y_min // 16
    sections = [_section(column[:, (cy - first) * 16:(cy - first + 1) * 16, :], states, cy, world.spec.base_biome)
                for cy in range(first, (area.y_max + 1) // 16)]
    return NamedTag(CompoundTag({
        "DataVersion": IntTag(DATA_VERSION), "xPos": IntTag(cx), "zPos": IntTag(cz), "yPos": IntTag(first),
        "LastUpdate": LongTag(0), "Status": StringTag("full"), "InhabitedTime": LongTag(0),
        "Heightmaps": CompoundTag({}), "entities": ListTag([]), "block_entities": ListTag([]),
        "block_ticks": ListTag([]), "fluid_ticks": ListTag([]),
        "PostProcessing": ListTag([ListTag([]) for _ in sections]),
        "structures": CompoundTag({"References": CompoundTag({}), "starts": CompoundTag({})}),
        "isLightOn": ByteTag(0), "sections": ListTag(sections),
    }))


def write_regions(world: World, save_dir: Path, level_dat: bytes) -> None:
    """Write the region files of ``world`` into ``save_dir`` (which gets ``level_dat``)."""
    import amulet

    _quiet_amulet()
    if world.palette.names[0] != "minecraft:air":
        raise ValueError("palette index 0 must be air")
    save_dir.mkdir(parents=True, exist_ok=True)
    (save_dir / "level.dat").write_bytes(level_dat)
    wrapper = amulet.load_format(str(save_dir))
    wrapper.open()
    try:
        states = _full_states(world.palette.names)
        area = world.area
        for cx in range(area.chunk_min, area.chunk_max + 1):
            for cz in range(area.chunk_min, area.chunk_max + 1):
                wrapper.put_raw_chunk_data(cx, cz, _chunk(world, states, cx, cz), DIMENSION)
    finally:
        wrapper.close()
    _normalise(save_dir, level_dat, area.chunks * area.chunks)


def _normalise(save_dir: Path, level_dat: bytes, chunks: int) -> None:
    """Zero the region timestamps, drop the lock, check every chunk is stored, write level.dat."""
    (save_dir / "session.lock").unlink(missing_ok=True)
    stored = 0
    for region in sorted((save_dir / "region").glob("*.mca")):
        with open(region, "r+b") as fh:
            locations = np.frombuffer(fh.read(REGION_HEADER), dtype=">u4")
            stored += int(np.count_nonzero(locations))
            fh.seek(REGION_HEADER)
            fh.write(bytes(REGION_HEADER))
    if stored != chunks:
        raise RuntimeError(f"{save_dir}: {stored} of {chunks} chunks stored")
    (save_dir / "level.dat").write_bytes(level_dat)
