"""Cell-level tables of an episode terrain (``episode_terrain.Terrain``): the reachable cells it
added to the pristine world's (:class:`Delta`), the flat offsets its reach refresh reads
(:class:`Near`), squared distances and their rounded roots, and the cells an edit wrote, a row's any
and a cell's face neighbours."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from .world import NEIGHBOURS


class Delta:
    """The reachable cells an episode added to the pristine world's, as arrays: their flat indices,
    palette indices and array coordinates (made when first read)."""

    def __init__(self, added: dict[int, int], shape: tuple[int, ...]):
        self._shape = shape
        self.came = np.fromiter(added.keys(), dtype=np.int64, count=len(added))
        self.came_ids = np.fromiter(added.values(), dtype=np.int64, count=len(added))

    @cached_property
    def came_xyz(self) -> np.ndarray:
        """The added cells' array coordinates, one row per axis (int32)."""
        return np.array(np.unravel_index(self.came, self._shape), dtype=np.int32)


def sq_dist(xyz: np.ndarray, cx: int, cy: int, cz: int) -> np.ndarray:
    """Squared distances of the array coordinates ``xyz`` (int32, one row per axis) from ``(cx, cy,
    cz)`` (int32: one dtype, ``ufunc.at``'s fast path)."""
    d = xyz - np.array(((cx,), (cy,), (cz,)), dtype=np.int32)
    return np.einsum("ij,ij->j", d, d)


@lru_cache(maxsize=4)
def rounded_roots(top: int) -> list[float]:
    """``round(math.sqrt(d), 1)`` for every ``d`` up to ``top``."""
    return [round(math.sqrt(d), 1) for d in range(top + 1)]


@dataclass(frozen=True)
class Near:
    """Flat-index offsets around a cell for :meth:`episode_terrain.Terrain._refresh`, in an array of one shape:
    the cells within 3 face steps (``d3``), where the cells within 1 and 2 sit in ``d3``, and each
    cell's own position plus its six face neighbours' positions (``*_around``); and for a break, the
    cells within 2 (``d2``), where the cells within 1 sit in it, and each cell two steps away with
    the positions in ``d2`` of its face neighbours one step away (``ring2``)."""

    d3: np.ndarray
    d1_in_d3: np.ndarray
    d2_in_d3: np.ndarray
    d1_around: np.ndarray       # (7, 7) positions in d2: a d1 cell and its face neighbours
    d2_around: np.ndarray       # (25, 6) positions in d3: a d2 cell's face neighbours
    d2: np.ndarray
    d1_in_d2: list[int]
    ring2: list[tuple[int, tuple[int, ...]]]

    @staticmethod
    def of(shape: tuple[int, ...]) -> "Near":
        if shape not in _NEAR:
            steps = {d: sorted(o for o in _cube(d) if sum(map(abs, o)) <= d) for d in (1, 2, 3)}
            at = {d: {o: k for k, o in enumerate(steps[d])} for d in (2, 3)}

            def flat(offsets) -> np.ndarray:
                return np.array([(x * shape[1] + y) * shape[2] + z for x, y, z in offsets], dtype=np.int64)

            def around(o, own: bool) -> list:
                return [tuple(map(sum, zip(o, n))) for n in ((0, 0, 0),) * own + NEIGHBOURS]

            _NEAR[shape] = Near(
                flat(steps[3]),
                np.array([at[3][o] for o in steps[1]]), np.array([at[3][o] for o in steps[2]]),
                np.array([[at[2][n] for n in around(o, True)] for o in steps[1]]),
                np.array([[at[3][n] for n in around(o, False)] for o in steps[2]]),
                flat(steps[2]), [at[2][o] for o in steps[1]],
                [(at[2][o], tuple(at[2][n] for n in around(o, False) if sum(map(abs, n)) == 1))
                 for o in steps[2] if sum(map(abs, o)) == 2])
        return _NEAR[shape]


_NEAR: dict[tuple[int, ...], Near] = {}


def _cube(d: int) -> list[tuple[int, int, int]]:
    return [(x, y, z) for x in range(-d, d + 1) for y in range(-d, d + 1) for z in range(-d, d + 1)]


def written_cells(where: tuple, shape: tuple[int, ...]) -> np.ndarray:
    """Flat indices of the cells one edit wrote: a cell, a box of slices, or index arrays."""
    if all(isinstance(w, slice) for w in where):
        axes = np.meshgrid(*(np.arange(w.start, w.stop) for w in where), indexing="ij")
        return np.ravel_multi_index(axes, shape).reshape(-1)
    return np.atleast_1d(np.ravel_multi_index(where, shape)).astype(np.int64)


def any_row(cells: np.ndarray) -> np.ndarray:
    """Whether any cell of each row is set (``any(axis=1)`` without its Python wrapper)."""
    return np.logical_or.reduce(cells, axis=1)


def face_neighbours(pos: tuple[int, int, int]) -> list[tuple[int, int, int]]:
    return [(pos[0] + dx, pos[1] + dy, pos[2] + dz) for dx, dy, dz in NEIGHBOURS]


def sq_dist_of(a: tuple[int, int, int], b: tuple[int, int, int]) -> int:
    return (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2
