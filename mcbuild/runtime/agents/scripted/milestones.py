"""What a scripted planner works towards next, read from the task spec (never from a list of tasks).

The observation shows a checked milestone only as a description and a done flag; the planners, as
baselines, read the task's public spec (``specs/tasks/``) for its checkers and turn the first
unfinished checker of the next milestone into a :class:`Need`: items to obtain (with or without
counting what is held), a block to mine or a mob to attack with whatever the transition model says
they require, a block to place, or a place to be. An advancement milestone needs one item of its
goal set (``milestone_goal``), as before.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

from mcbuild.compiler.planning.model import milestone_goal
from mcbuild.compiler.rules.rulebook import vanilla
from mcbuild.compiler.rules.tasks import POSITIONS, Checker, Milestone, Task
from mcbuild.compiler.spec.task import tasks

Offset = tuple[int, int, int]


@dataclass(frozen=True)
class Need:
    """The next thing a milestone asks for.

    ``kind`` is ``obtain`` (one more item of ``items``; ``fresh`` when held ones do not count, as for
    crafting or picking up), ``mine`` or ``attack`` (``target``, after its requirements), ``place``
    (``target`` inside ``box``), ``reach`` (a position: ``box``, or ``point`` within ``radius``
    facing ``facing``) or ``wait`` (nothing the body can do but let the world change)."""

    kind: str
    items: frozenset[str] = frozenset()
    target: str = ""
    fresh: bool = False
    box: Any = None
    point: Offset | None = None
    radius: float = 0.0
    facing: str | None = None


@lru_cache(maxsize=64)
def task_of(task_id: str) -> Task:
    """The task an observation names; a task outside the registry (``specs/tasks/``) is an error, as
    the planners read its spec."""
    found = tasks().get(task_id)
    if found is None:
        raise ValueError(f"the scripted planners read task specs from specs/tasks/, which has no {task_id!r}")
    return found


def next_milestone(task: Task, route: list[Mapping[str, Any]], offset: Offset) -> Milestone | None:
    """The first unfinished milestone whose prerequisites are done, in the spec's order; a
    milestone that places something in a box around where the body stands goes first (it is done
    before the body walks away)."""
    done = {r["code"] for r in route if r["completed"]}
    ready = [m for m in task.milestones if m.code not in done and all(r in done for r in m.requires)]
    here = [m for m in ready if any(c.type == "count_in_box_at_least" and c.kind == "block"
                                    and c.box is not None and c.box.contains(offset) for c in m.checkers)]
    first = here or ready
    return first[0] if first else None


def need_of(milestone: Milestone, inventory: Mapping[str, int], offset: Offset) -> Need:
    """What the milestone needs next (its first checker that is not plainly met)."""
    if milestone.advancement is not None:
        return Need("obtain", _goal(milestone.advancement))
    needs = [_checker_need(c, inventory, offset) for c in milestone.checkers]
    return next((n for n in needs if n is not None), needs[0] or Need("wait"))


@lru_cache(maxsize=256)
def _goal(advancement: str) -> frozenset[str]:
    """The vanilla item set of an advancement milestone (worked out once per process)."""
    return milestone_goal(vanilla(), advancement)


def _checker_need(c: Checker, inventory: Mapping[str, int], offset: Offset) -> Need | None:
    """None when the checker is visibly met already (the evaluator's verdict still rules)."""
    target = c.target or ""
    if c.type == "inventory_has":
        return None if inventory.get(target, 0) >= c.count else Need("obtain", frozenset({target}))
    if c.type in ("craft_item", "pickup"):
        return Need("obtain", frozenset({target}), fresh=True)
    if c.type in POSITIONS:
        if c.type == "position_inside_box":
            return None if c.box is not None and c.box.contains(offset) else Need("reach", box=c.box)
        return Need("reach", point=c.point, radius=c.radius, facing=c.facing)
    if c.kind == "entity" and c.type == "count_in_box_at_least":
        return Need("wait")                                  # the mob lives in the world
    if c.type == "kill_entity" or c.kind == "entity":
        return Need("attack", target=target)
    if c.type == "count_in_box_at_least":
        return Need("place", frozenset({target}), target, box=c.box)
    return Need("mine", target=target)                       # mine_block, or clear a block from a box
