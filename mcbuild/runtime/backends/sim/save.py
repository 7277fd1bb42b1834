"""Reads the blocks, biomes and spawn of a Java 1.19 save (``level.dat`` + ``region/*.mca``).

Read-only: region files are parsed here (the 8 KiB sector table, then each chunk's compressed
NBT decoded with nbtlib) rather than through an editor's region wrapper, which opens
files for writing. The playable area is every chunk present in the region files; the result is
one block array in x, y, z order over the chunks' bounding box. Block state properties are kept
apart from the block ids (``WorldData.states``, ``WorldData.odd_states``): the ids drive the body
and the scans, the states only the loot tables that read them.
"""
from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import nbtlib
import numpy as np

from mcbuild.compiler.worlds.save.level_dat import DATA_VERSION, read_data
from mcbuild.runtime.errors import InfrastructureFault

from .world import OUTSIDE, WorldData

SECTOR = 4096
SECTION = 16
BIOME_CELL = 4
COMPRESSION = {1: "gzip", 2: "zlib", 3: "none"}


def region_files(save_dir: Path) -> list[Path]:
    return sorted((save_dir / "region").glob("r.*.*.mca"))


class SaveError(InfrastructureFault, ValueError):
    """A save file that cannot be read or is not what it says: names the file and, where known, the
    chunk and byte offset. A damaged world is a fault of the machinery, never a score."""


def spawn(save_dir: Path) -> tuple[int, int, int]:
    path = save_dir / "level.dat"
    try:
        data = read_data(path)
        return int(data["SpawnX"]), int(data["SpawnY"]), int(data["SpawnZ"])
    except ValueError as exc:
        raise SaveError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - a level.dat that parses but lacks or mistypes a field
        raise SaveError(f"{path}: unreadable level.dat ({type(exc).__name__}: {exc})") from None


def _chunks(path: Path):
    """(cx, cz, compound) of every chunk stored in one region file; damage is a :class:`SaveError`."""
    try:
        rx, rz = (int(v) for v in path.name.split(".")[1:3])
    except ValueError:
        raise SaveError(f"{path}: not a region file name (r.<x>.<z>.mca)") from None
    raw = path.read_bytes()
    if len(raw) < 2 * SECTOR:
        raise SaveError(f"{path}: {len(raw)} bytes, shorter than the {2 * SECTOR}-byte region header")
    for i in range(1024):
        (loc,) = struct.unpack_from(">I", raw, 4 * i)
        offset, sectors = loc >> 8, loc & 0xFF
        if offset == 0 or sectors == 0:
            continue
        start = offset * SECTOR
        try:
            yield rx * 32 + i % 32, rz * 32 + i // 32, _chunk(path, raw, i, start)
        except SaveError:
            raise
        except Exception as exc:  # noqa: BLE001 - struct, zlib and nbtlib errors of a damaged chunk
            raise SaveError(f"{path}: chunk {i} at byte {start}: damaged ({type(exc).__name__}: {exc})") from None


def _chunk(path: Path, raw: bytes, i: int, start: int):
    if start + 5 > len(raw):
        raise SaveError(f"{path}: chunk {i} at byte {start}: past the end of the file ({len(raw)} bytes)")
    (length,) = struct.unpack_from(">I", raw, start)
    if length < 1 or start + 4 + length > len(raw):
        raise SaveError(f"{path}: chunk {i} at byte {start}: length {length} runs past the end of the file")
    kind = raw[start + 4]
    body = raw[start + 5: start + 4 + length]
    if COMPRESSION.get(kind) == "zlib":
        body = zlib.decompress(body)
    elif COMPRESSION.get(kind) == "gzip":
        body = zlib.decompress(body, 16 + zlib.MAX_WBITS)
    elif COMPRESSION.get(kind) != "none":
        raise SaveError(f"{path}: chunk {i} at byte {start}: unsupported compression {kind}")
    root = nbtlib.File.parse(io.BytesIO(body))
    return root[""] if "" in root and len(root) == 1 else root      # nbtlib 1.x wraps the unnamed root


