"""The candidate steps a task Designer (or the seeded task sampler) builds milestones from.

They come from the tracer's vanilla transition model over the worlds' resources
(``mcbuild.compiler.planning.tracer.vanilla_model``): mining a block the worlds generate, crafting an
item, obtaining a smelted item and defeating a mob. Each candidate carries the checker that
verifies it and the planner's route to it from an empty inventory (``mcbuild.compiler.planning.goals``),
so only steps with a vanilla route are offered.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from mcbuild.compiler.planning.goals import route
from mcbuild.compiler.planning.tracer import vanilla_model
from mcbuild.compiler.rules.rulebook import vanilla
from mcbuild.compiler.rules.tasks import Checker, Milestone

#: Step skill -> (checker type, the checker's target field, verb of the milestone id and description).
_CHECKERS = {"mine": ("mine_block", "target", "mine"), "craft_grid": ("craft_item", "target", "craft"),
             "smelt": ("inventory_has", "item", "obtain"), "attack": ("kill_entity", "target", "defeat")}


@dataclass(frozen=True)
class CandidateStep:
    """One possible milestone: its id, description, checker and vanilla route (step keys)."""

    id: str
    description: str
    checker: dict[str, Any]
    route: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "description": self.description, "checker": self.checker,
                "route_length": len(self.route)}


def _name(target: str) -> str:
    return target.removeprefix("minecraft:").replace("_", " ")


def _targets(skill: str, key: str, outputs: dict[str, float]) -> list[str]:
    """What a step of the model lets a milestone check: the mined block, mob, or made items."""
    if skill in ("mine", "attack"):
        return [key.split(":", 1)[1]]
    return sorted(i for i in outputs if i.startswith("minecraft:"))


@lru_cache(maxsize=1)
def candidate_steps() -> tuple[CandidateStep, ...]:
    """Every candidate with a vanilla route, by route length then id (the same order every run)."""
    rules = vanilla()
    model = vanilla_model(rules)
    found: dict[str, CandidateStep] = {}
    routes: dict[str, tuple[str, ...] | None] = {}
    for key, step in sorted(model.steps.items()):
        if step.skill not in _CHECKERS or not key.startswith(f"{step.skill}:"):   # placed-then-mined blocks are not the world's
            continue
        ctype, field, verb = _CHECKERS[step.skill]
        for target in _targets(step.skill, key, step.outputs):
            cid = f"{verb}_{target.removeprefix('minecraft:')}"
            if cid not in routes:
                routes[cid] = route(model, rules, Milestone(None, 100, cid, "", (), (Checker(ctype, target, 1),))).steps
            steps = routes[cid]
            # the route must take this very step (leather is obtained from a cow, not crafted, on its route)
            if cid not in found and steps is not None and key in steps:
                found[cid] = CandidateStep(cid, f"{verb.capitalize()} {_name(target)}",
                                           {"type": ctype, field: target}, steps)
    return tuple(sorted(found.values(), key=lambda c: (len(c.route), c.id)))
