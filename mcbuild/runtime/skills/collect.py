"""``collect``: pick up the nearest dropped stack of an item (a stack in range, then room for it)."""
from __future__ import annotations

from mcbuild.runtime.contract.backend import Outcome, failure
from mcbuild.runtime.contract.skills import NO_TARGET, PICKUP_FAILED

from .primitives import Primitives, Refused


def collect(p: Primitives, args: dict) -> Outcome:
    item = args["item"]
    if not p.dropped(item):
        return failure(NO_TARGET, f"no dropped {item} within {p.config.collect_radius:g} blocks")
    if p.policy.room_for(item, p.inventory()) <= 0:
        return failure(PICKUP_FAILED, "inventory is full")
    try:
        got = p.collect(item)
    except Refused as refused:
        return refused.outcome()
    if got <= 0:
        return failure(PICKUP_FAILED, "inventory is full")
    return Outcome(True, f"collected {got} {item}", None, {"collected": {item: got}})