def _unpack(longs: np.ndarray, size: int, palette_len: int, min_bits: int) -> np.ndarray:
    """Indices packed into longs without spanning (the 1.16+ layout)."""
    bits = max(min_bits, int(palette_len - 1).bit_length())
    per_long = 64 // bits
    words = longs.astype(np.uint64)
    shifts = (np.arange(per_long, dtype=np.uint64) * np.uint64(bits))
    values = (words[:, None] >> shifts[None, :]) & np.uint64((1 << bits) - 1)
    return values.reshape(-1)[:size].astype(np.int64)


def _state_name(entry) -> str:
    """``name`` or ``name[key=value,...]`` (properties sorted) of a palette entry."""
    name = str(entry["Name"])
    props = entry.get("Properties")
    if not props:
        return name
    return name + "[" + ",".join(f"{k}={v}" for k, v in sorted(props.items())) + "]"


def read(save_dir: Path) -> WorldData:
    """The save's playable area as a :class:`WorldData` (a damaged file is a :class:`SaveError`)."""
    sections: dict[tuple[int, int, int], tuple[list[str], np.ndarray, list[str], np.ndarray]] = {}
    for path in region_files(save_dir):
        for cx, cz, chunk in _chunks(path):
            _check_slot(path, cx, cz, chunk)
            try:
                _add_sections(sections, cx, cz, chunk)
            except Exception as exc:  # noqa: BLE001 - a chunk whose NBT lacks or mistypes a field
                raise SaveError(f"{path}: chunk ({cx}, {cz}): damaged ({type(exc).__name__}: {exc})") from None
    if not sections:
        raise FileNotFoundError(f"{save_dir}: no chunk sections in region/")
    return _assemble(sections, spawn(save_dir))


def _check_slot(path: Path, cx: int, cz: int, chunk) -> None:
    """A chunk must say it is the chunk of its slot, saved by 1.19.0: a chunk moved or copied from
    another save is refused even when every file hash agrees (the manifest may have been re-hashed)."""
    x, z, version = (_number(chunk.get(key)) for key in ("xPos", "zPos", "DataVersion"))
    if (x, z) != (cx, cz):
        raise SaveError(f"{path}: the chunk in the slot of chunk ({cx}, {cz}) says it is chunk ({x}, {z}) "
                        "(xPos, zPos); the save was edited")
    if version != DATA_VERSION:
        raise SaveError(f"{path}: chunk ({cx}, {cz}) has DataVersion {version}, not 1.19.0's {DATA_VERSION}")


def _number(value) -> int | None:
    """An NBT number as an int (None: missing or not a number)."""
    return int(value) if isinstance(value, int) else None


def _add_sections(sections: dict, cx: int, cz: int, chunk) -> None:
    for sec in chunk["sections"]:
        sy = int(sec["Y"])
        if "block_states" not in sec:
            continue
        states = sec["block_states"]
        palette = [_state_name(p) for p in states["palette"]]
        if "data" in states:
            idx = _unpack(np.asarray(states["data"]), 4096, len(palette), 4)
        else:
            idx = np.zeros(4096, dtype=np.int64)
        if idx.size != 4096 or (len(idx) and int(idx.max()) >= len(palette)):
            raise ValueError(f"section {sy}: block indices do not fit a palette of {len(palette)}")
        biomes = sec["biomes"]
        bpal = [str(b) for b in biomes["palette"]]
        if "data" in biomes:
            bidx = _unpack(np.asarray(biomes["data"]), 64, len(bpal), 1)
        else:
            bidx = np.zeros(64, dtype=np.int64)
        if bidx.size != 64 or int(bidx.max()) >= len(bpal):
            raise ValueError(f"section {sy}: biome indices do not fit a palette of {len(bpal)}")
        sections[(cx, sy, cz)] = (palette, idx, bpal, bidx)


