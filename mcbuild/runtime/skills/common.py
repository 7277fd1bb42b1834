"""What several skills share: owned-item checks, the body's tool choice and the tools a skill wore
out, walking to a station, clearing an obstruction and the scaffold block, written over
:class:`Primitives`."""
from __future__ import annotations

from typing import Mapping

from mcbuild.runtime.body.blocks import physics
from mcbuild.runtime.contract.backend import Outcome, Transition, failure
from mcbuild.runtime.contract.skills import FACILITIES, LOG_ALIAS, LOG_TAG, STATION_UNREACHABLE

from .primitives import Pos, Primitives, Region, Target


def missing_items(have: Mapping[str, int], need: Mapping[str, int]) -> dict[str, int]:
    """What is missing from ``have`` to own ``need`` (empty if everything is owned)."""
    return {i: n - have.get(i, 0) for i, n in sorted(need.items()) if have.get(i, 0) < n}


def block_set(p: Primitives, block: str) -> frozenset[str]:
    """The blocks a mine/explore target names: the log alias is the world's own log tag."""
    return p.rules.tag("block", LOG_TAG) if block == LOG_ALIAS else frozenset({block})


def harvest_tool(p: Primitives, block: str, count: int = 1) -> tuple[bool, str | None]:
    """(can harvest, tool to hold) for breaking ``count`` of ``block`` with what the body owns,
    preferring a tool that survives them."""
    return p.policy.harvest_tool(block, p.inventory(), p.held(), p.copies, count)


class Worn:
    """The tools and weapons a skill works with, to report the ones that broke doing it."""

    def __init__(self, p: Primitives):
        self.p = p
        self.had: dict[str, int] = {}           # item -> how many the body owned before first using it

    def use(self, item: str | None) -> None:
        """Note that ``item`` is about to be used (before the use)."""
        if item and item not in self.had and self.p.policy.max_durability(item):
            self.had[item] = self.p.inventory().get(item, 0)

    def report(self, out: Outcome) -> Outcome:
        """``out`` with ``broke`` (item -> copies broken) and its message saying so, when a tool or
        weapon it used broke (it is gone: the result's ``lost`` counts it too)."""
        if not self.had:
            return out
        now = self.p.inventory()
        broke = {i: n - now.get(i, 0) for i, n in sorted(self.had.items()) if now.get(i, 0) < n}
        if broke:
            out.details["broke"] = broke
            out.message += "; " + ", ".join(f"{i} broke" + (f" ({n} copies)" if n > 1 else "") for i, n in broke.items())
        return out


def nearest(p: Primitives, ids: frozenset[str]) -> Target | None:
    return next(iter(p.blocks(ids)), None)


def go_to_station(p: Primitives, block: str, missing_reason: str) -> Pos | Outcome:
    """Stand by the nearest placed ``block``: its position, or the failure."""
    station = nearest(p, frozenset({block}))
    if station is None:
        return failure(missing_reason, f"no placed {block} nearby")
    if not p.stand_by(station.pos):
        return failure(STATION_UNREACHABLE, f"the nearest {block} cannot be reached")
    return station.pos


def clear_obstruction(p: Primitives, pos: Pos, worn: Worn) -> tuple[str, Transition] | None:
    """Break the one obstruction in front of the reach-2 block at ``pos``; its drops stay on the
    ground. (the cleared block, its transition), or None when no obstruction can be broken with
    the owned tools (never a facility)."""
    for block, at in p.obstructions(pos):
        if block in FACILITIES or not physics().minable(block):
            continue
        can, tool = harvest_tool(p, block)
        if not can:
            continue
        worn.use(tool)
        if p.dig(at, block, tool, pickup=False) is not None:
            return block, Transition("mine", block, tool=tool)
    return None


def scaffold_block(p: Primitives) -> str | None:
    """The owned block the body pillars with."""
    return physics().scaffold(p.inventory(), p.rules.catalog.blocks)


def region_of(pos: Pos, size: int) -> Region:
    """The exploration region (chunk column, for ``size`` 16) of a position."""
    return pos[0] // size, pos[2] // size
