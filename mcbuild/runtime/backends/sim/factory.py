"""Opening simulator backends on built saves, with this process's bounded simulator caches.

One :class:`SimFactory` per process (``mcbuild.runtime.backends.registry``) keeps:

* the static worlds of the last ``WORLDS`` distinct region sets (a Vanilla world and its Mirror
  copies share one: they differ only by their rule packs), each keyed by its region files' hash,
  which is recomputed only when a region file's size or modification time changed;
* every other static world still in use (held by an open backend, weakly referenced): an
  episode on a world the LRU dropped while other episodes still run on it gets that same world
  back instead of loading a second copy (many episodes in flight span more than ``WORLDS``);
* a pool of terrains released by closed episodes, for the last ``POOLED_WORLDS`` of those worlds
  (a world's pool goes with it): the next episode on the same world resets one in O(edits)
  instead of mapping the world's arrays again (``shared.py``) and faulting their pages in.

The factory is shared by every episode a process runs, including episodes in flight on several
threads: loading a world and taking or returning a pooled terrain hold the factory's lock, so
a world is loaded once and a terrain is never handed to two episodes.
"""
from __future__ import annotations

import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

from mcbuild.compiler.core.memo import LRU
from mcbuild.runtime.body.config import BodyConfig

from .backend import SimBackend
from .episode_terrain import Terrain
from .loading import load_save, region_stamps, save_key
from .world import StaticWorld

if TYPE_CHECKING:
    from mcbuild.compiler.rules.rulebook import Rulebook

WORLDS = 2              # static worlds kept per process
POOLED_WORLDS = 4       # worlds whose released terrains are kept
SAVES = 128             # saves whose region-file hash is remembered


class SimFactory:
    name = "sim"

    def __init__(self, cache_dir: Path | None = None, config: BodyConfig = BodyConfig()):
        self.cache_dir = cache_dir
        self.config = config
        self._keys: LRU[tuple[tuple, str]] = LRU(SAVES)         # save -> (region stamps, key)
        self._worlds: LRU[StaticWorld] = LRU(WORLDS, lambda _, world: self._pool.pop(id(world)))   # key -> world
        self._pool: LRU[tuple[StaticWorld, list[Terrain]]] = LRU(POOLED_WORLDS)   # id(world) -> terrains
        self._alive: weakref.WeakValueDictionary[str, StaticWorld] = weakref.WeakValueDictionary()   # key -> world
        self._lock = threading.RLock()

    def open(self, save: Path, rules: "Rulebook", seed: int) -> SimBackend:
        """A backend on ``save`` reset to ``seed``."""
        return self.on(self.world(save), rules, seed)

    def prewarm(self, save: Path) -> None:
        """Load ``save``'s static world ahead of its episode (a Ray actor's next one)."""
        self.world(save)

    def on(self, world: StaticWorld, rules: "Rulebook", seed: int) -> SimBackend:
        """A backend on a loaded (or in-memory) world, reset to ``seed``; its terrain comes from the
        pool when one is free and goes back to it when the backend is closed."""
        return SimBackend(world, rules, seed, self.config, self._terrain(world), release=self._release)

    def world(self, save: Path) -> StaticWorld:
        """The static world of a built save (derived arrays cached under ``build/cache/sim``)."""
        with self._lock:
            key = self.key(save)
            cache_dir = self.cache_dir if self.cache_dir is not None else save.parents[2] / "cache" / "sim"
            world = self._worlds.get_or_make(key, lambda: self._alive.get(key) or load_save(save, key, cache_dir))
            self._alive[key] = world
            return world

    def key(self, save: Path) -> str:
        stamps = region_stamps(save)
        known = self._keys.get_or_make(save, lambda: (stamps, save_key(save)))
        if known[0] != stamps:
            known = (stamps, save_key(save))
            self._keys.put(save, known)
        return known[1]

    def _terrain(self, world: StaticWorld) -> Terrain:
        with self._lock:
            pooled = self._pool.get(id(world))
            if pooled is not None and pooled[0] is world and pooled[1]:
                return pooled[1].pop()
        return Terrain(world)

    def _release(self, terrain: Terrain) -> None:
        world = terrain.world
        with self._lock:
            pooled = self._pool.get(id(world))
            if pooled is None or pooled[0] is not world:
                pooled = (world, [])
            pooled[1].append(terrain)
            self._pool.put(id(world), pooled)
