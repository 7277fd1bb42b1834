"""The ``kind: task`` spec model (``specs/tasks/*.yaml``) and the registry of tasks.

A task holds an instruction, a budget and milestones with values and prerequisites (a DAG over
milestone ids). A milestone is a vanilla advancement or one or more rule-based checkers, all of
which must hold at once. Boxes and points are relative to the episode's start position. Score is
the value of the deepest completed milestone; the final milestone is the one worth 100.
:func:`tasks` reads every task spec of ``specs/tasks/`` (sorted by file name) into the plain
types of ``mcbuild.compiler.rules.tasks``; a bad file is a one-line ``SpecError``.
"""
from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal, Union

from pydantic import Field, field_validator, model_validator

from mcbuild.compiler.core.errors import SpecError
from mcbuild.compiler.core.paths import SPECS
from mcbuild.compiler.rules.catalog import load as load_catalog
from mcbuild.compiler.rules.rulebook import vanilla
from mcbuild.compiler.rules.tasks import Box, Checker, Milestone, Task
from mcbuild.compiler.spec.base import SpecId, Strict, read_yaml, validate

TASKS_DIR = SPECS / "tasks"
Vec = tuple[int, int, int]
Id = Annotated[str, Field(pattern=r"^minecraft:[a-z0-9_./]+$")]
MAX_SPAN = 64          # boxes and points lie within this many blocks of the start
MAX_VOLUME = 4096      # blocks a block-count box may hold (it is counted after every action)


class BoxSpec(Strict):
    """A box relative to the start position: ``min`` and ``max`` corners, both inclusive."""

    min: Vec
    max: Vec

    @model_validator(mode="after")
    def _ordered(self) -> "BoxSpec":
        for axis, lo, hi in zip("xyz", self.min, self.max):
            if lo > hi:
                raise ValueError(f"min.{axis} {lo} is above max.{axis} {hi}")
            if max(abs(lo), abs(hi)) > MAX_SPAN:
                raise ValueError(f"the box must lie within {MAX_SPAN} blocks of the start along {axis}")
        return self

    @property
    def volume(self) -> int:
        return math.prod(hi - lo + 1 for lo, hi in zip(self.min, self.max))


def _known(kind: str, value: str) -> str:
    cat = load_catalog()
    known = {"item": cat.items, "block": cat.blocks, "entity": cat.entities}[kind]
    if value not in known:
        raise ValueError(f"unknown {kind} {value!r}")
    return value


class InventoryHas(Strict):
    type: Literal["inventory_has"]
    item: Id
    count: int = Field(1, ge=1, le=2304)

    @field_validator("item")
    @classmethod
    def _item(cls, v: str) -> str:
        return _known("item", v)


class CountInBox(Strict):
    """Blocks (``block``) or living mobs (``entity``) inside ``box``: at least / at most ``count``."""

    type: Literal["count_in_box_at_least", "count_in_box_at_most"]
    block: Id | None = None
    entity: Id | None = None
    count: int = Field(ge=0, le=4096)
    box: BoxSpec

    @model_validator(mode="after")
    def _one_target(self) -> "CountInBox":
        if (self.block is None) == (self.entity is None):
            raise ValueError("give exactly one of block or entity")
        if self.block:
            _known("block", self.block)
            if self.box.volume > MAX_VOLUME:
                raise ValueError(f"a block-count box holds at most {MAX_VOLUME} blocks, this one {self.box.volume}")
        else:
            assert self.entity is not None              # exactly one of block and entity, checked above
            _known("entity", self.entity)
        if self.type == "count_in_box_at_least" and self.count < 1:
            raise ValueError("count_in_box_at_least needs count >= 1")
        return self


class PositionInside(Strict):
    type: Literal["position_inside_box"]
    box: BoxSpec


class PositionNear(Strict):
    """Within ``radius`` blocks of ``point`` (start-relative), facing ``facing``."""

    type: Literal["position_near_with_facing"]
    point: Vec
    radius: float = Field(gt=0, le=16)
    facing: Literal["north", "south", "east", "west"]

    @field_validator("point")
    @classmethod
    def _near(cls, v: Vec) -> Vec:
        if max(abs(c) for c in v) > MAX_SPAN:
            raise ValueError(f"the point must lie within {MAX_SPAN} blocks of the start")
        return v


class Event(Strict):
    """At least ``count`` events since reset: items crafted or picked up, blocks mined, mobs killed."""

    type: Literal["craft_item", "mine_block", "kill_entity", "pickup"]
    target: Id
    count: int = Field(1, ge=1, le=2304)

    @model_validator(mode="after")
    def _target(self) -> "Event":
        _known({"craft_item": "item", "pickup": "item", "mine_block": "block", "kill_entity": "entity"}[self.type],
               self.target)
        return self


