"""A bounded memo table: when it is full, the least recently used entries are dropped first."""
from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

V = TypeVar("V")


class LRU(Generic[V]):
    def __init__(self, size: int):
        self.size = size
        self._table: OrderedDict[Hashable, V] = OrderedDict()

    def get_or_make(self, key: Hashable, make: Callable[[], V]) -> V:
        """The value kept for ``key``, or ``make()`` kept for it from now on."""
        table = self._table
        if key in table:
            table.move_to_end(key)
            return table[key]
        value = table[key] = make()
        while len(table) > self.size:
            table.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._table)
