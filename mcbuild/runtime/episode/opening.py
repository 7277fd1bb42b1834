"""Opening an episode on a built world: names checked, saves verified, rules read from the
saves, a backend from the registry.

Before any backend opens, both saves an episode reads (its own and the Vanilla twin of the
evaluator) are verified against ``build/worlds/manifest.json`` and, when frozen,
``build/FROZEN.json`` (``mcbuild.runtime.episode.integrity``): a damaged save is an
``InfrastructureFault`` naming the file, never an episode.

The rules of an episode come only from its save (the vanilla catalog plus the packs its
``level.dat`` enables, ``mcbuild.compiler.worlds.layout.rules_of``), and the evaluator's twin rules from
the Vanilla save of the same world, whatever the backend. A rulebook depends only on the packs
a save enables, so saves enabling the same packs (the worlds of a biome under one condition, and
their Vanilla twins) share one: a process keeps rulebooks by pack set (each pack's name and
sha256; enough for every pack set of the paper's design, so a study with many episodes in flight
does not rebuild them in turn) and each save's pack set while its ``level.dat`` and packs keep
their size and modification time. Each rulebook is built once even when many threads open
episodes at once (``LRU.get_or_make``), and so are the advancement criteria its players share.
"""
from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Iterable

from mcbuild.compiler.core.memo import LRU
from mcbuild.compiler.core.paths import BUILD
from mcbuild.compiler.rules.rulebook import Rulebook
from mcbuild.compiler.rules.tasks import Task
from mcbuild.compiler.spec.task import tasks
from mcbuild.compiler.spec.worlds import WORLDS_FILE, load_worlds
from mcbuild.compiler.worlds.layout import VANILLA, enabled_packs, packs_rules, world_biomes, world_dir
from mcbuild.runtime.backends.registry import factory
from mcbuild.runtime.episode.episode import Episode, Setup
from mcbuild.runtime.episode.integrity import Stamp, verify_save
from mcbuild.runtime.errors import InfrastructureFault

SAVES = 256             # saves whose pack set a process remembers
RULEBOOKS = 48          # pack sets whose rules a process keeps (the paper's design has 35, ~1.5 MB each)

PackSet = tuple[tuple[str, str], ...]                      # (pack name, sha256) of each enabled pack, in order
_PACK_SETS: LRU[PackSet] = LRU(SAVES)                      # (save, stamps of its level.dat and packs) -> pack set
_RULES: LRU[Rulebook] = LRU(RULEBOOKS)                     # pack set -> rules


class UnknownName(ValueError):
    """A world, condition or task name that does not exist; the message lists the valid ones."""

    def __init__(self, what: str, name: str, known: list[str]):
        self.what, self.name, self.known = what, name, known
        super().__init__(f"unknown {what} {name!r} (known: {', '.join(known)})")


_NAMES: dict[tuple[int, int] | None, tuple[dict[str, str], list[str]]] = {}   # worlds spec (size, mtime) -> names


def _names() -> tuple[dict[str, str], list[str]]:
    """World id -> biome and the conditions of the worlds spec, resolved once per process while the
    file is unchanged (parsing it took about 2 ms of every episode)."""
    try:
        st = WORLDS_FILE.stat()
        key = (st.st_size, st.st_mtime_ns)
    except OSError:
        key = None
    names = _NAMES.get(key) if key else None
    if names is None:
        names = (world_biomes(), [VANILLA, *load_worlds().mirrors])     # a missing or bad file raises here
        _NAMES.clear()
        _NAMES[key] = names
    return names


def check_names(world: str, condition: str, task: str | None) -> None:
    """Raise :class:`UnknownName` for a world, condition or task id that the specs do not define
    (``task`` None: a task given as an object, nothing to look up)."""
    biomes, conditions = _names()
    if world not in biomes:
        raise UnknownName("world", world, list(biomes))
    if condition not in conditions:
        raise UnknownName("condition", condition, conditions)
    if task is not None and task not in tasks():
        raise UnknownName("task", task, sorted(tasks()))


def save_rules(save: Path, files: Iterable[tuple[str, Stamp]] | None = None) -> Rulebook:
    """The rules of a built save (memoized per process while its level.dat and packs are unchanged);
    ``files``: the save's (path, stamp) list as :func:`verify_save` just returned it, else it is listed.

    A level.dat or pack that cannot be read is an :class:`InfrastructureFault` naming the save."""
    save = Path(os.path.realpath(save))
    stamps = _stamps(str(save)) if files is None else _rule_files(files)
    try:
        pack_set = _PACK_SETS.get_or_make((save, stamps), lambda: _pack_set(enabled_packs(save)))
        return _RULES.get_or_make(pack_set, lambda: _read_rules(save, pack_set))
    except InfrastructureFault:
        raise
    except Exception as exc:  # noqa: BLE001 - nbtlib, zipfile and json raise many kinds
        raise InfrastructureFault(f"{save}: rules unreadable ({type(exc).__name__}: {exc})") from None


def _pack_set(packs: list[tuple[str, bytes]]) -> PackSet:
    return tuple((name, hashlib.sha256(data).hexdigest()) for name, data in packs)


def _read_rules(save: Path, pack_set: PackSet) -> Rulebook:
    """The rules of ``save``'s packs, which must still be ``pack_set`` (the rulebook is shared by
    every save enabling the same packs)."""
    packs = enabled_packs(save)
    if _pack_set(packs) != pack_set:
        raise InfrastructureFault(f"{save}: packs changed while their rules were read")
    return packs_rules(packs)


def _rule_files(files: Iterable[tuple[str, Stamp]]) -> tuple[tuple[str, Stamp], ...]:
    """The ``level.dat`` and ``datapacks/*.zip`` of a save's (path, stamp) list: what its rules are
    read from."""
    return tuple(sorted((rel, st) for rel, st in files
                        if rel == "level.dat" or (rel.startswith("datapacks/") and rel.endswith(".zip")
                                                  and rel.count("/") == 1)))


def _stamps(save: str) -> tuple[tuple[str, Stamp], ...]:
    """(path, stamp) of the save's ``level.dat`` and ``datapacks/*.zip`` files."""
    try:
        with os.scandir(os.path.join(save, "datapacks")) as entries:
            names = ["datapacks/" + e.name for e in entries if e.name.endswith(".zip")]
    except OSError:
        names = []
    out = []
    for rel in ("level.dat", *names):
        try:
            st = os.stat(os.path.join(save, rel))
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            out.append((rel, (st.st_size, st.st_mtime_ns)))
    return _rule_files(out)


def open_episode(world: str, condition: str, task: "str | Task", budget: int | None = None, seed: int = 0, *,
                 build: Path = BUILD, backend: str = "sim") -> Episode:
    """An episode of ``task`` (an id of ``specs/tasks/`` or a task) in ``world`` under ``condition``
    (``vanilla`` or a suite id).

    Raises :class:`UnknownName` for a name the specs do not define, ``ValueError`` for a budget
    below 1 and :class:`InfrastructureFault` for a missing or damaged save."""
    check_names(world, condition, task if isinstance(task, str) else None)
    if budget is not None and budget < 1:
        raise ValueError(f"budget must be at least 1, got {budget}")
    save, twin = world_dir(world, condition, build), world_dir(world, VANILLA, build)
    files = {path: verify_save(path, build) for path in dict.fromkeys((save, twin))}
    rules = save_rules(save, files[save])
    found = task if isinstance(task, Task) else tasks()[task]
    setup = Setup(world, condition, found, budget or found.budget, seed, _names()[0][world])
    return Episode(factory(backend).open(save, rules, seed), rules, save_rules(twin, files[twin]), setup)
