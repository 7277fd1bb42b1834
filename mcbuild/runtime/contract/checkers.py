"""Rule-based milestone checkers, evaluated after every action from backend state (hidden).

A task milestone without an advancement is completed when all of its checkers hold at once
(``mcbuild.compiler.rules.tasks.Checker``); once completed it stays completed, as an advancement does.
The facts come from the backend: the :class:`~mcbuild.runtime.contract.backend.Snapshot` (inventory,
position, facing), the backend's ``count_in_box`` (blocks or living mobs in a box) and an event
log built here from each action's :class:`~mcbuild.runtime.contract.backend.Outcome`, counted since
reset: items crafted (``produced``), blocks mined (``mine`` transitions), mobs killed
(``attack`` transitions) and items picked up (what mining, attacking or picking up collected).
Boxes and points are relative to the start position. This code is shared by every backend; only
the episode and its trace read it, agents see a milestone's description and its done flag.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from mcbuild.compiler.rules.tasks import BLOCK_COUNTS, EVENTS, Checker, Milestone, Task

if TYPE_CHECKING:
    from mcbuild.runtime.contract.backend import Outcome, Snapshot

Vec = tuple[int, int, int]
COLLECTING = ("mine", "attack", "pickup")          # skills whose gains are picked up from the world


def _shift(a: Vec, b: Vec, sign: int = 1) -> Vec:
    """``a + sign * b``."""
    return a[0] + sign * b[0], a[1] + sign * b[1], a[2] + sign * b[2]


@runtime_checkable
class BoxCounter(Protocol):
    """What a backend offers for box checkers: blocks or living mobs inside a box (absolute,
    both corners inclusive). ``kind`` is ``block`` or ``entity``."""

    def count_in_box(self, kind: str, target: str, low: Vec, high: Vec) -> int: ...


def action_events(skill: str, outcome: "Outcome") -> Counter[tuple[str, str]]:
    """The checker events of one action: ``(event type, id) -> count``."""
    out: Counter[tuple[str, str]] = Counter()
    if not outcome.ok and not outcome.transitions:
        return out
    for t in outcome.transitions:
        if t.kind == "mine":
            out["mine_block", t.target] += 1
        elif t.kind == "attack":
            out["kill_entity", t.target] += 1
    if outcome.ok and skill == "craft_grid":
        for item, n in outcome.details.get("produced", {}).items():
            out["craft_item", item] += int(n)
    if skill in COLLECTING:
        for item, n in outcome.details.get("gained", {}).items():
            out["pickup", item] += int(n)
    return out


class MilestoneChecks:
    """The checked milestones of one task in one episode: which are met, and from which action."""

    def __init__(self, task: Task):
        self.milestones: tuple[Milestone, ...] = task.checked
        self.events: Counter[tuple[str, str]] = Counter()
        self.met: dict[str, int] = {}                     # milestone key -> action index (0 = start)
        self.origin: Vec = (0, 0, 0)

    def start(self, backend: Any, snap: "Snapshot") -> None:
        """Reset at the start of an episode and check the start state (action 0)."""
        self.events.clear()
        self.met.clear()
        self.origin = snap.position
        self.check(0, backend, snap)

    def observe(self, index: int, skill: str, outcome: "Outcome", backend: Any, snap: "Snapshot") -> list[str]:
        """Count action ``index``'s events, then check; returns the milestones it completed."""
        self.events.update(action_events(skill, outcome))
        return self.check(index, backend, snap)

    def check(self, index: int, backend: Any, snap: "Snapshot") -> list[str]:
        new = []
        for m in self.milestones:
            if m.key not in self.met and all(self.holds(c, backend, snap) for c in m.checkers):
                self.met[m.key] = index
                new.append(m.key)
        return new

    @property
    def completed(self) -> frozenset[str]:
        return frozenset(self.met)

    def holds(self, c: Checker, backend: Any, snap: "Snapshot") -> bool:
        """Whether checker ``c`` holds in state ``snap`` (with the events counted so far)."""
        offset = _shift(snap.position, self.origin, -1)
        if c.type == "inventory_has":
            return snap.inventory.get(c.target or "", 0) >= c.count
        if c.type in BLOCK_COUNTS:
            n = self._count(c, backend)
            return n >= c.count if c.type == "count_in_box_at_least" else n <= c.count
        if c.type == "position_inside_box":
            return c.box is not None and c.box.contains(offset)
        if c.type == "position_near_with_facing":
            return (c.point is not None and math.dist(offset, c.point) <= c.radius
                    and snap.facing == c.facing)
        if c.type in EVENTS:
            return self.events[c.type, c.target or ""] >= c.count
        raise ValueError(f"unknown checker type {c.type!r}")

    def _count(self, c: Checker, backend: Any) -> int:
        if not isinstance(backend, BoxCounter):
            raise TypeError(f"{type(backend).__name__} does not implement count_in_box")
        assert c.box is not None and c.target is not None
        low, high = _shift(self.origin, c.box.low), _shift(self.origin, c.box.high)
        return backend.count_in_box(c.kind, c.target, low, high)
