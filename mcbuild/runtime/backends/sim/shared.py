"""Named arrays in one memory file: shared read-only, or mapped copy-on-write per episode.

A static world's big arrays (blocks, labels, reach: about 68 MB on a built world) are written
once into an anonymous memory file (``memfd`` on Linux, an unlinked temporary file elsewhere).
:attr:`SharedArrays.shared` maps it read-only: every thread of the process, and every worker
forked after it, reads the same physical pages. :meth:`SharedArrays.private` maps it
copy-on-write (``mmap.ACCESS_COPY``, i.e. ``MAP_PRIVATE``): the arrays read and write like any
numpy array, and the operating system copies only the 4 KB pages an episode writes. An episode's
terrain therefore costs its edited pages, not a copy of the world.
"""
from __future__ import annotations

import mmap
import os
import tempfile
from typing import IO, Mapping

import numpy as np

PAGE = mmap.ALLOCATIONGRANULARITY


def _memory_file() -> IO[bytes]:
    """An anonymous read-write file that lives in memory where the platform allows it."""
    if hasattr(os, "memfd_create"):
        return open(os.memfd_create("mcbuild-world", os.MFD_CLOEXEC), "r+b")
    return tempfile.TemporaryFile()


class SharedArrays:
    """Copies of ``arrays`` in one memory file, each starting on a page boundary."""

    def __init__(self, arrays: Mapping[str, np.ndarray]):
        self._layout: dict[str, tuple[int, np.dtype, tuple[int, ...]]] = {}
        offset = 0
        for name, array in arrays.items():
            self._layout[name] = (offset, array.dtype, array.shape)
            offset += -(-array.nbytes // PAGE) * PAGE
        self.size = max(offset, PAGE)
        self._file = _memory_file()
        self._file.truncate(self.size)
        writable = self._map(mmap.ACCESS_WRITE)
        for name, array in arrays.items():
            writable[name][...] = array
        del writable
        self.shared = self._map(mmap.ACCESS_READ)

    def private(self) -> dict[str, np.ndarray]:
        """Writable arrays of the pristine contents whose writes stay private to the caller."""
        return self._map(mmap.ACCESS_COPY)

    def _map(self, access: int) -> dict[str, np.ndarray]:
        mapped = mmap.mmap(self._file.fileno(), self.size, access=access)
        return {name: np.frombuffer(mapped, dtype, count=int(np.prod(shape)), offset=offset).reshape(shape)
                for name, (offset, dtype, shape) in self._layout.items()}
