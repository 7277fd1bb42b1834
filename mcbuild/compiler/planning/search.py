"""Planning over a transition model: the concrete action sequence that reaches a goal item set
from an inventory, choosing among alternatives by the model's unit-cost estimate."""
from __future__ import annotations

import copy
import math
from collections import defaultdict
from typing import Iterable, Mapping

from mcbuild.compiler.planning.model import INF, PLACED, PlannedAction, PlanState, Step, TransitionModel
from mcbuild.compiler.rules.crafting import fill_pattern, grid_size


def plan(model: TransitionModel, inventory: Mapping[str, float], placed: Iterable[str],
         goal: frozenset[str], max_actions: int = 400) -> list[PlannedAction] | None:
    """Actions that reach one item of ``goal``, or None if the model cannot reach it (memoized
    per model edits and planning state: planning is deterministic). A held item that no step
    makes is costed as free, so a route may use what the model can no longer make; a held item
    that steps make keeps their cost (the plan uses what is held first either way)."""
    inv = {k: float(v) for k, v in inventory.items()}
    costs, producers, edits = model._solve(frozenset(k for k, v in inv.items() if v >= 1))
    placed = frozenset(placed)

    def search() -> list[PlannedAction] | None:
        st = PlanState(defaultdict(float, inv), set(placed), [])
        return st.actions if _Planner(model, costs, producers, max_actions).obtain(st, goal, 1.0, ()) else None

    found = model._plans.get_or_make((edits, tuple(sorted(inv.items())), placed, goal, max_actions), search)
    return None if found is None else list(found)


class _Planner:
    def __init__(self, model: TransitionModel, costs, producers, max_actions: int):
        self.model, self.costs, self.producers, self.max_actions = model, costs, producers, max_actions
        self.fuel_cost = model.fuel_unit_cost(costs)

    def obtain(self, st: PlanState, items: frozenset[str], qty: float, stack: tuple[str, ...]) -> bool:
        if any(i.startswith(PLACED) for i in items):
            return self._place(st, items, stack)
        if st.have(items) >= qty - 1e-9:
            return True
        if len(st.actions) > self.max_actions:
            return False
        options = []
        for item in items:
            for step in self.producers.get(item, []):
                if step.key in stack or step.outputs.get(item, 0) <= 0:
                    continue
                c = self.model.exec_cost(step, self.costs, self.fuel_cost, st) / step.outputs[item]
                if c == INF:
                    continue
                options.append((c, step.key, item, step))
        for _, _, item, step in sorted(options, key=lambda o: (o[0], o[1])):
            trial = st.snapshot()
            deficit = qty - trial.have(items)
            if self._run(trial, step, item, deficit, stack + (step.key,)) and trial.have(items) >= qty - 1e-9:
                st.inv, st.placed, st.actions = trial.inv, trial.placed, trial.actions
                return True
        return False

    def _place(self, st: PlanState, items: frozenset[str], stack) -> bool:
        if st.placed & items:
            return True
        for target in sorted(items):
            block = target[len(PLACED):]
            trial = st.snapshot()
            if self.obtain(trial, frozenset({block}), 1.0, stack):
                trial.inv[block] -= 1
                trial.placed.add(target)
                trial.actions.append(PlannedAction("place", {"block": block}, f"place:{block}"))
                st.inv, st.placed, st.actions = trial.inv, trial.placed, trial.actions
                return True
        return False

    def _run(self, st: PlanState, step: Step, item: str, deficit: float, stack) -> bool:
        execs = max(1, math.ceil(deficit / step.outputs[item] - 1e-9))
        for req in step.requires:
            if not self.obtain(st, req, 1.0, stack):
                return False
        for items, q in step.inputs:
            if not self.obtain(st, items, q * execs, stack):
                return False
        if step.skill == "smelt" and not self._fuel(st, execs * self.model.fuel_per_item, stack):
            return False
        done = 0
        while done < execs:
            n = min(step.batch, execs - done)
            args = self._args(st, step, n)
            if args is None:
                return False
            for items, q in step.inputs:
                self._consume(st, items, q * n)
            if step.skill == "smelt":
                self._burn(st, n * self.model.fuel_per_item)
            for out, y in step.outputs.items():
                st.inv[out] = st.inv.get(out, 0.0) + y * n
            if step.extra_actions:
                block = step.args["block"]
                st.actions.append(PlannedAction("place", {"block": block}, f"place:{block}"))
            st.actions.append(PlannedAction(step.skill, args, step.key))
            done += n
        return True

    def _args(self, st: PlanState, step: Step, n: int) -> dict | None:
        args = copy.deepcopy(step.args)
        if step.skill in ("mine", "attack", "smelt"):
            args["count"] = n
        if step.skill == "craft_grid":
            args["grid"], _ = fill_pattern(step.pattern or (), st.inv, grid_size(args["station"]))
        if step.skill == "enchant":
            owned = [i for i in sorted(step.args["candidates"]) if st.inv.get(i, 0) >= 1]
            if not owned:
                return None
            args = {"item": owned[0], "option": "lowest"}
        return args

    def _consume(self, st: PlanState, items: frozenset[str], qty: float) -> None:
        for item in sorted(items, key=lambda i: -st.inv.get(i, 0.0)):
            take = min(qty, st.inv.get(item, 0.0))
            st.inv[item] = st.inv.get(item, 0.0) - take
            qty -= take
            if qty <= 1e-9:
                return

    def _fuel(self, st: PlanState, ticks: float, stack) -> bool:
        if self._fuel_ticks(st) >= ticks:
            return True
        fuels = sorted(self.model.fuels, key=lambda f: (self.costs.get(f, INF) / self.model.fuels[f], f))
        for fuel in fuels:
            if self.costs.get(fuel, INF) == INF:
                continue
            need = math.ceil((ticks - self._fuel_ticks(st)) / self.model.fuels[fuel])
            trial = st.snapshot()
            if self.obtain(trial, frozenset({fuel}), trial.inv.get(fuel, 0.0) + need, stack):
                st.inv, st.placed, st.actions = trial.inv, trial.placed, trial.actions
                return True
        return False

    def _fuel_ticks(self, st: PlanState) -> float:
        return sum(st.inv.get(f, 0.0) * t for f, t in self.model.fuels.items())

    def _burn(self, st: PlanState, ticks: float) -> None:
        for fuel in sorted(self.model.fuels, key=lambda f: (self.model.fuels[f], f)):
            while ticks > 1e-9 and st.inv.get(fuel, 0.0) >= 1 - 1e-9:
                st.inv[fuel] -= 1
                ticks -= self.model.fuels[fuel]
