"""``equip``: hold an owned item that is not a facility."""
from __future__ import annotations

from mcbuild.runtime.contract.backend import Outcome, failure
from mcbuild.runtime.contract.skills import FACILITIES, MISSING_ITEM, NOT_EQUIPPABLE

from .primitives import Primitives, Refused


def equip(p: Primitives, args: dict) -> Outcome:
    item = args["item"]
    if p.inventory().get(item, 0) < 1:
        return failure(MISSING_ITEM, f"no {item} in inventory", missing={item: 1})
    if item in FACILITIES:
        return failure(NOT_EQUIPPABLE, f"{item} is a facility: place it instead")
    try:
        p.equip(item)
    except Refused as refused:
        return refused.outcome()
    return Outcome(True, f"equipped {item}", None, {"equipped": item})
