"""Many episodes in flight per worker: threads around the blocking model client.

An LLM episode spends almost all its time waiting for the endpoint, so a worker process runs
``concurrency`` episodes at once on threads that share the process's caches (the simulator
factory's worlds and terrain pools, the rulebook table). :class:`InflightScheduler` implements the
:class:`~mcbuild.runtime.study.run.schedulers.local.Scheduler` protocol:

* ``concurrency == 1``: exactly :class:`~mcbuild.runtime.study.run.schedulers.local.LocalScheduler`.
* one worker: ``concurrency`` threads in the calling process.
* several workers: forked processes, each with ``concurrency`` threads; the parent keeps at most
  ``concurrency`` attempts outstanding per worker, and a worker that dies loses all of them
  (each goes to ``on_lost`` and runs again under the same id).

A process runs at most ``THREADS_PER_WORKER`` episode threads: past some number, its threads spend
their time handing the GIL to each other (before turns, ``mcbuild/llm/turns.py``, 2 x 1,024 threads
ran fewer episodes an hour than 2 x 512; with turns, 1.42x more in the same run). Episodes asked
beyond the cap go to more processes, but only up to the CPUs this process may use; what is left
waits its turn (``fit``; the runner prints it).

``on_result`` is always called on the calling thread, which stays the only writer of the store.
Episode ids and seeds come from the plan and every cache is a pure memo, so an episode's record
does not depend on how many episodes ran beside it.
"""
from __future__ import annotations

import gc
import os
import queue
import threading
from typing import TYPE_CHECKING, Sequence

from mcbuild.compiler.core.cpus import usable
from mcbuild.runtime.study.design.plan import PlanEntry
from mcbuild.runtime.study.run.schedulers.local import (POLL_S, Attempt, Forking, LocalScheduler, OnLost, OnResult, Pool,
                                                        Task, ready, receive, worker_setup)

if TYPE_CHECKING:
    from mcbuild.runtime.study.run.attempt import AttemptResult

__all__ = ["InflightScheduler", "THREADS_PER_WORKER", "fit"]

#: Episode threads per worker process. Issue 40, before turns: 2 x 512 reached 95% of the latency bound,
#: 2 x 1,024 a third. With turns, at 2,048 in flight, 2 x 1,024 ran 1.42x the episodes an hour of
#: 2 x 512 in the same run (``bench/llm_throughput.py --threads-cap 512,1024``, docs/study.md).
THREADS_PER_WORKER = 1024

#: Allocations between young-generation collections in a worker with episodes in flight: its live
#: heap (every running episode) is large, and an observation lives about one model call, so a
#: collection every 20,000 allocations traverses (and promotes) mostly objects about to die.
INFLIGHT_GC_THRESHOLD = 200_000


