"""Schedulers: where and how many planned episodes run at once.

A :class:`Scheduler` runs ``attempt(entry, attempts_so_far)`` for every :class:`PlanEntry` and hands
each finished attempt's :class:`~mcbuild.runtime.study.run.attempt.AttemptResult` to ``on_result``
**in the calling process**, which stays the only writer of the results store. When the process running an attempt is lost mid-episode it calls
``on_lost(episode_id, attempt, reason)``; a True answer schedules the episode again under the
same id with that many attempts used. Nothing a scheduler does changes an episode's result: ids
and seeds come from the plan, so results never depend on the number of workers.

:class:`LocalScheduler` is this machine's process pool (forked workers, in-process with one). Each
worker keeps to its own consecutive stretch (lane) of the entries and only then helps with the end
of the longest lane left: a plan is world-major, so each process opens fewer worlds.
A distributed scheduler implements the same protocol (each one subclasses it, so the type checker
holds it to it); the runner picks one from the study config.
"""
from __future__ import annotations

import gc
import multiprocessing as mp
import os
import signal
import time
from collections import deque
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as mp_wait
from multiprocessing.context import DefaultContext, ForkContext
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol, Sequence, cast

from mcbuild.runtime.study.design.plan import PlanEntry

if TYPE_CHECKING:
    from mcbuild.runtime.study.run.attempt import AttemptResult

Attempt = Callable[[PlanEntry, int], "AttemptResult"]     # (plan entry, attempts so far) -> its result
OnResult = Callable[["AttemptResult"], None]
OnLost = Callable[[str, int, str], bool]               # (episode id, attempt, reason) -> run it again?
Task = tuple[PlanEntry, int]                           # (plan entry, attempts so far)

#: Allocations between a worker's young-generation collections (Python's default is 700): an
#: episode allocates many short-lived observation dicts and few cycles.
WORKER_GC_THRESHOLD = 20_000
POLL_S = 0.5                    # seconds between checks that the parent is alive (and Ctrl-C stays responsive)


class Scheduler(Protocol):
    """What the runner asks of a scheduler."""

    @property
    def forks(self) -> bool:
        """Whether its workers are forked from the calling process: they inherit what it has loaded,
        so the runner fills the caches first (a scheduler whose workers are not is not warmed)."""
        ...

    @property
    def info(self) -> str:
        """A line for the run's summary once ``run`` returns (a cluster's size), or ""."""
        ...

    def run(self, entries: Sequence[PlanEntry], attempt: Attempt, on_result: OnResult, on_lost: OnLost) -> None:
        """Run ``attempt`` for every entry; see the module docstring."""
        ...


class Forking(Scheduler):
    """A scheduler of ``workers`` processes forked from the calling process (in it when one suffices)."""

    workers: int

    @property
    def forks(self) -> bool:
        return self.workers > 1

    @property
    def info(self) -> str:
        return ""


class LocalScheduler(Forking):
    """``workers`` forked processes on this machine (in this process when one suffices)."""

    def __init__(self, workers: int):
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers

    def run(self, entries: Sequence[PlanEntry], attempt: Attempt, on_result: OnResult, on_lost: OnLost) -> None:
        if self.workers == 1 or len(entries) <= 1:
            for entry in entries:
                on_result(attempt(entry, 0))
            return
        Pool(self.workers, attempt, on_result, on_lost).run(entries)


def worker_setup() -> None:
    """What every worker process does first."""
    for s in (signal.SIGINT, signal.SIGTERM):     # the parent's to handle: it stops its workers itself
        signal.signal(s, signal.SIG_IGN)
    gc.freeze()                         # what the worker inherited is never collected (nor copied) again
    gc.set_threshold(WORKER_GC_THRESHOLD)


def receive(conn, parent_pid: int, stopped: Callable[[], bool] = lambda: False) -> Any:
    """A worker's next message from the parent; None when told to stop (a None message or
    ``stopped()``), when the pipe closes or when the parent is gone."""
    while not stopped():
        try:
            if not conn.poll(POLL_S):
                if os.getppid() != parent_pid:
                    return None
                continue
            return conn.recv()
        except (EOFError, OSError):
            return None
    return None


def _worker_main(conn, attempt: Attempt, parent_pid: int) -> None:
    """Worker loop: receive (entry, attempts so far), send the attempt's result.
    Exits when told to, when the pipe closes or when the parent is gone."""
    worker_setup()
    while (msg := receive(conn, parent_pid)) is not None:
        entry, done = msg
        result = attempt(entry, done)
        if os.getppid() != parent_pid:
            return
        try:
            conn.send(result)
        except (BrokenPipeError, OSError):
            return


