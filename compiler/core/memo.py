"""A bounded memo table: when it is full, the least recently used entries are dropped first."""
from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

V = TypeVar("V")


class LRU(Generic[V]):
    """At most ``size`` entries; ``on_evict(key, value)`` is told of every entry dropped for room."""

    def __init__(self, size: int, on_evict: Callable[[Hashable, V], None] | None = None):
        self.size = size
        self.on_evict = on_evict
        self._table: OrderedDict[Hashable, V] = OrderedDict()

    def get_or_make(self, key: Hashable, make: Callable[[], V]) -> V:
        """The value kept for ``key``, or ``make()`` kept for it from now on."""
        table = self._table
        if key in table:
            table.move_to_end(key)
            return table[key]
        value = make()
        self.put(key, value)
        return value

    def get(self, key: Hashable) -> V | None:
        """The value kept for ``key`` (now the most recently used), or None."""
        if key not in self._table:
            return None
        self._table.move_to_end(key)
        return self._table[key]

    def put(self, key: Hashable, value: V) -> None:
        table = self._table
        table[key] = value
        table.move_to_end(key)
        while len(table) > self.size:
            old_key, old = table.popitem(last=False)
            if self.on_evict is not None:
                self.on_evict(old_key, old)

    def pop(self, key: Hashable) -> V | None:
        return self._table.pop(key, None)

    def __len__(self) -> int:
        return len(self._table)
