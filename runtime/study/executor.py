"""Episode executors: ``execute(plan_entry) -> outcome dict``.

The runner calls an executor once per planned episode (and again, under the same id and seed,
after an :class:`InfrastructureFault`). The outcome dict has ``score`` (0..100), ``success``,
``actions`` (budgeted semantic actions used), ``cost_usd``, ``tokens`` (``{"input", "output"}``),
``trajectory`` (one JSON-able step per action, with the model calls made for it), ``encounters``
(:class:`runtime.study.metrics.Encounter` dicts), ``events`` (the hidden evaluator's log),
``success_action``, ``end_reason`` and what the backend actually ran (``biome``, ``world``,
``condition``, ``task``, ``budget``), which is checked against the plan before aggregation.

Deaths, exhausted budgets and policy errors are *outcomes*. A missing save or rule sheet, a
simulator crash or an unreachable model endpoint is an *infrastructure fault*: the runner reruns
the episode.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from compiler.core.paths import BUILD
from runtime.errors import BackendUnavailable, InfrastructureFault

__all__ = ["InfrastructureFault", "BackendUnavailable", "is_infrastructure_fault", "preflight", "execute_sim"]


def is_infrastructure_fault(exc: BaseException) -> bool:
    return isinstance(exc, InfrastructureFault)


def llm_settings(model: str, endpoint: Mapping[str, Any] | None) -> dict[str, Any]:
    return {"model": model, **{k: v for k, v in (endpoint or {}).items() if v is not None}}


def preflight(agents: list[str], models: list[str], backend: str, endpoint: Mapping[str, Any] | None) -> None:
    """Fail before any episode: an unknown backend, or an LLM endpoint/key/model that does not answer."""
    if backend != "sim":
        raise BackendUnavailable(f"backend {backend!r} is not available to the study runner; use 'sim'")
    from runtime.agents.llm import CONFIGURATIONS, LLMError
    from runtime.agents.llm import preflight as llm_preflight

    if not any(a in CONFIGURATIONS for a in agents):
        return
    for model in models:
        try:
            llm_preflight(llm_settings(model, endpoint))
        except LLMError as exc:
            raise BackendUnavailable(str(exc)) from None


def execute_sim(entry: Any, *, build_root: str | Path | None = None,
                endpoint: Mapping[str, Any] | None = None) -> dict:
    """Run one planned episode on the embedded simulator with ``runtime.agents.create(entry.agent)``."""
    from runtime.agents.registry import create
    from runtime.agents.llm import CONFIGURATIONS, trajectory_hook
    from runtime.episode.episode import Episode, EpisodeOver

    e = entry.to_dict() if hasattr(entry, "to_dict") else dict(entry)
    build = Path(build_root) if build_root is not None else BUILD
    name = e.get("agent") or e["configuration"]
    seed = int(e["seed"])
    options: dict[str, Any] = {"seed": seed, "model": e["model"]}
    if name in CONFIGURATIONS:
        options["settings"] = llm_settings(e["model"], endpoint)
    if e.get("disclosure") == "disclosed":
        sheet = build / e["condition"] / "rules.md"
        if not sheet.is_file():
            raise InfrastructureFault(f"missing rule sheet {sheet} for a disclosed episode")
        options["rules"] = sheet.read_text()
    agent = create(name, **options)
    try:
        ep = Episode(e["world"], e["condition"], e["task"], int(e["budget"]), seed, build=build)
    except FileNotFoundError as exc:
        raise InfrastructureFault(f"missing world or pack: {exc}") from exc
    with ep:
        record_calls = trajectory_hook(ep, agent)
        end_reason = ""
        agent.reset(seed)
        while not ep.done:
            try:
                action = agent.act(ep.observe())
            except Exception as exc:  # noqa: BLE001 - a policy error is an outcome, a dead endpoint is not
                if is_infrastructure_fault(exc):
                    raise
                end_reason = f"policy_error: {type(exc).__name__}: {exc}"[:500]
                ep.stop("policy_error")
                break
            if action is None:
                ep.stop()
                break
            try:
                result = ep.step(action)
            except EpisodeOver:
                break
            except Exception as exc:  # noqa: BLE001 - the simulator itself failed
                raise InfrastructureFault(f"simulator crashed: {type(exc).__name__}: {exc}") from exc
            record_calls(ep.used, action, result)
        usage = getattr(agent, "usage", None)
        setup = ep.setup
        trajectory = list(ep.trajectory)
        leftover = agent.pop_calls() if hasattr(agent, "pop_calls") else []
        return {
            "score": float(ep.score), "success": bool(ep.success), "actions": int(ep.used),
            "cost_usd": float(usage.cost_usd) if usage else 0.0,
            "tokens": {"input": usage.prompt_tokens, "output": usage.completion_tokens} if usage else {},
            "trajectory": trajectory + ([{"llm_calls": leftover}] if leftover else []),
            "encounters": [x.to_dict() for x in ep.encounters()],
            "events": [ev for t in trajectory for ev in t.get("evaluator", [])],
            "success_action": ep.success_action if ep.success else None,
            "end_reason": end_reason or ep.end_reason or "",
            "biome": setup.biome, "world": setup.world, "condition": setup.condition, "task": setup.task.id,
            "budget": int(setup.budget),
        }
