"""What a finished episode leaves behind: its summary, encounters, record and JSONL trajectory.

The trajectory holds the hidden evaluator's events, so a trace is for the harness and the
analysis, never for an agent.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from mcbuild.compiler.core.canonical import atomic_write, compact
from mcbuild.runtime.episode.episode import Episode
from mcbuild.runtime.records import Encounter, EpisodeRecord, build_encounters


def encounters(ep: Episode) -> tuple[Encounter, ...]:
    """The first action that ran into each changed rule, with what followed it (paper §3.6)."""
    steps = ep.trajectory
    return build_encounters([t["signature"] for t in steps], [t["score"] for t in steps],
                            [(e["action"], e["rule"]) for t in steps for e in t["evaluator"]])


def summary(ep: Episode) -> dict[str, Any]:
    s = ep.setup
    return {"world": s.world, "condition": s.condition, "task": s.task.id, "budget": s.budget, "seed": s.seed,
            "actions": ep.used, "score": ep.score, "success": ep.success, "end": ep.end_reason,
            "milestones_met": ep.milestones_met,
            "encounters": [e.to_dict() for e in encounters(ep)]}


def result(ep: Episode) -> dict[str, Any]:
    """The :class:`~mcbuild.runtime.records.EpisodeResult` fields of a finished episode but its cost (the
    study executor's outcome and :func:`record` are both made from them)."""
    return {"score": float(ep.score), "success": bool(ep.success), "actions": int(ep.used),
            "success_action": ep.success_action if ep.success else None, "encounters": encounters(ep),
            "milestones_met": len(ep.milestones_met), "milestones_total": len(ep.setup.task.milestones)}


def record(ep: Episode, episode_id: str, configuration: str, model: str = "scripted", repetition: int = 0,
           disclosure: str = "hidden", cost_usd: float = 0.0) -> EpisodeRecord:
    s = ep.setup
    return EpisodeRecord(episode_id=episode_id, biome=s.biome, world=s.world, condition=s.condition, task=s.task.id,
                         configuration=configuration, model=model, budget=s.budget, disclosure=disclosure,
                         repetition=repetition, cost_usd=cost_usd, **result(ep))


def write_trace(ep: Episode, path: Path) -> None:
    """The trajectory as JSONL: a header, one line per action, and the summary."""
    s = ep.setup
    lines = [{"type": "episode", "world": s.world, "condition": s.condition, "task": s.task.id,
              "budget": s.budget, "seed": s.seed, "changed_rules": sorted(ep.changed_rules)}]
    lines += [{"type": "step", **t} for t in ep.trajectory]
    lines.append({"type": "end", **summary(ep)})
    atomic_write(path, "".join(compact(line) + "\n" for line in lines).encode("utf-8"), tool="episode")
