"""Crafting-grid semantics of 1.19: what a submitted 2x2 or 3x3 grid produces under a rulebook.

Shaped recipes are shrunk to their bounding box and match at any offset and mirrored
left-right; shapeless recipes match a multiset of ingredients. The result is whatever the
resolved recipe says, so a Mirror pack's override is reported exactly like vanilla.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

from compiler.rules.catalog import load as load_catalog
from compiler.rules.catalog import ns

if TYPE_CHECKING:
    from compiler.rules.rulebook import Rulebook

Grid = Sequence[Sequence[str | None]]


@dataclass(frozen=True)
class CraftResult:
    recipe: str
    item: str
    count: int


def trim(grid: Grid) -> list[list[str | None]]:
    """Remove empty outer rows and columns; normalize ids."""
    rows = [[ns(c) if c else None for c in row] for row in grid]
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


def shaped_matrix(rulebook: "Rulebook", recipe: dict) -> list[list[frozenset[str] | None]]:
    """The recipe's pattern, shrunk like the game does, with each cell's accepted items."""
    key = {k: rulebook.ingredient(v) for k, v in recipe["key"].items()}
    pattern = [[key[ch] if ch != " " else None for ch in row] for row in recipe["pattern"]]
    while pattern and all(c is None for c in pattern[0]):
        pattern.pop(0)
    while pattern and all(c is None for c in pattern[-1]):
        pattern.pop()
    width = max(len(r) for r in pattern)
    pattern = [r + [None] * (width - len(r)) for r in pattern]
    cols = [i for i in range(width) if any(r[i] is not None for r in pattern)]
    return [r[cols[0]: cols[-1] + 1] for r in pattern]


def recipe_size(rulebook: "Rulebook", recipe: dict) -> tuple[int, int]:
    """(rows, cols) the recipe needs; shapeless recipes need as many cells as ingredients."""
    if ns(recipe["type"]) == "minecraft:crafting_shaped":
        m = shaped_matrix(rulebook, recipe)
        return len(m), len(m[0])
    n = len(recipe["ingredients"])
    return (1, n) if n <= 2 else (2, 2) if n <= 4 else (3, 3)


def grid_size(station: str) -> int:
    """Side of the crafting grid at ``station`` (``inventory`` or ``crafting_table``): a game fact."""
    return int(load_catalog().facts["crafting_grid"][station])


def fits_inventory(rulebook: "Rulebook", recipe: dict) -> bool:
    side = grid_size("inventory")
    if ns(recipe["type"]) == "minecraft:crafting_shapeless":
        return len(recipe["ingredients"]) <= side * side
    rows, cols = recipe_size(rulebook, recipe)
    return rows <= side and cols <= side


def craft_station(rulebook: "Rulebook", recipe: dict) -> str:
    """Where a crafting recipe is made: the inventory grid when it fits there, else a crafting table."""
    return "inventory" if fits_inventory(rulebook, recipe) else "crafting_table"


def _shaped_matches(matrix, grid) -> bool:
    if len(matrix) != len(grid) or len(matrix[0]) != len(grid[0]):
        return False
    for mirrored in (False, True):
        ok = True
        for r, row in enumerate(matrix):
            cells = list(reversed(row)) if mirrored else row
            for c, accepted in enumerate(cells):
                have = grid[r][c]
                if (accepted is None) != (have is None) or (have is not None and have not in accepted):
                    ok = False
                    break
            if not ok:
                break
        if ok:
            return True
    return False


def _shapeless_matches(options: list[frozenset[str]], items: list[str]) -> bool:
    if len(options) != len(items):
        return False

    def assign(i: int, used: frozenset[int]) -> bool:
        if i == len(items):
            return True
        return any(j not in used and items[i] in opt and assign(i + 1, used | {j}) for j, opt in enumerate(options))

    return assign(0, frozenset())


def craft(rulebook: "Rulebook", grid: Grid) -> CraftResult | None:
    """The recipe result for ``grid``, or None if nothing matches."""
    cells = trim(grid)
    if not cells:
        return None
    items = [c for row in cells for c in row if c is not None]
    for rid, recipe in sorted(rulebook.recipes.items()):
        rtype = ns(recipe.get("type", ""))
        if rtype == "minecraft:crafting_shaped":
            matched = _shaped_matches(shaped_matrix(rulebook, recipe), cells)
        elif rtype == "minecraft:crafting_shapeless":
            matched = _shapeless_matches([rulebook.ingredient(i) for i in recipe["ingredients"]], items)
        else:
            continue
        if matched:
            res = recipe["result"]
            return CraftResult(rid, ns(res["item"]), int(res.get("count", 1)))
    return None


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
                pick = min(accepted, key=lambda i: (-(have.get(i, 0) - used[i]), i))
                used[pick] += 1
                grid[r][c] = pick
    return grid, used


def example_grid(rulebook: "Rulebook", recipe: dict, choose, size: int) -> list[list[str | None]] | None:
    """A concrete ``size``x``size`` grid for ``recipe``, picking each cell's item with ``choose``
    (a function from the accepted item set to one item or None). Used by planners."""
    if ns(recipe["type"]) == "minecraft:crafting_shaped":
        matrix = shaped_matrix(rulebook, recipe)
    else:
        opts = [rulebook.ingredient(i) for i in recipe["ingredients"]]
        matrix = [opts[i: i + size] for i in range(0, len(opts), size)]
    if len(matrix) > size or max(len(r) for r in matrix) > size:
        return None
    grid: list[list[str | None]] = [[None] * size for _ in range(size)]
    for r, row in enumerate(matrix):
        for c, accepted in enumerate(row):
            if accepted is not None:
                pick = choose(accepted)
                if pick is None:
                    return None
                grid[r][c] = pick
    return grid
