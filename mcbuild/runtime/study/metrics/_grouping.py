"""Grouping helpers shared by the metric modules: ``by`` keys, groups and exact means."""
from __future__ import annotations

import math
from typing import Callable, Iterable, Mapping, Sequence, TypeVar

from mcbuild.runtime.records import EpisodeRecord

T = TypeVar("T")
R = TypeVar("R")


def norm_by(by: str | Sequence[str]) -> tuple[str, ...]:
    """``by`` (one field name or several) as a tuple of field names."""
    return (by,) if isinstance(by, str) else tuple(by)


def key_of(r: EpisodeRecord, by: tuple[str, ...]) -> tuple:
    """The record's values of the ``by`` fields."""
    return tuple(getattr(r, f) for f in by)


def mean(xs: Iterable[float]) -> float:
    """Exactly rounded mean (``math.fsum``) of a non-empty iterable."""
    xs = list(xs)
    return math.fsum(xs) / len(xs)


def group(records: Iterable[EpisodeRecord], by: tuple[str, ...]) -> dict[tuple, list[EpisodeRecord]]:
    """Records by their ``by`` key, keys in order of first appearance."""
    out: dict[tuple, list[EpisodeRecord]] = {}
    for r in records:
        out.setdefault(key_of(r, by), []).append(r)
    return out


def check_fields(names: tuple[str, ...], allowed: Sequence[str], what: str) -> None:
    """Raise ``ValueError`` unless every field in ``names`` is constant within a comparison."""
    bad = [f for f in names if f not in allowed]
    if bad:
        raise ValueError(f"{what} fields {bad} are not constant within a comparison; allowed: {list(allowed)}")


def per_group(groups: Mapping[tuple, Sequence[T]], min_pairs: int,
              measure: Callable[[Sequence[T]], R | None]) -> dict[tuple, R | None]:
    """``measure`` of each group's comparisons; ``None`` for a group with none or fewer than ``min_pairs``."""
    return {g: measure(ps) if ps and len(ps) >= min_pairs else None for g, ps in groups.items()}
