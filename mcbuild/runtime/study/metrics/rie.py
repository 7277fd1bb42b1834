"""RIE: the paired Vanilla-Mirror effect (Section 3.5), with stratified intervals.

A *comparison* ``p`` is one Mirror world together with its Vanilla twin for
one (model, task, configuration, budget)::

    p = (world, condition, model, task, configuration, budget)

where ``world`` is the Vanilla world id (e.g. ``"plains-1"``) and
``condition`` the suite (``"m01"``..``"m06"``).  The Vanilla side of ``p`` is
every Vanilla episode with the same (world, model, task, configuration,
budget) -- the *twin key*; the Mirror side is every hidden-rule episode of
``p``.  Then::

    RIE_SC = mean_p( mean Vanilla Score_p - mean Mirror Score_p )
    RIE_SR = mean_p( Vanilla SR_p         - Mirror SR_p )         [points]

Mirror episodes without a Vanilla twin (and vice versa) are never paired.
Pooling over suites averages over all comparisons ``p`` of all suites, so a
Vanilla episode serves the six comparisons of its world.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

from mcbuild.runtime.records import HIDDEN, EpisodeRecord
from mcbuild.runtime.study.metrics import stats
from mcbuild.runtime.study.metrics.stats import Estimate
from ._grouping import check_fields, key_of, mean, norm_by, per_group

#: Fields that are constant within a comparison ``p`` (usable for ``by``/strata).
PAIR_CONSTANT_FIELDS = ("biome", "world", "model", "task", "configuration", "budget", "condition")

#: The comparisons of one group: (Vanilla episodes, hidden Mirror episodes) each.
Pairs = Sequence[tuple[Sequence[EpisodeRecord], Sequence[EpisodeRecord]]]


@dataclass(frozen=True)
class RIE:
    """Paired Vanilla-Mirror effect of one cell.

    ``vanilla_*``/``mirror_*`` are means over comparisons of the per-comparison
    means, so ``rie_sc = vanilla_score - mirror_score`` and ``rie_sr =
    vanilla_sr - mirror_sr`` (SR in percent, RIE in points).
    """

    n_pairs: int
    vanilla_score: float
    mirror_score: float
    vanilla_sr: float
    mirror_sr: float
    rie_sc: float
    rie_sr: float


def _comparisons(
    records: Iterable[EpisodeRecord], by: tuple[str, ...]
) -> dict[tuple, list[tuple[list[EpisodeRecord], list[EpisodeRecord]]]]:
    """Group key -> list of (vanilla episodes, hidden Mirror episodes) per comparison.

    Groups that only have unpaired Mirror episodes map to an empty list.
    """
    check_fields(by, PAIR_CONSTANT_FIELDS, "by")
    vanilla: dict[tuple, list[EpisodeRecord]] = defaultdict(list)
    mirror: dict[tuple, dict[tuple, list[EpisodeRecord]]] = {}
    for r in records:
        if r.is_vanilla:
            vanilla[r.twin_key()].append(r)
        elif r.disclosure == HIDDEN:
            mirror.setdefault(key_of(r, by), {}).setdefault(r.twin_key() + (r.condition,), []).append(r)
    return {
        g: [(vanilla[pk[:-1]], ms) for pk, ms in pairs.items() if pk[:-1] in vanilla]
        for g, pairs in mirror.items()
    }


def strata_sets(
    pairs: Sequence[tuple[Sequence[EpisodeRecord], ...]], strata: tuple[str, ...]
) -> dict[tuple, list[dict[int, EpisodeRecord]]]:
    """Stratum key -> one de-duplicated episode set per side of the comparisons.

    The stratum key is taken from the last side (a Mirror side), so strata may
    use ``condition``.  A Vanilla episode shared by several comparisons of a
    stratum is counted once.
    """
    out: dict[tuple, list[dict[int, EpisodeRecord]]] = {}
    for sides in pairs:
        k = key_of(sides[-1][0], strata)
        sets = out.setdefault(k, [dict() for _ in sides])
        for s, side in zip(sets, sides):
            for r in side:
                s[id(r)] = r
    return out


def success_counts(rs: Mapping[int, EpisodeRecord]) -> tuple[int, int]:
    """``(successes, episodes)`` of an episode set."""
    return sum(1 for r in rs.values() if r.success), len(rs)


def paired_means(pairs: Pairs, value: Callable[[EpisodeRecord], float]) -> tuple[float, float, float]:
    """Over comparisons, the mean of the Vanilla side's mean ``value``, of the Mirror side's, and of
    their per-comparison difference."""
    sides = [(mean(value(r) for r in v), mean(value(r) for r in m)) for v, m in pairs]
    return mean(a for a, _ in sides), mean(b for _, b in sides), mean(a - b for a, b in sides)


def rie(
    records: Iterable[EpisodeRecord], by: str | Sequence[str] = (), *, min_pairs: int = 1
) -> dict[tuple, RIE | None]:
    """``RIE_SC`` and ``RIE_SR`` per group (Section 3.5), paired by comparison.

    ``by`` may use the fields constant within a comparison: biome, world,
    model, task, configuration, budget, condition (the Mirror suite).  Mirror
    episodes are the hidden-rule ones; disclosed episodes are ignored here
    (see :func:`mcbuild.runtime.study.metrics.disclosure.disclosure_split`).
    """
    def measure(pairs: Pairs) -> RIE:
        vs, ms, sc = paired_means(pairs, lambda r: r.score)
        vy, my, sr = paired_means(pairs, lambda r: float(r.succeeded))
        return RIE(len(pairs), vs, ms, 100.0 * vy, 100.0 * my, sc, 100.0 * sr)

    return per_group(_comparisons(records, norm_by(by)), min_pairs, measure)


def rie_sr_interval(
    records: Iterable[EpisodeRecord],
    by: str | Sequence[str] = (),
    *,
    strata: str | Sequence[str] = ("model", "task"),
    variance: str = "binomial",
    level: float = 0.95,
    min_pairs: int = 1,
) -> dict[tuple, Estimate | None]:
    """Stratified binomial estimate of ``RIE_SR`` with its interval, in points.

    Within each stratum (default model x task) the paired Vanilla and Mirror
    episodes are pooled (a Vanilla episode counted once) and
    :func:`stats.stratified_difference` weights strata equally.  With the
    study's balanced cells the value equals :func:`rie`'s ``rie_sr``.
    ``variance="agresti_coull"`` uses the continuity-corrected variances.
    """
    strata_t = norm_by(strata)
    check_fields(strata_t, PAIR_CONSTANT_FIELDS, "strata")

    def measure(pairs: Pairs) -> Estimate:
        cells = [(*success_counts(v), *success_counts(m)) for v, m in strata_sets(pairs, strata_t).values()]
        return stats.stratified_difference(cells, level, variance=variance).scaled(100.0)

    return per_group(_comparisons(records, norm_by(by)), min_pairs, measure)


def rie_sc_interval(
    records: Iterable[EpisodeRecord],
    by: str | Sequence[str] = (),
    *,
    strata: str | Sequence[str] = ("model", "task"),
    level: float = 0.95,
    min_pairs: int = 1,
) -> dict[tuple, Estimate | None]:
    """Stratified estimate of ``RIE_SC`` (Score points) using sample variances.

    Cells whose strata have fewer than two episodes on a side map to ``None``.
    """
    strata_t = norm_by(strata)
    check_fields(strata_t, PAIR_CONSTANT_FIELDS, "strata")

    def measure(pairs: Pairs) -> Estimate | None:
        cells = [
            ([r.score for r in v.values()], [r.score for r in m.values()])
            for v, m in strata_sets(pairs, strata_t).values()
        ]
        if any(len(a) < 2 or len(b) < 2 for a, b in cells):
            return None
        return stats.stratified_mean_difference(cells, level)

    return per_group(_comparisons(records, norm_by(by)), min_pairs, measure)
