"""A skill's scan of the episode terrain (``episode_terrain.Terrain.scan``): the accessible blocks of the
kinds it asked for around a point, nearest first, read lazily as the skill walks them."""
from __future__ import annotations

from typing import Callable, Iterator

import numpy as np

from mcbuild.runtime.skills.primitives import Pos, Target


class Scan:
    """Accessible blocks around a point, sorted by (distance, x, y, z): the pristine world's cells
    (``flat``, sorted by their keys ``key``) less those the episode had removed when the scan was
    made (``gone``), merged with the cells it had made reachable (``came``: (key, cell) pairs in key
    order). Cells are read in chunks as the skill walks them (a skill takes the first few), and each
    one's world position (``position``), current block (``palette`` index in ``blocks``) and reach when
    it is reached."""

    CHUNK = 16

    def __init__(self, terrain: tuple[list[str], np.ndarray, np.ndarray, Callable[[int], Pos]], flat: np.ndarray,
                 key: np.ndarray, gone: set[int] | frozenset[int], came: list[tuple[int, int]]):
        self._terrain, self._flat, self._key, self._gone, self._came = terrain, flat, key, gone, came

    def cells(self) -> Iterator[int]:
        """The flat cells in order."""
        flat, key, gone, came = self._flat, self._key, self._gone, self._came
        j, start, chunk = 0, 0, self.CHUNK
        while start < len(flat):
            for k, cell in zip(key[start:start + chunk].tolist(), flat[start:start + chunk].tolist()):
                while j < len(came) and came[j][0] < k:
                    yield came[j][1]
                    j += 1
                if cell not in gone:
                    yield cell
            start, chunk = start + chunk, chunk * 2     # a skill that walks far reads ever larger chunks
        for _, cell in came[j:]:
            yield cell

    def targets(self) -> Iterator[Target]:
        """The block, world position and reach of each cell in order, read as it is reached (so
        after the edits made meanwhile)."""
        palette, blocks, reach, position = self._terrain
        for cell in self.cells():
            yield Target(palette[blocks[cell]], position(cell), int(reach[cell]))