CheckerSpec = Annotated[Union[InventoryHas, CountInBox, PositionInside, PositionNear, Event], Field(discriminator="type")]


class MilestoneSpec(Strict):
    id: SpecId
    description: str = Field("", max_length=300)
    value: int = Field(ge=1, le=100)
    requires: list[SpecId] = []
    advancement: Annotated[str, Field(pattern=r"^minecraft:[a-z0-9_/]+$")] | None = None
    checkers: list[CheckerSpec] = Field([], max_length=8)

    @model_validator(mode="after")
    def _one_kind(self) -> "MilestoneSpec":
        if (self.advancement is None) == (not self.checkers):
            raise ValueError("a milestone is either an advancement or a list of checkers")
        if self.advancement is not None and self.advancement not in vanilla().advancements:
            raise ValueError(f"unknown advancement {self.advancement!r}")
        if self.advancement is None and not self.description:
            raise ValueError("a checked milestone needs a description (the agent sees it)")
        return self


class TaskSpec(Strict):
    """One task: instruction, budget, milestones and their prerequisite DAG."""

    schema_version: Literal["1.0"]
    kind: Literal["task"]
    id: SpecId
    title: str = Field(min_length=1, max_length=80)
    instruction: str = Field("", max_length=600)
    budget: int = Field(ge=1, le=1000)
    milestones: list[MilestoneSpec] = Field(min_length=1, max_length=32)

    @field_validator("milestones")
    @classmethod
    def _dag(cls, milestones: list[MilestoneSpec]) -> list[MilestoneSpec]:
        ids = [m.id for m in milestones]
        if len(set(ids)) != len(ids):
            raise ValueError("milestone ids must be unique")
        graph = {m.id: m.requires for m in milestones}
        for m in milestones:
            for r in m.requires:
                if r not in graph:
                    raise ValueError(f"milestone {m.id!r} requires unknown milestone {r!r}")
        cycle = find_cycle(graph)
        if cycle:
            raise ValueError(f"the prerequisites form a cycle: {' -> '.join(cycle)}")
        finals = [m.id for m in milestones if m.value == 100]
        if finals != [ids[-1]]:
            raise ValueError("exactly one milestone, the last, must be worth 100 (the final milestone)")
        return milestones


def find_cycle(graph: dict[str, list[str]]) -> list[str]:
    """One cycle of ``graph`` (node -> prerequisites) as a closed path, or [] if it is acyclic."""
    state: dict[str, int] = {}          # 1 = on the current path, 2 = finished
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return []

    for node in graph:
        if node not in state and (found := visit(node)):
            return found
    return []


def to_task(spec: TaskSpec) -> Task:
    """The plain task a spec describes."""
    return Task(spec.id, spec.title, spec.budget, tuple(_milestone(m) for m in spec.milestones), spec.instruction)


def _milestone(m: MilestoneSpec) -> Milestone:
    return Milestone(m.advancement, m.value, m.id, m.description, tuple(m.requires), tuple(_checker(c) for c in m.checkers))


def _box(b: BoxSpec | None) -> Box | None:
    return None if b is None else Box(b.min, b.max)


def _checker(c: CheckerSpec) -> Checker:
    if isinstance(c, InventoryHas):
        return Checker(c.type, c.item, c.count)
    if isinstance(c, CountInBox):
        return Checker(c.type, c.block or c.entity, c.count, _box(c.box), kind="block" if c.block else "entity")
    if isinstance(c, PositionInside):
        return Checker(c.type, box=_box(c.box))
    if isinstance(c, PositionNear):
        return Checker(c.type, point=c.point, radius=c.radius, facing=c.facing)
    return Checker(c.type, c.target, c.count)


def load_task_spec(path: str | Path) -> TaskSpec:
    path = Path(path)
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise SpecError(str(path), "", "a spec must be a mapping")
    return validate(TaskSpec, data, str(path))


@lru_cache(maxsize=4)
def _registry(folder: Path) -> dict[str, Task]:
    out: dict[str, Task] = {}
    for path in sorted(folder.glob("*.yaml")):
        spec = load_task_spec(path)
        if spec.id != path.stem:
            raise SpecError(str(path), "id", f"must match the file name {path.stem!r}")
        out[spec.id] = to_task(spec)
    return out


def tasks(folder: Path = TASKS_DIR) -> dict[str, Task]:
    """Every task of ``specs/tasks/`` by id (a fresh dict; the tasks are immutable)."""
    return dict(_registry(folder))
