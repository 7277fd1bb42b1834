"""Turns: in one process, one episode thread at a time runs Python; the others wait for a model's
reply or for their turn, asleep.

A worker process runs hundreds of simulator episodes on threads. Without turns, every thread whose
reply has arrived waits for the GIL, and a thread waiting for the GIL wakes every switch interval
(5 ms) and fights for its mutex: at 1,024 episodes in flight on 2 cores the kernel's task switches
and futex waits took about a quarter of the workers' CPU, and system time was a third of user time.
A thread waiting for its turn sleeps on one lock until the holder hands it over, so the GIL has
about one taker at a time.

A thread takes a turn with :func:`held` (the study executor, around a simulator episode of an LLM
configuration), gives it
up with :func:`away` while it waits on the network (the chat client, around a request, its
in-flight gate and its retry waits) and takes it back before it runs Python again. A thread that
holds no turn (the command line, the Designer and Judge, the study's writer) never waits for one,
and :func:`away` does nothing for it. Within a turn nothing may wait for another episode's
progress: another episode thread cannot run until the turn is handed over.
"""
from __future__ import annotations

import os
import threading
from typing import Any

__all__ = ["away", "held", "holding"]

_LOCAL = threading.local()
_TURNS: dict[int, threading.Lock] = {}


def _turn() -> threading.Lock:
    """This process's turn (a forked worker makes its own: the copy of its parent's may be held)."""
    pid = os.getpid()
    turn = _TURNS.get(pid)
    if turn is None:
        turn = _TURNS.setdefault(pid, threading.Lock())
    return turn


class _Held:
    """The context of :func:`held`: the calling thread waits for the process's turn and keeps it;
    a thread that already holds it keeps it (nothing to take)."""

    __slots__ = ("turn",)

    def __enter__(self) -> None:
        self.turn: threading.Lock | None = None
        if getattr(_LOCAL, "turn", None) is None:
            self.turn = _turn()
            self.turn.acquire()
            _LOCAL.turn = self.turn

    def __exit__(self, *exc: Any) -> None:
        if self.turn is not None:
            _LOCAL.turn = None
            self.turn.release()


class _Away:
    """The context of :func:`away`: a thread holding the turn hands it over and takes it back at the end."""

    __slots__ = ("turn",)

    def __enter__(self) -> None:
        self.turn: threading.Lock | None = getattr(_LOCAL, "turn", None)
        if self.turn is not None:
            self.turn.release()

    def __exit__(self, *exc: Any) -> None:
        if self.turn is not None:
            self.turn.acquire()


def held() -> _Held:
    """A context in which this thread holds its process's turn (at once if it holds it already)."""
    return _Held()


def away() -> _Away:
    """A context in which this thread, if it holds its process's turn, has handed it over: for a wait
    on something outside the process (a model's reply, an in-flight slot, a retry's pause)."""
    return _Away()


def holding() -> bool:
    """Whether this thread holds its process's turn."""
    return getattr(_LOCAL, "turn", None) is not None
