"""The runner's writes to the results store, a batch per transaction.

A commit costs the single writer far more than the rows it holds, so :class:`Batch` keeps finished
episodes (:func:`~mcbuild.runtime.study.store.results.episode_row`) and fault lines and commits them
together once :data:`FLUSH_S` has passed since the previous commit or :data:`MAX_ROWS` are waiting:
at most about ``1 / FLUSH_S`` commits a second, whatever the rate of episodes. A result arriving
after a pause is committed at once; results that follow it within :data:`FLUSH_S` wait for the next
result (or for :meth:`Batch.flush`, which the runner calls when it stops, however it stops).

Crash safety is the store's: a batch is one transaction, so a run killed at any moment leaves whole
batches; the episodes of an uncommitted batch are simply not stored and run again on ``--resume``,
like the episodes in flight.
"""
from __future__ import annotations

import time
from typing import Any, Mapping

from mcbuild.runtime.study.store.results import Store, fault_row

__all__ = ["Batch", "FLUSH_S", "MAX_ROWS"]

FLUSH_S = 0.1          # seconds between commits while results keep arriving
MAX_ROWS = 512         # rows (episodes and fault lines) that force a commit sooner


class Batch:
    """Episodes and fault lines waiting for their transaction."""

    def __init__(self, store: Store, *, flush_s: float | None = None, max_rows: int | None = None):
        self.store = store
        self.flush_s = FLUSH_S if flush_s is None else flush_s
        self.max_rows = MAX_ROWS if max_rows is None else max_rows
        self.rows: list[Mapping[str, Any]] = []
        self.faults: list[tuple] = []
        self.last = float("-inf")              # monotonic time of the previous commit
        self.inserted = 0                      # episodes committed (an id stored meanwhile is not)

    def episode(self, row: Mapping[str, Any]) -> None:
        self.rows.append(row)
        self._maybe_flush()

    def fault(self, episode_id: str, attempt: int, kind: str, message: str) -> None:
        self.faults.append(fault_row(episode_id, attempt, kind, message))
        self._maybe_flush()

    def _maybe_flush(self) -> None:
        now = time.monotonic()
        if now - self.last >= self.flush_s or len(self.rows) + len(self.faults) >= self.max_rows:
            self.flush(now)

    def flush(self, now: float | None = None) -> None:
        """Commit everything waiting (nothing to do when nothing waits)."""
        if self.rows or self.faults:
            rows, faults = self.rows, self.faults
            self.rows, self.faults = [], []
            self.inserted += self.store.insert_rows(rows, faults)
        self.last = time.monotonic() if now is None else now
