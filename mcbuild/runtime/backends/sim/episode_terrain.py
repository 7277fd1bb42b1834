"""The mutable blocks of an episode: a copy-on-write view of a static world plus an undo journal.

The blocks, labels and reach arrays are a private mapping of the world's shared image
(``shared.SharedArrays.private``): the operating system copies only the pages an episode writes.

Every write goes through :meth:`Terrain.break_block` or :meth:`Terrain.place_block`, which keep
the access structure (open components and reach classes, see ``world.py``) up to date locally
and journal the previous contents, so :meth:`Terrain.reset` restores the pristine world in time
proportional to the edits of the episode, not to the size of the world.

The observation's nearest blocks (:meth:`Terrain.nearby_blocks`) start from the pristine world's
minima around the body (``StaticWorld.minima``, shared by every episode on the static world, per
run of one column and one palette index), corrected by the reachable cells the episode removed and
added (``nearest.fresh_d2``), and are kept per centre across edits (``nearest.Nearest``).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from mcbuild.runtime.body.blocks import physics

from .block_state import State, default_state, parsed_state
from .cells import Delta, Near, any_row, face_neighbours, sq_dist_of, written_cells
from .nearest import Change, Nearest, fresh_d2
from .scan import Scan
from .world import NEIGHBOURS, StaticWorld, reach_of

Pos = tuple[int, int, int]
WINDOW = 2      # reach depends on cells up to two steps away
SMALL_EDIT = 64  # edits of at most this many cells are tracked cell by cell
CENTRES = 32    # scan centres whose nearest blocks an episode keeps up to date (Terrain.nearby_blocks)


class Terrain:
    def __init__(self, world: StaticWorld):
        data = world.data
        self.world = world
        self.origin = np.array(data.origin, dtype=np.int64)
        self.shape = data.blocks.shape
        self._o, self._n = tuple(int(v) for v in data.origin), tuple(int(v) for v in self.shape)
        self.palette: list[str] = list(data.palette)
        self.index = {b: i for i, b in enumerate(self.palette)}
        private = world.image.private()
        self.blocks, self.labels, self.reach = private["blocks"], private["labels"], private["reach"]
        self.label_open = world.label_open.copy()
        # flat views: the pristine blocks and reach, then this episode's, and its labels
        self._flats = (data.blocks.reshape(-1), world.reach.reshape(-1), self.blocks.reshape(-1), self.reach.reshape(-1))
        self._labels = self.labels.reshape(-1)
        self._tables()
        self._journal: list[tuple[np.ndarray, Any, Any]] = []     # (array, where, the old contents)
        self._placed: set[int] = set()      # flat cells holding a block placed in this episode
        # how the reachable cells differ from the pristine world's: flat cell -> palette index
        self._removed: dict[int, int] = {}      # pristine reachable cells no longer reachable as that block
        self._added: dict[int, int] = {}        # reachable cells that were not, as this block
        self._delta: Delta | None = None       # the added cells as arrays (see :meth:`_changes`)
        # nearby_blocks per (centre, radius): the squared distance per palette index, the length of
        # ``_log`` it has seen, and the dict it shows (see :meth:`nearby_blocks`)
        self._nearest: dict[tuple[Pos, float], Nearest] = {}
        # each change of a cell's reachable block since the memos were made: its array coordinates,
        # the palette index it was reachable as before and after (-1: not reachable)
        self._log: list[Change] = []
        self._by_name: list[int] | None = None     # the palette indices in block-id order
        self._ids: dict[frozenset[str], np.ndarray] = {}    # ids_of, for the blocks asked for
        # each face step and its flat offset
        self._faces = [((dx, dy, dz), (dx * self._n[1] + dy) * self._n[2] + dz) for dx, dy, dz in NEIGHBOURS]

    # ------------------------------------------------------------------ journal
    def _write(self, array: np.ndarray, where, value, cells: "np.ndarray | list[int] | None" = None) -> None:
        """Journal and write ``array[where] = value``; ``cells`` are the flat cells ``where`` names
        when the caller knows them (a write to a flat view of the blocks or reach gives them)."""
        self._journal.append((array, where, np.copy(array[where])))
        array[where] = value
        if cells is not None or array is self.blocks or array is self.reach:
            self._track(written_cells(where, self.shape) if cells is None else cells)

    def _set(self, flat: np.ndarray, cell: int, value: int) -> None:
        """Journal and write one cell of a flat view (the caller tracks it and clears the memo)."""
        self._journal.append((flat, cell, flat[cell]))
        flat[cell] = value

    def _track(self, cells: "np.ndarray | list[int]") -> None:
        """Update the difference to the pristine reachable cells at the flat ``cells`` just written."""
        if len(cells) > SMALL_EDIT:
            self._track_region(np.asarray(cells, dtype=np.int64))
            return
        was_ids, was_reach, now_ids, now_reach = self._flats
        removed, added, log, (_, ny, nz) = self._removed, self._added, self._log, self._n
        for cell in (cells.tolist() if isinstance(cells, np.ndarray) else cells):
            was = int(was_ids[cell]) if was_reach[cell] else -1       # -1: not reachable
            now = int(now_ids[cell]) if now_reach[cell] else -1
            before = added[cell] if cell in added else (-1 if cell in removed else was)
            if before != now:                   # logged with its array position (see _position)
                x, rest = divmod(cell, ny * nz)
                log.append((x, *divmod(rest, nz), before, now))
            if was >= 0 and was != now:
                removed[cell] = was
            else:
                removed.pop(cell, None)
            if now >= 0 and was != now:
                if added.get(cell) != now:
                    added[cell] = now
                    self._delta = None      # the added cells' arrays are made again only when they changed
            elif added.pop(cell, None) is not None:
                self._delta = None

    def _track_region(self, cells: np.ndarray) -> None:
        """:meth:`_track` of many cells at once (the nearest-block memos are made again)."""
        self._forget()
        was_ids, was_reach, now_ids, now_reach = self._flats
        was_id, was = was_ids[cells], was_reach[cells] > 0
        now_id, now = now_ids[cells], now_reach[cells] > 0
        same = was & now & (was_id == now_id)
        for part, differs, ids in ((self._removed, was & ~same, was_id), (self._added, now & ~same, now_id)):
            for cell, block in zip(cells[differs].tolist(), ids[differs].tolist()):
                part[cell] = block
            if part:
                back = cells[~differs]
                if len(back) > len(part):       # a large region: look up only the cells noted before
                    back = np.intersect1d(back, np.fromiter(part, dtype=np.int64, count=len(part)))
                for cell in back.tolist():
                    part.pop(cell, None)
        self._delta = None

    def _changes(self) -> "Delta":
        """The added reachable cells as arrays."""
        if self._delta is None:
            self._delta = Delta(self._added, self.shape)
        return self._delta

    def reset(self) -> None:
        """Undo every edit since construction (or the last reset)."""
        for array, where, old in reversed(self._journal):
            array[where] = old
        self._journal.clear()
        self._placed.clear()
        self._removed.clear()
        self._added.clear()
        self._delta = None
        self._forget()

    def _forget(self) -> None:
        """Drop the nearest-block memos and the log that keeps them up to date."""
        self._nearest.clear()
        self._log.clear()

    @property
    def edited(self) -> bool:
        return bool(self._journal)

    # ------------------------------------------------------------------ lookups
    def cell(self, pos: Pos) -> tuple[int, int, int] | None:
        """Array index of a world position (None outside the playable area)."""
        x, y, z = pos[0] - self._o[0], pos[1] - self._o[1], pos[2] - self._o[2]
        if 0 <= x < self._n[0] and 0 <= y < self._n[1] and 0 <= z < self._n[2]:
            return x, y, z
        return None

    def _at(self, a: tuple[int, int, int]) -> int:
        """The flat index of array position ``a``."""
        return (a[0] * self._n[1] + a[1]) * self._n[2] + a[2]

    def block(self, pos: Pos) -> str | None:
        a = self.cell(pos)
        return None if a is None else self.palette[self.blocks[a]]

    def state(self, pos: Pos) -> dict[str, str]:
        """State properties of the block at ``pos``: the save's, or a placed block's default state (one
        snow layer); {} outside the area or where the save's block is gone."""
        return dict(self.state_items(pos))

    def state_items(self, pos: Pos) -> State:
        """:meth:`state` as (property, value) pairs sorted by property."""
        return self.block_and_state(pos)[1]

    def block_and_state(self, pos: Pos) -> tuple[str | None, State]:
        """:meth:`block` and :meth:`state_items` of ``pos`` at once."""
        a = self.cell(pos)
        if a is None:
            return None, ()
        flat = self._at(a)
        now = self._flats[2][flat]
        block = self.palette[now]
        if flat in self._placed:
            return block, default_state(block)
        if now != self._flats[0][flat]:
            return block, ()
        return block, parsed_state(self.world.data.state_at(flat))

    def is_open(self, pos: Pos) -> bool:
        a = self.cell(pos)
        return a is not None and bool(self.label_open[self.labels[a]])

    def reach_at(self, pos: Pos) -> int:
        a = self.cell(pos)
        return 0 if a is None else int(self.reach[a])

    def is_solid(self, pos: Pos) -> bool:
        a = self.cell(pos)
        return a is not None and bool(self.solid[self.blocks[a]])

    def palette_index(self, block: str) -> int:
        if block not in self.index:
            self.index[block] = len(self.palette)
            self.palette.append(block)
            self._ids.clear()
            self._tables()
        return self.index[block]

    def _tables(self) -> None:
        """The palette's lookup tables: solid, breakable (minable) and ground as arrays, and as lists
        breakable and 'holds a block behind it when exposed' (breakable and solid)."""
        self.solid, self.minable, self.ground = physics().tables(self.palette)
        self._breakable, self._holds = self.minable.tolist(), (self.minable & self.solid).tolist()

    def ids_of(self, blocks: frozenset[str]) -> np.ndarray:
        """The sorted palette indices of ``blocks`` (memoized until the palette grows)."""
        ids = self._ids.get(blocks)
        if ids is None:
            ids = self._ids[blocks] = np.array(sorted(self.index[b] for b in blocks if b in self.index), dtype=np.int64)
        return ids

    def surface(self, x: int, z: int) -> int | None:
        """Feet height of the highest standing spot in a column (None outside the area)."""
        a = self.cell((x, int(self.origin[1]), z))
        if a is None:
            return None
        column = self.ground[self.blocks[a[0], :, a[2]]]
        filled = np.nonzero(column)[0]
        top = int(filled.max()) + 1 if len(filled) else 0
        return min(top, self.shape[1] - 1) + int(self.origin[1])

    def stand(self, pos: Pos) -> Pos:
        """Where the body comes to rest from ``pos``: out of any solid block, then down until it
        stands on or swims in ground."""
        a = self.cell(pos)
        if a is None:
            return pos
        column = self.blocks[a[0], :, a[2]]
        y = a[1]
        while y < self.shape[1] - 1 and self.solid[column[y]]:
            y += 1
        if y and self.ground[column[y - 1]]:        # the usual case: standing right on ground
            return pos[0], y + self._o[1], pos[2]
        below = np.nonzero(self.ground[column[:y]])[0]
        return pos[0], (int(below.max()) + 1 if len(below) else 0) + int(self.origin[1]), pos[2]

    def biome(self, pos: Pos) -> str:
        data = self.world.data
        a = self.cell(pos) or (0, 0, 0)
        b = data.biomes[min(a[0] // 4, data.biomes.shape[0] - 1), min(a[1] // 4, data.biomes.shape[1] - 1),
                        min(a[2] // 4, data.biomes.shape[2] - 1)]
        return data.biome_palette[int(b)]

    # ------------------------------------------------------------------ scanning
    def scan(self, center: Pos, radius: float, ids: np.ndarray) -> Scan:
        """Blocks of the given palette indices with reach 1 or 2 within ``radius`` of ``center``: the
        pristine world's (``StaticWorld.scan``) that still hold their block, and the cells this
        episode made reachable as one of them (an added cell is never also a pristine cell of its
        block, see :meth:`_track`)."""
        centre = (int(center[0]) - self._o[0], int(center[1]) - self._o[1], int(center[2]) - self._o[2])
        wanted = tuple(ids.tolist())
        flat, key = self.world.scan(wanted, centre, radius)
        came: list[tuple[int, int]] = []        # (key, cell) as ``world.scan_keys`` orders them
        if self._added:
            kinds, size, (cx, cy, cz) = set(wanted), self.blocks.size, centre
            for cell, block in self._added.items():
                if block in kinds:
                    x, y, z = self._position(cell)
                    d2 = (x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2
                    if d2 <= radius * radius:
                        came.append((d2 * size + cell, cell))
            came.sort()
        # the cells removed so far: a pristine cell of the scan still holds its block and is still
        # reachable exactly when it is not among them (:meth:`_track`)
        terrain = (self.palette, self._flats[2], self._flats[3], self.position)
        return Scan(terrain, flat, key, set(self._removed) if self._removed else frozenset(), came)

    def position(self, cell: int) -> Pos:
        """The world position of flat cell ``cell``."""
        x, y, z = self._position(cell)
        return x + self._o[0], y + self._o[1], z + self._o[2]

    def _position(self, cell: int) -> tuple[int, int, int]:
        """The array position of flat cell ``cell``."""
        _, ny, nz = self._n
        x, rest = divmod(cell, ny * nz)
        y, z = divmod(rest, nz)
        return x, y, z

    def nearest_per_block(self, center: Pos, radius: float) -> dict[str, float]:
        """Distance of the nearest reachable block of each kind within ``radius`` of ``center``."""
        return self._nearest_per_block(center, radius)

    def nearby_blocks(self, center: Pos, radius: float) -> dict[str, float]:
        """:meth:`nearest_per_block` rounded to 0.1, in block-id order.

        Kept per centre (the last ``CENTRES``) across edits: an edit's changes (``_log``) are applied
        to a centre's distances when it is asked again, a cell that came within the radius by
        lowering its block's distance; only a cell that left while as near as its block's nearest
        makes the centre's distances be read again (:meth:`_nearest_d2`)."""
        key = (center, radius)
        memo = self._nearest.get(key)
        if memo is not None and memo.seen < len(self._log):
            cx, cy, cz = center[0] - self._o[0], center[1] - self._o[1], center[2] - self._o[2]
            memo = memo if memo.catch_up(self._log, (cx, cy, cz), self.palette) else None
        if memo is None:
            best, far = self._nearest_d2(center, radius)
            memo = Nearest(best.tolist(), far, len(self._log), None)
            if len(self._nearest) >= CENTRES:
                del self._nearest[next(iter(self._nearest))]
            self._nearest[key] = memo
        if memo.shown is None:
            if self._by_name is None or len(self._by_name) != len(self.palette):
                self._by_name = sorted(range(len(self.palette)), key=self.palette.__getitem__)
            memo.shown = memo.show(self.palette, self._by_name)
        return dict(memo.shown)

    def _nearest_per_block(self, center: Pos, radius: float) -> dict[str, float]:
        """:meth:`nearest_per_block`, never memoized."""
        best, far = self._nearest_d2(center, radius)
        found = np.flatnonzero(best < far)
        return {self.palette[i]: math.sqrt(d) for i, d in zip(found.tolist(), best[found].tolist())}

    def _nearest_d2(self, center: Pos, radius: float) -> tuple[np.ndarray, int]:
        """The squared distance of the nearest cell of each palette index within ``radius``, and the
        bound ``far`` above them that marks an index without one (``nearest.fresh_d2``)."""
        (ox, oy, oz), (x, y, z) = self._o, center
        pristine = self.world.minima((int(x) - ox, int(y) - oy, int(z) - oz), radius)
        return fresh_d2(pristine, self._removed, self._changes(), len(self.palette)), pristine.far

    def open_spots(self, center: Pos, radius: int, empty: np.ndarray) -> list[Pos]:
        """Open cells with palette index in ``empty`` standing on a solid block, within ``radius``
        (horizontally; one level up or down) of ``center``, nearest first (then by x, y, z), excluding
        its column."""
        c = [v - o for v, o in zip(center, self._o)]
        lo = [max(c[0] - radius, 0), max(c[1] - 1, 1), max(c[2] - radius, 0)]
        hi = [max(min(v + d, n), low) for v, d, n, low in zip(c, (radius + 1, 2, radius + 1), self._n, lo)]
        box = (slice(lo[0], hi[0]), slice(lo[1], hi[1]), slice(lo[2], hi[2]))
        below = (slice(lo[0], hi[0]), slice(lo[1] - 1, hi[1] - 1), slice(lo[2], hi[2]))
        wanted = np.zeros(len(self.palette), dtype=bool)
        wanted[empty] = True
        ok = wanted[self.blocks[box]] & self.label_open[self.labels[box]] & self.solid[self.blocks[below]]
        (cx, cy, cz), (ox, oy, oz) = c, self._o
        found = zip(*((v + low).tolist() for v, low in zip(np.nonzero(ok), lo)))
        spots = sorted(((x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2, x, y, z) for x, y, z in found if x != cx or z != cz)
        return [(x + ox, y + oy, z + oz) for _, x, y, z in spots]

    # ------------------------------------------------------------------ access
    def open_neighbour(self, pos: Pos, near: Pos) -> Pos | None:
        """The open cell from which the body works on ``pos``: itself if open, else the open face
        neighbour closest to ``near`` (the smallest position among the closest)."""
        a = self.cell(pos)
        x, y, z = a or (-1, -1, -1)
        nx, ny, nz = self._n
        if not (0 < x < nx - 1 and 0 < y < ny - 1 and 0 < z < nz - 1):     # outside or at the border
            if self.is_open(pos):
                return pos
            options = [n for n in face_neighbours(pos) if self.is_open(n)]
            return min([(sq_dist_of(n, near), n) for n in options])[1] if options else None
        flat, labels, label_open = self._at((x, y, z)), self._labels, self.label_open
        if label_open[labels[flat]]:
            return pos
        best: tuple[int, Pos] | None = None
        for (dx, dy, dz), step in self._faces:         # inside: the six labels read one by one
            if label_open[labels[flat + step]]:
                n = (pos[0] + dx, pos[1] + dy, pos[2] + dz)
                option = (sq_dist_of(n, near), n)
                if best is None or option < best:
                    best = option
        return None if best is None else best[1]

    def obstructions(self, pos: Pos, near: Pos, keep: frozenset[str] = frozenset()) -> list[Pos]:
        """Solid, directly reachable face neighbours of a reach-2 block, closest to ``near`` first
        (never a block in ``keep``)."""
        options = [n for n in face_neighbours(pos)
                   if self.reach_at(n) == 1 and self.is_solid(n) and self.block(n) not in keep]
        return sorted(options, key=lambda n: (sq_dist_of(n, near), n))

    # ------------------------------------------------------------------ edits
    def break_block(self, pos: Pos) -> None:
        """Replace a reachable block with air; it joins the open space (and so do caves it opens)."""
        a = self.cell(pos)
        if a is None:
            raise ValueError(f"{pos} is outside the playable area")
        flat, label_open = self._at(a), self.label_open
        around = self._neighbour_labels(a)
        shut = [label for label in around if not label_open[label]]
        own = label_open[self._labels[flat]]
        if not own and len(shut) == len(around):
            raise ValueError(f"{pos} has no open side")
        self._set(self._flats[2], flat, 0)
        self._placed.discard(flat)
        if not own:
            self._set(self._labels, flat, next(label for label in around if label not in shut))
        for label in sorted(set(shut) - {0}):
            self._write(label_open, label, True)
            self._refresh_region(np.nonzero(self.labels == label))
        self._refresh(a, flat, opened=True)

    def _neighbour_labels(self, a: tuple[int, int, int]) -> list[int]:
        """The labels of the face neighbours of array position ``a`` inside the area, in ``NEIGHBOURS`` order."""
        x, y, z = a
        nx, ny, nz = self._n
        if 0 < x < nx - 1 and 0 < y < ny - 1 and 0 < z < nz - 1:
            flat, labels = self._at(a), self._labels
            return [int(labels[flat + step]) for _, step in self._faces]
        return [int(self.labels[c]) for c in ((x + dx, y + dy, z + dz) for dx, dy, dz in NEIGHBOURS)
                if 0 <= c[0] < nx and 0 <= c[1] < ny and 0 <= c[2] < nz]

    def place_block(self, pos: Pos, block: str) -> None:
        """Put ``block`` into an open cell (a solid block removes the cell from the open space)."""
        a = self.cell(pos)
        if a is None or not self.is_open(pos):
            raise ValueError(f"{pos} is not an open cell")
        idx = self.palette_index(block)
        flat = self._at(a)
        self._set(self._flats[2], flat, idx)
        self._placed.add(flat)
        if self.solid[idx]:
            self._set(self._labels, flat, 0)
        self._refresh(a, flat)

    def _refresh(self, a: tuple[int, int, int], flat: int, opened: bool = False) -> None:
        """Recompute reach after one cell ``a`` (flat index ``flat``) changed (its block, and whether
        it is open; ``opened``: a break made it open air), and track the cell with the cells whose
        reach changed.

        A cell's exposure reads the openness of itself and its face neighbours, and 'behind' reads
        the exposure of its neighbours: so exposure can change only within one face step of ``a``
        and reach only within two; exposure further out is read from ``reach`` (1 = exposed). The
        same values as :meth:`_refresh_region` over ``a`` (used near the border of the area)."""
        (x, y, z), (nx, ny, nz) = a, self._n
        if not (3 <= x < nx - 3 and 3 <= y < ny - 3 and 3 <= z < nz - 3):
            self._refresh_region(tuple(np.array([v]) for v in a))
            self._track([flat])
            return
        where, old, new = (self._reach_opened if opened else self._reach_edited)(flat)
        if where:
            reach = self._flats[3]
            self._journal.append((reach, where, old))
            reach[where] = new
        self._track([*where, flat])

    def _reach_edited(self, flat: int) -> tuple[list[int], list[int], list[int]]:
        """The cells within two face steps of ``flat`` whose reach changed, their reach before and now."""
        near = Near.of(self.shape)
        _, _, blocks, reach = self._flats
        cells3 = flat + near.d3
        ids3 = blocks[cells3]
        minable3 = self.minable[ids3]
        exposed = reach[cells3] == 1
        cells2 = cells3[near.d2_in_d3]
        open2 = self.label_open[self._labels[cells2]]
        exposed[near.d1_in_d3] = minable3[near.d1_in_d3] & any_row(open2[near.d1_around])
        held = exposed & self.solid[ids3]
        exposed2 = exposed[near.d2_in_d3]
        behind = minable3[near.d2_in_d3] & ~exposed2 & any_row(held[near.d2_around])
        new = exposed2.view(np.uint8) | (behind.view(np.uint8) << 1)
        old = reach[cells2]
        changed = new != old
        return cells2[changed].tolist(), old[changed].tolist(), new[changed].tolist()

    def _reach_opened(self, flat: int) -> tuple[list[int], list[int], list[int]]:
        """:meth:`_reach_edited` after a break made ``flat`` open air, over the few cells in plain
        Python: ``flat`` is not breakable, each face neighbour is exposed exactly when it is breakable
        (no openness is read), and a cell two steps away keeps its exposure, so its reach, except that
        a breakable one of reach 0 comes behind a neighbour next to ``flat`` that now holds it (exposure
        only rose: no hold was lost)."""
        near = Near.of(self.shape)
        _, _, blocks, reach = self._flats
        cells = flat + near.d2
        ids, old = blocks[cells].tolist(), reach[cells].tolist()
        breakable, holds = self._breakable, self._holds
        new = old[:]
        for k in near.d1_in_d2:
            new[k] = 1 if breakable[ids[k]] else 0
        for k, beside in near.ring2:
            if not old[k] and breakable[ids[k]] and any(holds[ids[j]] for j in beside):
                new[k] = 2
        changed = [(cell, o, n) for cell, o, n in zip(cells.tolist(), old, new) if o != n]
        return [c for c, _, _ in changed], [o for _, o, _ in changed], [n for _, _, n in changed]

    def _refresh_region(self, cells: tuple[np.ndarray, ...]) -> None:
        """Recompute reach over the bounding box of ``cells`` grown by the reach window."""
        lo = [max(int(c.min()) - WINDOW, 0) for c in cells]
        hi = [min(int(c.max()) + WINDOW + 1, self.shape[i]) for i, c in enumerate(cells)]
        plo = [max(v - WINDOW, 0) for v in lo]
        phi = [min(v + WINDOW, self.shape[i]) for i, v in enumerate(hi)]
        pad = (slice(plo[0], phi[0]), slice(plo[1], phi[1]), slice(plo[2], phi[2]))
        window = reach_of(self.blocks[pad], self.label_open[self.labels[pad]], self.solid, self.minable)
        inner = tuple(slice(lo[i] - plo[i], hi[i] - plo[i]) for i in range(3))
        target = (slice(lo[0], hi[0]), slice(lo[1], hi[1]), slice(lo[2], hi[2]))
        new = window[inner]
        if not np.array_equal(self.reach[target], new):
            self._write(self.reach, target, new)
