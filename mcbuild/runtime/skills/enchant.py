"""``enchant``: an owned enchantable item at a placed enchanting table, paying the option's lapis
and levels (the catalog's enchanting facts)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from mcbuild.compiler.rules.catalog import ns
from mcbuild.runtime.contract.backend import Outcome, failure
from mcbuild.runtime.contract.skills import ENCHANT_OPTIONS, ENCHANTING_TABLE, MISSING_ITEM, NEEDS_LEVEL, NEEDS_TABLE, NOT_ENCHANTABLE

from .common import go_to_station, missing_items
from .primitives import Primitives, Refused

if TYPE_CHECKING:
    from mcbuild.compiler.rules.rulebook import Rulebook


def option_facts(rules: "Rulebook", option: str) -> dict:
    """The catalog's facts of an enchanting option (``lowest``, ``middle``, ``highest``)."""
    number = ENCHANT_OPTIONS.index(option) + 1
    return next(o for o in rules.facts["enchanting"]["options"] if o["option"] == number)


def lapis(rules: "Rulebook") -> str:
    return ns(rules.facts["enchanting"]["lapis_item"])


def enchant(p: Primitives, args: dict) -> Outcome:
    item, option = args["item"], option_facts(p.rules, args["option"])
    if p.inventory().get(item, 0) < 1:
        return failure(MISSING_ITEM, f"no {item} in inventory", missing={item: 1})
    if item not in p.rules.enchantable_items():
        return failure(NOT_ENCHANTABLE, f"{item} cannot be enchanted")
    at = go_to_station(p, ENCHANTING_TABLE, NEEDS_TABLE)
    if isinstance(at, Outcome):
        return at
    cost = int(option["lapis_cost"])
    missing = missing_items(p.inventory(), {lapis(p.rules): cost})
    if missing:
        return failure(MISSING_ITEM, f"option {args['option']} needs {cost} {lapis(p.rules)}", missing=missing)
    if p.xp_level() < int(option["min_level_requirement"]):
        return failure(NEEDS_LEVEL, f"needs experience level {option['min_level_requirement']}")
    try:
        p.enchant(item, args["option"], at)
    except Refused as refused:
        return refused.outcome()
    return Outcome(True, f"enchanted {item}", None, {"enchanted": item, "option": args["option"]})
