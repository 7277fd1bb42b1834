"""Static vanilla knowledge the observation shows (``mcbuild.runtime.contract.observation``): what a
failed action lacked, the capabilities an inventory gives, and the vanilla recipe hypotheses.

Integrity (paper §3.7): everything here comes from the vanilla catalog, never from a world's rules.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

from mcbuild.compiler.core.canonical import plain_copy
from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.rules.crafting import craft_station, example_grid, fill_pattern, grid_size
from mcbuild.compiler.rules.rulebook import STATION_RECIPE_TYPES, vanilla
from mcbuild.runtime.contract.skills import CRAFTING_TABLE, ENCHANTING_TABLE, FACILITY_SET

HYPOTHESES_KEPT = 24        # recipe hypotheses shown


def prerequisite(action: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """What a failed action lacked, in the body's static (vanilla) terms."""
    reason = result.get("reason")
    args = action.get("args", {})
    if result.get("missing"):
        return {"items": dict(result["missing"])}
    if reason == "needs_tool" and isinstance(args.get("block"), str):
        tools = vanilla().harvest_tools(ns(args["block"]))
        return {"any_tool_of": sorted(tools)} if tools else {}
    if reason == "needs_table":
        return {"placed": ENCHANTING_TABLE if action.get("skill") == "enchant" else CRAFTING_TABLE}
    if reason == "needs_station":
        return {"placed": ns(args["station"])}          # validated actions carry their station
    if reason == "no_fuel":
        return {"fuel": "any owned fuel item"}
    return {}


def capabilities(inventory: Mapping[str, int], observed: Mapping[str, float]) -> dict[str, Any]:
    """Best owned tool per kind, harvest tier, and the stations currently usable."""
    tiers = vanilla().facts["tool_tiers"]
    best: dict[str, tuple[int, str]] = {}
    for tier in tiers.values():
        for kind, item in tier["tools"].items():
            if inventory.get(item, 0) > 0 and (kind not in best or int(tier["level"]) > best[kind][0]):
                best[kind] = (int(tier["level"]), item)
    return {
        "tools": {kind: item for kind, (_, item) in sorted(best.items())},
        "harvest_level": best["pickaxe"][0] if "pickaxe" in best else None,
        "crafting": ["inventory"] + (["crafting_table"] if CRAFTING_TABLE in observed else []),
        "smelting": sorted(s for s in STATION_RECIPE_TYPES if ns(s) in observed),
        "enchanting": ENCHANTING_TABLE in observed,
    }


@lru_cache(maxsize=1)
def tool_items() -> frozenset[str]:
    """Every tool of ``game_facts`` tool tiers (what :func:`capabilities` reads of an inventory)."""
    return frozenset(item for tier in vanilla().facts["tool_tiers"].values() for item in tier["tools"].values())


@lru_cache(maxsize=1024)
def capabilities_shown(tools: tuple[str, ...], observed: tuple[str, ...]) -> dict[str, Any]:
    """:func:`capabilities` of an inventory owning ``tools`` with the facilities ``observed``, as
    plain data shared by the observations that show it (read-only)."""
    return plain_copy(capabilities(dict.fromkeys(tools, 1), dict.fromkeys(observed, 0.0)))


@dataclass(frozen=True)
class _Recipe:
    """A vanilla recipe as the hypotheses show it: its station and the items each cell accepts."""

    rid: str
    output: str
    count: int
    station: str
    accepted: frozenset[str]                                   # every item any cell accepts
    cells: tuple[tuple[frozenset[str] | None, ...], ...] = ()  # crafting grid (top-left aligned)


@lru_cache(maxsize=1)
def reported_advancements() -> frozenset[str]:
    """The vanilla advancements an agent is told about: all but the recipe-unlock ones."""
    return frozenset(a for a in vanilla().advancements if not a.partition(":")[2].startswith("recipes/"))


@lru_cache(maxsize=1)
def _recipe_index() -> tuple[_Recipe, ...]:
    rb = vanilla()
    out = []
    stations = {t: s for s, t in STATION_RECIPE_TYPES.items()}
    for rid, recipe in sorted(rb.recipes.items()):
        rtype = ns(recipe.get("type", ""))
        if rtype in stations:
            out.append(_Recipe(rid, ns(recipe["result"]), 1, stations[rtype], rb.ingredient(recipe["ingredient"])))
        elif rtype in ("minecraft:crafting_shaped", "minecraft:crafting_shapeless"):
            station = craft_station(rb, recipe)
            grid = example_grid(rb, recipe, lambda accepted: accepted, grid_size(station))
            if grid is None:
                continue
            cells = tuple(tuple(c or None for c in row) for row in grid)
            out.append(_Recipe(rid, ns(recipe["result"]["item"]), int(recipe["result"].get("count", 1)),
                               station,
                               frozenset().union(*(c for row in cells for c in row if c)), cells))
    return tuple(out)