def lanes(entries: Sequence[PlanEntry], n: int) -> list[deque[Task]]:
    """``entries`` cut into ``n`` consecutive stretches of (almost) equal length, as (entry, 0)
    attempts: a plan is world-major, so a worker that keeps to one stretch opens fewer worlds
    and conditions (each process loads and derives each of its own)."""
    bounds = [len(entries) * i // n for i in range(n + 1)]
    return [deque((e, 0) for e in entries[a:b]) for a, b in zip(bounds, bounds[1:])]


def ready(conns: Iterable[Connection]) -> list[Connection]:
    """The connections with a message (or closed) within ``POLL_S``."""
    return cast("list[Connection]", mp_wait(list(conns), timeout=POLL_S))


class Pool:
    def __init__(self, workers: int, attempt: Attempt, on_result: OnResult, on_lost: OnLost):
        self.ctx: ForkContext | DefaultContext
        try:
            self.ctx = mp.get_context("fork")
        except ValueError:  # pragma: no cover - platforms without fork
            self.ctx = mp.get_context()
        self.workers, self.attempt, self.on_result, self.on_lost = workers, attempt, on_result, on_lost
        self.parent = os.getpid()
        self.slots: dict[Connection, dict] = {}  # parent conn -> {"proc", "task": Task | None, "lane"}
        self.queue: deque[Task] = deque()       # attempts to run first (episodes run again)
        self.lanes: list[deque[Task]] = []      # the entries not yet sent, one lane per worker

    def spawn(self) -> None:
        a, b = self.ctx.Pipe(duplex=True)
        p = self.ctx.Process(target=_worker_main, args=(b, self.attempt, self.parent), daemon=True)
        p.start()
        b.close()
        held = {s.get("lane") for s in self.slots.values()}
        self.slots[a] = {"proc": p, "task": None, "lane": next(i for i in range(len(held) + 1) if i not in held)}

    def run(self, entries: Sequence[PlanEntry]) -> None:
        queue, slots = self.queue, self.slots
        self.lanes = lanes(entries, self.workers)
        for _ in range(min(self.workers, len(entries))):
            self.spawn()
        try:
            while queue or any(self.lanes) or any(s["task"] is not None for s in slots.values()):
                for conn, s in list(slots.items()):
                    if s["task"] is None and (queue or any(self.lanes)):
                        task, back = self.next_task(s["lane"])
                        try:
                            conn.send(task)
                            s["task"] = task
                        except (BrokenPipeError, OSError):
                            back(task)
                if not slots:  # every worker died before taking work
                    self.spawn()
                    continue
                for conn in ready(slots):
                    s = slots[conn]
                    try:
                        msg = conn.recv()
                    except (EOFError, OSError):
                        self.died(conn, s)
                        continue
                    s["task"] = None
                    self.on_result(msg)
                for conn, s in list(slots.items()):  # a worker killed while idle or silently
                    if not s["proc"].is_alive() and conn in slots:
                        self.died(conn, s)
        finally:
            self.stop()

    def next_task(self, lane: int) -> tuple[Task, Callable[[Task], None]]:
        """The next attempt for the worker of ``lane`` and how to put it back: an episode to run
        again first, then the head of its own lane, then (its lane done) the tail of the longest
        lane, so each worker keeps to its own stretch of worlds as long as it can."""
        if self.queue:
            return self.queue.popleft(), self.queue.appendleft
        own = self.lanes[lane] if lane < len(self.lanes) else deque()
        if own:
            return own.popleft(), own.appendleft
        other = max(self.lanes, key=len)
        return other.pop(), other.append

    def running(self, s: dict) -> list[Task]:
        """The (entry, attempts so far) a worker holds."""
        return [] if s["task"] is None else [s["task"]]

    def died(self, conn, s: dict) -> None:
        p = s["proc"]
        p.join(timeout=1.0)
        self.slots.pop(conn, None)
        try:
            conn.close()
        except OSError:
            pass
        for entry, done in self.running(s):
            if self.on_lost(entry.episode_id, done + 1, f"worker process {p.pid} died (exit code {p.exitcode})"):
                self.queue.appendleft((entry, done + 1))
        if self.queue or any(self.lanes):
            self.spawn()

    def stop(self) -> None:
        for conn in self.slots:
            try:
                conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        deadline = time.monotonic() + 5.0
        for conn, s in self.slots.items():
            s["proc"].join(timeout=max(0.0, deadline - time.monotonic()))
            if s["proc"].is_alive():
                s["proc"].kill()
                s["proc"].join(timeout=1.0)
            conn.close()
