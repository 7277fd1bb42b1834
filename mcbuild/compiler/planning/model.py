"""The transition model of semantic-action planning (an AND-OR graph with quantities).

A ``TransitionModel`` lists every step a body can take — mine a block, craft a recipe, cook an
input at a station, attack a mob, place a station, enchant — with consumed inputs, required
tools/stations and expected outputs. ``model_from_rulebook`` derives it from a rulebook (so the
same code gives vanilla routes and Mirror routes); scripted agents derive it from the vanilla
catalog and revise it from what they observe. Unit costs are a fixpoint over the graph;
``mcbuild.compiler.planning.search.plan`` turns them into action sequences.
"""

from __future__ import annotations

import copy
import dataclasses
import heapq
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat
from operator import add
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Mapping, NamedTuple

from mcbuild.compiler.core.memo import LRU
from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.rules.cooking import cooked_outputs
from mcbuild.compiler.rules.crafting import CRAFTING_TYPES, SHAPED, craft_station, grid_size, shaped_matrix
from mcbuild.compiler.rules.loot import LootContext, expected
from mcbuild.compiler.rules.rulebook import STATION_RECIPE_TYPES

if TYPE_CHECKING:
    from mcbuild.compiler.rules.rulebook import Rulebook

ENCHANTED = "#enchanted"
PLACED = "placed:"
REQUIREMENT_WEIGHT = 1.0
BATCH = {"mine": 4, "smelt": 6, "attack": 4, "craft_grid": 1, "place": 1, "enchant": 1}
INF = float("inf")


@dataclass
class Step:
    key: str                                    # unique, e.g. "smelt:minecraft:raw_iron@furnace"
    skill: str                                  # mine | craft_grid | smelt | attack | place | enchant
    rule_key: str                               # the transition it exercises (same as mcbuild.compiler.mirror.resolve.ChangedTransition.key())
    args: dict
    inputs: tuple[tuple[frozenset[str], int], ...] = ()
    requires: tuple[frozenset[str], ...] = ()
    outputs: dict[str, float] = field(default_factory=dict)
    batch: int = 1
    extra_actions: int = 0                      # e.g. a placement before mining a placed block
    pattern: tuple[tuple[frozenset[str] | None, ...], ...] | None = None  # craft grid template
    bias: float = 0.0                           # tie-breaker, e.g. prefer resources listed first

    @cached_property
    def requirement_costs(self) -> tuple[tuple[tuple[str, ...], tuple[int, ...]], ...]:
        """Each requirement as (the items whose unit cost counts, the actions added to each): a
        placed station counts as its item plus one placement."""
        return tuple((tuple(i.removeprefix(PLACED) for i in req), tuple(int(i.startswith(PLACED)) for i in req))
                     for req in self.requires)


@dataclass(frozen=True)
class PlannedAction:
    skill: str
    args: dict
    step_key: str


