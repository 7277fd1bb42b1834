"""Episode executors: ``execute(plan_entry) -> outcome dict``.

The runner calls an executor once per planned episode (and again, under the
same id and seed, after an :class:`InfrastructureFault`).  The outcome dict has

* ``score`` (0..100), ``success`` (``score == 100``), ``actions`` (budgeted
  semantic actions used), ``cost_usd``, ``tokens`` (``{"input", "output"}``),
* ``trajectory`` -- list of JSON-able steps (one per action),
* ``encounters`` -- :class:`runtime.study.metrics.Encounter` dicts,
* ``events`` -- the hidden evaluator's log, ``success_action``, ``score_at``
  (``{checkpoint: score}``), ``end_reason`` (``success``, ``budget``,
  ``death``, ``no_action``, ``policy_error``),
* optionally what the backend actually ran (``biome``, ``world``,
  ``condition``, ``task``, ``configuration``, ``model``, ``budget``,
  ``disclosure``): these are stored and checked against the plan before
  aggregation (Appendix D).

Deaths, exhausted budgets and policy errors are *outcomes*; an executor
reports them in the dict.  Backend crashes, missing packs, unavailable
advancements and disconnects are *infrastructure faults*: raise
:class:`InfrastructureFault` and the runner reruns the episode.
"""
from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

__all__ = ["InfrastructureFault", "BackendUnavailable", "preflight", "is_infrastructure_fault", "execute_sim", "outcome_from_episode"]


class InfrastructureFault(RuntimeError):
    """Backend crash, missing pack, unavailable advancement, disconnect: rerun under the same id."""

    infrastructure = True


class BackendUnavailable(RuntimeError):
    """The requested backend is not installed/implemented in this checkout."""


def is_infrastructure_fault(exc: BaseException) -> bool:
    """True for :class:`InfrastructureFault` and for backend exceptions that
    declare ``infrastructure = True`` or are named ``InfrastructureFault``
    (backends need not import this module)."""
    if isinstance(exc, InfrastructureFault) or getattr(exc, "infrastructure", False) is True:
        return True
    return any(c.__name__ == "InfrastructureFault" for c in type(exc).__mro__)


def _load_sim() -> tuple[Any, Any]:
    try:
        episode_mod = importlib.import_module("runtime.episode")
        agents_mod = importlib.import_module("runtime.agents")
    except ModuleNotFoundError as exc:
        raise BackendUnavailable(
            f"simulator backend not available ({exc.name} is missing): runtime/episode.py and "
            f"runtime/agents/ provide it; until then run studies with an injected executor"
        ) from exc
    except ImportError as exc:
        raise BackendUnavailable(f"simulator backend not available: {exc}") from exc
    if not hasattr(episode_mod, "Episode") or not callable(getattr(agents_mod, "create", None)):
        raise BackendUnavailable(
            "simulator backend not available: runtime.episode.Episode or the agent registry "
            "runtime.agents.create(name, ...) is missing"
        )
    return episode_mod, agents_mod


def outcome_from_episode(result: Any) -> dict:
    """Normalise what an episode runner returns (a dict or an object with
    ``to_dict()``/``outcome()``) into the runner's outcome dict."""
    if isinstance(result, dict):
        return dict(result)
    for name in ("outcome", "to_dict", "as_dict"):
        fn = getattr(result, name, None)
        if callable(fn):
            return dict(fn())
    raise TypeError(f"cannot turn {type(result).__name__} into an outcome dict")


def preflight(execute: Any) -> None:
    """Fail fast (:class:`BackendUnavailable`) when ``execute`` is the simulator
    executor and the simulator is not importable."""
    if execute is execute_sim or getattr(execute, "func", None) is execute_sim:
        _load_sim()


