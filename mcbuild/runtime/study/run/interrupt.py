"""Stopping a run cleanly on SIGINT or SIGTERM, whether the signal reaches the whole process group
(a terminal's Ctrl-C, ``kill -TERM -PGID``) or the runner alone (``kill -INT PID``, a job scheduler, a
supervisor).

:class:`StopOnSignals` installs its handlers in the main thread for the length of a run, over any
inherited disposition (a job started in the background of a script inherits SIGINT ignored). The
first signal raises :class:`Interrupted` in the main thread: the scheduler stops handing out episodes
at once and drops the ones in flight (its workers ignore both signals and are stopped by it within
its bounded shutdown), and the runner commits what had finished. A signal arriving inside
:meth:`StopOnSignals.critical` (the runner storing a result) is raised when that section ends, so a
finished episode is never half-handled, and the runner checks for a signal before each result it
handles (a raise that landed in a finalizer is lost). A second signal while stopping ends the process at once
with the same exit code: the store is a transaction log and loses nothing committed.
"""
from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Any, Iterator

__all__ = ["Interrupted", "StopOnSignals", "SIGNALS"]

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """The run was stopped by ``signum``; the process should exit with :attr:`exit_code` (130, 143)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class StopOnSignals:
    """SIGINT and SIGTERM handlers for one run (installed only in the main thread; restored on exit)."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._depth = 0
        self._pending = False
        self._saved: dict[int, Any] = {}

    def __enter__(self) -> "StopOnSignals":
        if threading.current_thread() is threading.main_thread():
            for s in SIGNALS:
                self._saved[s] = signal.signal(s, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for s, old in self._saved.items():
            signal.signal(s, old)
        self._saved.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:             # a second signal: the first is being handled
            os.write(2, f"\n{signal.Signals(signum).name} again: stopping now\n".encode())
            os._exit(128 + self.signum)
        self.signum = signum
        if self._depth:
            self._pending = True
            return
        raise Interrupted(signum)

    def check(self) -> None:
        """Raise :class:`Interrupted` if a signal came: the handler's own raise is lost when it lands in a
        finalizer or a weakref callback (Python prints "Exception ignored" and goes on)."""
        if self.signum is not None and not self._depth:
            raise Interrupted(self.signum)

    @contextmanager
    def critical(self, raise_after: bool = True) -> Iterator[None]:
        """A section a signal does not cut: the signal is raised when it ends (``raise_after``), or
        only kept in :attr:`signum` for the caller to read."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._pending and not self._depth:
                self._pending = False
                if raise_after:
                    raise Interrupted(self.signum or signal.SIGINT)
