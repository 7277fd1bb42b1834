"""The agent protocol: agents see observation dicts and answer with one action dict.

An agent never holds a reference to an episode, a backend, a rulebook or the evaluator; the
episode loop (``mcbuild.runtime.episode.loop.run``) calls ``act`` with each observation and executes what it
returns. ``None`` means the agent has no executable action, which ends the episode.
:meth:`Agent.model_use` is what the agent reports besides its actions: the model calls it made and
what they cost (:class:`ModelUse`; empty for agents that call no model).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Collection, Mapping, Protocol

from mcbuild.runtime.errors import AgentError

if TYPE_CHECKING:
    from mcbuild.llm.client import Usage

Action = dict[str, Any]


@dataclass(frozen=True)
class ModelUse:
    """The model calls an agent made since it was last asked (records with messages, reply,
    tokens and cost, in call order) and its usage totals for the episode so far. ``usage`` is
    None for an agent that calls no model."""

    calls: tuple[dict[str, Any], ...] = ()
    usage: "Usage | None" = None
    adaptations: tuple[dict[str, Any], ...] = ()   # how the requests differ from the settings (``mcbuild.llm.shape``)


NO_MODEL = ModelUse()


class UnknownOption(AgentError, TypeError):
    """An option given to an agent that it does not take (a misspelt setting, ``rules`` for a
    configuration without a rule sheet): refused, never dropped."""


def check_options(agent: str, given: Collection[str], takes: Collection[str]) -> None:
    """:class:`UnknownOption` (one line naming the option and the agent) for the first of ``given``
    that is not in ``takes``."""
    for option in given:
        if option not in takes:
            known = ", ".join(sorted(takes)) or "none"
            raise UnknownOption(f"agent {agent!r} takes no option {option!r} (its options: {known})")


class Agent(Protocol):
    name: str

    def reset(self, seed: int) -> None:
        """Forget everything from earlier episodes; ``seed`` fixes any randomness."""

    def act(self, observation: Mapping[str, Any]) -> Action | None:
        """The next action ``{"skill": ..., "args": {...}}``, or None to stop."""

    def model_use(self) -> ModelUse:
        """The model calls made since the previous ``model_use`` and the usage so far."""
