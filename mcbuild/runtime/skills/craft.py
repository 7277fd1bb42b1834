"""``craft_grid``: submit a grid (in the inventory or at a placed crafting table); what it makes is
whatever the world's recipes produce."""
from __future__ import annotations

from collections import Counter

from mcbuild.compiler.core.canonical import compact
from mcbuild.runtime.contract.backend import Outcome, Transition, failure
from mcbuild.runtime.contract.skills import CRAFTING_TABLE, MISSING_ITEM, NEEDS_TABLE

from .common import go_to_station, missing_items
from .primitives import Pos, Primitives, Refused


def craft_grid(p: Primitives, args: dict) -> Outcome:
    grid, station = args["grid"], args["station"]
    missing = missing_items(p.inventory(), Counter(c for row in grid for c in row if c is not None))
    if missing:
        return failure(MISSING_ITEM, "grid needs items not in inventory", missing=missing)
    table: Pos | None = None
    if station == "crafting_table":
        at = go_to_station(p, CRAFTING_TABLE, NEEDS_TABLE)
        if isinstance(at, Outcome):
            return at
        table = at
    transition = Transition("craft", compact(grid), station=station)
    try:
        item, count = p.craft(grid, station, table)
    except Refused as refused:
        return refused.outcome([transition])
    return Outcome(True, f"crafted {count} {item}", None, {"produced": {item: count}}, [transition])
