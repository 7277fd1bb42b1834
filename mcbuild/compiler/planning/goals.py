"""What the planner must reach to complete a milestone, and the route that does it.

An advancement milestone is reached by obtaining one item of its goal set
(``model.milestone_goal``). A checked milestone is reached when every checker is: an item in the
inventory, crafted or picked up means obtaining that item; a placed block counted in a box means
obtaining the block item and placing it; mining a block or clearing it from a box means owning its
harvest tool and mining it; killing a mob (or thinning mobs in a box) means one attack. Standing
somewhere is one move. A checker whose block, item or mob the model cannot produce or find makes
the milestone unreachable.
"""
from __future__ import annotations

from dataclasses import dataclass

from mcbuild.compiler.planning.model import PLACED, TransitionModel, milestone_goal
from mcbuild.compiler.planning.search import plan
from mcbuild.compiler.rules.rulebook import Rulebook
from mcbuild.compiler.rules.tasks import POSITIONS, Checker, Milestone

MOVE = "move"          # the pseudo-step of standing somewhere (a position checker)


@dataclass(frozen=True)
class Route:
    """Step keys of the model in order (``place:<block>`` and ``move`` are pseudo-steps), or None."""

    steps: tuple[str, ...] | None

    @property
    def reachable(self) -> bool:
        return self.steps is not None


def route(model: TransitionModel, rules: Rulebook, milestone: Milestone) -> Route:
    """One route from an empty inventory that completes ``milestone`` (or an unreachable Route)."""
    if milestone.advancement is not None:
        return _plan(model, milestone_goal(rules, milestone.advancement))
    steps: list[str] = []
    for c in milestone.checkers:
        part = _checker_route(model, c)
        if part.steps is None:
            return part
        steps += [s for s in part.steps if s == MOVE or s not in steps]
    return Route(tuple(steps))


def _plan(model: TransitionModel, goal: frozenset[str], inventory: dict[str, float] | None = None) -> Route:
    if not goal:
        return Route(None)
    actions = plan(model, inventory or {}, set(), goal)
    return Route(None if actions is None else tuple(a.step_key for a in actions))


def _checker_route(model: TransitionModel, c: Checker) -> Route:
    if c.type in POSITIONS:
        return Route((MOVE,))
    target = c.target or ""
    if c.type in ("inventory_has", "craft_item", "pickup"):
        return _plan(model, frozenset({target}))
    if c.type == "kill_entity" or (c.type == "count_in_box_at_most" and c.kind == "entity"):
        key = f"attack:{target}"
        return Route((MOVE, key) if key in model.steps else None)
    if c.type == "count_in_box_at_least" and c.kind == "entity":
        return Route((MOVE,) if f"attack:{target}" in model.steps else None)   # the mob lives in the world
    if c.type == "count_in_box_at_least":
        got = _plan(model, frozenset({target}))
        return got if got.steps is None else Route(got.steps + (f"place:{target}",))
    if c.type in ("mine_block", "count_in_box_at_most"):
        return _mine(model, target)         # mine it, or clear it from a box
    raise ValueError(f"unknown checker type {c.type!r}")


def _mine(model: TransitionModel, block: str) -> Route:
    step = model.steps.get(f"mine:{block}")
    if step is None:
        return Route(None)
    before: tuple[str, ...] = ()
    for req in step.requires:
        got = _plan(model, frozenset(i.removeprefix(PLACED) for i in req))
        if got.steps is None:
            return got
        before += got.steps
    return Route(before + (step.key,))
