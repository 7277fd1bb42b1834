"""One writer per results store: ``<store>.lock`` names the run that writes it (pid, host).

* A live holder on this host refuses a second writer with one line naming its pid and host.
* A lock whose process is gone (same host; a reused pid is told apart by its start time) is
  taken over. Taking, checking, replacing and removing a lock all happen under an exclusive
  ``flock`` of ``<store>.lock.guard``, so two runs that both find it stale cannot both take it;
  a new lock is made with ``os.link``, which fails when one already exists (on a shared file
  system too).
* A lock from another host cannot be checked from here: it is reported, and only
  ``break_lock=True`` (``--break-lock``) replaces it.

Readers (``study status``) call :func:`holder` and never take the lock.
"""
from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator

from mcbuild.compiler.core.canonical import follow_umask
from mcbuild.compiler.core.processes import proc_start, running
from mcbuild.compiler.core.scratch import make_file, sweep
from mcbuild.runtime.study.store.results import StoreError

__all__ = ["Holder", "StoreLocked", "StoreLock", "holder", "lock_path"]


class StoreLocked(StoreError):
    """Another run holds the store (one line naming its pid and host)."""


@dataclass(frozen=True)
class Holder:
    """The run named in a lock file."""

    pid: int
    host: str
    started: float              # wall-clock time the lock was taken
    proc_start: str = ""        # the process's start time on its host (tells a reused pid apart)

    def here(self) -> bool:
        return self.host == socket.gethostname()

    def alive(self) -> bool:
        """True while the holder runs (only answerable on its own host: see :meth:`here`)."""
        return running(self.pid, self.proc_start)

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.started))
        return f"pid {self.pid} on host {self.host} (since {when})"


def lock_path(store: Path) -> Path:
    """``results.sqlite.lock`` next to the store file."""
    return store.with_name(store.name + ".lock")


def holder(store: Path) -> Holder | None:
    """The run named in the store's lock, or None (no lock, or an unreadable one)."""
    try:
        data = json.loads(lock_path(store).read_text())
        return Holder(int(data["pid"]), str(data["host"]), float(data["started"]), str(data.get("proc_start", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


@contextmanager
def _guard(store: Path) -> Iterator[None]:
    with open(store.with_name(store.name + ".lock.guard"), "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


class StoreLock:
    """The lock of one store, held by this process until :meth:`release`."""

    def __init__(self, store: Path, me: Holder):
        self.store, self.me = store, me

    @classmethod
    def acquire(cls, store: str | Path, *, break_lock: bool = False) -> "StoreLock":
        """Take the store's lock or raise :class:`StoreLocked` (see the module docstring)."""
        store = Path(store)
        store.parent.mkdir(parents=True, exist_ok=True)
        me = Holder(os.getpid(), socket.gethostname(), time.time(), proc_start(os.getpid()))
        tmp = _written(store, me)
        try:
            with _guard(store):
                try:
                    os.link(tmp, lock_path(store))      # atomic: fails if a lock exists (on any host)
                    return cls(store, me)
                except FileExistsError:
                    current = holder(store)
                if current is not None and (not current.here() or current.alive()):
                    if current.here() or not break_lock:
                        raise StoreLocked(_refusal(store, current))
                os.replace(tmp, lock_path(store))       # a dead holder's, a broken or an unreadable lock
                return cls(store, me)
        finally:
            Path(tmp).unlink(missing_ok=True)

    def release(self) -> None:
        """Remove the lock if it is still this process's."""
        with _guard(self.store):
            current = holder(self.store)
            if current is not None and (current.pid, current.host, current.started) == (
                    self.me.pid, self.me.host, self.me.started):
                lock_path(self.store).unlink(missing_ok=True)

    def __enter__(self) -> "StoreLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _written(store: Path, me: Holder) -> Path:
    sweep(store.parent, "study")        # a temporary lock of a run killed here
    fd, tmp = make_file(store.parent, "study")
    with os.fdopen(fd, "w") as fh:
        json.dump(asdict(me), fh)
    follow_umask(tmp)
    return tmp


def _refusal(store: Path, current: Holder) -> str:
    if current.here():
        return f"{store} is being written by {current.describe()}; wait for that run or stop it"
    return (f"{store} is locked by {current.describe()}, which cannot be checked from host "
            f"{socket.gethostname()}; if that run is gone, pass --break-lock")
