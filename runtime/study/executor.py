"""Episode executors: ``execute(plan_entry) -> EpisodeOutcome``.

The runner calls an executor once per planned episode (and again, under the same id and seed,
after an :class:`~runtime.errors.InfrastructureFault`). :func:`execute` opens the episode on the
study's backend and runs the configuration's agent through the one agent loop
(``runtime.episode.loop``).

Deaths, exhausted budgets and policy errors are *outcomes*. A missing save or rule sheet, a
backend crash or an unreachable model endpoint is an *infrastructure fault*: the runner reruns
the episode.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

from compiler.core.paths import BUILD
from runtime.backends.registry import factory
from runtime.errors import BackendUnavailable, InfrastructureFault

__all__ = ["EpisodeOutcome", "preflight", "execute"]


@dataclass(frozen=True)
class EpisodeOutcome:
    """What one episode produced, as its executor reports it.

    ``trajectory`` has one JSON-able step per action (with the model calls made for it),
    ``encounters`` are :class:`runtime.records.Encounter` dicts and ``events`` the hidden
    evaluator's log. ``biome`` … ``budget`` are what the backend actually ran (None: as planned);
    they are checked against the plan before aggregation.
    """

    score: float
    actions: int
    success: bool | None = None                 # None: score == 100
    cost_usd: float = 0.0
    tokens: Mapping[str, int] = field(default_factory=dict)    # {"input", "output"}
    trajectory: list[dict[str, Any]] = field(default_factory=list)
    encounters: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    success_action: int | None = None
    score_at: Mapping[int, float] = field(default_factory=dict)
    end_reason: str = ""
    biome: str | None = None
    world: str | None = None
    condition: str | None = None
    task: str | None = None
    budget: int | None = None
    milestones_met: int | None = None           # of the task's milestones (None: not reported)
    milestones_total: int | None = None

    @property
    def succeeded(self) -> bool:
        return self.score == 100.0 if self.success is None else bool(self.success)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "EpisodeOutcome":
        unknown = sorted(set(data) - {f.name for f in fields(cls)})
        if unknown:
            raise TypeError(f"unknown outcome field(s): {', '.join(unknown)}")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def llm_settings(model: str, endpoint: Mapping[str, Any] | None) -> dict[str, Any]:
    return {"model": model, **{k: v for k, v in (endpoint or {}).items() if v is not None}}


def preflight(agents: list[str], models: list[str], backend: str, endpoint: Mapping[str, Any] | None) -> None:
    """Fail before any episode: an unknown backend, or an LLM endpoint/key/model that does not answer."""
    factory(backend)
    from runtime.agents.llm import CONFIGURATIONS, LLMError
    from runtime.agents.llm import preflight as llm_preflight

    if not any(a in CONFIGURATIONS for a in agents):
        return
    for model in models:
        try:
            llm_preflight(llm_settings(model, endpoint))
        except LLMError as exc:
            raise BackendUnavailable(str(exc)) from None


def execute(entry: Any, *, build_root: str | Path | None = None, backend: str = "sim",
            endpoint: Mapping[str, Any] | None = None, replay: str | Path | None = None) -> EpisodeOutcome:
    """Run one planned episode on ``backend`` with ``runtime.agents.registry.create(entry.agent)``;
    with ``replay`` (a results store), LLM agents get their replies from it (``replay.py``)."""
    from runtime.agents.registry import create
    from runtime.agents.llm import CONFIGURATIONS, trajectory_hook
    from runtime.episode.loop import run
    from runtime.episode.opening import open_episode
    from runtime.episode.trace import encounters

    e = entry.to_dict() if hasattr(entry, "to_dict") else dict(entry)
    build = Path(build_root) if build_root is not None else BUILD
    name = e.get("agent") or e["configuration"]
    seed = int(e["seed"])
    options: dict[str, Any] = {"seed": seed, "model": e["model"]}
    if name in CONFIGURATIONS:
        options["settings"] = llm_settings(e["model"], endpoint)
        if replay is not None:
            from .replay import ReplayClient

            options["client"] = ReplayClient(replay, e["episode_id"], e["model"])
    if e.get("disclosure") == "disclosed":
        sheet = build / e["condition"] / "rules.md"
        if not sheet.is_file():
            raise InfrastructureFault(f"missing rule sheet {sheet} for a disclosed episode")
        options["rules"] = sheet.read_text()
    agent = create(name, **options)
    try:
        ep = open_episode(e["world"], e["condition"], e["task"], int(e["budget"]), seed, build=build, backend=backend)
    except (InfrastructureFault, BackendUnavailable):
        raise
    except Exception as exc:  # noqa: BLE001 - any failure to open is the machinery's, not the agent's
        raise InfrastructureFault(f"cannot open the episode: {type(exc).__name__}: {exc}") from exc
    with ep:
        end_reason = run(ep, agent, seed, [trajectory_hook(ep, agent)])
        usage = getattr(agent, "usage", None)
        setup = ep.setup
        trajectory = list(ep.trajectory)
        leftover = agent.pop_calls() if hasattr(agent, "pop_calls") else []
        return EpisodeOutcome(
            score=float(ep.score), success=bool(ep.success), actions=int(ep.used),
            cost_usd=float(usage.cost_usd) if usage else 0.0,
            tokens={"input": usage.prompt_tokens, "output": usage.completion_tokens} if usage else {},
            trajectory=trajectory + ([{"llm_calls": leftover}] if leftover else []),
            encounters=[x.to_dict() for x in encounters(ep)],
            events=[ev for t in trajectory for ev in t.get("evaluator", [])],
            success_action=ep.success_action if ep.success else None,
            end_reason=end_reason,
            biome=setup.biome, world=setup.world, condition=setup.condition, task=setup.task.id,
            budget=int(setup.budget),
            milestones_met=len(ep.milestones_met), milestones_total=len(setup.task.milestones),
        )
