"""Scripted planning agents: the key-free baselines of the study and the pipeline's regression test.

Both agents see observation dicts and the task's public spec. Each turn they take the next
milestone's need from the spec (``milestones``: items to obtain, a block to mine, a mob to attack, a
block to place, a station to return to), plan from the current inventory and the placed facilities
towards it (``mcbuild.compiler.planning``, which counts held items as available even when the model can
no longer make them) and send the first planned action, made concrete for what they observe: a needed block or mob that is not in sight is
explored for (an unseen one only if the world resources list it), a crafting grid is filled with
the variants actually owned.

* ``vanilla-planner`` plans with the vanilla transition model (the public 1.19 catalog, the same
  prior as the observation's recipe hypotheses). It recovers from failures — explores for
  missing targets, gives up targets that cannot be found, drops actions that keep failing — but
  never revises what an action yields.
* ``adaptive-planner`` also revises its model from verified action effects: a step's outputs
  become the mean of what it was observed to yield, so it uses unexpected outputs, unpacks storage
  blocks and skips steps a byproduct already covered. When no plan reaches the milestone it probes
  the unexplained items it received (one smelt per reachable station, one unpacking craft) and
  adds what they yield to its model — which is how it finds that a hoe smelts into a pickaxe.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from functools import lru_cache
from typing import Any, Mapping, NamedTuple

from mcbuild.compiler.planning.model import PLACED, PlannedAction, Step, TransitionModel, model_from_rulebook
from mcbuild.compiler.planning.search import plan
from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.rules.crafting import fill_pattern, grid_size
from mcbuild.compiler.rules.rulebook import vanilla
from mcbuild.compiler.rules.tasks import world_resources
from mcbuild.runtime.agents.base import NO_MODEL, Action, ModelUse
from mcbuild.runtime.agents.scripted.milestones import Need, need_of, next_milestone, task_of
from mcbuild.runtime.body.policy import burnable
from mcbuild.runtime.contract.skills import (
    COOK_STATIONS,
    CRAFTING_TABLE,
    ENCHANTING_TABLE,
    FACILITIES,
    LOG_ALIAS,
    LOG_TAG,
    describe,
)

EXPLORE_LIMIT = 3       # unsuccessful explores of one target before it is given up
FAILURE_LIMIT = 2       # failures of one planned step before it is dropped
REPLANS = 8             # re-plans per turn after dropping steps


@lru_cache(maxsize=1)
def _vanilla_model() -> TransitionModel:
    """The vanilla transition model in which every block with a loot table can be mined from the
    world and the benchmark's mobs can be hunted (agents plan with the sources they have seen
    first, and explore only for unseen ones the world resources list)."""
    rb = vanilla()
    blocks = {b for b in rb.catalog.blocks if rb.block_loot(b) is not None}
    return model_from_rulebook(rb, sorted(blocks | set(world_resources()["blocks"])), world_resources()["entities"])


@lru_cache(maxsize=1)
def _provided() -> frozenset[str]:
    """The blocks and mobs every world provides (the world resources): the only unseen sources
    worth exploring for."""
    res = world_resources()
    return frozenset(ns(t) for t in (*res["blocks"], *res["entities"]))


class _Start(NamedTuple):
    model: TransitionModel                      # the model every episode starts from
    sources: dict[str, str]                     # step key -> block or mob, of the steps that need nothing
    by_target: dict[str, tuple[str, ...]]       # block or mob -> its source steps
    unseen: tuple[frozenset[str], frozenset[str]]   # VanillaPlanner._unseen before anything is seen


@lru_cache(maxsize=1)
def _start() -> _Start:
    """What every episode's planner starts from, made once per process: the vanilla model without
    the facilities' mining steps (placed stations are used, never harvested) and its sources."""
    model = _vanilla_model().copy()
    sources: dict[str, str] = {k: s.args["block" if s.skill == "mine" else "target"] for k, s in model.steps.items()
                               if s.skill in ("mine", "attack") and not s.inputs}
    for facility in FACILITIES:
        _drop(model, f"mine:{facility}")
    by_target: dict[str, list[str]] = defaultdict(list)
    for key, target in sources.items():
        by_target[target].append(key)
    unseen = frozenset(k for k in sources if model.steps[k].outputs)
    unprovided = frozenset(k for k in unseen if sources[k] not in _provided())
    return _Start(model, sources, {t: tuple(keys) for t, keys in by_target.items()}, (unseen, unprovided))


