"""What an executor reports for one episode, and the one rule that turns it into the stored record.

:class:`EpisodeOutcome` is the episode's :class:`~mcbuild.runtime.records.EpisodeResult` plus what only the
run knows: token usage, the trajectory, the hidden evaluator's events, the end reason, and the
identity fields the backend actually ran (``None``: as planned). :func:`stored_fields` is the one
place where the plan and the backend's report meet: **what the backend reports wins over the
plan**, for every reported field, the seed included, so a mismatch reaches the record (and
``metrics.check_records`` excludes it) instead of being papered over by the plan.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping

from mcbuild.runtime.records import IDENTITY_FIELDS, RESULT_FIELDS, EpisodeResult

__all__ = ["EpisodeOutcome", "REPORTED_FIELDS", "stored_fields"]

#: The plan fields a backend reports back (what it actually ran).
REPORTED_FIELDS = ("biome", "world", "condition", "task", "budget", "seed")


@dataclass(frozen=True, kw_only=True)
class EpisodeOutcome(EpisodeResult):
    """What one episode produced, as its executor reports it.

    ``trajectory`` has one JSON-able step per action (with the model calls made for it) and
    ``events`` is the hidden evaluator's log. ``biome`` … ``seed`` (:data:`REPORTED_FIELDS`) are what
    the backend actually ran (None: as planned).
    """

    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0          # of tokens_in, served from the provider's prompt cache
    trajectory: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    end_reason: str = ""
    biome: str | None = None
    world: str | None = None
    condition: str | None = None
    task: str | None = None
    budget: int | None = None
    seed: int | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "EpisodeOutcome":
        unknown = sorted(set(data) - {f.name for f in fields(cls)})
        if unknown:
            raise TypeError(f"unknown outcome field(s): {', '.join(unknown)}")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def stored_fields(entry: Mapping[str, Any], outcome: EpisodeOutcome) -> dict[str, Any]:
    """The record of a finished episode as the store keeps it: the plan entry's identity, seed and
    agent, each reported field replaced by the backend's value when it reports one, and the
    outcome's result and usage (``EpisodeRecord.from_dict`` reads it; the store writes it)."""
    row = {name: entry[name] for name in (*IDENTITY_FIELDS, "seed")}
    row["agent"] = entry.get("agent") or entry["configuration"]
    row.update({name: v for name in REPORTED_FIELDS if (v := getattr(outcome, name)) is not None})
    row.update({name: getattr(outcome, name) for name in RESULT_FIELDS})
    row.update(tokens_in=outcome.tokens_in, tokens_out=outcome.tokens_out, tokens_cached=outcome.tokens_cached,
               end_reason=outcome.end_reason)
    return row
