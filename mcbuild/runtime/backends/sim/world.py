"""A save's playable area as arrays, and the static access structure derived from it.

``WorldData`` holds block palette indices in x, y, z order with the world coordinates of cell
``[0, 0, 0]``. ``StaticWorld`` adds what the body's access model needs (see docs/simulator.md):

* ``labels``: connected components (6-neighbourhood) of the cells without a collision box;
  ``label_open[label]`` marks the components connected to the open sky, the space the body
  moves in. Enclosed caves join it when mining breaks into them.
* ``reach``: 1 for a breakable block the body can work on directly (its own cell or a face
  neighbour is open), 2 for one behind a single breakable obstruction, 0 otherwise.

The three big arrays are read-only views of one :class:`shared.SharedArrays` image
(``StaticWorld.image``), which episode terrains map copy-on-write (``episode_terrain.py``).

``loading.load_save`` derives a save's world (read by ``save.read``) once and caches it; the
simulator's factory (``factory.SimFactory``) keeps the loaded worlds of a process.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from mcbuild.compiler.core.memo import LRU
from mcbuild.runtime.body.blocks import physics

from .shared import SharedArrays

OUTSIDE = "minecraft:barrier"       # fills chunks missing from the playable area
NEIGHBOURS = ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1))
COLUMN = 16         # side (x and z) of the full-height columns reachable cells are grouped by
BOXES = 64          # blocks of columns kept per world (StaticWorld.column_box)
MINIMA = 1024       # scan centres (and radii) whose pristine nearest distances a world keeps (StaticWorld.minima)
SCANS = 1024        # scans (blocks, centre, radius) whose pristine cells a world keeps (StaticWorld.scan)
SLAB_FROM = 512     # index length from which a scan first cuts the index to the x slab around its centre


@dataclass(frozen=True, eq=False)
class WorldData:
    palette: tuple[str, ...]            # block ids; index 0 is minecraft:air
    blocks: np.ndarray                  # uint16 palette indices, shape (nx, ny, nz)
    origin: tuple[int, int, int]        # world coordinates of blocks[0, 0, 0]
    spawn: tuple[int, int, int]
    biome_palette: tuple[str, ...]
    biomes: np.ndarray                  # uint8, one cell per 4x4x4 blocks
    states: tuple[str, ...] = ()        # per block id: its most common state properties ("k=v,...")
    odd_states: dict[int, str] = field(default_factory=dict)   # flat cell -> properties, where they differ

    def state(self, cell: tuple[int, int, int]) -> str:
        """State properties of a pristine cell ("" when the save gave none)."""
        return self.state_at(int(np.ravel_multi_index(cell, self.blocks.shape)))

    def state_at(self, flat: int) -> str:
        """:meth:`state` of the cell at flat index ``flat``."""
        if flat in self.odd_states:
            return self.odd_states[flat]
        block = int(self.blocks.reshape(-1)[flat])
        return self.states[block] if block < len(self.states) else ""


@dataclass(frozen=True, eq=False)
class ColumnBox:
    """The reachable cells of a block of columns (see :meth:`StaticWorld.column_box`)."""

    columns: tuple[tuple[int, int], ...]
    cells: np.ndarray                   # (4, n) x, y, z, palette index, column after column
    starts: np.ndarray                  # where each run (one column, one palette index) starts
    run_ids: np.ndarray                 # the palette index of each run
    run_columns: np.ndarray             # the position in ``columns`` of each run

    @cached_property
    def by_id(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The runs in palette-index order, where each palette index's runs start, and those indices:
        ``np.minimum.reduceat(values[order], starts)`` is the smallest value of each index."""
        order = np.argsort(self.run_ids, kind="stable")
        ids = self.run_ids[order]
        starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1]))) if len(ids) else ids
        return order, starts, ids[starts]

    @cached_property
    def lengths(self) -> np.ndarray:
        """The number of cells of each run."""
        return np.diff(np.append(self.starts, self.cells.shape[1]))

    @cached_property
    def runs_of_id(self) -> dict[int, list[int]]:
        """The runs of each palette index."""
        out: dict[int, list[int]] = {}
        for run, block in enumerate(self.run_ids.tolist()):
            out.setdefault(block, []).append(run)
        return out

    def run_by_distance(self, run: int, centre: tuple[int, int, int], shape: tuple[int, ...]) -> list[tuple[int, int]]:
        """The cells of ``run`` as (squared distance from array position ``centre``, flat index in an
        array of ``shape``), nearest first."""
        start = int(self.starts[run])
        x, y, z, _ = self.cells[:, start:start + int(self.lengths[run])]
        dx, dy, dz = x - centre[0], y - centre[1], z - centre[2]
        d2 = dx * dx + dy * dy + dz * dz
        flat = (x.astype(np.int64) * shape[1] + y) * shape[2] + z
        order = np.argsort(d2, kind="stable")
        return list(zip(d2[order].tolist(), flat[order].tolist()))

    def minima(self, cx: int, cy: int, cz: int, far: int, shape: tuple[int, ...]
               ) -> tuple[list[int], np.ndarray, dict[int, int]]:
        """The smallest squared distance from array position ``(cx, cy, cz)`` to a cell of each run (a
        list); to a cell of each palette index of ``by_id``, clipped at ``far`` (int32); and the cells at
        their run's smallest distance below ``far``: flat index in an array of ``shape`` -> its run.
        The box must hold cells."""
        x, y, z, _ = self.cells
        dx, dy, dz = x - cx, y - cy, z - cz
        d2 = dx * dx + dy * dy + dz * dz
        runs = np.minimum.reduceat(d2, self.starts)
        at = np.flatnonzero((d2 == np.repeat(runs, self.lengths)) & (d2 < far))
        flat = (x[at].astype(np.int64) * shape[1] + y[at]) * shape[2] + z[at]
        nearest = dict(zip(flat.tolist(), (np.searchsorted(self.starts, at, side="right") - 1).tolist()))
        order, starts, _ = self.by_id
        return runs.tolist(), np.minimum(np.minimum.reduceat(runs[order], starts), far), nearest


