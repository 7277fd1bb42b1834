"""Runtime backends: what every body (the embedded simulator, a Java server) must provide.

A backend executes validated :class:`runtime.contract.skills.Action` s and returns an :class:`Outcome`:
the agent-facing ``result`` fields plus the rule transitions the action exercised, which only the
hidden evaluator reads. ``snapshot()`` is the agent-visible state that
``runtime.contract.observation`` turns into observations, identically for every backend.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from runtime.contract.skills import Action


@dataclass(frozen=True)
class Transition:
    """A rule-governed transition an action ran (never shown to the agent).

    ``kind`` is ``craft`` (``target`` = the submitted grid as canonical JSON), ``mine``
    (``target`` = block, ``tool`` = held tool), ``attack`` (entity, weapon) or ``cook``
    (input item at ``station``).
    """

    kind: str
    target: str
    station: str | None = None
    tool: str | None = None


@dataclass
class Outcome:
    ok: bool
    message: str
    reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    transitions: list[Transition] = field(default_factory=list)


@dataclass(frozen=True)
class Snapshot:
    """Agent-visible state of the body and its surroundings (no rule or world identity)."""

    inventory: dict[str, int]
    mainhand: str | None
    xp_level: int
    position: tuple[int, int, int]
    health: float
    food: int
    alive: bool
    effects: dict[str, int]                         # effect -> amplifier
    biome: str
    advancements: tuple[str, ...]                   # completed, in completion order
    nearby_blocks: dict[str, float]                 # reachable block id -> nearest distance
    nearby_drops: dict[str, float]                  # dropped item -> nearest distance
    nearby_entities: dict[str, tuple[int, float]]   # living entity -> (count, nearest distance)


class Backend(Protocol):
    def reset(self, seed: int) -> None: ...

    def execute(self, action: Action) -> Outcome: ...

    def snapshot(self, surroundings: bool = True) -> Snapshot:
        """The agent-visible state; ``surroundings=False`` leaves the nearby fields empty (cheap)."""


def failure(reason: str, message: str, **details: Any) -> Outcome:
    return Outcome(False, message, reason, details)