class TransitionModel:
    """Steps plus fuels. Copies share their unchanged steps and bounded tables of computed costs
    and plans keyed by the edits made since the original model, so an agent that hides, restores
    or revises steps recomputes only for a combination of edits (and a planning state) no copy has
    met before."""

    CACHE_SIZE = 512
    PLANS_KEPT = 4096

    def __init__(self, steps: Iterable[Step], fuels: Mapping[str, int], fuel_per_item: int):
        self.steps: dict[str, Step] = {s.key: s for s in steps}
        self.fuels = dict(fuels)
        self.fuel_per_item = fuel_per_item
        self._origin: dict[str, Step] = dict(self.steps)            # the steps as built
        self._edits: dict[str, tuple | str] = {}                    # step key -> what differs from origin
        self._hidden: frozenset[str] = frozenset()                  # steps left out of planning
        self._edits_key: frozenset | None = frozenset()             # frozenset(_edits.items()), kept
        self.revision = 0                                           # counts the edits ever made
        self._shared: LRU[tuple[dict, dict, tuple]] = LRU(self.CACHE_SIZE)
        self._plans: LRU[list[PlannedAction] | None] = LRU(self.PLANS_KEPT)
        self._solved: tuple[dict, dict, tuple] | None = None
        self._wired: list[Wiring] = []                             # the origin's wiring, made once, shared

    def copy(self) -> "TransitionModel":
        """An independent model: edits to it leave this one unchanged."""
        other = copy.copy(self)                 # shares the origin steps and the cost and plan tables
        other.steps, other._edits = dict(self.steps), dict(self._edits)
        return other

    def observe(self, step_key: str, outputs: Mapping[str, float]) -> None:
        """Replace a step's expected outputs with what was actually observed."""
        outputs = {ns(i) if not i.startswith(("#", PLACED)) else i: float(n) for i, n in outputs.items() if n > 0}
        self._set(dataclasses.replace(self.steps[step_key], outputs=outputs))

    def add(self, step: Step) -> None:
        self._set(step)

    def hide(self, keys: Iterable[str]) -> None:
        """Plan without these steps (they keep their outputs) until the next call; ``hide(())``
        restores them all."""
        hidden = frozenset(keys)                # the same object when given a frozenset
        if hidden is not self._hidden and hidden != self._hidden:
            self._hidden, self._solved = hidden, None

    def active(self) -> list[Step]:
        """The steps planning may use."""
        return [s for k, s in self.steps.items() if k not in self._hidden] if self._hidden else list(self.steps.values())

    def _set(self, step: Step) -> None:
        self.steps[step.key] = step
        origin = self._origin.get(step.key)
        if origin == step:
            self._edits.pop(step.key, None)
        elif origin is not None and dataclasses.replace(origin, outputs=step.outputs) == step:
            self._edits[step.key] = tuple(sorted(step.outputs.items()))
        else:
            self._edits[step.key] = repr(step)
        self._solved, self._edits_key = None, None
        self.revision += 1

    def producers(self) -> dict[str, list[Step]]:
        return self._solve()[1]

    def _solve(self, held: frozenset[str] = frozenset()) -> tuple[dict[str, float], dict[str, list[Step]], tuple]:
        """(costs, producers, the key of the current edits) for the steps planning may use. Planning
        from an inventory that holds (``held``) items no step can make, those are costed as free."""
        if self._solved is None:
            if self._edits_key is None:
                self._edits_key = frozenset(self._edits.items())
            key = (self._edits_key, self._hidden)
            self._solved = self._shared.get_or_make(key, lambda: self._solution(key))
        free = frozenset(i for i in held if i not in self._solved[0])
        if not free:
            return self._solved
        key = self._solved[2]
        return self._shared.get_or_make(key + (free,), lambda: self._solution(key, free))

    def _solution(self, key: tuple, free: frozenset[str] = frozenset()) -> tuple[dict[str, float], dict[str, list[Step]], tuple]:
        steps = self.active()
        producers: dict[str, list[Step]] = defaultdict(list)
        for step in steps:
            for item, n in step.outputs.items():
                if n > 0:
                    producers[item].append(step)
        return self._fixpoint(free), dict(producers), key

    def _wiring(self) -> "Wiring":
        """The wiring of every step planning may use (hidden ones included; the fixpoint skips them):
        the origin's, made once and shared by the copies, plus that of the steps added since (they
        come after the origin's in ``steps``). Edits of outputs leave it unchanged; a step of the
        origin rebuilt with other inputs or requirements gets all of it wired anew."""
        origin = self._origin
        if any(k in origin and isinstance(v, str) for k, v in self._edits.items()):
            return _wire(self.steps.values())
        if not self._wired:
            self._wired.append(_wire(origin.values()))
        wired = self._wired[0]
        if len(self.steps) == len(origin):
            return wired
        added = _wire(s for k, s in self.steps.items() if k not in origin)
        users = dict(wired.users)
        for item, keys in added.users.items():
            users[item] = users.get(item, ()) + keys
        return Wiring(users, wired.smelts + added.smelts, tuple(sorted(wired.sources + added.sources)))

    # ------------------------------------------------------------------ unit costs
    def costs(self) -> dict[str, float]:
        """Least unit cost of every reachable item (absent: unreachable)."""
        return self._solve()[0]

    def fuel_unit_cost(self, cost: Mapping[str, float] | None = None) -> float:
        """Least cost of one tick of burning (INF when no fuel is reachable), by ``cost`` if given."""
        cost = self.costs() if cost is None else cost
        return min((cost.get(f, INF) / t for f, t in self.fuels.items() if t > 0), default=INF)

    def _fixpoint(self, free: frozenset[str] = frozenset()) -> dict[str, float]:
        """Least unit cost of every item: label-correcting relaxation that settles cheap items first
        (a heap of improved items), so each step is re-evaluated only when an input got cheaper.
        The ``free`` items start at cost 0 (held, though no step makes them)."""
        steps, hidden = self.steps, self._hidden
        users, smelts, sources = self._wiring()
        cost: dict[str, float] = dict.fromkeys(free, 0.0)
        fuel_cost = INF
        heap: list[tuple[float, str]] = [(0.0, item) for item in sorted(free)]

        def relax(keys: Iterable[str]) -> None:
            for key in keys:
                if key in hidden:
                    continue
                step = steps[key]
                c = self.exec_cost(step, cost, fuel_cost)
                if c == INF:
                    continue
                for item, n in step.outputs.items():
                    if n > 0 and c / n < cost.get(item, INF) - 1e-9:
                        cost[item] = c / n
                        heapq.heappush(heap, (cost[item], item))

        relax(sources)
        while heap:
            c, item = heapq.heappop(heap)
            if c > cost[item]:
                continue                      # a stale entry: the item got cheaper since
            cheaper_fuel = item in self.fuels and c / self.fuels[item] < fuel_cost
            if cheaper_fuel:
                fuel_cost = c / self.fuels[item]
            relax(users.get(item, ()))
            if cheaper_fuel:
                relax(smelts)
        return cost

    def exec_cost(self, step: Step, cost: Mapping[str, float], fuel_cost: float, st: "PlanState | None" = None) -> float:
        """Unit cost of running ``step`` once. Given a planning state, a requirement it already
        meets (a held tool, a placed station) costs nothing and a held station its placement.
        An unreachable input or requirement makes it INF at once (costs are never negative, so
        nothing added later could change that)."""
        get = cost.get
        c = (1 + step.extra_actions) / step.batch + step.bias
        for items, q in step.inputs:
            c += min(map(get, items, repeat(INF))) * q
        if c == INF:
            return INF
        for req, (names, extra) in zip(step.requires, step.requirement_costs):
            if st is not None:
                if st.placed & req or any(st.inv.get(i, 0.0) >= 1 for i in req):
                    continue
                if any(i.startswith(PLACED) and st.inv.get(i[len(PLACED):], 0.0) >= 1 for i in req):
                    c += 1
                    continue
            c += min(map(add, map(get, names, repeat(INF)), extra)) * REQUIREMENT_WEIGHT
            if c == INF:
                return INF
        if step.skill == "smelt":
            c += fuel_cost * self.fuel_per_item
        return c


