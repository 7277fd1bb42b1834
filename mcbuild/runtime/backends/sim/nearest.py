"""The nearest blocks of an episode terrain around one centre (``episode_terrain.Terrain.nearby_blocks``):
read afresh from the pristine world's and the episode's changes, kept across its edits, and how an
edit's changes bring them up to date."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from .cells import Delta, rounded_roots, sq_dist
from .world import Minima

#: one change of a cell's reachable block: its array position, the palette index it was reachable as
#: before and after (-1: not reachable)
Change = tuple[int, int, int, int, int]


@dataclass
class Nearest:
    """The squared distance per palette index around one centre (``far`` where none is within the
    radius), the length of the terrain's log of changes they include, and their rounded dict in
    block-id order (None until asked)."""

    best: list[int]
    far: int
    seen: int
    shown: dict[str, float] | None

    def catch_up(self, log: list[Change], centre: tuple[int, int, int], palette: list[str]) -> bool:
        """Apply the changes of ``log`` since :attr:`seen` around array position ``centre``: a cell that
        came lowers its block's distance; False when a cell that left was as near as its block's
        nearest (the distances must be read again)."""
        best, far, shown = self.best, self.far, self.shown
        cx, cy, cz = centre
        for x, y, z, before, now in log[self.seen:]:
            d2 = (x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2
            if d2 >= far:
                continue
            if before >= 0 and d2 <= best[before]:
                return False
            if now >= 0:
                if now >= len(best):            # a block new to the palette
                    best.extend([far] * (now + 1 - len(best)))
                if d2 < best[now]:
                    if shown is not None and best[now] < far:   # a block shown before: its place is kept
                        shown[palette[now]] = rounded_roots(far - 1)[d2]
                    else:
                        shown = None
                    best[now] = d2
        self.seen, self.shown = len(log), shown
        return True

    def show(self, palette: list[str], by_name: list[int]) -> dict[str, float]:
        """The rounded distances in block-id order (``by_name``: the palette indices in that order)."""
        best, far, rounded = self.best, self.far, rounded_roots(self.far - 1)
        return {palette[i]: rounded[best[i]] for i in by_name if i < len(best) and best[i] < far}


def fresh_d2(pristine: Minima, removed: Mapping[int, int], delta: Delta, size: int) -> np.ndarray:
    """The squared distance of the nearest reachable cell of each of ``size`` palette indices around
    ``pristine``'s centre (its ``far`` for an index without one) in an episode that removed the
    pristine reachable cells ``removed`` and added ``delta``'s: the pristine world's per-run minima,
    where a run that lost its nearest cell is read again (:func:`_patch`), then the added cells."""
    far, nearest = pristine.far, pristine.nearest
    best = np.full(size, far, dtype=np.int32)      # blocks placed in the episode may be new to the world
    best[:len(pristine.best)] = pristine.best
    lost = {nearest[cell] for cell in removed if cell in nearest}
    if lost:        # only a run whose nearest cell was removed can change
        _patch(best, pristine, lost, removed)
    if len(delta.came):
        np.minimum.at(best, delta.came_ids, sq_dist(delta.came_xyz, *pristine.centre))
    return best


def _patch(best: np.ndarray, pristine: Minima, lost: set[int], removed: Mapping[int, int]) -> None:
    """Set in ``best`` the minima of the blocks of the runs ``lost``: each of those runs read again
    from its nearest cell that still holds its block and is still reachable (a pristine cell is
    exactly when the episode has not removed it, ``Terrain._track``), each of their blocks' other
    runs intact (the nearest one not lost)."""
    far, run_ids = pristine.far, pristine.run_ids
    again: dict[int, int] = {}      # block -> the smallest distance of its lost runs read again
    for run in lost:
        d2 = far
        for d, cell in pristine.by_distance(run):
            if cell not in removed:
                d2 = d
                break
        block = run_ids[run]
        again[block] = min(d2, again.get(block, far))
    for block, d2 in again.items():
        for d, run in pristine.runs_of(block):
            if run not in lost:
                d2 = min(d, d2)
                break
        best[block] = d2