def _drop(model: TransitionModel, key: str) -> bool:
    """Plan without a step from now on (its outputs become nothing); whether that changed it."""
    if key in model.steps and model.steps[key].outputs:
        model.observe(key, {})
        return True
    return False


class VanillaPlanner:
    """Plans with the vanilla transition model; deterministic (it draws no random numbers)."""

    name = "vanilla-planner"

    def __init__(self) -> None:
        self.reset(0)

    def model_use(self) -> ModelUse:
        """A planner calls no model."""
        return NO_MODEL

    def reset(self, seed: int) -> None:
        start = _start()
        self.model = start.model.copy()
        self.last: tuple[str | None, Action] | None = None      # (planned step, action) sent last
        self.explore_failures: Counter[str] = Counter()
        self.step_failures: Counter[str] = Counter()
        self.seen: set[str] = set()
        self.facilities: set[str] = set()
        self.fuel_goal: frozenset[str] | None = None
        self.start: tuple[float, float, float] | None = None
        self.landmarks: dict[str, tuple[int, ...]] = {}     # a placed block -> where it was placed (from the start)
        self._unseen_memo: tuple[tuple[int, int], tuple[frozenset[str], frozenset[str]]] = \
            ((0, self.model.revision), start.unseen)
        self._unseen_at: frozenset[str] = frozenset()       # what was seen when the memo was made
        self._edited: set[str] = set()                      # steps edited since then

    # ------------------------------------------------------------------ turn
    def act(self, observation: Mapping[str, Any]) -> Action | None:
        self._digest(observation)
        self.seen |= set(observation["nearby_targets"]) | set(observation["nearby_entities"])
        self.facilities |= set(observation["facilities"]["observed"])
        position = observation["position"]
        here = (position["x"], position["y"], position["z"])
        self.start = self.start or here
        offset = tuple(round(h - s) for h, s in zip(here, self.start))
        result = observation.get("latest_result") or {}
        if result.get("ok") and result["skill"] == "place":
            self.landmarks[ns(result["args"]["block"])] = offset
        task = task_of(observation["task"]["id"])
        milestone = next_milestone(task, observation["task"]["route"], offset)
        if milestone is None:
            return None
        need = need_of(milestone, observation["inventory"], offset)
        fuel = self._fuel_goal(observation)
        if fuel:
            return self._obtain(fuel, observation, exclude=fuel)
        if need.kind == "obtain":
            return self._obtain(need.items, observation, exclude=need.items if need.fresh else frozenset())
        if need.kind in ("mine", "attack"):
            return self._harvest(need, observation)
        if need.kind == "place":
            if observation["inventory"].get(need.target, 0) < 1:
                return self._obtain(need.items, observation)
            if not need.box.contains(offset):
                return self._reach(Need("reach", box=need.box), observation)
            return {"skill": "place", "args": {"block": need.target}}
        if need.kind == "reach":
            return self._reach(need, observation)
        return {"skill": "wait", "args": {"ticks": 20}}

    def _obtain(self, goal: frozenset[str], observation: Mapping[str, Any], exclude: frozenset[str] = frozenset()) -> Action | None:
        """The first action of a plan to one more item of ``goal`` (items in ``exclude`` are left
        out of the planning inventory, so a unit is added even when some are held)."""
        inventory = {i: float(n) for i, n in observation["inventory"].items() if i not in exclude}
        placed = {PLACED + f for f in self.facilities}
        forbidden = (observation.get("stagnation_warning") or {}).get("forbidden_action")
        for _ in range(REPLANS):
            actions = self._plan(inventory, placed, goal)
            if not actions:
                break
            action = self._concrete(actions[0], observation)
            if forbidden is None or describe(action) != describe(forbidden):
                self.last = (actions[0].step_key, action)
                return action
            self._drop(actions[0].step_key)
        return self._stuck(observation)

    def _harvest(self, need: Need, observation: Mapping[str, Any]) -> Action | None:
        """Mine a block or attack a mob once its model step's requirements (tools, stations) are met."""
        key = f"{need.kind}:{need.target}"
        step = self.model.steps.get(key)
        if step is None:
            return None
        inventory = observation["inventory"]
        for req in step.requires:
            if not any(inventory.get(i, 0) >= 1 or i.removeprefix(PLACED) in self.facilities for i in req):
                return self._obtain(req, observation)
        arg = "block" if need.kind == "mine" else "target"
        action = self._concrete(PlannedAction(need.kind, {arg: need.target, "count": 1}, key), observation)
        self.last = (key, action)
        return action

    def _fuel_goal(self, observation: Mapping[str, Any]) -> frozenset[str] | None:
        """After no_fuel, until a unit of fuel is gained: any fuel the body burns (not a tool, a
        facility or the input); owned fuel is left out of the planning inventory so a unit is added."""
        result = observation.get("latest_result") or {}
        if result.get("reason") == "no_fuel":
            self.fuel_goal = frozenset(f for f in self.model.fuels if burnable(vanilla(), f, result["args"]["input"]))
        elif self.fuel_goal and set(result.get("gained", {})) & self.fuel_goal:
            self.fuel_goal = None
        return self.fuel_goal

    def _plan(self, inventory: dict[str, float], placed: set[str], goal: frozenset[str]) -> list[PlannedAction] | None:
        """Plan with the sources seen so far; only if that fails, also with the unseen ones the
        worlds provide (to explore for)."""
        unseen, unprovided = self._unseen()
        self.model.hide(unseen)
        actions = plan(self.model, inventory, placed, goal)
        if actions:
            return actions
        self.model.hide(unprovided)
        return plan(self.model, inventory, placed, goal)

    def _unseen(self) -> tuple[frozenset[str], frozenset[str]]:
        """Sources (blocks to mine, mobs to hunt) not seen yet, and those of them that the world
        resources do not list. They start as every source (made once per process) and are updated
        for the sources of what was newly seen (``seen`` only grows) and of the steps edited since
        (every edit goes through :meth:`_edit` or :meth:`_drop`)."""
        key = (len(self.seen), self.model.revision)
        memo_key, (unseen, unprovided) = self._unseen_memo
        if memo_key == key:
            return unseen, unprovided
        start = _start()
        sources = start.sources
        changed = {k for target in self.seen - self._unseen_at for k in start.by_target.get(target, ())}
        changed.update(k for k in self._edited if k in sources)
        steps = self.model.steps
        now = {k for k in changed if sources[k] not in self.seen and steps[k].outputs}
        if now != unseen.intersection(changed):
            unseen = unseen.difference(changed).union(now)
            unprovided = unprovided.difference(changed).union(k for k in now if sources[k] not in _provided())
        self._unseen_memo, self._unseen_at = (key, (unseen, unprovided)), frozenset(self.seen)
        self._edited.clear()
        return unseen, unprovided

    def _reach(self, need: Need, observation: Mapping[str, Any]) -> Action | None:
        """Go back to a station placed where the milestone wants the body; no skill walks to a
        chosen position, so a place without such a landmark (or a facing) is out of reach."""
        if need.facing is None:
            for station, spot in sorted(self.landmarks.items()):
                inside = need.box.contains(spot) if need.box is not None else \
                    need.point is not None and math.dist(spot, need.point) <= need.radius - 1
                if inside and station in self.facilities:
                    return {"skill": "explore", "args": {"target": station}}
        return None

    def _stuck(self, observation: Mapping[str, Any]) -> Action | None:
        """No plan reaches the milestone: the vanilla planner has nothing left to try."""
        return None

    # ------------------------------------------------------------------ digesting results
    def _digest(self, observation: Mapping[str, Any]) -> None:
        result = observation.get("latest_result")
        if result is None or self.last is None:
            return
        key, _ = self.last
        self.last = None
        if result["ok"]:
            if key:
                self.step_failures.pop(key, None)
            self._learn(key, result)
            return
        if result["skill"] == "explore":
            target = result["args"]["target"]
            self.facilities.discard(target)         # a remembered station that cannot be found is gone
            self.explore_failures[target] += 1
            if self.explore_failures[target] >= EXPLORE_LIMIT:
                self._give_up(target)
        elif key and result["reason"] != "no_fuel":     # no_fuel is answered by gathering fuel
            self.step_failures[key] += 1
            if self.step_failures[key] >= FAILURE_LIMIT:
                self._drop(key)

    def _give_up(self, target: str) -> None:
        """Stop planning with sources of a target that exploring cannot find."""
        names = vanilla().tag("block", LOG_TAG) if target == LOG_ALIAS else {target}
        for name in names:
            for key in (f"mine:{name}", f"attack:{name}"):
                self._drop(key)

    def _drop(self, key: str) -> None:
        if _drop(self.model, key):
            self._edited.add(key)

    def _edit(self, key: str, outputs: Mapping[str, float]) -> None:
        """Revise a step's outputs: with :meth:`_drop`, the only edits of existing steps (steps
        added by probes are never sources)."""
        self.model.observe(key, outputs)
        self._edited.add(key)

    def _learn(self, key: str | None, result: Mapping[str, Any]) -> None:
        """Revise a step's outputs from what it yielded (the vanilla planner never does)."""

    # ------------------------------------------------------------------ concrete actions
    def _concrete(self, planned: PlannedAction, observation: Mapping[str, Any]) -> Action:
        args = dict(planned.args)
        if planned.skill == "mine":
            block = self._visible_block(args["block"], observation)
            if block is None:
                logs = vanilla().tag("block", LOG_TAG)
                unseen_log = args["block"] in logs and not self.seen & logs
                return {"skill": "explore", "args": {"target": LOG_ALIAS if unseen_log else args["block"]}}
            return {"skill": "mine", "args": {"block": block, "count": args["count"]}}
        if planned.skill == "attack" and args["target"] not in observation["nearby_entities"]:
            return {"skill": "explore", "args": {"target": args["target"]}}
        station = _station(planned)
        if station and station not in observation["facilities"]["observed"]:
            return {"skill": "explore", "args": {"target": station}}
        if planned.skill == "craft_grid":
            args["grid"] = self._grid(planned, observation["inventory"])
        return {"skill": planned.skill, "args": args}

    def _visible_block(self, block: str, observation: Mapping[str, Any]) -> str | None:
        return block if block in observation["nearby_targets"] else None

    def _grid(self, planned: PlannedAction, inventory: Mapping[str, int]) -> list[list[str | None]]:
        """The step's pattern filled with owned variants (most plentiful first)."""
        pattern = self.model.steps[planned.step_key].pattern
        if pattern is None:
            return planned.args["grid"]
        return fill_pattern(pattern, inventory, grid_size(planned.args["station"]))[0]