class Wiring(NamedTuple):
    """Which steps the fixpoint re-evaluates, by key in the order of ``TransitionModel.steps``."""

    users: dict[str, tuple[str, ...]]       # item -> the steps that consume or require it
    smelts: tuple[str, ...]                 # woken when fuel gets cheaper
    sources: tuple[str, ...]                # the steps that need nothing, sorted by key


def _wire(steps: Iterable[Step]) -> Wiring:
    users: dict[str, list[str]] = defaultdict(list)
    smelts, sources = [], []
    for step in steps:
        needed = {i for items, _ in step.inputs for i in items} | {i.removeprefix(PLACED) for r in step.requires for i in r}
        for item in needed:
            users[item].append(step.key)
        if step.skill == "smelt":
            smelts.append(step.key)
        if not step.inputs and not step.requires:
            sources.append(step.key)
    return Wiring({item: tuple(keys) for item, keys in users.items()}, tuple(smelts), tuple(sorted(sources)))


def steps_by_rule(model: TransitionModel) -> dict[str, list[Step]]:
    """The model's steps indexed by the transition (rule key) they exercise."""
    index: dict[str, list[Step]] = defaultdict(list)
    for step in model.steps.values():
        index[step.rule_key].append(step)
    return index


# ---------------------------------------------------------------------- planning
@dataclass
class PlanState:
    inv: dict[str, float]
    placed: set[str]
    actions: list[PlannedAction]

    def have(self, items: frozenset[str]) -> float:
        return sum(self.inv.get(i, 0.0) for i in items)

    def snapshot(self) -> "PlanState":
        return PlanState(dict(self.inv), set(self.placed), list(self.actions))


# ---------------------------------------------------------------------- model building
def _grid_inputs(pattern: tuple[tuple[frozenset[str] | None, ...], ...]) -> tuple[tuple[frozenset[str], int], ...]:
    """The items a grid template consumes: each ingredient with the number of cells it fills."""
    counts: dict[frozenset[str], int] = defaultdict(int)
    for row in pattern:
        for cell in row:
            if cell is not None:
                counts[cell] += 1
    return tuple(sorted(counts.items(), key=lambda kv: sorted(kv[0])))


def harvest_requirement(rb: "Rulebook", block: str) -> frozenset[str] | None:
    """Tools that let ``block`` drop anything (None: any tool or the hand)."""
    tools = rb.harvest_tools(block)
    return None if tools is None else frozenset(tools)


