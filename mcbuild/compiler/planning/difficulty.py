"""The difficulty d(τ) of a task under one rule set (MineExplorer's score).

d(τ) = ‖Φᵀ B‖_F / √(|V|·|C|). The nodes V are the distinct steps of the routes that complete the
task's milestones (``mcbuild.compiler.planning.goals``); B is the transitive closure of their dependency
graph with self-dependencies (``B[u, v] = 1`` when v needs what u makes, directly or through
other steps, or u = v); Φ holds each node's capability vector over the capabilities C, here the
skill the step is executed with. A step depends on an earlier step that outputs an item it
consumes or requires (a placed station depends on its placement). Longer chains of dependent
steps that need many different skills score higher; 0 means nothing to do.
"""
from __future__ import annotations

import math
from typing import Iterable

import networkx as nx

from mcbuild.compiler.planning.goals import MOVE, route
from mcbuild.compiler.planning.model import PLACED, TransitionModel
from mcbuild.compiler.rules.rulebook import Rulebook
from mcbuild.compiler.rules.tasks import Task

CAPABILITIES = ("mine", "craft_grid", "smelt", "attack", "place", "enchant", "move")


def skill_of(key: str) -> str:
    """The capability a route step needs (``place_mine:`` steps are mined, pseudo-steps move or place)."""
    head = key.split(":", 1)[0]
    return {"place_mine": "mine"}.get(head, head)


def task_steps(model: TransitionModel, rules: Rulebook, task: Task) -> list[str] | None:
    """The distinct steps of the routes of every milestone, in first-use order; None if one is unreachable."""
    out: list[str] = []
    for m in task.milestones:
        found = route(model, rules, m)
        if found.steps is None:
            return None
        out += [s for s in found.steps if s not in out]
    return out


def _io(model: TransitionModel, key: str) -> tuple[set[str], set[str]]:
    """(items the step needs, items it makes); placed stations count as ``placed:`` items."""
    if key == MOVE:
        return set(), set()
    if key.startswith("place:"):
        item = key.removeprefix("place:")
        return {item}, {PLACED + item}
    step = model.steps[key]
    needs = {i for group, _ in step.inputs for i in group}
    needs |= {i for req in step.requires for i in req}
    return needs, set(step.outputs)


def dependency_closure(model: TransitionModel, steps: Iterable[str]) -> nx.DiGraph:
    """B as a graph: u -> v when v depends on u (transitively), with a self-loop on every node."""
    order = list(steps)
    g = nx.DiGraph()
    g.add_nodes_from(order)
    io = {k: _io(model, k) for k in order}
    for j, v in enumerate(order):
        for u in order[:j]:
            if io[u][1] & io[v][0]:
                g.add_edge(u, v)
    closure = nx.transitive_closure_dag(g) if nx.is_directed_acyclic_graph(g) else nx.transitive_closure(g)
    closure.add_edges_from((n, n) for n in order)
    return closure


def difficulty(model: TransitionModel, steps: list[str]) -> float:
    """d(τ) over the route steps ``steps`` (0.0 for no steps), rounded to 4 decimals."""
    if not steps:
        return 0.0
    closure = dependency_closure(model, steps)
    total = 0
    for v in steps:                       # (Φᵀ B)[c, v] = number of u with capability c that v depends on
        per_capability: dict[str, int] = {}
        for u in closure.predecessors(v):
            per_capability[skill_of(u)] = per_capability.get(skill_of(u), 0) + 1
        total += sum(n * n for n in per_capability.values())
    return round(math.sqrt(total) / math.sqrt(len(steps) * len(CAPABILITIES)), 4)


def task_difficulty(model: TransitionModel, rules: Rulebook, task: Task) -> float | None:
    """d(τ) of ``task`` under ``rules`` (``model`` is built from them); None if a milestone is unreachable."""
    steps = task_steps(model, rules, task)
    return None if steps is None else difficulty(model, steps)
