"""The primitives every backend supplies to the shared skills (``mcbuild.runtime.skills``).

A skill's argument checks, the order of its preconditions, its reason codes and its outcome are
written once, over this protocol; a backend implements only these queries of the body and its
surroundings and these atomic game operations (the simulator over its arrays and the world's
rules, the server backend over bridge calls). An operation the game refuses raises
:class:`Refused` with a contract reason code.
"""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Iterable, Mapping, NamedTuple, Protocol

from mcbuild.runtime.body.config import BodyConfig
from mcbuild.runtime.body.policy import Policy
from mcbuild.runtime.contract.backend import Outcome, Transition, failure

if TYPE_CHECKING:
    from mcbuild.compiler.rules.rulebook import Rulebook

Pos = tuple[int, int, int]
Region = tuple[int, int]


class Target(NamedTuple):
    """A block the body may work on: its id, position and reach (1 direct, 2 behind one obstruction)."""

    block: str
    pos: Pos
    reach: int


class Refused(Exception):
    """The game refused an operation: ``reason`` is a contract reason code."""

    def __init__(self, reason: str, message: str, **details: Any):
        super().__init__(message)
        self.reason, self.message, self.details = reason, message, details

    def outcome(self, transitions: list[Transition] | None = None) -> Outcome:
        out = failure(self.reason, self.message, **self.details)
        out.transitions = list(transitions or [])
        return out


class Primitives(Protocol):
    """One body in one world, as the shared skills see it."""

    rules: "Rulebook"
    config: BodyConfig
    heading: Region             # the direction of its last move between regions

    @property
    def policy(self) -> Policy:
        """The choices the body makes on its own (tool, fuel, room)."""

    @property
    def visited(self) -> set[Region]:
        """The regions the body has been in (its exploration memory)."""

    # ------------------------------------------------------------------ queries
    def inventory(self) -> Mapping[str, int]:
        """What the body owns (never the packs' marker items)."""

    def held(self) -> str | None:
        """The main-hand item as the skills set it, while it is still owned."""

    def xp_level(self) -> int: ...

    def position(self) -> Pos:
        """The block the feet are in."""

    def block_at(self, pos: Pos) -> str | None:
        """The block at ``pos`` (None where nothing is known)."""

    def blocks(self, ids: frozenset[str]) -> Iterable[Target]:
        """Blocks of these ids the body may work on within the scan radius, nearest first; each
        read when the iteration reaches it."""

    def obstructions(self, pos: Pos) -> list[tuple[str, Pos]]:
        """The blocks that may be cleared to work on the reach-2 block at ``pos``, best first."""

    def exposed(self, pos: Pos) -> bool:
        """The block at ``pos`` (next to the body) touches the space the body moves in."""

    def surface(self, x: int, z: int) -> int | None:
        """The feet height on the highest ground of the column (None: unknown)."""

    def room_above(self, height: int) -> bool:
        """Whether the body can pillar ``height`` blocks where it stands (open space above)."""

    def living(self, entity: str) -> int:
        """How many living ``entity`` are within the scan radius."""

    def dropped(self, item: str) -> bool:
        """Whether a dropped stack of ``item`` lies within the collect radius."""

    def sight(self, target: str) -> tuple[str, Pos] | None:
        """The nearest block or living entity matching ``target`` in view, and the spot to go to."""

    def recall(self, target: str) -> tuple[str, Pos] | None:
        """``target`` as remembered from the regions visited before (None: not remembered)."""

    def bounds(self) -> tuple[int, int, int, int]:
        """The regions that may be explored: (x0, x1, z0, z1), inclusive."""

    # ------------------------------------------------------------------ operations
    def go(self, pos: Pos) -> None:
        """Move to ``pos`` (as near as the way allows)."""

    def travel(self, region: Region) -> None:
        """Move to the middle of ``region``."""

    def stand_by(self, pos: Pos) -> bool:
        """Stand where the block at ``pos`` can be worked on; False when there is no such spot."""

    def hold(self, item: str) -> None:
        """Record ``item`` as the main hand (an operation already holding it, or about to)."""

    def dig(self, pos: Pos, block: str, tool: str | None, pickup: bool) -> Counter[str] | None:
        """Break ``block`` at ``pos`` holding ``tool``. With ``pickup`` the drops are returned for
        :meth:`pick_up`; without, they stay where they fall. None: it could not be broken."""

    def dig_above(self, pos: Pos, block: str, tool: str | None) -> bool:
        """Break ``block`` over the body's head holding ``tool``; its drops fall onto the body,
        which takes them in while there is room. False: it could not be broken."""

    def pick_up(self, loose: Counter[str]) -> Counter[str]:
        """Take in the ``loose`` drops of :meth:`dig` and :meth:`kill` while there is room; returns
        what stays on the ground."""

    def place(self, block: str) -> Pos | None:
        """Place one ``block`` on the nearest open spot; where, or None without a spot."""

    def pillar(self, block: str, height: int) -> None:
        """Place ``height`` blocks under the feet, climbing them (:class:`Refused`: no room)."""

    def collect(self, item: str) -> int:
        """Pick up the nearest dropped stack of ``item`` (as much as fits); how many were taken."""

    def kill(self, entity: str, count: int, weapon: str | None) -> tuple[int, Counter[str]]:
        """Kill up to ``count`` of the nearest ``entity``; (killed, their loose drops)."""

    def craft(self, grid: list[list[str | None]], station: str, table: Pos | None) -> tuple[str, int]:
        """Submit ``grid`` at ``station`` (the table at ``table``) and take the result: (item, count)."""

    def smelt(self, item: str, station: str, count: int, fuel: Counter[str], at: Pos) -> None:
        """Process ``count`` ``item`` burning ``fuel`` in the ``station`` at ``at``."""

    def enchant(self, item: str, option: str, at: Pos) -> None:
        """Enchant ``item`` with ``option`` at the enchanting table at ``at``."""

    def equip(self, item: str) -> None:
        """Hold ``item`` in the main hand."""

    def wait(self, ticks: int) -> None: ...
