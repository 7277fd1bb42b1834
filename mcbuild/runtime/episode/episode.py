"""Episodes: one task in one world under one condition, on any backend, scored by its milestones.

An :class:`Episode` receives an open :class:`~mcbuild.runtime.contract.backend.Backend` (see
``mcbuild.runtime.episode.opening.open_episode``) and the rules of the world and of its Vanilla twin,
which only the hidden evaluator reads. ``observe()`` gives the agent's observation dict,
``step(action)`` runs one semantic action and returns its result. Every attempted action costs
one unit of budget. The episode ends at the final milestone, when the budget is exhausted, when
the body dies, or when the agent produces no action (:meth:`Episode.stop`). Score is the value of
the deepest completed milestone (``mcbuild.compiler.rules.tasks``); SR is whether it is 100. A milestone
without an advancement is checked after every action by ``mcbuild.runtime.contract.checkers``.

The hidden evaluator and the trajectory (with its evaluator events) live on the episode; the agent
loop (``mcbuild.runtime.episode.loop``) hands the agent nothing but observation dicts.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Mapping

from mcbuild.compiler.rules.catalog import load as load_catalog
from mcbuild.compiler.rules.tasks import Task
from mcbuild.compiler.spec.task import tasks
from mcbuild.compiler.worlds.layout import VANILLA
from mcbuild.runtime.contract.backend import Backend, Outcome, Provisioning, Snapshot, failure
from mcbuild.runtime.contract.checkers import MilestoneChecks
from mcbuild.runtime.contract.evaluator import Evaluator
from mcbuild.runtime.contract.observation import ObservationTracker
from mcbuild.runtime.contract.skills import ActionError, validator
from mcbuild.runtime.records import semantic_signature

if TYPE_CHECKING:
    from mcbuild.compiler.rules.rulebook import Rulebook

SUCCESS, BUDGET, DEATH, NO_ACTION, POLICY_ERROR = (
    "final_milestone", "budget_exhausted", "death", "no_action", "policy_error")


class EpisodeOver(RuntimeError):
    pass


@dataclass(frozen=True)
class Setup:
    world: str
    condition: str
    task: Task
    budget: int
    seed: int
    biome: str

    @classmethod
    def of(cls, task: str, budget: int | None = None, seed: int = 0, *, world: str = "synthetic",
           condition: str = VANILLA, biome: str = "synthetic") -> "Setup":
        """The setup of ``task`` with its catalog budget unless ``budget`` is given."""
        found = tasks()[task]
        return cls(world, condition, found, budget or found.budget, seed, biome)


class Episode:
    def __init__(self, backend: Backend, rules: "Rulebook", twin: "Rulebook", setup: Setup):
        """An episode on ``backend``, which must already be reset to ``setup.seed``."""
        self.setup = setup
        self._validate = validator(load_catalog())
        self._backend: Backend | None = backend
        self._evaluator = Evaluator(rules, twin)
        self._checks = MilestoneChecks(setup.task)
        self._start()

    @classmethod
    def from_parts(cls, backend: Backend, rules: "Rulebook", twin: "Rulebook", task: str, budget: int | None = None,
                   seed: int = 0, **where: str) -> "Episode":
        """An episode on a backend built by hand (tests, benchmarks); ``where`` names the world,
        condition and biome (see :meth:`Setup.of`)."""
        return cls(backend, rules, twin, Setup.of(task, budget, seed, **where))

    def _start(self) -> None:
        self.tracker = ObservationTracker(self.setup.task, self.setup.budget)
        self.trajectory: list[dict[str, Any]] = []
        self.end_reason: str | None = None
        self.success_action: int | None = None
        self._snap: Snapshot = self.backend.snapshot(surroundings=False)
        self._view: Snapshot | None = None      # ``_snap`` with its surroundings, once observed
        if self._checks.milestones:
            self._checks.start(self.backend, self._snap)
            self.tracker.met = self._checks.completed
        self._check_end()

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            raise EpisodeOver("the episode is closed")
        return self._backend

    @property
    def provisioning(self) -> Provisioning:
        """Harness-only changes to the body (tests, benchmarks, server checks); the episode reads
        the body's state again after each."""
        return _Provisioning(self)

    @property
    def changed_rules(self) -> frozenset[str]:
        """The rules the hidden evaluator watches (harness and trace only)."""
        return self._evaluator.changed

    def reset(self, seed: int | None = None) -> None:
        """Start over on the pristine world (same world, rules and task)."""
        if seed is not None:
            self.setup = replace(self.setup, seed=seed)
        self.backend.reset(self.setup.seed)
        self._evaluator.reset()
        self._start()

    def close(self) -> None:
        """Release the backend (the episode cannot be used afterwards)."""
        if self._backend is not None:
            self._backend.close()
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
    def position(self) -> tuple[int, int, int]:
        """The body's block position now (after the last action)."""
        x, y, z = self._snap.position
        return x, y, z

    @property
    def done(self) -> bool:
        return self.end_reason is not None

    @property
    def score(self) -> int:
        return self.tracker.score(self._snap)

    @property
    def milestones_met(self) -> list[str]:
        """The codes of the task's completed milestones, in the task's order."""
        done = self.tracker.done(self._snap)
        return [m.code for m in self.setup.task.milestones if m.key in done]

    @property
    def success(self) -> bool:
        return self.score == 100

    def observe(self) -> dict[str, Any]:
        """The agent's observation of the current state: plain JSON values with sorted keys. It is
        read-only: parts of it are shared with later observations (never with the trajectory).
        The surroundings are read only here, once per state (the body's own state is the action's
        one snapshot)."""
        if self._view is None:
            self._view = self._snap.seeing(self.backend.surroundings())
        return self.tracker.build(self._view)

    # ------------------------------------------------------------------ acting
    def step(self, action: Mapping[str, Any]) -> dict[str, Any]:
        """Run one agent action (one unit of budget) and return its result."""
        if self.end_reason is not None:
            raise EpisodeOver(f"episode ended: {self.end_reason}")
        backend = self.backend
        before, tracker = self._snap, self.tracker
        text: str | None = None                 # the action's describe(), remembered with a valid one
        try:
            act, signature = self._validate(action)
            shown = act.as_dict()
            outcome = backend.execute(act)
            text = act.text
        except ActionError as exc:
            shown = dict(action) if isinstance(action, Mapping) else {"skill": None, "args": {}}
            signature = semantic_signature(str(shown.get("skill")), shown.get("args"))
            outcome = failure(exc.reason, str(exc), gained={}, lost={})
        result = _result(shown, outcome)
        index = len(self.trajectory) + 1
        # the one snapshot of an action: the next action's "before" and the next observation's state
        snap = backend.snapshot(surroundings=False)
        self._snap, self._view = snap, None
        triggers = self._evaluator.observe(index, signature, outcome.transitions)
        turn = tracker.record(shown, result, before, snap, signature, text)
        if self._checks.milestones:
            self._checks.observe(index, str(shown.get("skill")), outcome, backend, snap)
            tracker.met = self._checks.completed
        standing = tracker.standing(snap)
        self.trajectory.append({
            "index": index, "action": shown, "signature": signature, "result": result,
            "inventory_delta": _delta(outcome.details["gained"], outcome.details["lost"]),
            "score": standing.score, "completed": list(standing.completed),
            "evaluator": [t.as_dict() for t in triggers] if triggers else [],
        })
        self._check_end(standing.score)
        return turn.result

    def stop(self, reason: str = NO_ACTION) -> None:
        """End the episode because the agent produced no executable action (or raised)."""
        if not self.done:
            self.end_reason = reason

    def _check_end(self, score: int | None = None) -> None:
        """End the episode if it succeeded (``score`` is the current score when known), the body
        died or the budget is spent."""
        if (self.score if score is None else score) == 100:
            self.end_reason = SUCCESS
            self.success_action = self.used or None
        elif not self._snap.alive:
            self.end_reason = DEATH
        elif self.used >= self.setup.budget:
            self.end_reason = BUDGET


class _Provisioning:
    """The backend's provisioning, followed by a fresh snapshot of the episode's state."""

    def __init__(self, episode: Episode):
        self._episode = episode

    def give(self, items: Mapping[str, int]) -> None:
        backend = self._episode.backend
        backend.provisioning.give(items)
        self._episode._snap, self._episode._view = backend.snapshot(surroundings=False), None


def _result(action: Mapping[str, Any], outcome: Outcome) -> dict[str, Any]:
    return {"skill": action.get("skill"), "args": action.get("args", {}), "ok": outcome.ok,
            "reason": outcome.reason, "message": outcome.message, **outcome.details}


def _delta(gained: Mapping[str, int], lost: Mapping[str, int]) -> dict[str, int]:
    """The signed change of each item the action changed, in item order: its outcome's ``gained`` and
    ``lost``, which every backend reports as the action's net inventory change
    (``contract.backend.inventory_change``; {} for both when the action was refused)."""
    if not lost:
        return dict(gained)         # already in item order
    return dict(sorted({**gained, **{i: -n for i, n in lost.items()}}.items()))