def _station(planned: PlannedAction) -> str | None:
    """The placed facility a planned action works at (walked to when out of sight)."""
    if planned.skill == "craft_grid" and planned.args["station"] == "crafting_table":
        return CRAFTING_TABLE
    if planned.skill == "smelt":
        return ns(planned.args["station"])
    if planned.skill == "enchant":
        return ENCHANTING_TABLE
    return None


class AdaptivePlanner(VanillaPlanner):
    name = "adaptive-planner"

    def reset(self, seed: int) -> None:
        super().reset(seed)
        self.samples: dict[str, list[dict[str, float]]] = defaultdict(list)   # step -> outputs per unit
        self.expected: dict[str, dict[str, float]] = {}                       # step -> vanilla outputs
        self.unexplained: list[str] = []                                      # unexpected items received
        self.probed: set[str] = set()

    def _digest(self, observation: Mapping[str, Any]) -> None:
        result = observation.get("latest_result") or {}
        if result.get("reason") == "no_fuel" and self.last and self.last[0] in self.probed:
            self.probed.discard(self.last[0])       # probe again once there is fuel
        super()._digest(observation)

    def _learn(self, key: str | None, result: Mapping[str, Any]) -> None:
        gained = {i: float(n) for i, n in result.get("gained", {}).items()}
        skill, args = result["skill"], result["args"]
        if skill == "mine":
            units = sum(result["mined"].values())
            keys = [f"mine:{b}" for b in result["mined"]]
        elif skill == "attack":
            units, keys = sum(result["killed"].values()), [f"attack:{args['target']}"]
        elif skill == "smelt":
            units, keys = args["count"], [f"smelt:{args['input']}@{args['station']}"]
        elif skill == "craft_grid" and key:
            units, keys = 1, [key]
        else:
            return
        sample = {i: n / units for i, n in gained.items()}
        for step_key in keys:
            self._revise(step_key, sample, result)

    def _revise(self, key: str, sample: dict[str, float], result: Mapping[str, Any]) -> None:
        """New outputs. Recipes are deterministic: the latest observation replaces the expectation.
        Drops may be random: the mean of the samples, with the prior expectation counting as one
        sample for the items it names (a random drop that failed to appear is not dropped at once)."""
        if key not in self.model.steps:
            self._add_step(key, sample, result)
        expected = self.expected.setdefault(key, dict(self.model.steps[key].outputs))
        samples = self.samples[key]
        samples.append(sample)
        if result["skill"] not in ("mine", "attack"):
            samples[:] = [sample]
        seen = set().union(*samples)
        learned = {}
        for item in sorted(seen | set(expected)):
            total = sum(s.get(item, 0.0) for s in samples)
            prior = 1 if item in expected and result["skill"] in ("mine", "attack") else 0
            learned[item] = (total + prior * expected.get(item, 0.0)) / (len(samples) + prior)
        learned = {i: v for i, v in learned.items() if v > 0}
        if learned != self.model.steps[key].outputs:
            self._edit(key, learned)
        for item in sorted(seen - set(expected)):
            if item not in self.unexplained:
                self.unexplained.append(item)

    def _add_step(self, key: str, sample: dict[str, float], result: Mapping[str, Any]) -> None:
        """A transition the vanilla model lacks, discovered by a probe."""
        args = result["args"]
        if result["skill"] == "smelt":
            item, station = args["input"], args["station"]
            self.model.add(Step(key, "smelt", key, {"input": item, "station": station}, ((frozenset({item}), 1),),
                                (frozenset({PLACED + ns(station)}),), dict(sample), 6))
        else:
            item = next(c for row in args["grid"] for c in row if c)
            self.model.add(Step(key, "craft_grid", key, {"station": "inventory"}, ((frozenset({item}), 1),), (),
                                dict(sample), 1, 0, ((frozenset({item}),),)))

    def _stuck(self, observation: Mapping[str, Any]) -> Action | None:
        """Probe the unexplained items received so far (most recent first), each way once."""
        inventory = observation["inventory"]
        observed = observation["facilities"]["observed"]
        owned = observation["facilities"]["owned_unplaced"]
        for item in reversed(self.unexplained):
            if inventory.get(item, 0) < 1:
                continue
            for station in COOK_STATIONS:
                probe = f"smelt:{item}@{station}"
                if probe in self.probed:
                    continue
                if ns(station) in observed:
                    self.probed.add(probe)
                    self.last = (probe, {"skill": "smelt", "args": {"input": item, "station": station, "count": 1}})
                    return self.last[1]
                if ns(station) in owned:
                    self.last = (None, {"skill": "place", "args": {"block": ns(station)}})
                    return self.last[1]
            probe = f"craft_grid:probe:{item}"
            if probe not in self.probed:
                self.probed.add(probe)
                self.last = (probe, {"skill": "craft_grid",
                                     "args": {"station": "inventory", "grid": [[item, None], [None, None]]}})
                return self.last[1]
        return None
