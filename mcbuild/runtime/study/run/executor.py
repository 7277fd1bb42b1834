"""Episode executors: ``execute(plan_entry) -> EpisodeOutcome``.

The runner calls an executor once per planned episode (and again, under the same id and seed,
after an :class:`~mcbuild.runtime.errors.InfrastructureFault`). :func:`execute` opens the episode on the
study's backend and runs the configuration's agent through the one agent loop
(``mcbuild.runtime.episode.loop``).

Deaths, exhausted budgets and policy errors are *outcomes*. A missing save or rule sheet, a
backend crash or an unreachable model endpoint is an *infrastructure fault*: the runner reruns
the episode.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from mcbuild.compiler.core.paths import BUILD
from mcbuild.llm.schemas import Schema
from mcbuild.llm.settings import ModelSettings
from mcbuild.runtime.backends.registry import factory
from mcbuild.runtime.errors import BackendUnavailable, InfrastructureFault
from mcbuild.runtime.study.design.plan import PlanEntry
from mcbuild.runtime.study.run.live import LiveLog
from mcbuild.runtime.study.outcome import EpisodeOutcome

__all__ = ["preflight", "execute", "warm"]

#: Plan entries whose worlds and conditions :func:`warm` opens (the first ones workers run).
WARM_ENTRIES = 256


def sampling(agents: list[str], models: Mapping[str, ModelSettings]) -> dict[str, Any]:
    """How each model of an LLM study samples, every default filled in (empty without LLM agents):
    the record a study's store keeps (``ModelSettings.sampling``)."""
    from mcbuild.runtime.agents.llm import CONFIGURATIONS

    if not any(a in CONFIGURATIONS for a in agents):
        return {}
    return {m: s.sampling() for m, s in models.items()}


def rule_sheet(build: Path, condition: str) -> str:
    """The rule sheet a disclosed episode's agent is given (``<build>/<condition>/rules.md``); a missing
    or unreadable one is an :class:`InfrastructureFault` naming the file."""
    sheet = build / condition / "rules.md"
    if not sheet.is_file():
        raise InfrastructureFault(f"missing rule sheet {sheet} for a disclosed episode")
    try:
        return sheet.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InfrastructureFault(f"{sheet}: unreadable rule sheet ({type(exc).__name__}: {exc})"[:300]) from None


def preflight(agents: list[str], models: list[str], backend: str, settings: Mapping[str, ModelSettings]) -> None:
    """Fail before any episode: an unknown agent or backend, or an LLM endpoint/key/model that does not answer."""
    check_parts(agents, backend)
    preflight_models(agents, models, settings)


def check_parts(agents: list[str], backend: str) -> None:
    """An unknown agent or a backend that cannot start: one error, before any store is made."""
    from mcbuild.runtime.agents.registry import resolve

    for agent in agents:
        resolve(agent)
    factory(backend)


def preflight_models(agents: list[str], models: list[str], settings: Mapping[str, ModelSettings],
                     probes: Mapping[str, tuple[list[dict[str, str]], Schema | None]] | None = None,
                     ) -> dict[str, list[dict[str, Any]]]:
    """One real request to each model the LLM agents use, of the shape every call will have (``probes``:
    the study's first request for that model, :func:`first_request`); an endpoint, key, model or request
    field that is refused is one ``BackendUnavailable`` line. Returns, per model, how its requests differ
    from its settings (the profile's and the endpoint's adaptations, ``Adjustment.to_json``)."""
    from mcbuild.runtime.agents.llm import CONFIGURATIONS, LLMError
    from mcbuild.runtime.agents.llm import preflight as llm_preflight

    if not any(a in CONFIGURATIONS for a in agents):
        return {}
    out: dict[str, list[dict[str, Any]]] = {}
    for model in models:
        try:
            out[model] = [a.to_json() for a in llm_preflight(settings[model], (probes or {}).get(model))]
        except LLMError as exc:
            raise BackendUnavailable(str(exc)) from None
    return out


def offer(entry: PlanEntry, build: Path) -> dict[str, Any]:
    """What the study gives ``entry``'s agent of what it knows (``registry.offered``): the episode's
    seed and model and, for a disclosed run, the rule sheet, each one the agent's factory takes."""
    from mcbuild.runtime.agents.registry import offered

    context: dict[str, Any] = {"seed": entry.seed, "model": entry.model}
    if entry.disclosure == "disclosed":
        context["rules"] = rule_sheet(build, entry.condition)
    return offered(entry.agent or entry.configuration, **context)


