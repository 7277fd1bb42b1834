"""Episodes: one task in one world under one condition, scored by its milestones.

``Episode(world, condition, task, budget, seed)`` opens ``build/worlds/<world>/<condition>/`` on
the embedded simulator; ``observe()`` gives the agent's observation dict, ``step(action)`` runs
one semantic action and returns its result. Every attempted action costs one unit of budget.
The episode ends at the final milestone, when the budget is exhausted, when the body dies, or when
the agent produces no action (:meth:`Episode.stop`). Score is the value of the deepest completed
milestone (``compiler.rules.tasks``); SR is whether it is 100.

The hidden evaluator and the trajectory (with its evaluator events) live on the episode; the
agent loop :func:`run` hands the agent nothing but observation dicts.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from compiler.core.canonical import compact, plain_copy
from compiler.core.paths import BUILD
from compiler.rules.catalog import load as load_catalog
from compiler.rules.rulebook import Rulebook
from compiler.rules.tasks import Task, tasks
from compiler.worlds.layout import rules_of
from runtime.backends.sim.backend import SimBackend
from runtime.backends.sim.body import BodyConfig
from runtime.backends.sim.episode_terrain import Terrain
from runtime.backends.sim.world import StaticWorld, load_save, save_key
from runtime.contract.backend import Outcome, Snapshot, failure
from runtime.contract.evaluator import Evaluator
from runtime.contract.observation import ObservationTracker
from runtime.contract.skills import ActionError, validate
from runtime.records import EpisodeRecord, build_encounters, semantic_signature

if TYPE_CHECKING:
    from runtime.agents.base import Agent

VANILLA = "vanilla"
SUCCESS, BUDGET, DEATH, NO_ACTION = "final_milestone", "budget_exhausted", "death", "no_action"


class EpisodeOver(RuntimeError):
    pass


# ---------------------------------------------------------------------------- process caches
_WORLDS: dict[str, StaticWorld] = {}
_RULES: dict[Path, Rulebook] = {}
_POOL: dict[int, tuple[StaticWorld, list[Terrain]]] = {}     # id(world) -> (world, released terrains)
WORLD_CACHE_SIZE = 2
POOL_WORLDS = 4


def _world(save: Path, build: Path) -> StaticWorld:
    key = save_key(save)
    if key not in _WORLDS:
        while len(_WORLDS) >= WORLD_CACHE_SIZE:
            _POOL.pop(id(_WORLDS.pop(next(iter(_WORLDS)))), None)
        _WORLDS[key] = load_save(save, build / "cache" / "sim")
    return _WORLDS[key]


def _rules(save: Path) -> Rulebook:
    save = save.resolve()
    if save not in _RULES:
        _RULES[save] = rules_of(save)
    return _RULES[save]


def _terrain(world: StaticWorld) -> Terrain:
    """A terrain of ``world``: one released by a closed episode (reset in O(edits)), or a fresh copy."""
    pooled = _POOL.get(id(world))
    if pooled and pooled[0] is world and pooled[1]:
        return pooled[1].pop()
    return Terrain(world)


def _release(world: StaticWorld, terrain: Terrain) -> None:
    """Keep a closed episode's terrain for the next episode on the same world (a few worlds only)."""
    pooled = _POOL.pop(id(world), None)
    if pooled is None or pooled[0] is not world:
        pooled = (world, [])
    pooled[1].append(terrain)
    _POOL[id(world)] = pooled
    while len(_POOL) > POOL_WORLDS:
        _POOL.pop(next(iter(_POOL)))


# ---------------------------------------------------------------------------- the episode
@dataclass(frozen=True)
class Setup:
    world: str
    condition: str
    task: Task
    budget: int
    seed: int
    biome: str