@dataclass(eq=False)
class Minima:
    """The pristine world's nearest reachable cells around one centre (:meth:`StaticWorld.minima`): the
    columns read, the smallest squared distance of each of their runs, of each palette index of the
    world (``far`` where none is within the radius; int32) and the cells at their run's smallest
    distance (flat index -> run). What a run that lost cells is read again from is kept as it is
    first asked for (episodes on a world revisit the centre)."""

    box: ColumnBox
    centre: tuple[int, int, int]
    shape: tuple[int, ...]
    far: int
    runs: list[int]
    best: np.ndarray
    nearest: dict[int, int]
    _cells: dict[int, list[tuple[int, int]]] = field(default_factory=dict, repr=False)
    _runs_of: dict[int, list[tuple[int, int]]] = field(default_factory=dict, repr=False)

    @cached_property
    def run_ids(self) -> list[int]:
        """The palette index of each run."""
        return self.box.run_ids.tolist()

    def by_distance(self, run: int) -> list[tuple[int, int]]:
        """``ColumnBox.run_by_distance`` of ``run`` around the centre."""
        cells = self._cells.get(run)
        if cells is None:
            cells = self._cells[run] = self.box.run_by_distance(run, self.centre, self.shape)
        return cells

    def runs_of(self, block: int) -> list[tuple[int, int]]:
        """The runs of palette index ``block`` as (smallest squared distance, run), nearest first."""
        runs = self._runs_of.get(block)
        if runs is None:
            runs = self._runs_of[block] = sorted((self.runs[run], run) for run in self.box.runs_of_id.get(block, ()))
        return runs


