"""A save's static world, derived once: the arrays ``world.derive`` makes of what ``save.read``
reads are cached in ``build/cache/sim/`` under the hash of the save's region files (a Vanilla world
and its Mirror copies share one cache entry)."""
from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np

from mcbuild.compiler.core.canonical import atomic_write
from mcbuild.compiler.core.paths import BUILD

from . import save
from .world import StaticWorld, WorldData, derive

CACHE_DIR = BUILD / "cache" / "sim"
CACHE_VERSION = "2"


def save_key(save_dir: Path) -> str:
    """Hash of the save's region files: identical for a Vanilla world and its Mirror copies."""
    h = hashlib.sha256(CACHE_VERSION.encode())
    for path in save.region_files(save_dir):
        h.update(path.name.encode())
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def region_stamps(save_dir: Path) -> tuple[tuple[str, int, int], ...]:
    """(name, size, mtime) of every region file: what a memo of :func:`save_key` is keyed by."""
    return tuple((p.name, st.st_size, st.st_mtime_ns) for p in save.region_files(save_dir) for st in (p.stat(),))


def load_save(save_dir: Path, key: str, cache_dir: Path = CACHE_DIR) -> StaticWorld:
    """The static world of a save whose :func:`save_key` is ``key``, from the cache when present."""
    cache = cache_dir / f"{key}.npz"
    spawn = save.spawn(save_dir)
    if cache.is_file():
        try:
            return _from_cache(cache, spawn)
        except Exception:  # noqa: BLE001 - a damaged cache file is derived data: rebuild it
            cache.unlink(missing_ok=True)
    world = derive(save.read(save_dir))
    _to_cache(world, cache)
    return world


def _to_cache(world: StaticWorld, path: Path) -> None:
    d = world.data
    out = io.BytesIO()
    odd = sorted(d.odd_states.items())
    np.savez_compressed(out, palette=np.array(d.palette), blocks=d.blocks, origin=np.array(d.origin),
                        biome_palette=np.array(d.biome_palette), biomes=d.biomes, states=np.array(d.states, dtype=str),
                        odd_cells=np.array([c for c, _ in odd], dtype=np.int64),
                        odd_states=np.array([v for _, v in odd], dtype=str), labels=world.labels,
                        label_open=world.label_open, reach=world.reach)
    atomic_write(path, out.getvalue(), tool="cache")      # a unique temp name: workers filling one cache never clash


def _from_cache(path: Path, spawn: tuple[int, int, int]) -> StaticWorld:
    with np.load(path) as z:
        ox, oy, oz = (int(v) for v in z["origin"])
        data = WorldData(tuple(str(s) for s in z["palette"]), z["blocks"], (ox, oy, oz),
                         spawn, tuple(str(s) for s in z["biome_palette"]), z["biomes"], tuple(str(s) for s in z["states"]),
                         dict(zip(z["odd_cells"].tolist(), (str(s) for s in z["odd_states"]))))
        return StaticWorld.of(data, z["labels"], z["label_open"], z["reach"])
