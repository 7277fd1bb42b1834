"""Temporary files and folders: one recognizable prefix per tool, the owner in the name, and the
sweep that removes what a dead owner left behind.

Every temporary a command makes beside what it writes is named

    .mcbuild-<tool>.<pid>-<start>-<host>.<random><suffix>

(``<start>``: the process's start time, which tells a reused pid apart; ``<host>``: eight hex
digits of the host name's sha256). A run killed at any moment (SIGKILL included) can leave such
names behind; the next run of the same tool calls :func:`sweep` on the folders it writes and
removes those whose owner no longer runs on this host. A live run's temporaries (another process
of the same tool at the same time) and another host's are left alone.
"""
from __future__ import annotations

import hashlib
import os
import secrets
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from mcbuild.compiler.core.processes import host, proc_start, running

__all__ = ["PREFIX", "scratch_name", "make_dir", "make_file", "temporary_dir", "sweep", "is_scratch"]

PREFIX = ".mcbuild-"


def _host_tag(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]


def _owner() -> str:
    pid = os.getpid()
    return f"{pid}-{proc_start(pid) or 0}-{_host_tag(host())}"


def scratch_name(tool: str, suffix: str = "") -> str:
    """A fresh temporary name of ``tool`` owned by this process."""
    return f"{PREFIX}{tool}.{_owner()}.{secrets.token_hex(4)}{suffix}"


def make_dir(folder: Path, tool: str, suffix: str = "") -> Path:
    """Create and return a new empty temporary folder of ``tool`` in ``folder`` (mode 0700)."""
    folder.mkdir(parents=True, exist_ok=True)
    while True:
        path = folder / scratch_name(tool, suffix)
        try:
            path.mkdir(mode=0o700)
            return path
        except FileExistsError:
            continue


def make_file(folder: Path, tool: str, suffix: str = ".tmp") -> tuple[int, Path]:
    """Create a new temporary file of ``tool`` in ``folder`` (mode 0600): its descriptor and path."""
    while True:
        path = folder / scratch_name(tool, suffix)
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600), path
        except FileExistsError:
            continue


@contextmanager
def temporary_dir(folder: Path, tool: str) -> Iterator[Path]:
    """A temporary folder of ``tool`` in ``folder`` for the block's duration (removed afterwards; a
    killed run's is swept by the next run of ``tool`` that sweeps ``folder``)."""
    path = make_dir(folder, tool)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def is_scratch(name: str, tool: str | None = None) -> bool:
    """Whether ``name`` is a temporary name (of ``tool``, when given)."""
    return name.startswith(f"{PREFIX}{tool}." if tool else PREFIX)


def _stale(name: str, tool: str) -> bool:
    """Whether the temporary ``name`` of ``tool`` belongs to a process of this host that is gone."""
    parts = name[len(PREFIX) + len(tool) + 1:].split(".", 1)[0].split("-")
    if len(parts) != 3 or not parts[0].isdigit():
        return False                    # not a name this module made: never touched
    pid, start, where = parts
    if where != _host_tag(host()):
        return False                    # another host's run cannot be checked from here
    return not running(int(pid), "" if start == "0" else start)


def sweep(folder: Path, tool: str, *, recursive: bool = False) -> list[Path]:
    """Remove the temporaries of ``tool`` in ``folder`` (and below it, ``recursive``) whose owner no
    longer runs; the paths removed. A folder that does not exist has none."""
    removed: list[Path] = []
    todo = [folder]
    while todo:
        here = todo.pop()
        try:
            entries = list(os.scandir(here))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            if entry.name.startswith(f"{PREFIX}{tool}.") and _stale(entry.name, tool):
                path = Path(entry.path)
                try:
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(path)
                    else:
                        path.unlink(missing_ok=True)
                except OSError:
                    continue            # a read-only folder: left for a run that may write there
                removed.append(path)
            elif recursive and entry.is_dir(follow_symlinks=False):
                todo.append(Path(entry.path))
    return removed

