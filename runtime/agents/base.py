"""The agent protocol: agents see observation dicts and answer with one action dict.

An agent never holds a reference to an episode, a backend, a rulebook or the evaluator; the
episode loop (``runtime.episode.episode.run``) calls ``act`` with each observation and executes what it
returns. ``None`` means the agent has no executable action, which ends the episode.
"""
from __future__ import annotations

from typing import Any, Mapping, Protocol

Action = dict[str, Any]


class Agent(Protocol):
    name: str

    def reset(self, seed: int) -> None:
        """Forget everything from earlier episodes; ``seed`` fixes any randomness."""

    def act(self, observation: Mapping[str, Any]) -> Action | None:
        """The next action ``{"skill": ..., "args": {...}}``, or None to stop."""
