"""Bypasses: an unchanged twin that still does what a changed transition did in vanilla.

A changed transition ``t`` is *bypassed* in a Mirror world when the suite's transition model has
a *twin* ``t'``: a step that the suite leaves unchanged, is executed by the same skill as ``t``,
consumes nothing ``t`` would not (each item group it consumes shares an item with one ``t``
consumes, in no larger quantity; mining and attacking consume nothing), can be executed from the
world's resources under the suite's rules, and yields at least every item ``t`` yields under
vanilla rules, in at least the same expected quantity. Tools and stations are made once and kept,
so a twin may need other ones (a blast furnace instead of a furnace). An agent then reaches the
vanilla effect of ``t`` without ever meeting the change, for example:

* the blasting twin of a changed smelting transition (raw iron in a blast furnace);
* a second recipe making the changed recipe's result from the same ingredients;
* another world block with the same vanilla drops and harvest tool (deepslate iron ore beside
  iron ore), or another world mob with the same loot.

``mcbuild.compiler.planning.tracer`` reports the twins of every change; ``mcbuild.audits.mirror`` fails the build
on any.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from mcbuild.compiler.planning.model import INF, Step, TransitionModel, steps_by_rule

EPS = 1e-9


def _consumes_no_more(twin: Step, step: Step) -> bool:
    return all(any(items & other and q <= other_q for other, other_q in step.inputs) for items, q in twin.inputs)


def _needs_no_other_tool(twin: Step, step: Step) -> bool:
    """Mining only: every tool that harvests ``step``'s block harvests the twin's (stations may differ)."""
    return twin.skill != "mine" or all(any(need <= req for need in step.requires) for req in twin.requires)


def _yields_all(twin: Step, step: Step) -> bool:
    return all(twin.outputs.get(item, 0.0) >= n - EPS for item, n in step.outputs.items())


def twins(vanilla: TransitionModel, suite: TransitionModel, changed: Iterable[str]) -> dict[str, list[str]]:
    """Rule keys of the twins of each changed rule key that has any (keys as in
    ``mcbuild.compiler.mirror.resolve.ChangedTransition.key()``)."""
    changed = set(changed)
    costs, fuel_cost = suite.costs(), suite.fuel_unit_cost()
    candidates: dict[str, list[Step]] = defaultdict(list)
    for step in suite.steps.values():
        if step.rule_key not in changed and step.outputs and suite.exec_cost(step, costs, fuel_cost) < INF:
            candidates[step.skill].append(step)
    originals = steps_by_rule(vanilla)
    found: dict[str, list[str]] = {}
    for key in sorted(changed):
        keys = {twin.rule_key for step in originals.get(key, ()) if step.outputs for twin in candidates[step.skill]
                if _consumes_no_more(twin, step) and _needs_no_other_tool(twin, step) and _yields_all(twin, step)}
        if keys:
            found[key] = sorted(keys)
    return found
