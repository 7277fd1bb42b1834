"""Server skills that transform items: craft_grid, smelt, enchant, equip, through their windows.

The checks the simulator makes before touching a station (owned inputs, a placed station within
the scan radius, the body policy's fuel, lapis and level) are made here in the same order with the
same reason codes; what the grid, furnace or table then produces is what the server (and the
world's datapacks) put into the result slot, read by the bridge and confirmed by the inventory.
"""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from compiler.core.canonical import compact
from compiler.rules.catalog import ns
from runtime.contract.backend import Outcome, Transition, failure
from runtime.contract.skills import (
    CRAFTING_TABLE,
    ENCHANT_OPTIONS,
    ENCHANTING_TABLE,
    FACILITIES,
    MISSING_ITEM,
    NEEDS_LEVEL,
    NEEDS_STATION,
    NEEDS_TABLE,
    NO_FUEL,
    NO_RESULT,
    NOT_ENCHANTABLE,
    NOT_EQUIPPABLE,
    NOT_SMELTABLE,
    PICKUP_FAILED,
    STATION_UNREACHABLE,
)

from .bridge_client import BridgeError
from .link import Pos

if TYPE_CHECKING:
    from .backend import ServerBackend

SMELT_STALL_MS = 8000      # no furnace progress for this long: the station stopped (a vanilla item takes 10 s)
PASSED_THROUGH = (NO_RESULT, PICKUP_FAILED, MISSING_ITEM, NEEDS_TABLE, NEEDS_STATION, STATION_UNREACHABLE, NO_FUEL,
                  NOT_SMELTABLE, NOT_ENCHANTABLE, NEEDS_LEVEL, NOT_EQUIPPABLE)


def _missing(have: dict[str, int], need: Counter[str]) -> dict[str, int]:
    return {i: n - have.get(i, 0) for i, n in sorted(need.items()) if have.get(i, 0) < n}


def _station(srv: "ServerBackend", block: str, missing_reason: str) -> tuple[Pos | None, Outcome | None]:
    """Walk next to the nearest placed ``block``: (its position, None) or (None, a failure)."""
    found = srv.link.find({block}, srv.radius, 1)
    if not found:
        return None, failure(missing_reason, f"no placed {block} nearby")
    pos = found[0][1]
    if not srv.link.goto(pos, 2.0):
        return None, failure(STATION_UNREACHABLE, f"the nearest {block} cannot be reached")
    return pos, None


def _refused(err: BridgeError, transition: Transition | None = None) -> Outcome:
    """An op's failure as an outcome with the contract's reason (unknown codes are faults)."""
    if err.code not in PASSED_THROUGH:
        raise err
    out = failure(err.code, err.message)
    if isinstance(err.details, dict) and "missing" in err.details:
        out.details["missing"] = err.details["missing"]
    if transition is not None:
        out.transitions = [transition]
    return out


def craft_grid(srv: "ServerBackend", args: dict) -> Outcome:
    grid = args["grid"]
    missing = _missing(srv.link.inventory(), Counter(c for row in grid for c in row if c is not None))
    if missing:
        return failure(MISSING_ITEM, "grid needs items not in inventory", missing=missing)
    call: dict = {"station": args["station"], "grid": grid}
    if args["station"] == "crafting_table":
        pos, blocked = _station(srv, CRAFTING_TABLE, NEEDS_TABLE)
        if blocked:
            return blocked
        call["table"] = list(pos)
    transition = Transition("craft", compact(grid), station=args["station"])
    try:
        done = srv.link.call("craft_grid", call)
    except BridgeError as err:
        if err.code == NO_RESULT:
            err.message = "the grid produced nothing"
        return _refused(err, transition)
    item, count = done["result_item"], int(done["result_count"])
    return Outcome(True, f"crafted {count} {item}", None, {"produced": {item: count}}, [transition])