def _call_with_supported(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` with the keyword arguments its signature accepts."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn(*args, **kwargs)
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return fn(*args, **kwargs)
    return fn(*args, **{k: v for k, v in kwargs.items() if k in sig.parameters})


def _usage(agent: Any) -> tuple[float, dict]:
    usage = getattr(agent, "usage", None)
    usage = usage() if callable(usage) else usage
    cost = getattr(agent, "cost_usd", None)
    tokens: dict = {}
    if isinstance(usage, dict):
        cost = usage.get("cost_usd", cost)
        tokens = {"input": int(usage.get("input_tokens", usage.get("prompt_tokens", 0)) or 0),
                  "output": int(usage.get("output_tokens", usage.get("completion_tokens", 0)) or 0)}
    elif usage is not None:
        cost = getattr(usage, "cost_usd", cost)
        tokens = {"input": int(getattr(usage, "input_tokens", getattr(usage, "prompt_tokens", 0)) or 0),
                  "output": int(getattr(usage, "output_tokens", getattr(usage, "completion_tokens", 0)) or 0)}
    return float(cost or 0.0), tokens


def execute_sim(entry: Any, *, build_root: str | Path | None = None) -> dict:
    """Run one planned episode on the embedded simulator (``runtime.episode``)
    with the agent ``runtime.agents.create(entry.agent, ...)``.

    A missing world save or a simulator crash inside ``step`` is an
    :class:`InfrastructureFault`; an exception of the agent is a policy error
    and ends the episode as an outcome (``end_reason="policy_error"``).
    Raises :class:`BackendUnavailable` while the simulator or the agent
    registry is missing.
    """
    e = entry if isinstance(entry, dict) else entry.to_dict()
    if e.get("backend", "sim") != "sim":
        raise BackendUnavailable(f"backend {e.get('backend')!r} is not available to the study runner yet")
    episode_mod, agents_mod = _load_sim()
    from compiler.paths import BUILD

    build = Path(build_root) if build_root is not None else BUILD
    try:
        ep = episode_mod.Episode(e["world"], e["condition"], e["task"], int(e["budget"]), int(e["seed"]), build=build)
    except FileNotFoundError as exc:
        raise InfrastructureFault(f"missing world or pack: {exc}") from exc
    rules = None
    if e.get("disclosure") == "disclosed":
        sheet = build / e["condition"] / "rules.md"
        if not sheet.is_file():
            raise InfrastructureFault(f"missing rule sheet {sheet} for a disclosed episode")
        rules = sheet.read_text()
    kwargs: dict[str, Any] = {"model": e["model"], "seed": int(e["seed"])}
    if rules is not None:
        kwargs.update(rules=rules, disclosure="disclosed")
    agent = _call_with_supported(agents_mod.create, e.get("agent") or e["configuration"], **kwargs)
    end_reason = None
    over = getattr(episode_mod, "EpisodeOver", RuntimeError)
    try:
        _call_with_supported(agent.reset, int(e["seed"])) if hasattr(agent, "reset") else None
        while not ep.done:
            obs = ep.observe()
            try:
                action = agent.act(obs)
            except Exception as exc:  # noqa: BLE001 - a policy error is an outcome
                if is_infrastructure_fault(exc):
                    raise
                end_reason = f"policy_error: {type(exc).__name__}: {exc}"[:500]
                ep.stop("policy_error")
                break
            if action is None:
                ep.stop(getattr(episode_mod, "NO_ACTION", "no_action"))
                break
            try:
                ep.step(action)
            except over:
                break
            except Exception as exc:  # noqa: BLE001 - the simulator itself crashed
                if is_infrastructure_fault(exc):
                    raise
                raise InfrastructureFault(f"simulator crashed: {type(exc).__name__}: {exc}") from exc
        s = ep.setup
        cost, tokens = _usage(agent)
        traj = list(ep.trajectory)
        events = [ev for t in traj for ev in t.get("evaluator", [])]
        return {
            "score": float(ep.score), "success": bool(ep.success), "actions": int(ep.used),
            "cost_usd": cost, "tokens": tokens, "trajectory": traj,
            "encounters": [x.to_dict() for x in ep.encounters()], "events": events,
            "success_action": ep.success_action if ep.success else None,
            "end_reason": end_reason or ep.end_reason or "",
            "biome": s.biome, "world": s.world, "condition": s.condition, "task": s.task.id, "budget": int(s.budget),
        }
    finally:
        close = getattr(ep, "close", None)
        if callable(close):
            close()
