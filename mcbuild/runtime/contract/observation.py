"""Observations of the paper's agents (Appendix L.8), built the same way for every backend.

An :class:`ObservationTracker` receives the backend's :class:`~mcbuild.runtime.contract.backend.Snapshot` and
every action result, and builds one dict per turn with these fields: task route,
next milestone, budget, inventory, equipment, experience, capabilities, facilities, nearby
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
from typing import Any, Callable, Mapping

from mcbuild.compiler.core.canonical import compact
from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.rules.crafting import craft_station, example_grid, fill_pattern, grid_size
from mcbuild.compiler.rules.pack import MINECRAFT_VERSION
from mcbuild.compiler.rules.rulebook import STATION_RECIPE_TYPES, vanilla
from mcbuild.compiler.rules.tasks import Task
from mcbuild.runtime.contract.backend import Snapshot
from mcbuild.runtime.contract.skills import CRAFTING_TABLE, ENCHANTING_TABLE, FACILITIES, describe
from mcbuild.runtime.records import semantic_signature

EFFECTS_KEPT = 16           # verified action effects retained (most recent distinct signatures)
HYPOTHESES_KEPT = 24        # recipe hypotheses shown
CYCLE_WINDOW = 6            # recent actions examined for failure / stagnation cycles
UNUSED_KEPT = 3
TRANSFORMING = ("craft_grid", "smelt")
_FACILITIES_SORTED = tuple(sorted(FACILITIES))


def serialize(observation: Mapping[str, Any]) -> str:
    """Canonical one-line JSON of an observation (byte-identical for identical observations)."""
    return compact(observation)


_SCALARS = frozenset({str, int, float, bool, type(None)})
_STR = frozenset({str})


def plain(value: Any) -> Any:
    """A copy of JSON-able data in the observation's form: objects with sorted string keys, arrays
    for lists and tuples (what ``serialize`` writes, read back)."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if isinstance(value, dict):
        if {*map(type, value)} <= _STR:     # the usual case: sorting by the (distinct) keys alone
            return {k: v if type(v) in _SCALARS else plain(v) for k, v in sorted(value.items())}
        return {k: plain(v) for k, v in sorted((str(k), v) for k, v in value.items())}
    if isinstance(value, (list, tuple)):
        return [v if type(v) in _SCALARS else plain(v) for v in value]
    return value


