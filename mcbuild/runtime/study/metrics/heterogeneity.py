"""Cochran's Q across configurations or suites (Section 3.5, Appendix C)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from mcbuild.runtime.records import HIDDEN, VANILLA, EpisodeRecord, select
from mcbuild.runtime.study.metrics import stats
from mcbuild.runtime.study.metrics.stats import CochranQ, Estimate
from .disclosure import disclosure_split_intervals
from .rie import rie_sr_interval
from .score import score_sr


@dataclass(frozen=True)
class Heterogeneity:
    """Cochran's Q over the levels of one field, with the per-level estimates
    (points).  ``q`` is ``None`` when the test is undefined (fewer than two
    levels or a zero variance, e.g. all-or-nothing cells with binomial
    variances)."""

    q: CochranQ | None
    estimates: dict[Any, Estimate]


def _heterogeneity(estimates: dict[Any, Estimate | None]) -> Heterogeneity:
    ests = {k: e for k, e in estimates.items() if e is not None}
    names = list(ests)
    if len(names) < 2 or any(ests[n].variance <= 0 for n in names):
        return Heterogeneity(None, ests)
    return Heterogeneity(stats.cochran_q([ests[n].value for n in names], [ests[n].variance for n in names]), ests)


def rie_sr_heterogeneity(
    records: Iterable[EpisodeRecord],
    across: str = "configuration",
    *,
    strata: str | Sequence[str] = ("task",),
    variance: str = "binomial",
    level: float = 0.95,
    min_pairs: int = 1,
) -> Heterogeneity:
    """Cochran's Q of stratified ``RIE_SR`` across the levels of ``across``.

    Pass records already restricted to one suite and model (the paper tests
    each suite and model separately); each level's variance is the stratified
    binomial (or Agresti-Coull) variance of its RIE.
    """
    per = rie_sr_interval(records, by=(across,), strata=strata, variance=variance, level=level, min_pairs=min_pairs)
    return _heterogeneity({k[0]: e for k, e in per.items()})


def compared_configurations(
    records: Iterable[EpisodeRecord],
    *,
    tasks: Sequence[str] = ("iron_armor", "diamond"),
    threshold: float = 50.0,
    min_episodes: int = 1,
) -> list[str]:
    """Configurations whose Vanilla SR is at least ``threshold`` % on each of
    ``tasks`` (pass records of one model)."""
    cells = score_sr(select(records, condition=VANILLA, task=set(tasks)), ("configuration", "task"), min_episodes=min_episodes)
    configs = sorted({k[0] for k in cells})
    out = []
    for c in configs:
        srs = [cells.get((c, t)) for t in tasks]
        if all(s is not None and s.sr >= threshold for s in srs):
            out.append(c)
    return out


def within_suite_comparison(
    records: Iterable[EpisodeRecord],
    *,
    model: str,
    suite: str,
    tasks: Sequence[str] = ("iron_armor", "diamond"),
    threshold: float = 50.0,
    configurations: Sequence[str] | None = None,
    variance: str = "binomial",
    level: float = 0.95,
) -> tuple[list[str], Heterogeneity]:
    """Within-suite comparison of configurations (Section 3.5, Appendix C).

    Restricts to ``model`` and ``tasks``, picks the compared set by Vanilla SR
    (unless ``configurations`` is given) and tests with Cochran's Q whether
    their ``RIE_SR`` (stratified by task) differ under ``suite``.
    """
    rs = select(records, model=model, task=set(tasks))
    configs = list(configurations) if configurations is not None else compared_configurations(
        rs, tasks=tasks, threshold=threshold
    )
    rs = select(rs, configuration=set(configs), condition={VANILLA, suite.lower()}, disclosure=HIDDEN)
    return configs, rie_sr_heterogeneity(rs, "configuration", strata=("task",), variance=variance, level=level)


def disclosure_heterogeneity(
    records: Iterable[EpisodeRecord],
    component: str = "delta_sr",
    across: str = "condition",
    *,
    strata: str | Sequence[str] = ("model", "task"),
    variance: str = "binomial",
    level: float = 0.95,
    hidden_configuration: str = "react",
    disclosed_configuration: str = "react_rules",
) -> Heterogeneity:
    """Cochran's Q of a disclosure-split component (``"delta_sr"``, ``"gap_sr"``
    or ``"rie_sr"``) across suites (Appendix C: Q = 2.1 for the six costs)."""
    per = disclosure_split_intervals(
        records,
        by=(across,),
        strata=strata,
        variance=variance,
        level=level,
        hidden_configuration=hidden_configuration,
        disclosed_configuration=disclosed_configuration,
    )
    return _heterogeneity({k[0]: (None if v is None else v[component]) for k, v in per.items()})