_STATIONS = (CRAFTING_TABLE, *sorted(ns(s) for s in STATION_RECIPE_TYPES))     # what hypotheses depend on


@lru_cache(maxsize=1)
def _recipes_using() -> dict[str, tuple[int, ...]]:
    """Positions in :func:`_recipe_index` of the recipes each item is accepted by."""
    out: dict[str, list[int]] = {}
    for n, r in enumerate(_recipe_index()):
        for item in r.accepted:
            out.setdefault(item, []).append(n)
    return {item: tuple(positions) for item, positions in out.items()}


def recipe_hypotheses(inventory: Mapping[str, int], observed: Mapping[str, float]) -> list[dict[str, Any]]:
    """Vanilla recipes that use an owned item: grid/station to submit, and whether it is executable now.
    The executable ones come first, then those missing the fewest grid items; at most
    ``HYPOTHESES_KEPT``.

    A pure function of the inventory and of which stations are observed; memoized on exactly those.
    The entries are the memo's own, shared by every observation that shows them: read them, never
    change them (observations are read-only)."""
    return list(_hypotheses(tuple(sorted(inventory.items())), tuple(s for s in _STATIONS if s in observed)))

# an observation's facilities owned unplaced, capabilities and recipe hypotheses
InventoryParts = tuple[dict[str, int], dict[str, Any], list[dict[str, Any]]]


@lru_cache(maxsize=4096)
def inventory_parts(items: tuple[tuple[str, int], ...], stations: tuple[str, ...]) -> InventoryParts:
    """The parts of an observation that read only its inventory (``items``, sorted) and the
    facilities it observes (``stations``, sorted ids): the facilities owned unplaced, the
    capabilities and the recipe hypotheses. Memoized on exactly those; shared by every observation
    that shows them (read-only)."""
    inventory = dict(items)
    tools = sorted(i for i in tool_items().intersection(inventory) if inventory[i] > 0)
    return ({f: inventory[f] for f in sorted(FACILITY_SET.intersection(inventory))},
            capabilities_shown(tuple(tools), stations), list(_hypotheses(items, tuple(s for s in _STATIONS if s in stations))))


@lru_cache(maxsize=4096)
def _hypotheses(items: tuple[tuple[str, int], ...], stations: tuple[str, ...]) -> tuple[dict[str, Any], ...]:
    """:func:`recipe_hypotheses` for a sorted inventory and the observed stations among ``_STATIONS``."""
    inventory = dict(items)
    index = _recipe_index()
    using = _recipes_using()
    held: dict[int, list[tuple[str, int]]] = {}            # recipe -> the owned items it accepts
    for i, count in items:
        if count > 0:
            for n in using.get(i, ()):
                held.setdefault(n, []).append((i, count))
    ranked: list[tuple[bool, int, str, str, int, Any, bool]] = []   # (not executable, items missing, output, recipe id, index position, grid, ready)
    for n in sorted(held):
        r = index[n]
        if r.cells:
            grid, short = _filled(n, tuple(held[n]))
            ready = r.station == "inventory" or CRAFTING_TABLE in stations
            ranked.append((not ready or short > 0, short, r.output, r.rid, n, grid, ready))
        else:
            ready = ns(r.station) in stations
            ranked.append((not ready, 0, r.output, r.rid, n, None, ready))
    # executable first, then the recipes the inventory comes closest to filling
    ranked.sort(key=lambda e: e[:4])
    out = []
    for blocked, _, _, _, n, grid, ready in ranked[:HYPOTHESES_KEPT]:
        r = index[n]
        entry: dict[str, Any] = {"recipe": r.rid, "output": r.output, "count": r.count, "station": r.station}
        if grid is None:
            entry["input"] = min((-inventory.get(i, 0), i) for i in r.accepted if inventory.get(i, 0) > 0)[1]
        else:
            entry["grid"] = grid
        out.append(dict(sorted((entry | {"station_ready": ready, "executable": not blocked}).items())))
    return tuple(out)

@lru_cache(maxsize=16384)
def _filled(n: int, held: tuple[tuple[str, int], ...]) -> tuple[list[list[str | None]], int]:
    """The grid of recipe ``n`` of :func:`_recipe_index` filled from ``held`` (the owned items its
    cells accept), and how many of its items are missing. Memoized apart from the whole inventory:
    most recipes' share of an inventory stays the same from one turn to the next."""
    have = dict(held)
    grid, used = fill_pattern(_recipe_index()[n].cells, have)
    return grid, sum(max(k - have.get(i, 0), 0) for i, k in used.items())