Deferred = Callable[[], "dict[str, float] | None"]      # outputs computed once a step is reached


def craft_outputs(recipe: Mapping) -> dict[str, float]:
    """What one craft of a crafting recipe yields."""
    res = recipe["result"]
    return {ns(res["item"]): float(res.get("count", 1))}


def drop_outputs(rb: "Rulebook", table: dict, *, killed_by_player: bool = False) -> dict[str, float]:
    """The mean drops of a loot table as the body meets it (no enchantment; a mob killed by the player)."""
    ctx = LootContext(killed_by_player=True) if killed_by_player else LootContext()
    return {i: d.mean for i, d in expected(rb, table, ctx).items() if d.mean > 0}


def transition_outputs(rb: "Rulebook", skill: str, target: str, station: str | None = None) -> dict[str, float]:
    """What one transition yields under ``rb`` (means for random drops), named as a changed transition
    names it: a crafting recipe, an input cooked at a station, a block mined or a mob attacked. Empty
    when ``rb`` has no such transition (no recipe, no loot table)."""
    if skill == "craft_grid":
        recipe = rb.recipes.get(ns(target))
        return craft_outputs(recipe) if recipe and recipe.get("type") in CRAFTING_TYPES else {}
    if skill == "smelt":
        found = rb.cooking_recipe(target, station or "furnace")
        return cooked_outputs(rb, ns(found[1]["result"])) if found else {}
    table = rb.block_loot(target) if skill == "mine" else rb.entity_loot(target) if skill == "attack" else None
    return drop_outputs(rb, table, killed_by_player=skill == "attack") if table else {}


def _crafting_candidates(rb: "Rulebook") -> Iterator[tuple[Step, None]]:
    for rid, recipe in sorted(rb.recipes.items()):
        rtype = recipe.get("type", "")
        if rtype not in CRAFTING_TYPES:
            continue
        station = craft_station(rb, recipe)
        if rtype == SHAPED:
            pattern = tuple(tuple(row) for row in shaped_matrix(rb, recipe))
        else:
            ings = [rb.ingredient(i) for i in recipe["ingredients"]]
            width = grid_size(station)
            pattern = tuple(tuple(ings[i: i + width]) for i in range(0, len(ings), width))
        yield (Step(f"craft_grid:{rid}", "craft_grid", f"craft_grid:{rid}", {"station": station},
                    _grid_inputs(pattern),
                    () if station == "inventory" else (frozenset({PLACED + "minecraft:crafting_table"}),),
                    craft_outputs(recipe), 1, 0, pattern), None)


def _cooking_candidates(rb: "Rulebook") -> Iterator[tuple[Step, Deferred]]:
    cooked: dict[str, dict[str, float]] = {}

    def outputs(result: str) -> Deferred:
        return lambda: dict(cooked[result] if result in cooked else cooked.setdefault(result, cooked_outputs(rb, result)))

    found: dict[str, tuple[Step, Deferred]] = {}         # one step per input and station: the last recipe by id
    for station, rtype in STATION_RECIPE_TYPES.items():
        for recipe in rb.recipes_of_type(rtype).values():
            for item in sorted(rb.ingredient(recipe["ingredient"])):
                key = f"smelt:{item}@{station}"
                found[key] = (Step(key, "smelt", key, {"input": item, "station": station}, ((frozenset({item}), 1),),
                                   (frozenset({PLACED + "minecraft:" + station}),), {}, BATCH["smelt"]),
                              outputs(ns(recipe["result"])))
    return iter(found.values())


def _mining_candidates(rb: "Rulebook", world_blocks: Iterable[str]) -> Iterator[tuple[Step, Deferred]]:
    """Mining a world block, or a block item placed first (only when it drops something else)."""
    order = {b: i for i, b in enumerate(dict.fromkeys(ns(b) for b in world_blocks))}

    def drops(block: str, table: dict) -> Deferred:
        def made() -> dict[str, float] | None:
            out = drop_outputs(rb, table)
            return None if not out or (block not in order and out == {block: 1.0}) else out
        return made

    for block in sorted(set(order) | (set(rb.catalog.blocks) & set(rb.catalog.items))):
        table = rb.block_loot(block)
        if table is None:
            continue
        req = harvest_requirement(rb, block)
        if block in order:
            yield (Step(f"mine:{block}", "mine", f"mine:{block}", {"block": block}, (),
                        (req,) if req else (), {}, BATCH["mine"], bias=1e-4 * order[block]), drops(block, table))
        else:
            yield (Step(f"place_mine:{block}", "mine", f"mine:{block}", {"block": block},
                        ((frozenset({block}), 1),), (req,) if req else (), {}, 1, 1), drops(block, table))


