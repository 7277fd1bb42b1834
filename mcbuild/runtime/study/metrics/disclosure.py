"""The disclosure split of ReAct's RIE (Section 3.5, Tables 4/10/11).

A comparison ``p = (world, condition, model, task, budget)`` has Vanilla
ReAct (V), hidden ReAct (H) and disclosed ReAct w/rules (D) in the same
Mirror world::

    Gap    = mean_p(V_p - D_p)     (Vanilla minus Disclosed)
    DeltaS = mean_p(D_p - H_p)     (Disclosed minus Hidden)
    RIE    = mean_p(V_p - H_p) = Gap + DeltaS    (exactly, same pairs)
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Sequence

from mcbuild.runtime.records import DISCLOSED, HIDDEN, EpisodeRecord
from mcbuild.runtime.study.metrics import stats
from mcbuild.runtime.study.metrics.stats import Estimate
from ._grouping import check_fields, key_of, mean, norm_by, per_group
from .rie import strata_sets, success_counts

#: Fields constant within a disclosure comparison (usable for ``by``/strata).
SPLIT_FIELDS = ("biome", "world", "model", "task", "budget", "condition")

_Triple = tuple[list[EpisodeRecord], list[EpisodeRecord], list[EpisodeRecord]]


@dataclass(frozen=True)
class DisclosureSplit:
    """ReAct's RIE split by disclosure (Tables 4 and 10); SR in percent.

    ``rie_* = gap_* + delta_*`` holds exactly (same comparisons).
    """

    n_pairs: int
    vanilla_score: float
    hidden_score: float
    disclosed_score: float
    vanilla_sr: float
    hidden_sr: float
    disclosed_sr: float
    rie_sc: float
    gap_sc: float
    delta_score: float
    rie_sr: float
    gap_sr: float
    delta_sr: float


def _disclosure_triples(
    records: Iterable[EpisodeRecord],
    by: tuple[str, ...],
    hidden_configuration: str,
    disclosed_configuration: str,
) -> dict[tuple, list[_Triple]]:
    """Group key -> (Vanilla, hidden, disclosed) episodes of each complete comparison."""
    check_fields(by, SPLIT_FIELDS, "by")
    vanilla: dict[tuple, list[EpisodeRecord]] = defaultdict(list)
    hidden: dict[tuple, list[EpisodeRecord]] = defaultdict(list)
    disclosed: dict[tuple, list[EpisodeRecord]] = defaultdict(list)
    groups: dict[tuple, list[tuple]] = {}

    def twin(r: EpisodeRecord) -> tuple:
        return (r.world, r.model, r.task, r.budget)

    for r in records:
        if r.is_vanilla:
            if r.configuration == hidden_configuration:
                vanilla[twin(r)].append(r)
            continue
        pk = twin(r) + (r.condition,)
        if r.configuration == hidden_configuration and r.disclosure == HIDDEN:
            hidden[pk].append(r)
        elif r.configuration == disclosed_configuration and r.disclosure == DISCLOSED:
            disclosed[pk].append(r)
        else:
            continue
        keys = groups.setdefault(key_of(r, by), [])
        if pk not in keys:
            keys.append(pk)
    return {
        g: [
            (vanilla[pk[:-1]], hidden[pk], disclosed[pk])
            for pk in pks
            if pk[:-1] in vanilla and pk in hidden and pk in disclosed
        ]
        for g, pks in groups.items()
    }


def disclosure_split(
    records: Iterable[EpisodeRecord],
    by: str | Sequence[str] = (),
    *,
    hidden_configuration: str = "react",
    disclosed_configuration: str = "react_rules",
    min_pairs: int = 1,
) -> dict[tuple, DisclosureSplit | None]:
    """Split ReAct's RIE into Gap (Vanilla - Disclosed) and Delta (Disclosed - Hidden).

    A comparison ``(world, condition, model, task, budget)`` enters only when
    it has Vanilla ``hidden_configuration`` episodes, hidden Mirror
    ``hidden_configuration`` episodes and disclosed Mirror
    ``disclosed_configuration`` episodes.  ``by`` may use biome, world, model,
    task, budget, condition.
    """
    def measure(triples: Sequence[tuple]) -> DisclosureSplit:
        sc = [tuple(mean(r.score for r in side) for side in t) for t in triples]
        sr = [tuple(100.0 * mean(float(r.success) for r in side) for side in t) for t in triples]
        v_sc, h_sc, d_sc = (mean(x[i] for x in sc) for i in range(3))
        v_sr, h_sr, d_sr = (mean(x[i] for x in sr) for i in range(3))
        gap_sc = mean(v - d for v, _, d in sc)
        dsc = mean(d - h for _, h, d in sc)
        gap_sr = mean(v - d for v, _, d in sr)
        dsr = mean(d - h for _, h, d in sr)
        return DisclosureSplit(
            n_pairs=len(triples),
            vanilla_score=v_sc,
            hidden_score=h_sc,
            disclosed_score=d_sc,
            vanilla_sr=v_sr,
            hidden_sr=h_sr,
            disclosed_sr=d_sr,
            rie_sc=gap_sc + dsc,
            gap_sc=gap_sc,
            delta_score=dsc,
            rie_sr=gap_sr + dsr,
            gap_sr=gap_sr,
            delta_sr=dsr,
        )

    triples = _disclosure_triples(records, norm_by(by), hidden_configuration, disclosed_configuration)
    return per_group(triples, min_pairs, measure)


def disclosure_split_intervals(
    records: Iterable[EpisodeRecord],
    by: str | Sequence[str] = (),
    *,
    strata: str | Sequence[str] = ("model", "task"),
    variance: str = "binomial",
    level: float = 0.95,
    hidden_configuration: str = "react",
    disclosed_configuration: str = "react_rules",
    min_pairs: int = 1,
) -> dict[tuple, dict[str, Estimate] | None]:
    """Stratified binomial intervals (points) for ``rie_sr``, ``gap_sr`` and
    ``delta_sr`` of the disclosure split (Table 11, ReAct columns)."""
    strata_t = norm_by(strata)
    check_fields(strata_t, SPLIT_FIELDS, "strata")
    def est(a: list, b: list) -> Estimate:
        cells = [(*x, *y) for x, y in zip(a, b)]
        return stats.stratified_difference(cells, level, variance=variance).scaled(100.0)

    def measure(triples: Sequence[tuple]) -> dict[str, Estimate]:
        sets = list(strata_sets(triples, strata_t).values())
        V, H, D = ([success_counts(s[i]) for s in sets] for i in range(3))
        return {"rie_sr": est(V, H), "gap_sr": est(V, D), "delta_sr": est(D, H)}

    triples = _disclosure_triples(records, norm_by(by), hidden_configuration, disclosed_configuration)
    return per_group(triples, min_pairs, measure)
