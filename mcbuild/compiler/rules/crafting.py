"""Crafting-grid semantics of 1.19: what a submitted 2x2 or 3x3 grid produces under a rulebook.

Shaped recipes are shrunk to their bounding box and match at any offset and mirrored
left-right; shapeless recipes match a multiset of ingredients. The result is whatever the
resolved recipe says, so a Mirror pack's override is reported exactly like vanilla. When several
recipes match, the first by id wins. ``crafting_special_*`` recipes (dyed armour, fireworks, map
and book copies, repairs) compute their result from item data the simulator does not model: a
grid only they match produces nothing. Items with a crafting remainder (a milk bucket) hand it
back (``catalogs/game_facts.yaml`` ``crafting_remainders``).

:class:`CraftingIndex` files a rulebook's recipes under the shape of their grid (the occupied
cells of a shaped recipe, as written and mirrored; the ingredient count of a shapeless one) and
each item they accept, so a grid is tested only against the few recipes of its own shape that
take its first item.

The functions here take any :class:`Recipes` (in practice a ``mcbuild.compiler.rules.rulebook.Rulebook``,
which builds its crafting index and memoized ``craft`` from this module).
"""
from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Hashable, Mapping, Protocol, Sequence, TypeVar

from mcbuild.compiler.rules.catalog import load as load_catalog
from mcbuild.compiler.rules.catalog import ns

Grid = Sequence[Sequence[str | None]]
Matrix = tuple[tuple[frozenset[str] | None, ...], ...]
T = TypeVar("T")
SHAPED = "minecraft:crafting_shaped"
SHAPELESS = "minecraft:crafting_shapeless"
CRAFTING_TYPES = frozenset({SHAPED, SHAPELESS})


class Recipes(Protocol):
    """What crafting reads of a rulebook: its resolved recipes, game facts and crafting index."""

    @property
    def facts(self) -> dict[str, Any]: ...

    @property
    def recipes(self) -> dict[str, dict]: ...

    @property
    def crafting_index(self) -> "CraftingIndex": ...

    def ingredient(self, ing: Any) -> frozenset[str]: ...


@dataclass(frozen=True)
class CraftResult:
    recipe: str
    item: str
    count: int
    remainders: tuple[tuple[str, int], ...] = ()     # items the grid hands back, sorted


def trim(grid: Grid) -> list[list[str | None]]:
    """Remove empty outer rows and columns; normalize ids."""
    return _shrink([[ns(c) if c else None for c in row] for row in grid])


def _shrink(rows: list[list]) -> list[list]:
    """``rows`` without their empty outer rows and columns (None is empty), padded to one width."""
    while rows and all(c is None for c in rows[0]):
        rows.pop(0)
    while rows and all(c is None for c in rows[-1]):
        rows.pop()
    if not rows:
        return []
    width = max(len(r) for r in rows)
    rows = [r + [None] * (width - len(r)) for r in rows]
    cols = [i for i in range(width) if any(r[i] is not None for r in rows)]
    return [r[cols[0]: cols[-1] + 1] for r in rows]


def shaped_matrix(rulebook: Recipes, recipe: dict) -> list[list[frozenset[str] | None]]:
    """The recipe's pattern, shrunk like the game does, with each cell's accepted items."""
    key = {k: rulebook.ingredient(v) for k, v in recipe["key"].items()}
    return _shrink([[key[ch] if ch != " " else None for ch in row] for row in recipe["pattern"]])


def recipe_size(rulebook: Recipes, recipe: dict) -> tuple[int, int]:
    """(rows, cols) the recipe needs; shapeless recipes need as many cells as ingredients."""
    if ns(recipe["type"]) == SHAPED:
        m = shaped_matrix(rulebook, recipe)
        return len(m), len(m[0])
    n = len(recipe["ingredients"])
    return (1, n) if n <= 2 else (2, 2) if n <= 4 else (3, 3)


def grid_size(station: str) -> int:
    """Side of the crafting grid at ``station`` (``inventory`` or ``crafting_table``): a game fact."""
    return int(load_catalog().facts["crafting_grid"][station])


def fits_inventory(rulebook: Recipes, recipe: dict) -> bool:
    side = grid_size("inventory")
    if ns(recipe["type"]) == SHAPELESS:
        return len(recipe["ingredients"]) <= side * side
    rows, cols = recipe_size(rulebook, recipe)
    return rows <= side and cols <= side


def craft_station(rulebook: Recipes, recipe: dict) -> str:
    """Where a crafting recipe is made: the inventory grid when it fits there, else a crafting table."""
    return "inventory" if fits_inventory(rulebook, recipe) else "crafting_table"


def remainders(rulebook: Recipes, items: Mapping[str, int]) -> Counter[str]:
    """What a crafting grid hands back for the consumed ``items`` (a bucket for a milk bucket)."""
    table = rulebook.facts["crafting_remainders"]
    out: Counter[str] = Counter()
    for item, n in sorted(items.items()):
        if ns(item) in table:
            out[ns(table[ns(item)])] += n
    return out


# ---------------------------------------------------------------------------- matching
def _shaped_matches(matrix: Matrix, grid: list[list[str | None]]) -> bool:
    if len(matrix) != len(grid) or len(matrix[0]) != len(grid[0]):
        return False
    return any(all(accepted is None if have is None else accepted is not None and have in accepted
                   for row, cells in zip(grid, matrix) for have, accepted in zip(row, cells[::step]))
               for step in (1, -1))