class Episode:
    def __init__(self, world: str, condition: str, task: str, budget: int | None = None, seed: int = 0, *,
                 build: Path = BUILD, config: BodyConfig = BodyConfig()):
        from compiler.worlds.layout import world_biomes, world_dir

        save, twin = world_dir(world, condition, build), world_dir(world, VANILLA, build)
        if not (save / "level.dat").is_file():
            raise FileNotFoundError(f"no save at {save} (run `mcbuild build worlds`)")
        biome = world_biomes().get(world)
        if biome is None:
            raise ValueError(f"world {world!r} is not in specs/worlds.yaml")
        static = _world(save, build)
        self._open(static, _rules(save), _rules(twin), Setup(world, condition, tasks()[task],
                                                             budget or tasks()[task].budget, seed, biome), config)

    @classmethod
    def from_parts(cls, static: StaticWorld, rules: Rulebook, twin: Rulebook, task: str, budget: int | None = None,
                   seed: int = 0, *, world: str = "synthetic", condition: str = VANILLA, biome: str = "synthetic",
                   config: BodyConfig = BodyConfig()) -> "Episode":
        """An episode on an in-memory world (tests, benchmarks)."""
        episode = cls.__new__(cls)
        episode._open(static, rules, twin, Setup(world, condition, tasks()[task], budget or tasks()[task].budget,
                                                 seed, biome), config)
        return episode

    def _open(self, static: StaticWorld, rules: Rulebook, twin: Rulebook, setup: Setup, config: BodyConfig) -> None:
        self.setup = setup
        self._static = static
        self._catalog = load_catalog()
        self._backend = SimBackend(static, rules, setup.seed, config, _terrain(static))
        self._evaluator = Evaluator(rules, twin)
        self._start()

    def _start(self) -> None:
        self.tracker = ObservationTracker(self.setup.task, self.setup.budget)
        self.trajectory: list[dict[str, Any]] = []
        self.end_reason: str | None = None
        self.success_action: int | None = None
        self._snap = self._backend.snapshot(surroundings=False)
        self._view: Snapshot | None = None
        self._check_end()

    def reset(self, seed: int | None = None) -> None:
        """Start over on the pristine world (same world, rules and task)."""
        if seed is not None:
            self.setup = Setup(**{**self.setup.__dict__, "seed": seed})
        self._backend.reset(self.setup.seed)
        self._evaluator.reset()
        self._start()

    def close(self) -> None:
        """Return the world copy to the pool (the episode cannot be used afterwards)."""
        if self._backend is not None:
            _release(self._static, self._backend.terrain)
            self._backend = None

    def __enter__(self) -> "Episode":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ state
    @property
    def used(self) -> int:
        return len(self.trajectory)

    @property
    def done(self) -> bool:
        return self.end_reason is not None

    @property
    def score(self) -> int:
        return self.tracker.score(self._snap)

    @property
    def success(self) -> bool:
        return self.score == 100

    def observe(self) -> dict[str, Any]:
        """The agent's observation of the current state (a fresh dict of plain JSON values)."""
        if self._view is None:
            self._view = self._backend.snapshot()
        return plain_copy(self.tracker.build(self._view))

    # ------------------------------------------------------------------ acting
    def step(self, action: Mapping[str, Any]) -> dict[str, Any]:
        """Run one agent action (one unit of budget) and return its result."""
        if self.done:
            raise EpisodeOver(f"episode ended: {self.end_reason}")
        before = self._backend.snapshot(surroundings=False)
        try:
            act = validate(action, self._catalog)
            shown = act.as_dict()
            outcome = self._backend.execute(act)
        except ActionError as exc:
            shown = dict(action) if isinstance(action, Mapping) else {"skill": None, "args": {}}
            outcome = failure(exc.reason, str(exc), gained={}, lost={})
        self._snap, self._view = self._backend.snapshot(surroundings=False), None
        result = _result(shown, outcome)
        index = self.used + 1
        signature = semantic_signature(str(shown.get("skill")), shown.get("args"))
        triggers = self._evaluator.observe(index, signature, outcome.transitions)
        self.tracker.record(shown, result, before, self._snap)
        self.trajectory.append({
            "index": index, "action": shown, "signature": signature, "result": result,
            "inventory_delta": _delta(before.inventory, self._snap.inventory),
            "score": self.score, "completed": self.tracker.completed(self._snap),
            "evaluator": [t.as_dict() for t in triggers],
        })
        self._check_end()
        return plain_copy(result)

    def stop(self, reason: str = NO_ACTION) -> None:
        """End the episode because the agent produced no executable action."""
        if not self.done:
            self.end_reason = reason

    def _check_end(self) -> None:
        if self.success:
            self.end_reason = SUCCESS
            self.success_action = self.used or None
        elif not self._snap.alive:
            self.end_reason = DEATH
        elif self.used >= self.setup.budget:
            self.end_reason = BUDGET

    # ------------------------------------------------------------------ records
    def summary(self) -> dict[str, Any]:
        s = self.setup
        return {"world": s.world, "condition": s.condition, "task": s.task.id, "budget": s.budget, "seed": s.seed,
                "actions": self.used, "score": self.score, "success": self.success, "end": self.end_reason,
                "encounters": [e.to_dict() for e in self.encounters()]}

    def encounters(self):
        return build_encounters([t["signature"] for t in self.trajectory], [t["score"] for t in self.trajectory],
                                [(e["action"], e["rule"]) for t in self.trajectory for e in t["evaluator"]])

    def record(self, episode_id: str, configuration: str, model: str = "scripted", repetition: int = 0,
               disclosure: str = "hidden", cost_usd: float = 0.0) -> EpisodeRecord:
        s = self.setup
        return EpisodeRecord(episode_id=episode_id, biome=s.biome, world=s.world, condition=s.condition, task=s.task.id,
                             configuration=configuration, model=model, budget=s.budget, disclosure=disclosure,
                             repetition=repetition, score=float(self.score), success=self.success, actions=self.used,
                             cost_usd=cost_usd, success_action=self.success_action, encounters=self.encounters())

    def write_trace(self, path: Path) -> None:
        """The trajectory as JSONL: a header, one line per action, and the summary."""
        s = self.setup
        lines = [{"type": "episode", "world": s.world, "condition": s.condition, "task": s.task.id,
                  "budget": s.budget, "seed": s.seed, "changed_rules": sorted(self._evaluator.changed)}]
        lines += [{"type": "step", **t} for t in self.trajectory]
        lines.append({"type": "end", **self.summary()})
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(compact(line) + "\n" for line in lines))


def _result(action: Mapping[str, Any], outcome: Outcome) -> dict[str, Any]:
    return {"skill": action.get("skill"), "args": action.get("args", {}), "ok": outcome.ok,
            "reason": outcome.reason, "message": outcome.message, **outcome.details}


def _delta(before: Mapping[str, int], after: Mapping[str, int]) -> dict[str, int]:
    diff = Counter(after)
    diff.subtract(before)
    return {i: n for i, n in sorted(diff.items()) if n}


# ---------------------------------------------------------------------------- the agent loop
def run(episode: Episode, agent: "Agent", seed: int = 0,
        on_step: Callable[[int, Mapping[str, Any], Mapping[str, Any]], None] | None = None) -> Episode:
    """Let ``agent`` act until the episode ends. The agent sees only observation dicts."""
    agent.reset(seed)
    while not episode.done:
        action = agent.act(episode.observe())
        if action is None:
            episode.stop(NO_ACTION)
            break
        result = episode.step(action)
        if on_step:
            on_step(episode.used, action, result)
    return episode
