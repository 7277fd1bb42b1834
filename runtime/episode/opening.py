"""Opening an episode on a built world: names checked, rules read from the saves, a backend
from the registry.

The rules of an episode come only from its save (the vanilla catalog plus the packs its
``level.dat`` enables, ``compiler.worlds.layout.rules_of``), and the evaluator's twin rules from
the Vanilla save of the same world, whatever the backend. Rulebooks are kept per process in one
bounded table, re-read when a save's ``level.dat`` or packs change; the table's lock makes
threads that open episodes at once read a save's rules once and share them.
"""
from __future__ import annotations

import threading
from pathlib import Path

from compiler.core.memo import LRU
from compiler.core.paths import BUILD
from compiler.rules.rulebook import Rulebook
from compiler.rules.tasks import tasks
from compiler.worlds.layout import VANILLA, rules_of, world_biomes, world_dir
from runtime.backends.registry import factory
from runtime.episode.episode import Episode, Setup

RULEBOOKS = 16          # saves whose rules a process keeps

_RULES: LRU[tuple[tuple, Rulebook]] = LRU(RULEBOOKS)     # save -> (stamps of level.dat and packs, rules)
_RULES_LOCK = threading.Lock()


def save_rules(save: Path) -> Rulebook:
    """The rules of a built save (memoized per process while its level.dat and packs are unchanged)."""
    save = save.resolve()
    files = [save / "level.dat", *sorted((save / "datapacks").glob("*.zip"))]
    stamps = tuple((p.name, st.st_size, st.st_mtime_ns) for p in files if p.is_file() for st in (p.stat(),))
    with _RULES_LOCK:
        known = _RULES.get(save)
        if known is None or known[0] != stamps:
            known = (stamps, rules_of(save))
            _RULES.put(save, known)
        return known[1]


def open_episode(world: str, condition: str, task: str, budget: int | None = None, seed: int = 0, *,
                 build: Path = BUILD, backend: str = "sim") -> Episode:
    """An episode of ``task`` in ``world`` under ``condition`` (``vanilla`` or a suite id)."""
    save, twin = world_dir(world, condition, build), world_dir(world, VANILLA, build)
    if not (save / "level.dat").is_file():
        raise FileNotFoundError(f"no save at {save} (run `mcbuild build worlds`)")
    biome = world_biomes().get(world)
    if biome is None:
        raise ValueError(f"world {world!r} is not in specs/worlds.yaml")
    rules = save_rules(save)
    setup = Setup(world, condition, tasks()[task], budget or tasks()[task].budget, seed, biome)
    return Episode(factory(backend).open(save, rules, seed), rules, save_rules(twin), setup)
