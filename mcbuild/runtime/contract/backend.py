"""What every backend (the embedded simulator, a Java server) provides, and how one is opened.

A :class:`Backend` executes validated :class:`mcbuild.runtime.contract.skills.Action` s and returns an
:class:`Outcome`: the agent-facing ``result`` fields plus the rule :class:`Transition` s the
action exercised, which only the hidden evaluator reads. ``snapshot()`` is the agent-visible
state that ``mcbuild.runtime.contract.observation`` turns into observations, identically for every
backend. A :class:`BackendFactory` opens a backend on one built save, already reset to a seed;
``mcbuild.runtime.backends.registry`` names the factories. :class:`Provisioning` is the harness's way to
hand the body items (tests, benchmarks, server checks): nothing agent-facing reaches it. A
backend that runs tasks with box checkers also implements
``mcbuild.runtime.contract.checkers.BoxCounter.count_in_box`` (only the hidden checkers call it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple, Protocol

from mcbuild.runtime.contract.skills import Action

if TYPE_CHECKING:
    from mcbuild.compiler.rules.rulebook import Rulebook


class Transition(NamedTuple):
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


class Snapshot(NamedTuple):
    """Agent-visible state of the body and its surroundings (no rule or world identity). A named
    tuple: immutable, and made at the cost of a tuple (a backend makes one per action)."""

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
    facing: str | None = None                       # north | south | east | west (None: unknown)
    durability: dict[str, tuple[int, ...]] = {}     # item that wears out -> uses left in each owned
    #                                                 copy, fewest first (never mutated: shared default)

    def seeing(self, around: "Surroundings") -> "Snapshot":
        """This state with its nearby fields filled from ``around``."""
        return Snapshot(*self[:10], *around, self.facing, self.durability)


# nearby blocks, drops and living entities, each sorted by key (the nearby fields of a Snapshot)
Surroundings = tuple[dict[str, float], dict[str, float], dict[str, tuple[int, float]]]


def cardinal(dx: float, dz: float) -> str | None:
    """The cardinal direction of a horizontal vector (its larger axis, east/west on a tie; +z is
    south), None for no vector: the convention of ``Snapshot.facing`` on every backend."""
    if not dx and not dz:
        return None
    if abs(dx) >= abs(dz):
        return "east" if dx > 0 else "west"
    return "south" if dz > 0 else "north"


class Provisioning(Protocol):
    """Harness-only changes to a body; never reachable from an agent."""

    def give(self, items: Mapping[str, int]) -> None:
        """Put ``items`` into the body's inventory (as much as fits)."""


class Backend(Protocol):
    @property
    def provisioning(self) -> Provisioning:
        """Harness-only changes to the body (never reachable from an agent)."""

    def reset(self, seed: int) -> None:
        """Start over on the pristine save: blocks, entities, the packs' load and setup functions."""

    def execute(self, action: Action) -> Outcome: ...

    def snapshot(self, surroundings: bool = True) -> Snapshot:
        """The agent-visible state; ``surroundings=False`` leaves the nearby fields empty (cheap)."""

    def surroundings(self) -> Surroundings:
        """The nearby fields of the current state alone (``snapshot(False).seeing(surroundings())``
        equals ``snapshot()``)."""

    def close(self) -> None:
        """Release what the backend holds (a pooled world copy, a server); it is unusable afterwards."""


class BackendFactory(Protocol):
    """Opens backends of one kind; one instance per process holds that kind's caches."""

    name: str

    def open(self, save: Path, rules: "Rulebook", seed: int) -> Backend:
        """A backend on the built save ``save`` (whose rules are ``rules``), reset to ``seed``."""


def failure(reason: str, message: str, **details: Any) -> Outcome:
    return Outcome(False, message, reason, details)


def inventory_change(before: Mapping[str, int], after: Mapping[str, int]) -> tuple[dict[str, int], dict[str, int]]:
    """(gained, lost) from inventory ``before`` to ``after``: the positive counts, each by item in
    item order (an item missing from one side counts 0). The one inventory difference: an action's
    ``gained``/``lost``, the episode's ``inventory_delta`` and what the agents see change."""
    gained: dict[str, int] = {}
    lost: dict[str, int] = {}
    for i in sorted(before.keys() | after.keys()):
        change = after.get(i, 0) - before.get(i, 0)
        if change > 0:
            gained[i] = change
        elif change < 0:
            lost[i] = -change
    return gained, lost
