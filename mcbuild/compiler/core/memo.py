"""A bounded memo table: when it is full, the least recently used entries are dropped first.

The table is safe to share between threads (a study worker runs many episodes in flight on one
set of caches): every look-up and insertion holds the table's lock, while ``make()`` runs outside
it. A key is made by one thread at a time: the others that miss it meanwhile wait for that value
instead of making it again (hundreds of episodes opening at once on one rulebook built its
advancement criteria hundreds of times); if ``make()`` raises, the next waiter makes it itself.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

V = TypeVar("V")
_MISSING = object()


class LRU(Generic[V]):
    """At most ``size`` entries; ``on_evict(key, value)`` is told of every entry dropped for room."""

    def __init__(self, size: int, on_evict: Callable[[Hashable, V], object] | None = None):
        self.size = size
        self.on_evict = on_evict
        self._table: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()
        self._making: dict[Hashable, threading.Event] = {}     # key -> set once its maker is done

    def get_or_make(self, key: Hashable, make: Callable[[], V]) -> V:
        """The value kept for ``key``, or ``make()`` kept for it from now on."""
        table = self._table
        while True:
            with self._lock:
                value = table.get(key, _MISSING)
                if value is not _MISSING:
                    table.move_to_end(key)
                    return value  # type: ignore[return-value]
                making = self._making.get(key)
                if making is None:
                    making = self._making[key] = threading.Event()
                    break
            making.wait()                   # then look again: stored, or made by the next thread
        evicted: list[tuple[Hashable, V]] = []
        try:
            made = make()
            with self._lock:
                value = table.get(key, _MISSING)
                if value is not _MISSING:   # put() by another thread meanwhile: share that one
                    table.move_to_end(key)
                    made = value  # type: ignore[assignment]
                else:
                    evicted = self._store(key, made)
        finally:
            with self._lock:
                del self._making[key]
            making.set()
        self._evicted(evicted)
        return made

    def get(self, key: Hashable) -> V | None:
        """The value kept for ``key`` (now the most recently used), or None."""
        with self._lock:
            value = self._table.get(key, _MISSING)
            if value is _MISSING:
                return None
            self._table.move_to_end(key)
            return value  # type: ignore[return-value]

    def put(self, key: Hashable, value: V) -> None:
        with self._lock:
            evicted = self._store(key, value)
        self._evicted(evicted)

    def pop(self, key: Hashable) -> V | None:
        with self._lock:
            return self._table.pop(key, None)

    def __len__(self) -> int:
        return len(self._table)

    def _store(self, key: Hashable, value: V) -> list[tuple[Hashable, V]]:
        table = self._table
        table[key] = value
        table.move_to_end(key)
        evicted = []
        while len(table) > self.size:
            evicted.append(table.popitem(last=False))
        return evicted

    def _evicted(self, evicted: list[tuple[Hashable, V]]) -> None:
        if self.on_evict is not None:      # outside the lock: the callback may use other tables
            for old_key, old in evicted:
                self.on_evict(old_key, old)
