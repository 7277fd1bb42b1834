"""Write a generated playable area into the region files of a Java 1.19 save, with nbtlib.

Every palette state is completed to the full 1.19 block state (every property, defaults from
minecraft-data: ``mcbuild.compiler.rules.blockstates``). Each chunk is encoded in the 1.18+ layout a 1.19
server writes (every section has ``block_states`` and ``biomes``; indices packed into longs
without spanning, at least 4 bits for blocks) and stored zlib-compressed in the Anvil region
file of its 32 x 32 chunks: a 4 KiB table of chunk locations, a 4 KiB table of write times
(left zero, so equal worlds give equal bytes), then each chunk in whole 4 KiB sectors.
Heightmaps and light are left for the server to compute on load (``Heightmaps`` empty,
``isLightOn`` 0: docs/worlds.md, "What a chunk carries").
"""
from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
from nbtlib import tag as nbt

from mcbuild.compiler.core.canonical import write_file
from mcbuild.compiler.rules.blockstates import block_states
from mcbuild.compiler.worlds.save.level_dat import DATA_VERSION, nbt_bytes
from mcbuild.compiler.worlds.terrain import World

SECTOR = 4096                 # region files are made of 4 KiB sectors; two of them hold the header
REGION_CHUNKS = 32            # a region file holds 32 x 32 chunks
ZLIB = 2                      # the chunk compression id a 1.19 server writes


def _full_states(names: list[str]) -> list[nbt.Compound]:
    """Palette entries (Name/Properties) with every property of the 1.19 block."""
    states = block_states()
    out = []
    for state in names:
        name, properties = states.complete(state)
        entry = nbt.Compound({"Name": nbt.String(name)})
        if properties:
            entry["Properties"] = nbt.Compound({k: nbt.String(v) for k, v in sorted(properties.items())})
        out.append(entry)
    return out


def pack_indices(indices: np.ndarray, bits: int) -> nbt.LongArray:
    """Palette indices packed ``64 // bits`` to a long, lowest bits first, none spanning two longs."""
    per_long = 64 // bits
    padded = np.zeros(-(-len(indices) // per_long) * per_long, dtype=np.uint64)
    padded[:len(indices)] = indices
    shifts = np.arange(per_long, dtype=np.uint64) * np.uint64(bits)
    words = np.bitwise_or.reduce(padded.reshape(-1, per_long) << shifts, axis=1)
    return nbt.LongArray(words.view(np.int64))


def _section(blocks: np.ndarray, states: list[nbt.Compound], cy: int, biome: str) -> nbt.Compound:
    """One 16^3 section (array indexed [x, y, z]) in the 1.18+ chunk layout."""
    flat = np.transpose(blocks, (1, 2, 0)).ravel()          # index = y*256 + z*16 + x
    used, inverse = np.unique(flat, return_inverse=True)
    block_states_tag = nbt.Compound({"palette": nbt.List[nbt.Compound]([states[i] for i in used])})
    if len(used) > 1:
        block_states_tag["data"] = pack_indices(inverse, max(4, (len(used) - 1).bit_length()))
    return nbt.Compound({"Y": nbt.Byte(cy), "biomes": nbt.Compound({"palette": nbt.List[nbt.String]([nbt.String(biome)])}),
                         "block_states": block_states_tag})


def _chunk(world: World, states: list[nbt.Compound], cx: int, cz: int) -> nbt.Compound:
    area = world.area
    i0, k0 = (cx - area.chunk_min) * 16, (cz - area.chunk_min) * 16
    column = world.blocks[i0:i0 + 16, :, k0:k0 + 16]
    first = area.y_min // 16
    sections = [_section(column[:, (cy - first) * 16:(cy - first + 1) * 16, :], states, cy, world.spec.base_biome)
                for cy in range(first, (area.y_max + 1) // 16)]
    return nbt.Compound({
        "DataVersion": nbt.Int(DATA_VERSION), "xPos": nbt.Int(cx), "zPos": nbt.Int(cz), "yPos": nbt.Int(first),
        "LastUpdate": nbt.Long(0), "Status": nbt.String("full"), "InhabitedTime": nbt.Long(0),
        "Heightmaps": nbt.Compound({}), "entities": nbt.List([]), "block_entities": nbt.List([]),
        "block_ticks": nbt.List([]), "fluid_ticks": nbt.List([]),
        "PostProcessing": nbt.List[nbt.List]([nbt.List([]) for _ in sections]),
        "structures": nbt.Compound({"References": nbt.Compound({}), "starts": nbt.Compound({})}),
        "isLightOn": nbt.Byte(0), "sections": nbt.List[nbt.Compound](sections),
    })


def region_bytes(chunks: dict[tuple[int, int], bytes]) -> bytes:
    """One region file from the uncompressed NBT of its chunks, keyed by (cx, cz) within the region."""
    locations = np.zeros(REGION_CHUNKS * REGION_CHUNKS, dtype=">u4")
    body = bytearray()
    for (x, z), data in sorted(chunks.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        packed = zlib.compress(data)
        record = struct.pack(">IB", len(packed) + 1, ZLIB) + packed
        sectors = -(-len(record) // SECTOR)
        if sectors > 255:
            raise ValueError(f"chunk ({x}, {z}) needs {sectors} sectors; a region entry holds at most 255")
        locations[x + z * REGION_CHUNKS] = (2 + len(body) // SECTOR) << 8 | sectors
        body += record + bytes(sectors * SECTOR - len(record))
    return locations.tobytes() + bytes(SECTOR) + bytes(body)


def write_regions(world: World, save_dir: Path, level_dat: bytes) -> None:
    """Write ``level.dat`` and the region files of ``world`` into ``save_dir``."""
    if world.palette.names[0] != "minecraft:air":
        raise ValueError("palette index 0 must be air")
    states = _full_states(world.palette.names)
    regions: dict[tuple[int, int], dict[tuple[int, int], bytes]] = {}
    area = world.area
    for cx in range(area.chunk_min, area.chunk_max + 1):
        for cz in range(area.chunk_min, area.chunk_max + 1):
            region = regions.setdefault((cx // REGION_CHUNKS, cz // REGION_CHUNKS), {})
            region[(cx % REGION_CHUNKS, cz % REGION_CHUNKS)] = nbt_bytes(_chunk(world, states, cx, cz))
    (save_dir / "region").mkdir(parents=True, exist_ok=True)
    for (rx, rz), chunks in sorted(regions.items()):
        write_file(save_dir / "region" / f"r.{rx}.{rz}.mca", region_bytes(chunks))
    write_file(save_dir / "level.dat", level_dat)