def smelt(srv: "ServerBackend", args: dict) -> Outcome:
    """The simulator's checks (inputs, station, fuel; not smeltable before no fuel), then one furnace
    load with every fuel kind the body policy chose, richest first."""
    item, station, count = args["input"], args["station"], args["count"]
    have = srv.link.inventory()
    if have.get(item, 0) < count:
        return failure(MISSING_ITEM, f"needs {count} {item}", missing=_missing(have, Counter({item: count})))
    pos, blocked = _station(srv, ns(station), NEEDS_STATION)
    if blocked:
        return blocked
    transition = Transition("cook", item, station=station)
    fuel = srv.policy.fuel(item, count, have)
    if fuel is None:
        if srv.rules.cooking_recipe(item, station) is None:     # the simulator's order: not smeltable first
            out = failure(NOT_SMELTABLE, f"the {station} does not process {item}")
            out.transitions = [transition]
            return out
        return failure(NO_FUEL, f"not enough fuel for {count} item(s)")
    burn = [[kind, units] for kind, units in sorted(fuel.items(), key=lambda f: (-srv.rules.is_fuel(f[0]), f[0]))]
    try:
        srv.link.call("smelt", {"station": station, "input": item, "count": count, "fuel": burn,
                                "position": list(pos), "stall_ms": SMELT_STALL_MS}, _smelt_deadline_ms(srv, station, count))
    except BridgeError as err:
        return _refused(err, transition)
    return Outcome(True, f"processed {count} {item} in the {station}", None,
                   {"fuel": dict(sorted(fuel.items()))}, [transition])


def _smelt_deadline_ms(srv: "ServerBackend", station: str, count: int) -> int:
    """A minute for walking and windows plus the game's cooking time of ``count`` items, with a
    fifth more for a loaded server."""
    facts = srv.rules.facts
    return 60_000 + int(1.2 * 1000 * count * int(facts["cooking_ticks"][station]) / int(facts["ticks_per_second"]))


def enchant(srv: "ServerBackend", args: dict) -> Outcome:
    item = args["item"]
    facts = srv.rules.facts["enchanting"]
    option = next(o for o in facts["options"] if o["option"] == ENCHANT_OPTIONS.index(args["option"]) + 1)
    state = srv.link.state()
    have = state["inventory"]
    if have.get(item, 0) < 1:
        return failure(MISSING_ITEM, f"no {item} in inventory", missing={item: 1})
    if item not in srv.rules.enchantable_items():
        return failure(NOT_ENCHANTABLE, f"{item} cannot be enchanted")
    pos, blocked = _station(srv, ENCHANTING_TABLE, NEEDS_TABLE)
    if blocked:
        return blocked
    lapis = ns(facts["lapis_item"])
    missing = _missing(have, Counter({lapis: int(option["lapis_cost"])}))
    if missing:
        return failure(MISSING_ITEM, f"option {args['option']} needs {option['lapis_cost']} {lapis}", missing=missing)
    if int(state.get("xp_level", 0)) < int(option["min_level_requirement"]):
        return failure(NEEDS_LEVEL, f"needs experience level {option['min_level_requirement']}")
    try:
        srv.link.call("enchant", {"item": item, "option": args["option"], "position": list(pos)}, 40_000)
    except BridgeError as err:
        return _refused(err)
    return Outcome(True, f"enchanted {item}", None, {"enchanted": item, "option": args["option"]})


def equip(srv: "ServerBackend", args: dict) -> Outcome:
    item = args["item"]
    if srv.link.inventory().get(item, 0) < 1:
        return failure(MISSING_ITEM, f"no {item} in inventory", missing={item: 1})
    if item in FACILITIES:
        return failure(NOT_EQUIPPABLE, f"{item} is a facility: place it instead")
    try:
        srv.link.call("equip", {"item": item})
    except BridgeError as err:
        return _refused(err)
    srv.mainhand = item
    return Outcome(True, f"equipped {item}", None, {"equipped": item})
