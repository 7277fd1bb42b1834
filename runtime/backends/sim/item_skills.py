"""Skills that transform items: craft_grid, smelt, enchant, equip.

Crafting matches the submitted grid against the world's recipes (``compiler.rules.crafting``) and
reports whatever they produce; smelting uses the named station's recipe type and the inventory's
fuel, then adds the cooked result through the player state, so a pack's advancement/function
mechanism for multi-item or substituted outputs runs exactly as the pack wrote it. A grid's
remainders (the empty bucket of a milk bucket) go back to the inventory.
"""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Mapping

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

if TYPE_CHECKING:
    from .backend import SimBackend


def _station(sim: "SimBackend", block: str, missing_reason: str) -> Outcome | None:
    """Walk to the nearest placed ``block``; a failure outcome if there is none in reach."""
    terrain = sim.terrain
    scan = sim.nearest_blocks(frozenset({block}))
    if len(scan.ids):
        spot = terrain.open_neighbour(tuple(int(v) for v in scan.pos[0]), sim.body.pos)
        if spot is not None:
            sim.body.pos = spot
            return None
        return failure(STATION_UNREACHABLE, f"the nearest {block} cannot be reached")
    return failure(missing_reason, f"no placed {block} nearby")


def _hand_back(sim: "SimBackend", items: Mapping[str, int]) -> None:
    """Put ``items`` into the inventory; what does not fit drops at the body's feet."""
    rest = sim.body.receive(items)
    for stack, n in sorted(rest.items()):
        sim.entities.drop(stack, n, sim.body.pos)


def craft_grid(sim: "SimBackend", args: dict) -> Outcome:
    grid = args["grid"]
    need = Counter(c for row in grid for c in row if c is not None)
    missing = sim.body.has(need)
    if missing:
        return failure(MISSING_ITEM, "grid needs items not in inventory", missing=missing)
    if args["station"] == "crafting_table":
        blocked = _station(sim, CRAFTING_TABLE, NEEDS_TABLE)
        if blocked:
            return blocked
    transition = Transition("craft", compact(grid), station=args["station"])
    result = sim.rules.craft(grid)
    if result is None:
        out = failure(NO_RESULT, "the grid produced nothing")
        out.transitions = [transition]
        return out
    player = sim.body.player
    player.remove_items(need, settle=False)
    if sim.body.room_for(result.item) < result.count:
        player.add_items(need, settle=False)
        out = failure(PICKUP_FAILED, f"no room for {result.count} {result.item}")
        out.transitions = [transition]
        return out
    sim.body.receive({result.item: result.count})
    if result.remainders:
        _hand_back(sim, dict(result.remainders))
    return Outcome(True, f"crafted {result.count} {result.item}", None,
                   {"produced": {result.item: result.count}}, [transition])


def smelt(sim: "SimBackend", args: dict) -> Outcome:
    item, station, count = args["input"], args["station"], args["count"]
    if sim.body.player.count(item) < count:
        return failure(MISSING_ITEM, f"needs {count} {item}", missing=sim.body.has({item: count}))
    blocked = _station(sim, ns(station), NEEDS_STATION)
    if blocked:
        return blocked
    transition = Transition("cook", item, station=station)
    found = sim.rules.cooking_recipe(item, station)
    if found is None:
        out = failure(NOT_SMELTABLE, f"the {station} does not process {item}")
        out.transitions = [transition]
        return out
    fuel = sim.body.policy.fuel(item, count, sim.body.inventory)
    if fuel is None:
        return failure(NO_FUEL, f"not enough fuel for {count} item(s)")
    player = sim.body.player
    player.remove_items(Counter({item: count}) + fuel, settle=False)
    _hand_back(sim, {ns(found[1]["result"]): count})
    return Outcome(True, f"processed {count} {item} in the {station}", None,
                   {"fuel": dict(sorted(fuel.items()))}, [transition])


def enchant(sim: "SimBackend", args: dict) -> Outcome:
    item = args["item"]
    facts = sim.rules.facts["enchanting"]
    option = next(o for o in facts["options"] if o["option"] == ENCHANT_OPTIONS.index(args["option"]) + 1)
    body = sim.body
    if body.player.count(item) < 1:
        return failure(MISSING_ITEM, f"no {item} in inventory", missing={item: 1})
    if item not in sim.rules.enchantable_items():
        return failure(NOT_ENCHANTABLE, f"{item} cannot be enchanted")
    blocked = _station(sim, ENCHANTING_TABLE, NEEDS_TABLE)
    if blocked:
        return blocked
    lapis = ns(facts["lapis_item"])
    missing = body.has({lapis: int(option["lapis_cost"])})
    if missing:
        return failure(MISSING_ITEM, f"option {args['option']} needs {option['lapis_cost']} {lapis}", missing=missing)
    if body.player.xp_levels < int(option["min_level_requirement"]):
        return failure(NEEDS_LEVEL, f"needs experience level {option['min_level_requirement']}")
    body.player.remove_items({lapis: int(option["lapis_cost"])})
    body.player.xp_levels -= int(option["levels_consumed"])
    body.player.enchanted(item, int(option["min_level_requirement"]))
    return Outcome(True, f"enchanted {item}", None, {"enchanted": item, "option": args["option"]})


def equip(sim: "SimBackend", args: dict) -> Outcome:
    item = args["item"]
    if sim.body.player.count(item) < 1:
        return failure(MISSING_ITEM, f"no {item} in inventory", missing={item: 1})
    if item in FACILITIES:
        return failure(NOT_EQUIPPABLE, f"{item} is a facility: place it instead")
    sim.body.mainhand = item
    return Outcome(True, f"equipped {item}", None, {"equipped": item})