def execute(entry: PlanEntry, *, build_root: str | Path | None = None, backend: str = "sim",
            replay: str | Path | None = None, models: Mapping[str, ModelSettings] | None = None,
            live: Path | None = None) -> EpisodeOutcome:
    """Run one planned episode on ``backend`` with ``mcbuild.runtime.agents.registry.create(entry.agent)``;
    LLM agents get ``models[<the episode's model>]`` (a model not listed: its name and the defaults);
    with ``replay`` (a results store), they get their replies from it (``replay.py``); with ``live`` (a
    folder), the episode's live log is written there as it plays (``live.py``)."""
    from mcbuild.runtime.agents.registry import create
    from mcbuild.runtime.agents.llm import CONFIGURATIONS, trajectory_hook
    from mcbuild.runtime.episode.loop import run
    from mcbuild.runtime.episode.opening import open_episode
    from mcbuild.runtime.episode.trace import result

    build = Path(build_root) if build_root is not None else BUILD
    name = entry.agent or entry.configuration
    seed = entry.seed
    options = offer(entry, build)
    if name in CONFIGURATIONS:
        options["settings"] = (models or {}).get(entry.model) or ModelSettings(model=entry.model)
        if replay is not None:
            from mcbuild.runtime.study.store.replay import ReplayClient

            options["client"] = ReplayClient(replay, entry.episode_id, entry.model)
    agent = create(name, **options)
    try:
        ep = open_episode(entry.world, entry.condition, entry.task, entry.budget, seed, build=build, backend=backend)
    except (InfrastructureFault, BackendUnavailable):
        raise
    except Exception as exc:  # any failure to open is the machinery's, not the agent's
        raise InfrastructureFault(f"cannot open the episode: {type(exc).__name__}: {exc}") from exc
    with ep:
        hooks = [trajectory_hook(ep, agent)]
        log = LiveLog(live, entry) if live is not None else None
        if log is not None:
            log.start(ep.position)
            hooks.append(lambda index, action, res: log.step(index, res, ep.position, ep.trajectory[-1]["score"]))
        try:
            end_reason = run(ep, agent, seed, hooks)
        except BaseException:
            if log is not None:
                log.close()
            raise
        if log is not None:
            log.end(end_reason, ep.score, ep.success)
        use = agent.model_use()                       # calls after the last action, and the totals
        setup = ep.setup
        trajectory = list(ep.trajectory)
        return EpisodeOutcome(
            **result(ep), cost_usd=float(use.usage.cost_usd) if use.usage else 0.0,
            tokens_in=use.usage.prompt_tokens if use.usage else 0,
            tokens_out=use.usage.completion_tokens if use.usage else 0,
            cached_prompt_tokens=use.usage.cached_prompt_tokens if use.usage else 0,
            reasoning_tokens=use.usage.reasoning_tokens if use.usage else 0,
            priced=use.usage.priced if use.usage else True, adaptations=list(use.adaptations),
            trajectory=trajectory + ([{"llm_calls": list(use.calls)}] if use.calls else []),
            events=[ev for t in trajectory for ev in t.get("evaluator", [])], end_reason=end_reason,
            biome=setup.biome, world=setup.world, condition=setup.condition, task=setup.task.id,
            budget=int(setup.budget), seed=int(setup.seed),
        )


class _FirstRequest(Exception):
    """Carries an agent's first model request (raised instead of sending it)."""

    def __init__(self, messages: list[dict[str, str]], schema: Schema | None):
        super().__init__("first request captured")
        self.messages, self.schema = messages, schema


class _Capture:
    """A chat client that stops the agent at its first request."""

    def chat(self, messages: list[dict[str, str]], *, schema: Schema | None = None, **_: Any) -> Any:
        raise _FirstRequest(messages, schema)


def first_request(entry: PlanEntry, build: Path) -> tuple[list[dict[str, str]], Schema | None]:
    """The messages and reply schema of the first model request of ``entry``'s agent on its world,
    rendered on the simulator without calling any model (the preflight sends it; a dry run prints it)."""
    from mcbuild.runtime.agents.registry import create
    from mcbuild.runtime.episode.opening import open_episode

    agent = create(entry.agent or entry.configuration, **offer(entry, build), client=_Capture())
    with open_episode(entry.world, entry.condition, entry.task, entry.budget, entry.seed, build=build,
                      backend="sim") as ep:
        agent.reset(entry.seed)
        try:
            agent.act(ep.observe())
        except _FirstRequest as got:
            return got.messages, got.schema
    raise ValueError(f"agent {entry.configuration!r} chose an action without asking its model")


def warm(entries: Sequence[PlanEntry], *, build_root: str | Path | None = None, backend: str = "sim") -> None:
    """Fill this process's caches before it forks the workers that inherit them, so each is made
    once rather than once per worker. For each world and condition of the first
    :data:`WARM_ENTRIES` entries, an episode on the simulator is opened, observed and closed (the
    verified saves, both rulebooks and what is derived from them, the backend's world) and the
    scripted agents plan their first action in it. Only pure memos are filled, so no result
    changes; a failure is left for that episode to report. Other backends are not warmed."""
    from mcbuild.compiler.worlds.layout import world_dir
    from mcbuild.runtime.agents.llm import CONFIGURATIONS
    from mcbuild.runtime.agents.registry import AGENTS, create
    from mcbuild.runtime.episode.opening import open_episode, save_rules

    if backend != "sim":
        return
    build = Path(build_root) if build_root is not None else BUILD
    head = entries[:WARM_ENTRIES]
    names = dict.fromkeys(e.agent or e.configuration for e in head)
    agents = [create(name) for name in names if name in AGENTS and name not in CONFIGURATIONS]
    first_task: dict[tuple[str, str], str] = {}
    for e in head:
        first_task.setdefault((e.world, e.condition), e.task)
    for (world, condition), task in first_task.items():
        try:
            with open_episode(world, condition, task, build=build, backend=backend) as ep:
                observation = ep.observe()
                for agent in agents:
                    agent.reset(0)
                    agent.act(observation)
            save_rules(world_dir(world, condition, build)).crafting_index   # noqa: B018 - built here, inherited
        except Exception:  # noqa: BLE001 - the episode itself reports what failed here
            continue