def _reachable(candidates: list[tuple[Step, Deferred | None]]) -> list[Step]:
    """The steps the world's resources reach, in the order given (worklist over an index from each
    item to the steps that need it). A deferred step gets its outputs only once reached, so the
    loot and cooking of what no route reaches are never computed; it is left out given none."""
    waiting: dict[str, list[tuple[int, int]]] = defaultdict(list)
    unmet: list[int] = []
    for i, (step, _) in enumerate(candidates):
        groups = [items for items, _ in step.inputs] + [frozenset(r.removeprefix(PLACED) for r in req)
                                                         for req in step.requires]
        unmet.append(len(groups))
        for g, items in enumerate(groups):
            for item in items:
                waiting[item].append((i, g))
    met: set[tuple[int, int]] = set()
    have: set[str] = set()
    reached: dict[int, Step] = {}
    queue = [i for i, n in enumerate(unmet) if n == 0]
    while queue:
        i = queue.pop()
        step, deferred = candidates[i]
        if deferred is not None:
            outputs = deferred()
            if not outputs:
                continue
            step = dataclasses.replace(step, outputs=outputs)
        reached[i] = step
        for item in step.outputs.keys() - have:
            have.add(item)
            for need in waiting.get(item, ()):
                if need not in met:
                    met.add(need)
                    unmet[need[0]] -= 1
                    if not unmet[need[0]]:
                        queue.append(need[0])
    return [reached[i] for i in sorted(reached)]


def model_from_rulebook(rb: "Rulebook", world_blocks: Iterable[str], world_entities: Iterable[str]) -> TransitionModel:
    """The steps the 13 skills can take from ``world_blocks`` and ``world_entities`` under ``rb``.
    Only crafting and furnace/blast-furnace/smoker recipes have a skill: crafting_special_*,
    campfire_cooking, stonecutting and smithing recipes get no step, so no route uses them."""
    world_blocks = list(world_blocks)
    candidates: list[tuple[Step, Deferred | None]] = [
        *_crafting_candidates(rb), *_cooking_candidates(rb), *_mining_candidates(rb, world_blocks)]
    for entity in sorted(ns(e) for e in world_entities):
        table = rb.entity_loot(entity)
        if table is None:
            continue
        drops = drop_outputs(rb, table, killed_by_player=True)
        candidates.append((Step(f"attack:{entity}", "attack", f"attack:{entity}", {"target": entity}, (), (), drops,
                                BATCH["attack"]), None))
    enchantable = frozenset(rb.enchantable_items())
    ench = rb.facts["enchanting"]
    lowest = min(ench["options"], key=lambda o: o["option"])
    candidates.append((Step("enchant", "enchant", "enchant", {"candidates": sorted(enchantable)},
                            ((frozenset({ns(ench["lapis_item"])}), int(lowest["lapis_cost"])),),
                            (frozenset({PLACED + "minecraft:enchanting_table"}), enchantable), {ENCHANTED: 1.0}, 1),
                       None))
    steps = _reachable(candidates)
    items = set().union(*(set(s.outputs) for s in steps), map(ns, world_blocks))
    # Tools and stations are never burnt, even where the game would accept them as fuel.
    kept = {i.removeprefix(PLACED) for s, _ in candidates for req in s.requires for i in req}
    fuels = {i: rb.is_fuel(i) for i in sorted(items - kept) if not i.startswith("#") and rb.is_fuel(i)}
    return TransitionModel(steps, fuels, int(rb.facts["cooking_ticks"]["furnace"]))


def milestone_goal(rb: "Rulebook", advancement: str) -> frozenset[str]:
    """The item set whose acquisition completes ``advancement`` (any criterion of its groups)."""
    adv = rb.advancements[ns(advancement)]
    items: set[str] = set()
    for crit in adv["criteria"].values():
        trigger = ns(crit["trigger"])
        if trigger == "minecraft:enchanted_item":
            items.add(ENCHANTED)
        elif trigger == "minecraft:inventory_changed":
            for pred in crit.get("conditions", {}).get("items", []):
                items |= {ns(i) for i in pred.get("items", [])}
                if "tag" in pred:
                    items |= rb.tag("item", pred["tag"])
    return frozenset(items)
