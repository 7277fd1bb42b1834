"""``ascend``: ``ascend(h)`` pillars ``h`` blocks with the scaffold block; ``ascend(0)`` climbs
the column to its surface as a player does, one level at a time (dig what fills the two cells
above the feet, pillar one block), a dug block's drops falling to the body, which picks them up
while it has room. Without a block to climb on it stops with ``missing_item``; the levels climbed
stay."""
from __future__ import annotations

from collections import Counter

from mcbuild.runtime.body.blocks import physics
from mcbuild.runtime.contract.backend import Outcome, Transition, failure
from mcbuild.runtime.contract.skills import FACILITIES, MISSING_ITEM, NO_SPOT, UNREACHABLE

from .common import harvest_tool, scaffold_block
from .primitives import Pos, Primitives, Refused


def ascend(p: Primitives, args: dict) -> Outcome:
    height = args["height"]
    if height == 0:
        return climb(p)
    scaffold = scaffold_block(p)
    if scaffold is None or p.inventory().get(scaffold, 0) < height:
        return failure(MISSING_ITEM, f"needs {height} disposable blocks", missing={"disposable block": height})
    if not p.room_above(height):
        return failure(NO_SPOT, "no open space above")
    try:
        p.pillar(scaffold, height)
    except Refused as refused:
        return refused.outcome()
    return Outcome(True, f"pillared up {height} block(s)", None, {"height": height, "used": {scaffold: height}})


def climb(p: Primitives) -> Outcome:
    """``ascend(0)``: climb from the feet to the surface of the column."""
    x, y, z = p.position()
    top = p.surface(x, z)
    top = y if top is None else top
    if top <= y:
        return Outcome(True, "already at the surface", None, {"height": 0})
    feet, dug, used, transitions = y, Counter[str](), Counter[str](), list[Transition]()
    problem: Outcome | None = None
    while feet < top and problem is None:
        for pos in ((x, feet + 1, z), (x, feet + 2, z)):
            block = p.block_at(pos)
            if block is None or not physics().solid(block):
                continue
            done = _dig_above(p, pos, block)
            if isinstance(done, Outcome):
                problem = done
                break
            transitions.append(done)
            dug[block] += 1
        if problem is not None:
            break
        block = scaffold_block(p)
        if block is None:
            problem = failure(MISSING_ITEM, "needs a disposable block to climb on", missing={"disposable block": 1})
            break
        try:
            p.pillar(block, 1)
        except Refused as refused:
            problem = refused.outcome()
            break
        used[block] += 1
        feet += 1
    details = {"height": feet - y, "dug": dict(sorted(dug.items())), "used": dict(sorted(used.items()))}
    if problem is not None:
        problem.details.update(details)
        problem.transitions = transitions
        return problem
    return Outcome(True, f"climbed {feet - y} block(s) to the surface", None, details, transitions)


def _dig_above(p: Primitives, pos: Pos, block: str) -> Transition | Outcome:
    """Dig the block above the head: its transition, or the failure that stops the climb."""
    can, tool = harvest_tool(p, block)
    if not (can and block not in FACILITIES and physics().minable(block) and p.exposed(pos)
            and p.dig_above(pos, block, tool)):
        return failure(UNREACHABLE, f"cannot dig through {block} above")
    return Transition("mine", block, tool=tool)