def _assemble(sections, spawn_pos: tuple[int, int, int]) -> WorldData:
    xs = [k[0] for k in sections]
    ys = [k[1] for k in sections]
    zs = [k[2] for k in sections]
    cx0, cz0 = min(xs), min(zs)
    ncx, ncz = max(xs) - cx0 + 1, max(zs) - cz0 + 1
    sy0, nsy = min(ys), max(ys) - min(ys) + 1
    palette: dict[str, int] = {"minecraft:air": 0, OUTSIDE: 1}
    full_palette: dict[str, int] = {"minecraft:air": 0, OUTSIDE: 1}
    biome_palette: dict[str, int] = {}
    present = {(k[0], k[2]) for k in sections}
    full = np.zeros((ncx * SECTION, nsy * SECTION, ncz * SECTION), dtype=np.uint16)
    biomes = np.zeros((ncx * 4, nsy * 4, ncz * 4), dtype=np.uint8)
    for cx in range(ncx):
        for cz in range(ncz):
            if (cx + cx0, cz + cz0) not in present:
                full[cx * 16:(cx + 1) * 16, :, cz * 16:(cz + 1) * 16] = 1
    for (cx, sy, cz), (pal, idx, bpal, bidx) in sections.items():
        lut = np.array([full_palette.setdefault(name, len(full_palette)) for name in pal], dtype=np.uint16)
        cube = lut[idx].reshape(16, 16, 16).transpose(2, 0, 1)  # stored y, z, x -> x, y, z
        x, y, z = (cx - cx0) * 16, (sy - sy0) * 16, (cz - cz0) * 16
        full[x:x + 16, y:y + 16, z:z + 16] = cube
        blut = np.array([biome_palette.setdefault(name, len(biome_palette)) for name in bpal], dtype=np.uint8)
        bx, by, bz = (cx - cx0) * 4, (sy - sy0) * 4, (cz - cz0) * 4
        biomes[bx:bx + 4, by:by + 4, bz:bz + 4] = blut[bidx].reshape(4, 4, 4).transpose(2, 0, 1)
    full, biomes = _crop_sky(full, biomes)
    full_names = [n for n, _ in sorted(full_palette.items(), key=lambda kv: kv[1])]
    to_block = np.array([palette.setdefault(n.partition("[")[0], len(palette)) for n in full_names], dtype=np.uint16)
    blocks = to_block[full]
    states, odd = _states(full, blocks, full_names, len(palette))
    names = [n for n, _ in sorted(palette.items(), key=lambda kv: kv[1])]
    bnames = [n for n, _ in sorted(biome_palette.items(), key=lambda kv: kv[1])]
    return WorldData(tuple(names), blocks, (cx0 * 16, sy0 * 16, cz0 * 16), spawn_pos, tuple(bnames), biomes,
                     states, odd)


def _states(full: np.ndarray, blocks: np.ndarray, full_names: list[str], n_blocks: int) -> tuple[tuple[str, ...], dict[int, str]]:
    """Each block id's most common state properties, and the cells (flat index) whose differ."""
    pairs = np.bincount(blocks.reshape(-1).astype(np.int64) * len(full_names) + full.reshape(-1),
                        minlength=n_blocks * len(full_names)).reshape(n_blocks, len(full_names))
    common = pairs.argmax(axis=1)
    odd_cells = np.flatnonzero(full.reshape(-1) != common[blocks.reshape(-1)])
    props = [n.partition("[")[2].rstrip("]") for n in full_names]
    odd_full = full.reshape(-1)[odd_cells]
    return tuple(props[i] for i in common), {int(c): props[f] for c, f in zip(odd_cells.tolist(), odd_full.tolist())}


def _crop_sky(blocks: np.ndarray, biomes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop the all-air layers above the highest block, keeping two air layers (the open sky)."""
    filled = np.nonzero((blocks != 0).any(axis=(0, 2)))[0]
    top = int(filled.max()) + 3 if len(filled) else 2
    top = min(blocks.shape[1], -(-top // BIOME_CELL) * BIOME_CELL)
    return np.ascontiguousarray(blocks[:, :top, :]), np.ascontiguousarray(biomes[:, :top // BIOME_CELL, :])
