"""Milestone metrics beside Score and SR (MineExplorer's MSR and TSR), and the paired RIE on MSR.

* **MSR** of an episode is the share of its task's milestones it met (percent); a group's MSR is
  the mean over its episodes.
* **TSR** is the share of episodes that met every milestone of their task (percent). It differs
  from SR, which asks only for the final milestone, when a task's DAG lets the final milestone be
  met without all the others.
* **RIE_MSR** = mean over comparisons of (Vanilla MSR - Mirror MSR), paired exactly as
  :func:`mcbuild.runtime.study.metrics.rie.rie` pairs Score and SR.

Records that do not carry milestone counts (written before they were kept) are left out; a
group with none left maps to ``None``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from mcbuild.runtime.records import EpisodeRecord

from ._grouping import group, mean, norm_by, per_group
from .rie import Pairs, _comparisons, paired_means


@dataclass(frozen=True)
class MilestoneRates:
    """Score, SR, MSR and TSR (all 0..100) of ``n`` episodes that carry milestone counts."""

    n: int
    score: float
    sr: float
    msr: float
    tsr: float


@dataclass(frozen=True)
class MsrRIE:
    """The paired Vanilla-Mirror effect on MSR of one cell (points)."""

    n_pairs: int
    vanilla_msr: float
    mirror_msr: float
    rie_msr: float


def _counted(records: Iterable[EpisodeRecord]) -> list[EpisodeRecord]:
    """The records with an MSR (the milestones recorded)."""
    return [r for r in records if r.msr is not None]


def milestone_rates(
    records: Iterable[EpisodeRecord], by: str | Sequence[str] = (), *, min_episodes: int = 1
) -> dict[tuple, MilestoneRates | None]:
    """Score, SR, MSR and TSR per group (no pairing)."""
    out: dict[tuple, MilestoneRates | None] = {}
    for k, rs in group(_counted(records), norm_by(by)).items():
        out[k] = None if len(rs) < min_episodes else MilestoneRates(
            len(rs), mean(r.score for r in rs), 100.0 * mean(float(r.succeeded) for r in rs),
            mean(r.msr or 0.0 for r in rs), 100.0 * mean(float(bool(r.all_milestones)) for r in rs))
    return out


def rie_msr(
    records: Iterable[EpisodeRecord], by: str | Sequence[str] = (), *, min_pairs: int = 1
) -> dict[tuple, MsrRIE | None]:
    """``RIE_MSR`` per group, paired by comparison (``by`` as for :func:`rie.rie`)."""
    def measure(pairs: Pairs) -> MsrRIE:
        return MsrRIE(len(pairs), *paired_means(pairs, lambda r: r.msr or 0.0))   # every record counted has an MSR

    return per_group(_comparisons(_counted(records), norm_by(by)), min_pairs, measure)
