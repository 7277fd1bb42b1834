"""Observations of the paper's agents (Appendix L.8), built the same way for every backend.

An :class:`ObservationTracker` receives the backend's :class:`~mcbuild.runtime.contract.backend.Snapshot` and
every action result, and builds one dict per turn with these fields: task route,
next milestone, budget, inventory, equipment, the durability left in owned tools, weapons and
armour, experience, capabilities, facilities, nearby
targets/drops/entities, position, progress, completed advancements, verified action effects,
static Vanilla recipe hypotheses, the latest result, blocked actions with their prerequisites,
failure and stagnation cycles, unused-output warnings, survival and biome.

Integrity (paper §3.7): nothing here reads a world's rules. Static knowledge (recipes, tool
tiers, harvest tools) comes from the vanilla catalog; everything else from what the body
observed. :func:`serialize` gives the canonical bytes two observations are compared by.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from operator import itemgetter
from typing import Any, Mapping

from mcbuild.compiler.core.canonical import compact, plain_copy
from mcbuild.compiler.rules.pack import MINECRAFT_VERSION
from mcbuild.compiler.rules.rulebook import vanilla
from mcbuild.compiler.rules.tasks import Task
from mcbuild.runtime.contract.backend import Snapshot
from mcbuild.runtime.contract.knowledge import (
    inventory_parts,
    prerequisite,
    reported_advancements,
)
from mcbuild.runtime.contract.skills import FACILITIES, FACILITY_SET, describe
from mcbuild.runtime.records import semantic_signature

EFFECTS_KEPT = 16           # verified action effects retained (most recent distinct signatures)
CYCLE_WINDOW = 6            # recent actions examined for failure / stagnation cycles
UNUSED_KEPT = 3
TRANSFORMING = ("craft_grid", "smelt")


def serialize(observation: Mapping[str, Any]) -> str:
    """Canonical one-line JSON of an observation (byte-identical for identical observations)."""
    return compact(observation)


@dataclass
class _Turn:
    action: dict[str, Any]               # the tracker's own plain copies (``plain_copy``)
    result: dict[str, Any]
    changed: bool                        # inventory, equipment, score or position changed
    text: str                            # ``describe(action)``
    ok: bool                             # the result's ``ok``


# the task with its route, the next milestone and the progress (the observation's three progress fields)
Progress = tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any]]
PROGRESS_TASKS = 64         # tasks whose progress fields are kept (per set of milestones completed)
_PROGRESS: dict[int, tuple[Task, dict[frozenset[str], Progress]]] = {}     # id(task) -> (task, kept fields)


def progress_fields(task: Task, reached: frozenset[str]) -> Progress:
    """The progress fields of ``task`` with the milestones ``reached`` completed (their keys): a pure
    function of the two, kept per task object for every episode of it (shared and read-only, as
    the observation is)."""
    kept = _PROGRESS.get(id(task))
    if kept is None or kept[0] is not task:
        if len(_PROGRESS) >= PROGRESS_TASKS:
            _PROGRESS.clear()
        kept = _PROGRESS[id(task)] = (task, {})
    found = kept[1].get(reached)
    if found is None:
        found = kept[1][reached] = make_progress(task, reached)
    return found


def make_progress(task: Task, reached: frozenset[str]) -> Progress:
    """:func:`progress_fields` made anew."""
    route: list[dict[str, Any]] = [{"advancement": m.advancement, "code": m.code, "completed": m.key in reached, "value": m.value}
                                   | ({} if m.advancement else {"description": m.description}) for m in task.milestones]
    pending = [r for r in route if not r["completed"]]
    done = [r for r in route if r["completed"]]
    shown = {"goal": task.final.key, "id": task.id, "route": [dict(sorted(r.items())) for r in route],
             "title": task.title} | ({"instruction": task.instruction} if task.checked else {})
    return (dict(sorted(shown.items())),
            {k: pending[0][k] for k in ("advancement", "code", "value")} if pending else None,
            {"highest_completed": max(done, key=lambda r: r["value"])["code"] if done else None,
             "score": task.score(reached)})


@dataclass
class Standing:
    """What the score and progress read of a snapshot: its advancements and the checked milestones
    met (``key``), the task's milestones completed, its score and the vanilla advancements done
    (:meth:`ObservationTracker.completed`); the progress fields made from them once asked for."""

    key: tuple[tuple[str, ...], frozenset[str]]
    reached: frozenset[str]
    score: int
    completed: list[str]                 # never handed out: copies of it are
    progress: Progress | None = None


# the observation's parts made from the verified effects, kept while they are unchanged: (effects
# version, transforms version, verified_action_effects, the crafting and smelting effects that
# produced items, latest first, as (action text, output, the mode of its unused-output warning),
# and every item those produced)
_EffectParts = tuple[int, int, list[dict[str, Any]], list[tuple[str, dict[str, int], str]], tuple[str, ...]]


@dataclass
class ObservationTracker:
    """Builds the observations of one episode. Parts that depend only on the inventory and the
    observed stations, on the completed milestones or on the verified effects are kept between
    turns while those are unchanged; the observation hands them out shared (it is read-only)."""

    task: Task
    budget: int
    turns: list[_Turn] = field(default_factory=list)
    effects: dict[str, dict[str, Any]] = field(default_factory=dict)
    met: frozenset[str] = frozenset()    # checked milestones completed (``mcbuild.runtime.contract.checkers``)
    _stand: Standing | None = field(default=None, repr=False)       # of the last snapshot asked about
    # the parts kept between observations (:meth:`_effects_shown`), and the unused-output warnings
    # with the inputs they were made from
    _effects_kept: _EffectParts = field(default=(-1, -1, [], [], ()), repr=False)
    _unused_kept: tuple[Any, list[dict[str, Any]]] = field(default=(None, []), repr=False)
    _last: tuple[Snapshot, dict[str, Any], tuple[tuple[str, int], ...]] | None = field(default=None, repr=False)
    _version: int = 0                    # of ``effects``
    _transforms_version: int = 0         # of its crafting and smelting entries (see :meth:`_effects_shown`)
    # the kept effects that produced items by crafting or smelting, in ``effects``' order:
    # signature -> (action text, output, the mode of its unused-output warning)
    _made: dict[str, tuple[str, dict[str, int], str]] = field(default_factory=dict, repr=False)
    # where the feedback fields look in ``turns``: the first turn since the last that changed
    # something, one past the last successful turn, the successful turns that changed nothing among
    # the last CYCLE_WINDOW (positions)
    _since: int = 0
    _ok_at: int = 0
    _idle: list[int] = field(default_factory=list, repr=False)

    @cached_property
    def _milestone_keys(self) -> frozenset[str]:
        return frozenset(m.key for m in self.task.milestones)

    # ------------------------------------------------------------------ history
    def record(self, action: Mapping[str, Any], result: Mapping[str, Any], before: Snapshot, after: Snapshot,
               signature: str | None = None, text: str | None = None) -> _Turn:
        """Note one turn and return it; ``signature`` is the action's semantic signature and
        ``text`` its ``describe`` when the caller has them."""
        changed = (before.inventory != after.inventory or before.mainhand != after.mainhand
                   or before.position != after.position
                   or (before.advancements != after.advancements and self.score(before) != self.score(after)))
        copy, plain = plain_copy((action, result))          # one call for both copies
        turn = _Turn(copy, plain, changed, describe(copy) if text is None else text, bool(result.get("ok")))
        self.turns.append(turn)
        n = len(self.turns)
        if changed:
            self._since = n
        if turn.ok:
            self._ok_at = n
            if not changed:
                self._idle.append(n - 1)
        while self._idle and self._idle[0] < n - CYCLE_WINDOW:
            del self._idle[0]
        if turn.ok and (result.get("gained") or result.get("lost")):
            self._verify(turn, signature)
        return turn

    def _verify(self, turn: _Turn, sig: str | None) -> None:
        if sig is None:
            sig = semantic_signature(turn.action.get("skill", ""), turn.action.get("args"))
        # the first action of a signature names it; a new entry each time, in the observation's key
        # order (observations already handed out keep theirs)
        old = self.effects.pop(sig, None) or {"action": turn.text, "args": turn.action.get("args", {}),
                                              "skill": turn.action.get("skill"), "times": 0}
        produced = turn.result.get("gained", {})
        self.effects[sig] = {
            "action": old["action"], "args": old["args"], "consumed": turn.result.get("lost", {}),
            "produced": produced, "signature": sig, "skill": old["skill"],
            "times": old["times"] + 1, "units": _units(turn.result)}
        transforms = old["skill"] in TRANSFORMING
        self._made.pop(sig, None)
        if transforms and produced:
            self._made[sig] = (old["action"], produced, _unused_mode(tuple(produced)))
        while len(self.effects) > EFFECTS_KEPT:
            gone = next(iter(self.effects))
            transforms |= self.effects.pop(gone)["skill"] in TRANSFORMING
            self._made.pop(gone, None)
        self._version += 1
        self._transforms_version += transforms

    # ------------------------------------------------------------------ progress
    def completed(self, snap: Snapshot) -> list[str]:
        """The vanilla advancements done, without the recipe-unlock ones (``<ns>:recipes/...``: the
        server bridge never reports them either)."""
        return list(self.standing(snap).completed)

    def score(self, snap: Snapshot) -> int:
        return self.standing(snap).score

    def standing(self, snap: Snapshot) -> Standing:
        """What the score, the progress fields and the completed advancements read of ``snap``,
        kept for the last snapshot's advancements and milestones met (the score and progress
        carry over while the task's milestones completed are the same)."""
        key = (snap.advancements, self.met)
        known = self._stand
        if known is None or known.key != key:
            keys = self._milestone_keys
            reached = keys.intersection(snap.advancements) | (keys & self.met)
            completed = sorted(reported_advancements().intersection(snap.advancements))
            if known is not None and known.reached == reached:
                known = Standing(key, reached, known.score, completed, known.progress)
            else:
                known = Standing(key, reached, self.task.score(reached), completed)
            self._stand = known
        return known

    def done(self, snap: Snapshot) -> set[str]:
        """The keys of the completed milestones: advancements and checked milestones met."""
        return set(snap.advancements) | self.met

    # ------------------------------------------------------------------ the observation
    def build(self, snap: Snapshot) -> dict[str, Any]:
        """The observation of ``snap``: plain JSON values with sorted keys (what ``serialize``
        writes, read back); read-only, as some parts are shared with later observations.

        Built from the previous observation: only the parts whose inputs differ from the previous
        snapshot's (or, for the feedback fields, whose turns were added since) are made again."""
        last = self._last
        if last is None:
            obs, items = self._whole(snap)
        else:
            was, obs, items = last
            obs = dict(obs)
            items = self._fill(obs, snap, was, items)
        self._last = (snap, obs, items)
        return obs

    def rebuilt(self, snap: Snapshot) -> dict[str, Any]:
        """The observation of ``snap`` made whole, as :meth:`build` makes the first one (the
        reference its incremental builds are tested against); it changes nothing kept."""
        return self._whole(snap)[0]

    def _whole(self, snap: Snapshot) -> tuple[dict[str, Any], tuple[tuple[str, int], ...]]:
        obs: dict[str, Any] = {}
        items = self._fill(obs, snap, None, ())
        return dict(sorted(obs.items())), items

    def _fill(self, obs: dict[str, Any], snap: Snapshot, was: Snapshot | None,
              items: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
        """Set the parts of ``obs`` (the previous observation's, or empty when ``was`` is None) that
        ``snap`` changes; returns its inventory as sorted items."""
        if was is None:
            obs["minecraft_version"] = MINECRAFT_VERSION
        obs["biome"] = snap.biome
        if was is None or snap.position != was.position:
            obs["position"] = {"x": snap.position[0], "y": snap.position[1], "z": snap.position[2]}
        if was is None or snap.mainhand != was.mainhand:
            obs["equipped"] = {"mainhand": snap.mainhand}
        if was is None or snap.durability != was.durability:
            obs["durability"] = {item: list(left) for item, left in snap.durability.items()}
        if was is None or snap.xp_level != was.xp_level:
            obs["experience"] = {"level": snap.xp_level}
        if was is None or (snap.alive, snap.food, snap.health, snap.effects) != (
                was.alive, was.food, was.health, was.effects):
            obs["survival"] = {"alive": snap.alive, "effects": dict(sorted(snap.effects.items())), "food": snap.food,
                               "health": snap.health}
        standing = self.standing(snap)
        if was is None or snap.advancements != was.advancements:
            obs["completed_advancements"] = list(standing.completed)
        if standing.progress is None:
            standing.progress = progress_fields(self.task, standing.reached)
        obs["task"], obs["next_milestone"], obs["progress"] = standing.progress
        # the nearby fields come sorted by key (``Surroundings``): copied, not sorted again
        if was is None or snap.nearby_drops != was.nearby_drops:
            obs["nearby_drops"] = dict(snap.nearby_drops)
        if was is None or snap.nearby_entities != was.nearby_entities:
            obs["nearby_entities"] = {e: {"count": c, "nearest_distance": d}
                                      for e, (c, d) in snap.nearby_entities.items()}
        seen = was is None or snap.nearby_blocks != was.nearby_blocks
        if seen:
            nearby = snap.nearby_blocks
            obs["nearby_targets"] = dict(nearby)
            observed = {b: nearby[b] for b in sorted(FACILITY_SET.intersection(nearby))}
        else:
            observed = obs["facilities"]["observed"]
        stock = was is None or snap.inventory != was.inventory
        if stock:
            items = tuple(sorted(snap.inventory.items()))
            obs["inventory"] = dict(items)
        inventory = obs["inventory"]
        if stock or seen:
            owned, obs["capabilities"], obs["vanilla_recipe_hypotheses"] = inventory_parts(items, tuple(observed))
            obs["facilities"] = {"observed": observed, "owned_unplaced": owned}
        _, transforms_version, effects, transforms, produced = self._effects_shown()
        obs["verified_action_effects"] = effects
        # the warnings read the counts of the items the kept transformations produced
        key = (transforms_version, tuple(map(inventory.get, produced)))
        if self._unused_kept[0] != key:
            self._unused_kept = (key, self._unused(inventory, transforms))
        obs["unused_output_warnings"] = self._unused_kept[1]
        if was is None or obs["budget"]["used"] != len(self.turns):
            self._feedback(obs)
        blocked = obs["blocked_actions"]
        obs["actionable_verified_transformations"] = self._actionable(inventory, blocked) if blocked else []
        return items

    # ------------------------------------------------------------------ feedback fields
    def _feedback(self, obs: dict[str, Any]) -> None:
        """Set the fields that follow the turns: the budget, the latest result, and the feedback
        fields, each made only when the positions the tracker keeps say it can be non-empty."""
        turns = self.turns
        used = len(turns)
        last = turns[-1] if turns else None
        obs["budget"] = {"remaining": max(self.budget - used, 0), "total": self.budget, "used": used}
        obs["latest_result"] = None if last is None else last.result
        obs["blocked_actions"] = self._blocked() if self._since < used else []
        # a failure cycle needs 4 turns, none of the window's a success
        obs["failure_cycle"] = self._failure_cycle() if used >= 4 and self._ok_at <= max(used - CYCLE_WINDOW, 0) else None
        obs["stagnation_cycle"] = self._stagnation_cycle() if len(self._idle) >= 2 else None
        obs["stagnation_warning"] = None if last is None or last.ok else self._repeated_failure()

    def _blocked(self) -> list[dict[str, Any]]:
        """The failures after the last turn that changed inventory, equipment, score or position."""
        seen: dict[str, dict[str, Any]] = {}
        for turn in self.turns[self._since:]:
            if not turn.ok:
                seen[turn.text] = {"action": turn.action, "reason": turn.result.get("reason"),
                                               "requires": prerequisite(turn.action, turn.result)}
        return list(seen.values())

    def _repeated_failure(self) -> dict[str, Any] | None:
        """The last turn's failure repeated (the last turn failed)."""
        last = self.turns[-1].text
        count = 0
        for turn in reversed(self.turns):
            if turn.ok or turn.text != last:
                break
            count += 1
        return {"forbidden_action": self.turns[-1].action, "repeat_count": count} if count >= 2 else None

    def _failure_cycle(self) -> list[dict[str, Any]] | None:
        """A cycle of failures in the window (at least 4 turns, no success among them)."""
        recent = self.turns[-CYCLE_WINDOW:]
        keys = [t.text for t in recent]
        for period in (2, 3):
            if len(keys) >= 2 * period and keys[-2 * period:-period] == keys[-period:] \
                    and len(set(keys[-period:])) == period:
                return [t.action for t in recent[-period:]]
        return None

    def _stagnation_cycle(self) -> list[dict[str, Any]] | None:
        """Successes that changed nothing, repeated in the window (at least 2 of them)."""
        recent = [self.turns[p] for p in self._idle]         # the successes that changed nothing
        counts: dict[str, int] = {}
        for t in recent:
            counts[t.text] = counts.get(t.text, 0) + 1
        repeated = {k for k, n in counts.items() if n >= 2}
        if not repeated:
            return None
        out: dict[str, dict[str, Any]] = {}
        for turn in recent:
            if turn.text in repeated:
                out.setdefault(turn.text, turn.action)
        return list(out.values())

    def _unused(self, inventory: Mapping[str, int], transforms: list[tuple[str, dict[str, int], str]]
                ) -> list[dict[str, Any]]:
        out = []
        for action, produced, mode in transforms:
            if _owns(inventory, produced):
                out.append({"action": action, "mode": mode, "output": produced})
                if len(out) == UNUSED_KEPT:
                    break
        return out

    def _effects_shown(self) -> _EffectParts:
        """The parts made from the verified effects (see ``_EffectParts``), kept while they are
        unchanged (the transformations while those among them are)."""
        kept = self._effects_kept
        if kept[0] != self._version:
            transforms, produced = kept[3], kept[4]
            if kept[1] != self._transforms_version:
                transforms = list(reversed(self._made.values()))
                produced = tuple(sorted(set().union(*map(itemgetter(1), transforms))))
            kept = self._effects_kept = (self._version, self._transforms_version, list(self.effects.values()),
                                         transforms, produced)
        return kept

    def _actionable(self, inventory: Mapping[str, int], blocked_actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        wanted: dict[str, str] = {}
        for blocked in blocked_actions:
            for item in blocked["requires"].get("items", {}):
                wanted.setdefault(item, describe(blocked["action"]))
        if not wanted:          # nothing blocked for want of items: no entry is useful (nor when nothing is blocked)
            return []
        out = []
        for entry in self.effects.values():
            useful = sorted(set(entry["produced"]) & set(wanted))
            if useful and _owns(inventory, entry["consumed"]):
                out.append({"action": entry["action"], "args": entry["args"], "for": wanted[useful[0]],
                            "produces": {i: entry["produced"][i] for i in useful}, "skill": entry["skill"]})
        return out


@lru_cache(maxsize=4096)
def _unused_mode(items: tuple[str, ...]) -> str:
    """The mode of an unused-output warning for an output of ``items``: blocked repetition when one
    is a facility or does not stack."""
    rules = vanilla()
    return "repetition_blocked" if any(i in FACILITIES or rules.stack_size(i) == 1 for i in items) else "quantity_check"


def _owns(inventory: Mapping[str, int], items: Mapping[str, int]) -> bool:
    """Whether ``inventory`` holds at least ``items``."""
    for item, n in items.items():
        if inventory.get(item, 0) < n:
            return False
    return True


def _units(result: Mapping[str, Any]) -> int:
    """How many transitions one result reports (blocks mined, mobs killed, items processed)."""
    for key in ("mined", "killed"):
        if key in result:
            return sum(result[key].values())
    return int(result.get("args", {}).get("count", 1))
