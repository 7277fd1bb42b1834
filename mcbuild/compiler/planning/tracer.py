"""Dependency tracer: proves each change lies on a task route, is observable, and keeps tasks solvable.

The rulebook's transitions (mine, craft, cook, attack, place, enchant) form a networkx graph
(item -> step -> item). For every selected task the planner finds a route in semantic actions
under vanilla rules and under the suite; for every change the tracer reports which routes it lies
on (executed on the vanilla or suite route, or an interchangeable source of an item the vanilla
route consumes), whether it is encountered before the task completes, which skill observes it, and
which unchanged twins bypass it (``mcbuild.compiler.planning.bypass``). Each task's
difficulty d(τ) under both rule sets (also of tasks given as ``rated``) comes from ``mcbuild.compiler.planning.difficulty``.
"""
from __future__ import annotations

import weakref
from typing import Any, Iterable

import networkx as nx

from mcbuild.compiler.planning.bypass import twins
from mcbuild.compiler.planning.difficulty import task_difficulty
from mcbuild.compiler.planning.goals import Route, route
from mcbuild.compiler.planning.model import PLACED, TransitionModel, model_from_rulebook, steps_by_rule
from mcbuild.compiler.rules.rulebook import Rulebook
from mcbuild.compiler.rules.tasks import Task, world_resources


def graph(model: TransitionModel) -> nx.DiGraph:
    """Bipartite dependency graph: item nodes ('item:<id>') and step nodes ('step:<key>')."""
    g = nx.DiGraph()
    for step in model.steps.values():
        s = f"step:{step.key}"
        g.add_node(s, kind="step", skill=step.skill, rule=step.rule_key)
        for items, q in step.inputs:
            for item in items:
                g.add_edge(f"item:{item}", s, role="input", qty=q)
        for req in step.requires:
            for item in req:
                g.add_edge(f"item:{item.removeprefix(PLACED)}", s, role="requires")
        for item, n in step.outputs.items():
            g.add_edge(s, f"item:{item}", role="output", qty=n)
    return g


_VANILLA_MODELS: "weakref.WeakKeyDictionary[Rulebook, TransitionModel]" = weakref.WeakKeyDictionary()


def suite_model(suite: Rulebook) -> TransitionModel:
    """The transition model of ``suite`` from the world resources (what every world provides)."""
    res = world_resources()
    return model_from_rulebook(suite, res["blocks"], res["entities"])


def vanilla_model(vanilla: Rulebook) -> TransitionModel:
    """The vanilla model is the same for every suite: built once per rulebook object."""
    if vanilla not in _VANILLA_MODELS:
        _VANILLA_MODELS[vanilla] = suite_model(vanilla)
    return _VANILLA_MODELS[vanilla]


def _route(found: Route) -> dict[str, Any]:
    if found.steps is None:
        return {"reachable": False, "route_length": None, "route": []}
    return {"reachable": True, "route_length": len(found.steps), "route": list(found.steps)}


def _route_items(model: TransitionModel, route: list[str]) -> set[str]:
    items: set[str] = set()
    for key in route:
        step = model.steps.get(key)
        if step is not None:
            items |= {i for group, _ in step.inputs for i in group} | set(step.outputs)
    return items


def trace(vanilla: Rulebook, suite: Rulebook, selected: Iterable[Task],
          changes: list[dict[str, Any]] | None = None, rated: Iterable[Task] = ()) -> dict[str, Any]:
    """Routes per task under both rulebooks and, given the changes' transitions, their placement.

    ``selected`` are the tasks to route; ``difficulty`` holds d(τ) under both rulebooks of the
    selected tasks and of ``rated`` (custom tasks the suite was not designed for), by task id.
    ``changes`` items: ``{"id", "skill", "transitions": [rule keys]}`` (rule keys as in
    ``mcbuild.compiler.mirror.resolve.ChangedTransition.key()``, e.g. 'mine:minecraft:iron_ore', 'smelt:minecraft:raw_iron@furnace').
    Each placed change lists under ``bypassed_by`` its changed rule keys that have twins, with the
    twins' rule keys.
    """
    res = world_resources()
    vm = vanilla_model(vanilla)
    sm = suite_model(suite)
    sg = graph(sm)
    selected = list(selected)
    report: dict[str, Any] = {"world_resources": res, "tasks": {}, "changes": [], "difficulty": {
        t.id: {"vanilla": task_difficulty(vm, vanilla, t), "suite": task_difficulty(sm, suite, t)}
        for t in selected + [t for t in rated if t not in selected]},
                              "graph": {"vanilla_nodes": graph(vm).number_of_nodes(), "suite_nodes": sg.number_of_nodes(),
                                        "suite_edges": sg.number_of_edges()}}
    routes: dict[str, tuple[dict, dict]] = {}
    for task in selected:
        v = _route(route(vm, vanilla, task.final))
        s = _route(route(sm, suite, task.final))
        milestones = {m.code: {"value": m.value, "suite_reachable": route(sm, suite, m).reachable}
                      for m in task.milestones}
        routes[task.id] = (v, s)
        report["tasks"][task.id] = {"vanilla": v, "suite": s, "milestones": milestones}
    changes = changes or []
    bypassed = twins(vm, sm, {k for ch in changes for k in ch["transitions"]})
    v_rules, s_rules = steps_by_rule(vm), steps_by_rule(sm)
    for ch in changes:
        keys = set(ch["transitions"])
        placement = {}
        for tid, (v, s) in routes.items():
            v_keys = {vm.steps[k].rule_key for k in v["route"] if k in vm.steps}
            s_keys = {sm.steps[k].rule_key for k in s["route"] if k in sm.steps}
            consumed = _route_items(vm, v["route"])
            alternative = any(set(step.outputs) & consumed for k in keys for step in v_rules.get(k, ()))
            placement[tid] = {"vanilla_route": bool(keys & v_keys), "suite_route": bool(keys & s_keys),
                              "alternative_source": alternative}
        on = sorted(t for t, p in placement.items() if any(p.values()))
        report["changes"].append({
            "id": ch["id"], "observed_by": ch["skill"], "transitions": sorted(keys), "routes": placement,
            "on_routes": on,
            "encountered_before_completion": sorted(t for t, p in placement.items()
                                                   if p["vanilla_route"] or p["suite_route"] or p["alternative_source"]),
            "in_dependency_graph": any(k in s_rules for k in keys),
            "bypassed_by": {k: bypassed[k] for k in sorted(keys) if k in bypassed},
        })
    return report