@dataclass
class _Turn:
    action: dict[str, Any]               # the tracker's own plain copies (see :func:`plain`)
    result: dict[str, Any]
    changed: bool                        # inventory, equipment, score or position changed

    @cached_property
    def text(self) -> str:
        """``describe(action)``."""
        return describe(self.action)


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
    _memo: dict[str, tuple[Any, Any]] = field(default_factory=dict, repr=False)   # part -> (key, value)
    _version: int = 0                    # of ``effects``
    _transforms_version: int = 0         # of its crafting and smelting entries (see :meth:`_transforms`)

    def _kept(self, part: str, key: Any, make: Callable[[], Any]) -> Any:
        """The value of ``part`` for ``key``: the kept one while ``key`` is unchanged, else ``make()``."""
        known = self._memo.get(part)
        if known is not None and known[0] == key:
            return known[1]
        value = make()
        self._memo[part] = (key, value)
        return value

    @cached_property
    def _milestone_keys(self) -> frozenset[str]:
        return frozenset(m.key for m in self.task.milestones)

    # ------------------------------------------------------------------ history
    def record(self, action: Mapping[str, Any], result: Mapping[str, Any], before: Snapshot, after: Snapshot,
               signature: str | None = None) -> None:
        """Note one turn; ``signature`` is the action's semantic signature when the caller has it."""
        changed = (before.inventory != after.inventory or before.mainhand != after.mainhand
                   or before.position != after.position or self.score(before) != self.score(after))
        turn = _Turn(plain(action), plain(result), changed)
        self.turns.append(turn)
        if result.get("ok") and (result.get("gained") or result.get("lost")):
            self._verify(turn, signature)

    def _verify(self, turn: _Turn, sig: str | None) -> None:
        if sig is None:
            sig = semantic_signature(turn.action.get("skill", ""), turn.action.get("args"))
        # the first action of a signature names it; a new entry each time, in the observation's key
        # order (observations already handed out keep theirs)
        old = self.effects.pop(sig, None) or {"action": turn.text, "args": turn.action.get("args", {}),
                                              "skill": turn.action.get("skill"), "times": 0}
        self.effects[sig] = {
            "action": old["action"], "args": old["args"], "consumed": turn.result.get("lost", {}),
            "produced": turn.result.get("gained", {}), "signature": sig, "skill": old["skill"],
            "times": old["times"] + 1, "units": _units(turn.result)}
        transforms = old["skill"] in TRANSFORMING
        while len(self.effects) > EFFECTS_KEPT:
            transforms |= self.effects.pop(next(iter(self.effects)))["skill"] in TRANSFORMING
        self._version += 1
        self._transforms_version += transforms

    # ------------------------------------------------------------------ progress
    def completed(self, snap: Snapshot) -> list[str]:
        """The vanilla advancements done, without the recipe-unlock ones (``<ns>:recipes/...``: the
        server bridge never reports them either)."""
        return list(self._kept("completed", snap.advancements,
                               lambda: sorted(_reported_advancements().intersection(snap.advancements))))

    def score(self, snap: Snapshot) -> int:
        reached = self._reached(snap)
        return self._kept("score", reached, lambda: self.task.score(reached))

    def _reached(self, snap: Snapshot) -> frozenset[str]:
        """The keys of the task's milestones completed in ``snap`` (what the score and the progress
        read of it), memoized for the last snapshot's advancements."""
        known = self._memo.get("reached")
        if known is None or known[0][0] != snap.advancements or known[0][1] != self.met:
            keys = self._milestone_keys
            known = ((snap.advancements, self.met), keys.intersection(snap.advancements) | (keys & self.met))
            self._memo["reached"] = known
        return known[1]

    def done(self, snap: Snapshot) -> set[str]:
        """The keys of the completed milestones: advancements and checked milestones met."""
        return set(snap.advancements) | self.met

    # ------------------------------------------------------------------ the observation
    def build(self, snap: Snapshot) -> dict[str, Any]:
        """The observation of ``snap``: plain JSON values with sorted keys (what ``serialize``
        writes, read back); read-only, as some parts are shared with later observations."""
        nearby = snap.nearby_blocks
        observed = {b: nearby[b] for b in _FACILITIES_SORTED if b in nearby}
        items = tuple(sorted(snap.inventory.items()))
        stock = (items, tuple(observed))
        inventory = dict(items)
        used = len(self.turns)
        task, next_milestone, progress = self._kept("progress", self._reached(snap), lambda: self._progress(snap))
        blocked = self._blocked()
        return {
            "actionable_verified_transformations": self._actionable(inventory, blocked),
            "biome": snap.biome,
            "blocked_actions": blocked,
            "budget": {"remaining": max(self.budget - used, 0), "total": self.budget, "used": used},
            "capabilities": _capabilities(tuple(i for i, n in items if n > 0 and i in _tool_items()), tuple(observed)),
            "completed_advancements": self.completed(snap),
            "equipped": {"mainhand": snap.mainhand},
            "experience": {"level": snap.xp_level},
            "facilities": {"observed": observed,
                           "owned_unplaced": {f: n for f, n in items if f in FACILITIES}},
            "failure_cycle": self._failure_cycle(),
            "inventory": inventory,
            "latest_result": self.turns[-1].result if self.turns else None,
            "minecraft_version": MINECRAFT_VERSION,
            "nearby_drops": dict(sorted(snap.nearby_drops.items())),
            "nearby_entities": {e: {"count": c, "nearest_distance": d} for e, (c, d) in sorted(snap.nearby_entities.items())},
            "nearby_targets": dict(sorted(snap.nearby_blocks.items())),
            "next_milestone": next_milestone,
            "position": {"x": snap.position[0], "y": snap.position[1], "z": snap.position[2]},
            "progress": progress,
            "stagnation_cycle": self._stagnation_cycle(),
            "stagnation_warning": self._repeated_failure(),
            "survival": {"alive": snap.alive, "effects": dict(sorted(snap.effects.items())), "food": snap.food,
                         "health": snap.health},
            "task": task,
            "unused_output_warnings": self._kept("unused", (items, self._transforms_version),
                                                 lambda: self._unused(inventory)),
            "vanilla_recipe_hypotheses": self._kept("hypotheses", stock, lambda: recipe_hypotheses(inventory, observed)),
            "verified_action_effects": self._kept("effects", self._version, lambda: list(self.effects.values())),
        }

    def _progress(self, snap: Snapshot) -> tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any]]:
        """The task with its route, the next milestone and the progress of the milestones ``snap`` completed."""
        done = self.done(snap)
        route: list[dict[str, Any]] = [{"advancement": m.advancement, "code": m.code, "completed": m.key in done, "value": m.value}
                 | ({} if m.advancement else {"description": m.description}) for m in self.task.milestones]
        pending = [r for r in route if not r["completed"]]
        reached = [r for r in route if r["completed"]]
        task = {"goal": self.task.final.key, "id": self.task.id, "route": [dict(sorted(r.items())) for r in route],
                "title": self.task.title} | ({"instruction": self.task.instruction} if self.task.checked else {})
        return (dict(sorted(task.items())),
                {k: pending[0][k] for k in ("advancement", "code", "value")} if pending else None,
                {"highest_completed": max(reached, key=lambda r: r["value"])["code"] if reached else None,
                 "score": self.score(snap)})


    # ------------------------------------------------------------------ feedback fields
    def _since_change(self) -> list[_Turn]:
        """Turns after the last one that changed inventory, equipment, score or position."""
        out: list[_Turn] = []
        for turn in reversed(self.turns):
            if turn.changed:
                break
            out.append(turn)
        return out[::-1]

    def _blocked(self) -> list[dict[str, Any]]:
        seen: dict[str, dict[str, Any]] = {}
        for turn in self._since_change():
            if not turn.result.get("ok"):
                seen[turn.text] = {"action": turn.action, "reason": turn.result.get("reason"),
                                               "requires": prerequisite(turn.action, turn.result)}
        return list(seen.values())

    def _repeated_failure(self) -> dict[str, Any] | None:
        if not self.turns or self.turns[-1].result.get("ok"):
            return None
        last = self.turns[-1].text
        count = 0
        for turn in reversed(self.turns):
            if turn.result.get("ok") or turn.text != last:
                break
            count += 1
        return {"forbidden_action": self.turns[-1].action, "repeat_count": count} if count >= 2 else None

    def _failure_cycle(self) -> list[dict[str, Any]] | None:
        recent = self.turns[-CYCLE_WINDOW:]
        if len(recent) < 4 or any(t.result.get("ok") for t in recent):
            return None
        keys = [t.text for t in recent]
        for period in (2, 3):
            if len(keys) >= 2 * period and keys[-2 * period:-period] == keys[-period:] \
                    and len(set(keys[-period:])) == period:
                return [t.action for t in recent[-period:]]
        return None

    def _stagnation_cycle(self) -> list[dict[str, Any]] | None:
        recent = [t for t in self.turns[-CYCLE_WINDOW:] if t.result.get("ok") and not t.changed]
        if len(recent) < 2:
            return None
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

    def _unused(self, inventory: Mapping[str, int]) -> list[dict[str, Any]]:
        out = []
        for action, produced, mode in self._kept("transforms", self._transforms_version, self._transforms):
            if _owns(inventory, produced):
                out.append({"action": action, "mode": mode, "output": produced})
                if len(out) == UNUSED_KEPT:
                    break
        return out

    def _transforms(self) -> list[tuple[str, dict[str, int], str]]:
        """The verified effects that produced items by crafting or smelting, latest first: (action
        text, output, the mode of its unused-output warning)."""
        return [(entry["action"], entry["produced"], _unused_mode(tuple(entry["produced"])))
                for entry in reversed(list(self.effects.values()))
                if entry["skill"] in TRANSFORMING and entry["produced"]]

    def _actionable(self, inventory: Mapping[str, int], blocked_actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        wanted: dict[str, str] = {}
        for blocked in blocked_actions:
            for item in blocked["requires"].get("items", {}):
                wanted.setdefault(item, describe(blocked["action"]))
        if not wanted:          # nothing blocked for want of items: no entry is useful
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


# ---------------------------------------------------------------------------- static knowledge
def prerequisite(action: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """What a failed action lacked, in the body's static (vanilla) terms."""
    reason = result.get("reason")
    args = action.get("args", {})
    if result.get("missing"):
        return {"items": dict(result["missing"])}
    if reason == "needs_tool" and isinstance(args.get("block"), str):
        tools = vanilla().harvest_tools(ns(args["block"]))
        return {"any_tool_of": sorted(tools)} if tools else {}
    if reason == "needs_table":
        return {"placed": ENCHANTING_TABLE if action.get("skill") == "enchant" else CRAFTING_TABLE}
    if reason == "needs_station":
        return {"placed": ns(args["station"])}          # validated actions carry their station
    if reason == "no_fuel":
        return {"fuel": "any owned fuel item"}
    return {}


def capabilities(inventory: Mapping[str, int], observed: Mapping[str, float]) -> dict[str, Any]:
    """Best owned tool per kind, harvest tier, and the stations currently usable."""
    tiers = vanilla().facts["tool_tiers"]
    best: dict[str, tuple[int, str]] = {}
    for tier in tiers.values():
        for kind, item in tier["tools"].items():
            if inventory.get(item, 0) > 0 and (kind not in best or int(tier["level"]) > best[kind][0]):
                best[kind] = (int(tier["level"]), item)
    return {
        "tools": {kind: item for kind, (_, item) in sorted(best.items())},
        "harvest_level": best["pickaxe"][0] if "pickaxe" in best else None,
        "crafting": ["inventory"] + (["crafting_table"] if CRAFTING_TABLE in observed else []),
        "smelting": sorted(s for s in STATION_RECIPE_TYPES if ns(s) in observed),
        "enchanting": ENCHANTING_TABLE in observed,
    }


@lru_cache(maxsize=1)
def _tool_items() -> frozenset[str]:
    """Every tool of ``game_facts`` tool tiers (what :func:`capabilities` reads of an inventory)."""
    return frozenset(item for tier in vanilla().facts["tool_tiers"].values() for item in tier["tools"].values())


@lru_cache(maxsize=1024)
def _capabilities(tools: tuple[str, ...], observed: tuple[str, ...]) -> dict[str, Any]:
    """:func:`capabilities` of an inventory owning ``tools`` with the facilities ``observed``, as
    plain data shared by the observations that show it (read-only)."""
    return plain(capabilities(dict.fromkeys(tools, 1), dict.fromkeys(observed, 0.0)))


@dataclass(frozen=True)
class _Recipe:
    """A vanilla recipe as the hypotheses show it: its station and the items each cell accepts."""

    rid: str
    output: str
    count: int
    station: str
    accepted: frozenset[str]                                   # every item any cell accepts
    cells: tuple[tuple[frozenset[str] | None, ...], ...] = ()  # crafting grid (top-left aligned)


@lru_cache(maxsize=1)
def _reported_advancements() -> frozenset[str]:
    """The vanilla advancements an agent is told about: all but the recipe-unlock ones."""
    return frozenset(a for a in vanilla().advancements if not a.partition(":")[2].startswith("recipes/"))


@lru_cache(maxsize=1)
def _recipe_index() -> tuple[_Recipe, ...]:
    rb = vanilla()
    out = []
    stations = {t: s for s, t in STATION_RECIPE_TYPES.items()}
    for rid, recipe in sorted(rb.recipes.items()):
        rtype = ns(recipe.get("type", ""))
        if rtype in stations:
            out.append(_Recipe(rid, ns(recipe["result"]), 1, stations[rtype], rb.ingredient(recipe["ingredient"])))
        elif rtype in ("minecraft:crafting_shaped", "minecraft:crafting_shapeless"):
            station = craft_station(rb, recipe)
            grid = example_grid(rb, recipe, lambda accepted: accepted, grid_size(station))
            if grid is None:
                continue
            cells = tuple(tuple(c or None for c in row) for row in grid)
            out.append(_Recipe(rid, ns(recipe["result"]["item"]), int(recipe["result"].get("count", 1)),
                               station,
                               frozenset().union(*(c for row in cells for c in row if c)), cells))
    return tuple(out)


_STATIONS = (CRAFTING_TABLE, *sorted(ns(s) for s in STATION_RECIPE_TYPES))     # what hypotheses depend on


@lru_cache(maxsize=1)
def _recipes_using() -> dict[str, tuple[int, ...]]:
    """Positions in :func:`_recipe_index` of the recipes each item is accepted by."""
    out: dict[str, list[int]] = {}
    for n, r in enumerate(_recipe_index()):
        for item in r.accepted:
            out.setdefault(item, []).append(n)
    return {item: tuple(positions) for item, positions in out.items()}


def recipe_hypotheses(inventory: Mapping[str, int], observed: Mapping[str, float]) -> list[dict[str, Any]]:
    """Vanilla recipes that use an owned item: grid/station to submit, and whether it is executable now.
    The executable ones come first, then those missing the fewest grid items; at most
    ``HYPOTHESES_KEPT``.

    A pure function of the inventory and of which stations are observed; memoized on exactly those.
    The entries are the memo's own, shared by every observation that shows them: read them, never
    change them (observations are read-only)."""
    stations = tuple(s for s in _STATIONS if s in observed)
    return list(_hypotheses(tuple(sorted(inventory.items())), stations))


@lru_cache(maxsize=4096)
def _hypotheses(items: tuple[tuple[str, int], ...], stations: tuple[str, ...]) -> tuple[dict[str, Any], ...]:
    """:func:`recipe_hypotheses` for a sorted inventory and the observed stations among ``_STATIONS``."""
    inventory = dict(items)
    index = _recipe_index()
    using = _recipes_using()
    held: dict[int, list[tuple[str, int]]] = {}            # recipe -> the owned items it accepts
    for i, count in items:
        if count > 0:
            for n in using.get(i, ()):
                held.setdefault(n, []).append((i, count))
    ranked: list[tuple[bool, int, str, str, int, Any, bool]] = []   # (not executable, items missing, output, recipe id, index position, grid, ready)
    for n in sorted(held):
        r = index[n]
        if r.cells:
            grid, short = _filled(n, tuple(held[n]))
            ready = r.station == "inventory" or CRAFTING_TABLE in stations
            ranked.append((not ready or short > 0, short, r.output, r.rid, n, grid, ready))
        else:
            ready = ns(r.station) in stations
            ranked.append((not ready, 0, r.output, r.rid, n, None, ready))
    # executable first, then the recipes the inventory comes closest to filling
    ranked.sort(key=lambda e: e[:4])
    out = []
    for blocked, _, _, _, n, grid, ready in ranked[:HYPOTHESES_KEPT]:
        r = index[n]
        entry: dict[str, Any] = {"recipe": r.rid, "output": r.output, "count": r.count, "station": r.station}
        if grid is None:
            entry["input"] = min((-inventory.get(i, 0), i) for i in r.accepted if inventory.get(i, 0) > 0)[1]
        else:
            entry["grid"] = grid
        out.append(dict(sorted((entry | {"station_ready": ready, "executable": not blocked}).items())))
    return tuple(out)

@lru_cache(maxsize=16384)
def _filled(n: int, held: tuple[tuple[str, int], ...]) -> tuple[list[list[str | None]], int]:
    """The grid of recipe ``n`` of :func:`_recipe_index` filled from ``held`` (the owned items its
    cells accept), and how many of its items are missing. Memoized apart from the whole inventory:
    most recipes' share of an inventory stays the same from one turn to the next."""
    have = dict(held)
    grid, used = fill_pattern(_recipe_index()[n].cells, have)
    return grid, sum(max(k - have.get(i, 0), 0) for i, k in used.items())
