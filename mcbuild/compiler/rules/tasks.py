"""What a task is (milestones, values, prerequisites, checkers) and what every world provides.

The task definitions themselves are spec files (``specs/tasks/*.yaml``, ``kind: task``), read and
validated by ``mcbuild.compiler.spec.task``; this module holds the plain data types every layer shares.
A milestone is completed either by a vanilla advancement (verified by the game) or, when it has
no advancement, by all of its rule-based :class:`Checker` s holding at once (checked by
``mcbuild.runtime.contract.checkers`` after every action). ``world_resources`` reads
``catalogs/tasks.yaml``: the blocks and creatures every benchmark world places near spawn.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
import yaml

from mcbuild.compiler.core.paths import CATALOGS

BLOCK_COUNTS = ("count_in_box_at_least", "count_in_box_at_most")
POSITIONS = ("position_inside_box", "position_near_with_facing")
EVENTS = ("craft_item", "mine_block", "kill_entity", "pickup")      # counted since reset


@dataclass(frozen=True)
class Box:
    """An axis-aligned box relative to the episode's start position (both corners inclusive)."""

    low: tuple[int, int, int]
    high: tuple[int, int, int]

    def contains(self, offset: tuple[int, int, int]) -> bool:
        return all(lo <= v <= hi for lo, v, hi in zip(self.low, offset, self.high))


@dataclass(frozen=True)
class Checker:
    """One rule-based condition; ``target`` is an item, block or entity id (None for positions)."""

    type: str
    target: str | None = None
    count: int = 1
    box: Box | None = None
    point: tuple[int, int, int] | None = None       # position_near_with_facing: spawn-relative
    radius: float = 0.0
    facing: str | None = None                        # north | south | east | west
    kind: str = ""                                   # box counts: "block" or "entity"


@dataclass(frozen=True)
class Milestone:
    advancement: str | None
    value: int
    id: str = ""
    description: str = ""
    requires: tuple[str, ...] = ()
    checkers: tuple[Checker, ...] = ()

    @property
    def code(self) -> str:
        """Short code used in prompts and tables, e.g. 'mine_stone'."""
        return self.id or (self.advancement or "").rsplit("/", 1)[-1]

    @property
    def key(self) -> str:
        """What marks it completed: its advancement id, or ``task:<code>`` for a checked milestone."""
        return self.advancement or f"task:{self.code}"


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    budget: int
    milestones: tuple[Milestone, ...]
    instruction: str = ""

    @property
    def final(self) -> Milestone:
        return self.milestones[-1]

    @property
    def checked(self) -> tuple[Milestone, ...]:
        """The milestones completed by rule-based checkers rather than advancements."""
        return tuple(m for m in self.milestones if m.advancement is None)

    def score(self, completed: set[str] | frozenset[str]) -> int:
        """Value of the deepest completed milestone (not cumulative); 0 if none. ``completed``
        holds milestone keys (advancement ids, ``task:<code>``)."""
        return max([m.value for m in self.milestones if m.key in completed], default=0)


@lru_cache(maxsize=1)
def _resources() -> dict:
    return yaml.safe_load((CATALOGS / "tasks.yaml").read_text())


def world_resources() -> dict[str, list[str]]:
    return dict(_resources()["world_resources"])
