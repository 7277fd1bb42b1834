"""Unpaired per-group summaries: Score / SR, checkpoint SR, mean actions and cost.

* **Score** of an episode is the value of its deepest completed milestone
  (0..100); **SR** is the share of episodes with Score 100, reported in percent.
* **Checkpoint SR** (Table 5): an episode has succeeded at checkpoint ``c`` if
  it completed its final milestone within its first ``c`` actions
  (``success_action <= c``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from mcbuild.runtime.records import EpisodeRecord

from ._grouping import group, mean, norm_by


@dataclass(frozen=True)
class ScoreSR:
    """Mean Score (0..100) and SR (percent) of ``n`` episodes."""

    n: int
    score: float
    sr: float


@dataclass(frozen=True)
class ActionsCost:
    """Mean semantic actions and API cost (USD) per episode."""

    n: int
    actions: float
    cost_usd: float


def _per_group(records: Iterable[EpisodeRecord], by: str | Sequence[str], min_episodes: int,
               summarize: Callable[[list[EpisodeRecord]], Any]) -> dict[tuple, Any]:
    """``summarize`` of each group's episodes; None for groups smaller than ``min_episodes``."""
    return {k: (None if len(rs) < min_episodes else summarize(rs)) for k, rs in group(records, norm_by(by)).items()}


def score_sr(
    records: Iterable[EpisodeRecord], by: str | Sequence[str] = (), *, min_episodes: int = 1
) -> dict[tuple, ScoreSR | None]:
    """Mean Score and SR (%) per group of episodes (no pairing)."""
    return _per_group(records, by, min_episodes, lambda rs: ScoreSR(
        len(rs), mean(r.score for r in rs), 100.0 * mean(float(r.succeeded) for r in rs)))


def mean_actions_cost(
    records: Iterable[EpisodeRecord], by: str | Sequence[str] = (), *, min_episodes: int = 1
) -> dict[tuple, ActionsCost | None]:
    """Mean actions and cost per episode (Table 2 averages Mirror episodes:
    pass ``select(records, condition=lambda c: c != "vanilla")``)."""
    return _per_group(records, by, min_episodes,
                      lambda rs: ActionsCost(len(rs), mean(r.actions for r in rs), mean(r.cost_usd for r in rs)))


def checkpoint_sr(
    records: Iterable[EpisodeRecord],
    checkpoints: Sequence[int] = (100, 150, 200),
    by: str | Sequence[str] = (),
    *,
    average_over: str | Sequence[str] = (),
    min_episodes: int = 1,
) -> dict[tuple, dict[int, float] | None]:
    """Cumulative SR (%) at action checkpoints of the same trajectories (Table 5).

    An episode counts as succeeded at ``c`` iff ``success_action <= c``.  With
    ``average_over`` (e.g. ``"task"``) the SR is computed per sub-cell and the
    sub-cells are averaged with equal weights ("averaged over tasks"); sub-cells
    below ``min_episodes`` are left out, and a cell with none left is ``None``.
    """
    by_t, avg_t = norm_by(by), norm_by(average_over)
    sub: dict[tuple, list[dict[int, float]]] = {}
    for k, rs in group(records, by_t + avg_t).items():
        lst = sub.setdefault(k[: len(by_t)], [])
        if len(rs) >= min_episodes:
            lst.append({c: 100.0 * mean(float(r.succeeded_by(c)) for r in rs) for c in checkpoints})
    return {g: ({c: mean(d[c] for d in ds) for c in checkpoints} if ds else None) for g, ds in sub.items()}
