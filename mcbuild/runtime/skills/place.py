"""``place``: one owned block on the nearest open spot next to the body."""
from __future__ import annotations

import math

from mcbuild.runtime.body.blocks import physics
from mcbuild.runtime.contract.backend import Outcome, failure
from mcbuild.runtime.contract.skills import INVALID_ARGS, MISSING_ITEM, NO_SPOT

from .primitives import Primitives


def place(p: Primitives, args: dict) -> Outcome:
    block = args["block"]
    if block not in p.rules.catalog.blocks or not physics().minable(block):
        return failure(INVALID_ARGS, f"{block} is not a placeable block")
    if p.inventory().get(block, 0) < 1:
        return failure(MISSING_ITEM, f"no {block} in inventory", missing={block: 1})
    spot = p.place(block)
    if spot is None:
        return failure(NO_SPOT, "no open position nearby")
    return Outcome(True, f"placed {block}", None, {"placed": block, "distance": round(math.dist(spot, p.position()), 1)})
