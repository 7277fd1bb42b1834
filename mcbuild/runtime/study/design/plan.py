"""Study plan: the deterministic list of episodes a :class:`StudyConfig` expands to.

Every episode has

* an **id** -- the first 16 hex digits of the sha256 of the canonical JSON of
  its identifying fields (world, condition, task, configuration, model,
  budget, disclosure, repetition).  The id never depends on the order of the
  config lists, the study name or the seed, and stays the same when an
  infrastructure fault makes the episode rerun;
* a **seed** derived from the study's base seed and the id.

The plan is also what :func:`mcbuild.runtime.study.metrics.check_records` validates
stored records against (Appendix D).
"""
from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from mcbuild.compiler.core.canonical import compact
from mcbuild.compiler.worlds.layout import VANILLA
from mcbuild.runtime.records import EpisodeIdentity
from mcbuild.runtime.study.design.config import StudyConfig

__all__ = ["PlanEntry", "episode_id", "episode_seed", "build_plan", "expected_map", "count_by", "plan_digest"]

ID_LENGTH = 16


def episode_id(
    *, world: str, condition: str, task: str, configuration: str, model: str, budget: int, disclosure: str, repetition: int
) -> str:
    """Deterministic episode id (sha256 of canonical JSON, shortened)."""
    key = {
        "world": str(world),
        "condition": str(condition).lower(),
        "task": str(task),
        "configuration": str(configuration),
        "model": str(model),
        "budget": int(budget),
        "disclosure": str(disclosure),
        "repetition": int(repetition),
    }
    return hashlib.sha256(compact(key).encode("utf-8")).hexdigest()[:ID_LENGTH]


def episode_seed(base_seed: int, eid: str) -> int:
    """Per-episode seed (31-bit) from the base seed and the episode id."""
    h = hashlib.sha256(f"{int(base_seed)}:{eid}".encode("utf-8")).digest()
    return int.from_bytes(h[:8], "big") % (2**31 - 1)


@dataclass(frozen=True, kw_only=True)
class PlanEntry(EpisodeIdentity):
    """One planned episode: its :class:`~mcbuild.runtime.records.EpisodeIdentity`, the seed it runs with,
    the agent implementation behind ``configuration`` (they differ only when a study maps
    configurations onto stand-ins) and the backend. ``world`` is the Vanilla world id; Mirror
    episodes run in its ``condition`` copy."""

    seed: int
    agent: str
    backend: str = "sim"

    @property
    def is_vanilla(self) -> bool:
        return self.condition == VANILLA

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}     # every field is a scalar

    @classmethod
    def from_dict(cls, d: dict) -> "PlanEntry":
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


def build_plan(config: StudyConfig) -> list[PlanEntry]:
    """Expand a config into its episodes, in a fixed world-major order (world, task,
    model, configuration, condition, repetition), so that a partial run (``--limit``)
    completes whole Vanilla/Mirror pairs first.  Raises if two episodes share an id."""
    budgets = config.task_budgets()
    runs: list[tuple[str, str, list[str]]] = [(c, "hidden", config.conditions) for c in config.configurations]
    runs += [(c, "disclosed", config.mirror_conditions) for c in config.disclosure.configurations]
    out: list[PlanEntry] = []
    seen: set[str] = set()
    for world in config.worlds:
        biome = config.biome_of(world)
        for task in config.tasks:
            for model in config.models:
                for configuration, disclosure, conditions in runs:
                    for condition in conditions:
                        for rep in range(config.repetitions):
                            fields: dict[str, Any] = dict(
                                world=world, condition=condition, task=task, configuration=configuration,
                                model=model, budget=budgets[task], disclosure=disclosure, repetition=rep,
                            )
                            eid = episode_id(**fields)
                            if eid in seen:  # pragma: no cover - sha256 collision on 64 bits
                                raise RuntimeError(f"episode id collision: {eid}")
                            seen.add(eid)
                            out.append(PlanEntry(
                                episode_id=eid, biome=biome, seed=episode_seed(config.base_seed, eid),
                                agent=config.agent_for(configuration), backend=config.backend, **fields,
                            ))
    return out


def expected_map(plan: Iterable[PlanEntry]) -> dict[str, dict]:
    """Episode id -> plan fields, the ``expected`` argument of ``metrics.check_records``."""
    return {e.episode_id: e.to_dict() for e in plan}


def count_by(plan: Iterable[PlanEntry], fields: str | Sequence[str]) -> Counter:
    fs = (fields,) if isinstance(fields, str) else tuple(fields)
    return Counter(tuple(getattr(e, f) for f in fs) if len(fs) > 1 else getattr(e, fs[0]) for e in plan)


def plan_digest(plan: Iterable[PlanEntry]) -> str:
    """sha256 over the sorted episode ids and seeds: equal digests = same episodes."""
    items = sorted(f"{e.episode_id}:{e.seed}" for e in plan)
    return hashlib.sha256("\n".join(items).encode()).hexdigest()
