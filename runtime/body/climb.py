"""``ascend(0)``'s climb, one procedure for every backend: the order of digs and placements, the
failures and the outcome. Each backend supplies its primitives (what blocks a cell, digging it,
the scaffold block it would use, pillaring one block)."""
from __future__ import annotations

from collections import Counter
from typing import Callable

from runtime.contract.backend import Outcome, Transition, failure
from runtime.contract.skills import MISSING_ITEM

Pos = tuple[int, int, int]


def climb(
    start: Pos,
    top: int,
    blocking: Callable[[Pos], str | None],
    dig: Callable[[Pos, str], Transition | Outcome],
    scaffold: Callable[[], str | None],
    pillar: Callable[[str], Outcome | None],
) -> Outcome:
    """Climb the column from the feet at ``start`` to feet height ``top``, as a player does, one
    level at a time: dig what fills the two cells above the feet (``blocking`` names a cell's
    block when it is in the way; ``dig`` returns its transition, or the failure that stops the
    climb), then ``pillar`` one ``scaffold`` block (``None`` when placed, else the failure).
    Without a block to climb on it stops with ``missing_item``; the levels climbed stay."""
    x, y, z = start
    if top <= y:
        return Outcome(True, "already at the surface", None, {"height": 0})
    feet, dug, used, transitions = y, Counter(), Counter(), []
    problem: Outcome | None = None
    while feet < top and problem is None:
        for pos in ((x, feet + 1, z), (x, feet + 2, z)):
            block = blocking(pos)
            if block is None:
                continue
            done = dig(pos, block)
            if isinstance(done, Outcome):
                problem = done
                break
            transitions.append(done)
            dug[block] += 1
        if problem is not None:
            break
        block = scaffold()
        if block is None:
            problem = failure(MISSING_ITEM, "needs a disposable block to climb on", missing={"disposable block": 1})
            break
        problem = pillar(block)
        if problem is None:
            used[block] += 1
            feet += 1
    details = {"height": feet - y, "dug": dict(sorted(dug.items())), "used": dict(sorted(used.items()))}
    if problem is not None:
        problem.details.update(details)
        problem.transitions = transitions
        return problem
    return Outcome(True, f"climbed {feet - y} block(s) to the surface", None, details, transitions)