def fit(workers: int, concurrency: int, max_threads: int = THREADS_PER_WORKER,
        cpus: int | None = None) -> tuple[int, int, str]:
    """(processes, threads a process, a note or "") for ``workers`` x ``concurrency`` episodes in flight:
    at most ``max_threads`` threads a process; beyond it, more processes, but only up to the usable
    CPUs (``cpus``, by default this process's: affinity and cgroup quota)."""
    if concurrency <= max_threads:
        return workers, concurrency, ""
    cpus = cpus if cpus is not None else usable()[0]
    asked = workers * concurrency
    processes = max(workers, min(cpus, -(-asked // max_threads)))
    threads = min(max_threads, -(-asked // processes))
    return processes, threads, (f"in flight: {processes} processes x {threads} threads (asked {workers} x {concurrency}; "
                                f"at most {max_threads} threads a process, more processes only up to {cpus} CPUs)")


class InflightScheduler(Forking):
    """``workers`` processes with ``concurrency`` episodes in flight each (``fit`` shapes them)."""

    def __init__(self, workers: int, concurrency: int = 1):
        if workers < 1 or concurrency < 1:
            raise ValueError(f"workers and concurrency must be at least 1, got {workers} and {concurrency}")
        self.workers, self.concurrency = workers, concurrency

    def run(self, entries: Sequence[PlanEntry], attempt: Attempt, on_result: OnResult, on_lost: OnLost) -> None:
        if self.concurrency == 1:
            LocalScheduler(self.workers).run(entries, attempt, on_result, on_lost)
        elif self.workers == 1 or len(entries) <= self.concurrency:
            _run_threads(entries, attempt, on_result, min(self.concurrency, len(entries)))
        else:
            _Pool(self.workers, self.concurrency, attempt, on_result, on_lost).run(entries)


def _run_threads(entries: Sequence[PlanEntry], attempt: Attempt, on_result: OnResult, threads: int) -> None:
    """Run every entry on ``threads`` daemon threads of this process; results reach ``on_result`` here."""
    if threads < 1:
        return
    todo: queue.SimpleQueue[Task | None] = queue.SimpleQueue()
    for entry in entries:
        todo.put((entry, 0))
    results: queue.SimpleQueue[AttemptResult] = queue.SimpleQueue()
    stop = threading.Event()
    _start_threads(threads, todo, stop, results.put, attempt)
    try:
        left = len(entries)
        while left:
            try:
                result = results.get(timeout=POLL_S)     # a timeout keeps Ctrl-C responsive
            except queue.Empty:
                continue
            left -= 1
            on_result(result)
    finally:
        stop.set()          # an exception here (Ctrl-C, a fatal result): take no new episodes


def _start_threads(n: int, todo: "queue.SimpleQueue[Task | None]", stop: threading.Event,
                   send: OnResult, attempt: Attempt) -> None:
    def loop() -> None:
        while not stop.is_set():
            try:
                item = todo.get(timeout=POLL_S)
            except queue.Empty:
                continue
            if item is None:
                return
            send(attempt(*item))

    for i in range(n):
        threading.Thread(target=loop, name=f"episode-{i}", daemon=True).start()


def _worker_main(conn, attempt: Attempt, parent_pid: int, threads: int) -> None:
    """A worker: ``threads`` episode threads fed from the pipe, results sent back under a lock.
    Exits when told to, when the pipe closes or when the parent is gone."""
    worker_setup()
    gc.set_threshold(INFLIGHT_GC_THRESHOLD)
    todo: queue.SimpleQueue[Task | None] = queue.SimpleQueue()
    stop = threading.Event()
    lock = threading.Lock()

    def send(result: AttemptResult) -> None:
        if os.getppid() != parent_pid:
            stop.set()
            return
        with lock:
            try:
                conn.send(result)
            except (BrokenPipeError, OSError):
                stop.set()

    _start_threads(threads, todo, stop, send, attempt)
    while (msg := receive(conn, parent_pid, stop.is_set)) is not None:
        todo.put(msg)
    stop.set()


class _Pool(Pool):
    """The local pool with ``concurrency`` episodes in flight per worker (``slots[conn]["tasks"]``:
    episode id -> (entry, attempts so far)); losing a worker loses all of them."""

    def __init__(self, workers: int, concurrency: int, attempt: Attempt, on_result: OnResult, on_lost: OnLost):
        super().__init__(workers, attempt, on_result, on_lost)
        self.concurrency = concurrency

    def spawn(self) -> None:
        a, b = self.ctx.Pipe(duplex=True)
        p = self.ctx.Process(target=_worker_main, args=(b, self.attempt, self.parent, self.concurrency), daemon=True)
        p.start()
        b.close()
        self.slots[a] = {"proc": p, "tasks": {}}

    def busy(self) -> bool:
        return any(s["tasks"] for s in self.slots.values())

    def run(self, entries: Sequence[PlanEntry]) -> None:
        self.queue.extend((e, 0) for e in entries)
        for _ in range(min(self.workers, -(-len(self.queue) // self.concurrency))):
            self.spawn()
        try:
            while self.queue or self.busy():
                self.feed()
                if not self.slots:
                    self.spawn()
                    continue
                for conn in ready(self.slots):
                    s = self.slots[conn]
                    try:
                        result = conn.recv()
                    except (EOFError, OSError):
                        self.died(conn, s)
                        continue
                    s["tasks"].pop(result.episode_id, None)
                    self.on_result(result)
                for conn, s in list(self.slots.items()):
                    if not s["proc"].is_alive() and conn in self.slots:
                        self.died(conn, s)
        finally:
            self.stop()

    def feed(self) -> None:
        """Top every worker up to ``concurrency`` outstanding attempts."""
        for conn, s in list(self.slots.items()):
            while self.queue and len(s["tasks"]) < self.concurrency:
                task = self.queue.popleft()
                try:
                    conn.send(task)
                except (BrokenPipeError, OSError):
                    self.queue.appendleft(task)
                    break
                s["tasks"][task[0].episode_id] = task

    def running(self, s: dict) -> list[Task]:
        return list(s["tasks"].values())
