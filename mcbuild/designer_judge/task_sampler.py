"""Deterministic seed-based sampler of ``kind: task`` specs (static-only task designs).

A sample picks a final candidate step with a route of at least :data:`MIN_FINAL_ROUTE` steps,
then two to four candidates whose defining step lies on that route as its earlier milestones, in
route order. A milestone requires the latest earlier one that lies on its own route (so the
prerequisites form a DAG, not always a chain); values rise evenly to 100; the budget is twice the
final route plus a margin. ``sample(seed, attempt)`` is a pure function of its arguments.
"""
from __future__ import annotations

import random
from typing import Any

from .task_steps import CandidateStep, candidate_steps

MIN_FINAL_ROUTE = 8
MIN_EARLIER, MAX_EARLIER = 2, 4
BUDGET_MARGIN = 10


def _defining(c: CandidateStep) -> str:
    """The route step a candidate's checker observes (its route's last step)."""
    return c.route[-1]


def _milestone(c: CandidateStep, value: int, requires: list[str]) -> dict[str, Any]:
    return {"id": c.id, "description": c.description, "value": value, "requires": requires, "checkers": [c.checker]}


def sample(seed: int, attempt: int = 0) -> dict[str, Any]:
    """One complete ``kind: task`` spec for ``seed`` (and retry number ``attempt``)."""
    rng = random.Random(f"mcbuild-task-sampler:{seed}:{attempt}")
    cands = candidate_steps()
    final = rng.choice([c for c in cands if len(c.route) >= MIN_FINAL_ROUTE])
    on_route = [c for c in cands if c is not final and _defining(c) in final.route]
    k = min(len(on_route), rng.randint(MIN_EARLIER, MAX_EARLIER))
    chosen = sorted(rng.sample(on_route, k), key=lambda c: final.route.index(_defining(c))) + [final]
    milestones: list[dict[str, Any]] = []
    for i, c in enumerate(chosen):
        before = [m.id for m in chosen[:i] if _defining(m) in c.route]
        value = 100 if c is final else round(100 * (i + 1) / len(chosen))
        milestones.append(_milestone(c, value, before[-1:]))
    return {
        "schema_version": "1.0",
        "kind": "task",
        "id": f"sampled-task-{seed}",
        "title": final.description,
        "instruction": f"{final.description}, starting from nothing.",
        "budget": 2 * len(final.route) + BUDGET_MARGIN,
        "milestones": milestones,
    }