@dataclass(frozen=True, eq=False)
class StaticWorld:
    """Build one with :meth:`of`: ``data.blocks``, ``labels`` and ``reach`` are then read-only views
    of ``image``."""

    data: WorldData
    labels: np.ndarray                  # int32 component of each passable cell (0: has collision)
    label_open: np.ndarray              # bool per label
    reach: np.ndarray                   # uint8 0/1/2
    image: SharedArrays = field(repr=False)

    @classmethod
    def of(cls, data: WorldData, labels: np.ndarray, label_open: np.ndarray, reach: np.ndarray) -> "StaticWorld":
        """The world of these arrays, its big ones moved into one shared image."""
        image = SharedArrays({"blocks": data.blocks, "labels": labels, "reach": reach})
        view = image.shared
        return cls(replace(data, blocks=view["blocks"]), view["labels"], label_open, view["reach"], image)

    @cached_property
    def reachable(self) -> dict[int, np.ndarray]:
        """Flat indices of the reach-1/2 cells of each palette index (the pristine world)."""
        flat = np.flatnonzero(self.reach)
        ids = self.data.blocks.reshape(-1)[flat]
        order = np.argsort(ids, kind="stable")
        flat, ids = flat[order], ids[order]
        bounds = np.searchsorted(ids, np.arange(len(self.data.palette) + 1))
        return {i: flat[bounds[i]:bounds[i + 1]] for i in range(len(self.data.palette)) if bounds[i + 1] > bounds[i]}

    @cached_property
    def _reachable_of(self) -> dict[tuple[int, ...], np.ndarray]:
        """Memo of :meth:`reachable_of`."""
        return {}

    def reachable_of(self, ids: tuple[int, ...]) -> np.ndarray:
        """Sorted flat indices of the reach-1/2 cells of the palette indices ``ids`` (the pristine
        world; memoized per set of indices)."""
        if ids not in self._reachable_of:
            parts = [self.reachable[i] for i in ids if i in self.reachable]
            self._reachable_of[ids] = np.sort(np.concatenate(parts)) if len(parts) > 1 else \
                (parts[0] if parts else np.zeros(0, dtype=np.int64))
        return self._reachable_of[ids]

    @cached_property
    def _scans(self) -> LRU[tuple[np.ndarray, np.ndarray]]:
        """Memo of :meth:`scan`."""
        return LRU(SCANS)

    def scan(self, ids: tuple[int, ...], centre: tuple[int, int, int], radius: float) -> tuple[np.ndarray, np.ndarray]:
        """The pristine reach-1/2 cells of the palette indices ``ids`` within ``radius`` of array
        position ``centre``, sorted by (squared distance, flat index): their flat indices and those
        sort keys, ``d2 * blocks.size + flat`` (memoized for the last ``SCANS`` scans: episodes on a
        world revisit them)."""
        def compute() -> tuple[np.ndarray, np.ndarray]:
            shape, (cx, _, _), r = self.data.blocks.shape, centre, math.floor(radius)
            flat = self.reachable_of(ids)
            if len(flat) > SLAB_FROM:       # flat indices are x-major: the slab is one slice of the index
                plane = shape[1] * shape[2]
                flat = flat[np.searchsorted(flat, max(cx - r, 0) * plane):np.searchsorted(flat, (cx + r + 1) * plane)]
            key = scan_keys(flat, shape, centre, radius)
            return key % self.data.blocks.size, key

        return self._scans.get_or_make((ids, centre, radius), compute)

    @cached_property
    def _columns(self) -> dict[tuple[int, int], np.ndarray]:
        """Memo of :meth:`column_cells`, filled on demand."""
        return {}

    @cached_property
    def _boxes(self) -> LRU[ColumnBox]:
        """Memo of :meth:`column_box`."""
        return LRU(BOXES)

    @cached_property
    def _minima(self) -> LRU[Minima]:
        """Memo of :meth:`minima`."""
        return LRU(MINIMA)

    def minima(self, centre: tuple[int, int, int], radius: float) -> Minima:
        """The pristine nearest distances within ``radius`` of array position ``centre``, over the columns
        overlapping the square of side ``2 * radius`` around it (a superset of the cells within
        ``radius``; memoized for the last ``MINIMA`` centres and radii: episodes on a world revisit them)."""
        def compute() -> Minima:
            (cx, cy, cz), (nx, _, nz), r = centre, self.data.blocks.shape, math.ceil(radius)
            x0, z0 = max(cx - r, 0), max(cz - r, 0)
            x1, z1 = max(min(cx + r + 1, nx), x0), max(min(cz + r + 1, nz), z0)
            box = self.column_box((x0 // COLUMN, -(-x1 // COLUMN), z0 // COLUMN, -(-z1 // COLUMN)))
            far = int(radius * radius) + 1              # above every squared distance within radius
            best, shape = np.full(len(self.data.palette), far, dtype=np.int32), self.data.blocks.shape
            if not len(box.starts):
                return Minima(box, centre, shape, far, [], best, {})
            runs, per_id, nearest = box.minima(cx, cy, cz, far, shape)
            best[box.by_id[2]] = per_id
            return Minima(box, centre, shape, far, runs, best, nearest)

        return self._minima.get_or_make((centre, radius), compute)

    def column_box(self, key: tuple[int, int, int, int]) -> ColumnBox:
        """The pristine cells of the columns ``x0 <= cx < x1``, ``z0 <= cz < z1`` (``key``), in runs
        of one column and one palette index (memoized for the last ``BOXES`` keys)."""
        def build() -> ColumnBox:
            columns = tuple((i, k) for i in range(key[0], key[1]) for k in range(key[2], key[3]))
            parts = [self.column_cells(*c) for c in columns]
            cells = np.ascontiguousarray(np.concatenate(parts, axis=1) if parts else np.zeros((4, 0), np.int32))
            owner = np.repeat(np.arange(len(parts)), [p.shape[1] for p in parts])
            ids = cells[3]
            bounds = np.concatenate(([True], (ids[1:] != ids[:-1]) | (owner[1:] != owner[:-1])))
            starts = np.flatnonzero(bounds) if len(ids) else np.zeros(0, dtype=np.int64)
            return ColumnBox(columns, cells, starts, ids[starts], owner[starts])

        return self._boxes.get_or_make(key, build)

    def column_cells(self, cx: int, cz: int) -> np.ndarray:
        """``column_cells`` of the pristine world, ordered by palette index (memoized per column)."""
        if (cx, cz) not in self._columns:
            cells = column_cells(self.data.blocks, self.reach, cx, cz)
            self._columns[cx, cz] = np.ascontiguousarray(cells[:, np.argsort(cells[3], kind="stable")])
        return self._columns[cx, cz]


def scan_keys(flat: np.ndarray, shape: tuple[int, ...], centre: tuple[int, int, int], radius: float) -> np.ndarray:
    """The sorted keys ``d2 * size + flat`` (``d2`` the squared distance from array position
    ``centre``, ``size`` that of an array of ``shape``) of the flat cells within ``radius``: the
    (distance, x, y, z) order, as flat indices are x-major and below ``size``."""
    _, ny, nz = shape
    x, rest = np.divmod(flat, ny * nz)
    y, z = np.divmod(rest, nz)
    dx, dy, dz = x - centre[0], y - centre[1], z - centre[2]
    d2 = dx * dx + dy * dy + dz * dz
    key = (d2 * (shape[0] * ny * nz) + flat)[d2 <= radius * radius]
    key.sort()
    return key


def any_neighbour(mask: np.ndarray) -> np.ndarray:
    """Cells with at least one face neighbour set in ``mask`` (outside the array counts as unset)."""
    out = np.zeros_like(mask)
    out[1:] |= mask[:-1]
    out[:-1] |= mask[1:]
    out[:, 1:] |= mask[:, :-1]
    out[:, :-1] |= mask[:, 1:]
    out[:, :, 1:] |= mask[:, :, :-1]
    out[:, :, :-1] |= mask[:, :, 1:]
    return out


def box_cells(blocks: np.ndarray, reach: np.ndarray, x0: int, x1: int, y0: int, y1: int, z0: int, z1: int
              ) -> np.ndarray:
    """The reach-1/2 cells of the box ``[x0, x1) x [y0, y1) x [z0, z1)``, in x, y, z order: an int32
    array of four rows, their array coordinates x, y, z and palette index."""
    box = (slice(x0, x1), slice(y0, y1), slice(z0, z1))
    inside = reach[box] != 0
    found = np.unravel_index(np.flatnonzero(inside), inside.shape)     # faster than nonzero on a 3-d view
    return np.stack((found[0] + x0, found[1] + y0, found[2] + z0, blocks[box][found])).astype(np.int32)


def column_cells(blocks: np.ndarray, reach: np.ndarray, cx: int, cz: int) -> np.ndarray:
    """:func:`box_cells` of the full-height column ``(cx, cz)`` (x and z in ``[c * COLUMN, (c + 1) * COLUMN)``)."""
    return box_cells(blocks, reach, cx * COLUMN, (cx + 1) * COLUMN, 0, blocks.shape[1], cz * COLUMN, (cz + 1) * COLUMN)


def reach_of(blocks: np.ndarray, is_open: np.ndarray, solid: np.ndarray, minable: np.ndarray) -> np.ndarray:
    """Reach class of every cell of a window (cells within 2 of the window border are approximate)."""
    can_break = minable[blocks]
    exposed = can_break & (is_open | any_neighbour(is_open))
    behind = can_break & ~exposed & any_neighbour(exposed & solid[blocks])
    return exposed.view(np.uint8) | (behind.view(np.uint8) << 1)


def derive(data: WorldData) -> StaticWorld:
    from scipy import ndimage     # only when a save is derived (not cached yet): a quarter second to import

    solid, minable, _ = physics().tables(data.palette)
    passable = ~solid[data.blocks]
    labels, count = ndimage.label(passable, structure=ndimage.generate_binary_structure(3, 1))
    labels = labels.astype(np.int32)
    label_open = np.zeros(count + 1, dtype=bool)
    label_open[np.unique(labels[:, -1, :])] = True
    label_open[0] = False
    reach = reach_of(data.blocks, label_open[labels], solid, minable)
    return StaticWorld.of(data, labels, label_open, reach)
