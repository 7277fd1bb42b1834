"""Record validation against the study plan before aggregation (Appendix D)."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from mcbuild.runtime.records import EpisodeRecord

#: Fields checked against the study plan before aggregation (Appendix D).
CHECKED_FIELDS = ("biome", "world", "condition", "task", "configuration", "disclosure", "budget")
#: Additionally checked when the plan entry provides them.
_OPTIONAL_CHECKED_FIELDS = ("model", "repetition")
_MISSING = object()


@dataclass(frozen=True)
class Exclusion:
    """A record left out of aggregation and why."""

    episode_id: str | None
    reasons: tuple[str, ...]
    record: Any = field(compare=False, repr=False)


def _plan_value(entry: Any, name: str) -> Any:
    if isinstance(entry, Mapping):
        return entry.get(name, _MISSING)
    return getattr(entry, name, _MISSING)


def _norm_value(name: str, value: Any) -> Any:
    if name in ("budget", "repetition"):
        try:
            return int(value)
        except (TypeError, ValueError):
            return value
    if name == "condition":
        return str(value).lower()
    return value


def _parse(item: EpisodeRecord | Mapping[str, Any]) -> tuple[EpisodeRecord | None, str | None]:
    """The record of ``item``, or ``None`` and why it is malformed."""
    if isinstance(item, EpisodeRecord):
        return item, None
    try:
        return EpisodeRecord.from_dict(item), None
    except (KeyError, TypeError, ValueError) as exc:
        return None, f"malformed record: {type(exc).__name__}: {exc}"


def _plan_mismatches(rec: EpisodeRecord, plan: Any) -> list[str]:
    """Reasons why ``rec`` disagrees with its plan entry."""
    reasons: list[str] = []
    for name in CHECKED_FIELDS + _OPTIONAL_CHECKED_FIELDS:
        want = _plan_value(plan, name)
        if want is _MISSING:
            if name in CHECKED_FIELDS:
                reasons.append(f"study plan lacks {name}")
            continue
        have = getattr(rec, name)
        if _norm_value(name, have) != _norm_value(name, want):
            reasons.append(f"{name}: recorded {have!r}, expected {want!r}")
    return reasons


def check_records(
    records: Iterable[EpisodeRecord | Mapping[str, Any]],
    expected: Mapping[str, Any],
) -> tuple[list[EpisodeRecord], list[Exclusion]]:
    """Validate records against the study plan before aggregation (Appendix D).

    ``expected`` maps episode id -> plan entry (mapping or object) giving at
    least biome, world, condition, task, configuration, disclosure and budget;
    ``model`` and ``repetition`` are checked too when the entry has them.
    A record is excluded (with reasons) when it is malformed, its id is not in
    the plan, its id occurs more than once (all copies are excluded: reruns
    must replace, not add, records), or any checked field differs from the plan.
    Returns ``(valid, excluded)`` in input order.
    """
    parsed = [(item, *_parse(item)) for item in records]
    counts: dict[str, int] = defaultdict(int)
    for _, rec, _err in parsed:
        if rec is not None:
            counts[rec.episode_id] += 1

    valid: list[EpisodeRecord] = []
    excluded: list[Exclusion] = []
    for item, rec, err in parsed:
        if rec is None:
            eid = item.get("episode_id") if isinstance(item, Mapping) else None
            excluded.append(Exclusion(None if eid is None else str(eid), (err or "malformed record",), item))
            continue
        reasons: list[str] = []
        if counts[rec.episode_id] > 1:
            reasons.append(f"duplicate episode id ({counts[rec.episode_id]} records)")
        plan = expected.get(rec.episode_id)
        if plan is None:
            reasons.append("episode id not in study plan")
        else:
            reasons += _plan_mismatches(rec, plan)
        if reasons:
            excluded.append(Exclusion(rec.episode_id, tuple(reasons), item))
        else:
            valid.append(rec)
    return valid, excluded


def missing_episodes(valid: Iterable[EpisodeRecord], expected: Mapping[str, Any]) -> list[str]:
    """Planned episode ids without a valid record (to rerun), in plan order."""
    have = {r.episode_id for r in valid}
    return [eid for eid in expected if eid not in have]