def _shapeless_matches(options: Sequence[frozenset[str]], items: Sequence[str]) -> bool:
    """Whether every item takes a distinct ingredient that accepts it (augmenting paths)."""
    if len(options) != len(items):
        return False
    holder: list[int | None] = [None] * len(options)      # ingredient -> the item it takes

    def seat(i: int, tried: set[int]) -> bool:
        for j, accepted in enumerate(options):
            if j not in tried and items[i] in accepted:
                tried.add(j)
                held = holder[j]
                if held is None or seat(held, tried):
                    holder[j] = i
                    return True
        return False

    return all(seat(i, set()) for i in range(len(items)))


@dataclass(frozen=True)
class _Entry:
    """One crafting recipe, resolved: its cells (shaped, shrunk) or ingredients (shapeless)."""

    rid: str
    shaped: bool
    cells: tuple                 # Matrix if shaped, else tuple[frozenset[str], ...]
    accepted: frozenset[str]     # every item some cell accepts
    item: str
    count: int

    def matches(self, grid: list[list[str | None]], items: list[str]) -> bool:
        return _shaped_matches(self.cells, grid) if self.shaped else _shapeless_matches(self.cells, items)


def _mask(rows: Sequence[Sequence[object]]) -> tuple[tuple[bool, ...], ...]:
    return tuple(tuple(c is not None for c in row) for row in rows)


class CraftingIndex:
    """The crafting recipes of one rulebook, filed by grid shape (build once; read-only after)."""

    def __init__(self, rulebook: Recipes):
        self._by_shape: dict[tuple[Hashable, str], list[_Entry]] = {}    # (shape, an accepted item)
        for rid, recipe in sorted(rulebook.recipes.items()):
            rtype = ns(recipe.get("type", ""))
            if rtype == SHAPED:
                cells: tuple = tuple(tuple(row) for row in shaped_matrix(rulebook, recipe))
                shapes: set[Hashable] = {_mask(cells), _mask([row[::-1] for row in cells])}
            elif rtype == SHAPELESS:
                cells = tuple(rulebook.ingredient(i) for i in recipe["ingredients"])
                shapes = {len(cells)}
            else:
                continue
            flat = [c for row in cells for c in row] if rtype == SHAPED else list(cells)
            accepted = frozenset().union(*(c for c in flat if c is not None))
            entry = _Entry(rid, rtype == SHAPED, cells, accepted, ns(recipe["result"]["item"]),
                           int(recipe["result"].get("count", 1)))
            for shape in shapes:
                for item in accepted:
                    self._by_shape.setdefault((shape, item), []).append(entry)

    def match(self, grid: list[list[str | None]]) -> _Entry | None:
        """The first recipe by id that a trimmed, non-empty ``grid`` matches."""
        items = [c for row in grid for c in row if c is not None]
        distinct = frozenset(items)
        candidates = heapq.merge(self._by_shape.get((_mask(grid), items[0]), ()),
                                 self._by_shape.get((len(items), items[0]), ()), key=lambda e: e.rid)
        return next((e for e in candidates if distinct <= e.accepted and e.matches(grid, items)), None)


def craft(rulebook: Recipes, grid: Grid) -> CraftResult | None:
    """The recipe result for ``grid``, or None if nothing matches."""
    cells = trim(grid)
    entry = rulebook.crafting_index.match(cells) if cells else None
    if entry is None:
        return None
    back = remainders(rulebook, Counter(c for row in cells for c in row if c is not None))
    return CraftResult(entry.rid, entry.item, entry.count, tuple(sorted(back.items())))


def fill_pattern(pattern: Sequence[Sequence[frozenset[str] | None]], have: Mapping[str, float],
                 size: int | None = None) -> tuple[list[list[str | None]], Counter[str]]:
    """A recipe pattern (rows of accepted-item sets, None for empty cells) filled cell by cell with
    the accepted item most plentiful in ``have`` after the cells already filled (alphabetical on
    ties); padded to ``size`` x ``size`` when given. Returns (grid, items used)."""
    used: Counter[str] = Counter()
    grid: list[list[str | None]] = [[None] * size for _ in range(size)] if size else [[None] * len(r) for r in pattern]
    for r, row in enumerate(pattern):
        for c, accepted in enumerate(row):
            if accepted is not None:
                pick = _most_left(accepted, have, used)
                used[pick] += 1
                grid[r][c] = pick
    return grid, used


def _most_left(accepted: frozenset[str], have: Mapping[str, float], used: Counter[str]) -> str:
    """The accepted item with the most left in ``have`` after ``used``, alphabetical on ties. Only
    the items held or used are looked at one by one: every other one has exactly 0 left."""
    keys = [(-(have.get(item, 0) - used[item]), item) for item in (*have, *used) if item in accepted]
    fresh = next((i for i in _by_name(accepted) if i not in have and i not in used), None)
    if fresh is not None:
        keys.append((0, fresh))
    return min(keys)[1]


@lru_cache(maxsize=4096)
def _by_name(accepted: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted(accepted))


def example_grid(rulebook: Recipes, recipe: dict, choose: Callable[[frozenset[str]], T | None],
                 size: int) -> list[list[T | None]] | None:
    """A concrete ``size``x``size`` grid for ``recipe``, picking each cell's item with ``choose``
    (a function from the accepted item set to one item or None). Used by planners."""
    matrix: Sequence[Sequence[frozenset[str] | None]]
    if ns(recipe["type"]) == SHAPED:
        matrix = shaped_matrix(rulebook, recipe)
    else:
        opts = [rulebook.ingredient(i) for i in recipe["ingredients"]]
        matrix = [opts[i: i + size] for i in range(0, len(opts), size)]
    if len(matrix) > size or max(len(r) for r in matrix) > size:
        return None
    grid: list[list[T | None]] = [[None] * size for _ in range(size)]
    for r, row in enumerate(matrix):
        for c, accepted in enumerate(row):
            if accepted is not None:
                pick = choose(accepted)
                if pick is None:
                    return None
                grid[r][c] = pick
    return grid
