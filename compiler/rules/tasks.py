"""Task definitions (milestones, values, budgets) loaded from catalogs/tasks.yaml."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import yaml

from compiler.core.paths import CATALOGS


@dataclass(frozen=True)
class Milestone:
    advancement: str
    value: int

    @property
    def code(self) -> str:
        """Short code used in prompts and tables, e.g. 'mine_stone'."""
        return self.advancement.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    budget: int
    milestones: tuple[Milestone, ...]

    @property
    def final(self) -> Milestone:
        return self.milestones[-1]

    def score(self, completed: set[str] | frozenset[str]) -> int:
        """Value of the deepest completed milestone (not cumulative); 0 if none."""
        return max([m.value for m in self.milestones if m.advancement in completed], default=0)


@lru_cache(maxsize=1)
def _raw() -> dict:
    return yaml.safe_load((CATALOGS / "tasks.yaml").read_text())


def tasks() -> dict[str, Task]:
    out = {}
    for tid, t in _raw()["tasks"].items():
        ms = tuple(Milestone(m["advancement"], int(m["value"])) for m in t["milestones"])
        out[tid] = Task(tid, t["title"], int(t["budget"]), ms)
    return out


def world_resources() -> dict[str, list[str]]:
    return dict(_raw()["world_resources"])
