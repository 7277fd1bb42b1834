"""The one agent loop: the agent sees observation dicts, the episode runs its actions.

Every caller (``mcbuild episode run``, the study executor, tests, benchmarks) runs episodes
through :func:`run`; what differs between them is only their step hooks (printing a line,
attaching the model calls to the trajectory).

An exception from the agent ends the episode as a ``policy_error`` outcome, unless it is an
:class:`~mcbuild.runtime.errors.InfrastructureFault` (a model endpoint that stopped answering), which
propagates. An exception from the backend is an infrastructure fault: the episode is not scored.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from mcbuild.runtime.episode.episode import NO_ACTION, POLICY_ERROR, Episode
from mcbuild.runtime.errors import InfrastructureFault

if TYPE_CHECKING:
    from mcbuild.runtime.agents.base import Agent

StepHook = Callable[[int, Mapping[str, Any], Mapping[str, Any]], None]
POLICY_ERROR_CHARS = 500


def run(episode: Episode, agent: "Agent", seed: int = 0, hooks: Sequence[StepHook] = ()) -> str:
    """Let ``agent`` act until ``episode`` ends; call each hook with (action index, action, result)
    after every action. Returns the end reason, with the error text for a policy error."""
    agent.reset(seed)
    while not episode.done:
        try:
            action = agent.act(episode.observe())
        except InfrastructureFault:
            raise
        except Exception as exc:  # noqa: BLE001 - a policy error is an outcome of the episode
            episode.stop(POLICY_ERROR)
            return f"{POLICY_ERROR}: {type(exc).__name__}: {exc}"[:POLICY_ERROR_CHARS]
        if action is None:
            episode.stop(NO_ACTION)
            break
        try:
            result = episode.step(action)
        except InfrastructureFault:
            raise
        except Exception as exc:  # the backend itself failed
            raise InfrastructureFault(f"backend crashed: {type(exc).__name__}: {exc}") from exc
        for hook in hooks:
            hook(episode.used, action, result)
    return episode.end_reason or ""
