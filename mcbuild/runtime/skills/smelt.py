"""``smelt``: owned inputs, a placed station, a recipe of that station, then the body's fuel
(richest first); what comes out is what the world's rules cook."""
from __future__ import annotations

from mcbuild.compiler.rules.catalog import ns
from mcbuild.runtime.contract.backend import Outcome, Transition, failure
from mcbuild.runtime.contract.skills import MISSING_ITEM, NEEDS_STATION, NO_FUEL, NOT_SMELTABLE

from .common import go_to_station, missing_items
from .primitives import Primitives, Refused


def smelt(p: Primitives, args: dict) -> Outcome:
    item, station, count = args["input"], args["station"], args["count"]
    missing = missing_items(p.inventory(), {item: count})
    if missing:
        return failure(MISSING_ITEM, f"needs {count} {item}", missing=missing)
    at = go_to_station(p, ns(station), NEEDS_STATION)
    if isinstance(at, Outcome):
        return at
    transition = Transition("cook", item, station=station)
    if p.rules.cooking_recipe(item, station) is None:
        out = failure(NOT_SMELTABLE, f"the {station} does not process {item}")
        out.transitions = [transition]
        return out
    fuel = p.policy.fuel(item, count, p.inventory())
    if fuel is None:
        return failure(NO_FUEL, f"not enough fuel for {count} item(s)")
    try:
        p.smelt(item, station, count, fuel, at)
    except Refused as refused:
        return refused.outcome([transition])
    return Outcome(True, f"processed {count} {item} in the {station}", None,
                   {"fuel": dict(sorted(fuel.items()))}, [transition])
