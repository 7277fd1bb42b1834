"""Metrics of the paired MirrorCraft study (pure functions, no I/O).

Definitions follow the paper (Sections 3.4-3.6, 4.1, Appendix C/D):

* **Score** of an episode is the value of its deepest completed milestone
  (0..100); **SR** is the share of episodes with Score 100, reported in percent.
* **RIE** (Section 3.5).  A *comparison* ``p`` is one Mirror world together with
  its Vanilla twin for one (model, task, configuration, budget)::

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
* **Disclosure split** (Section 3.5, Tables 4/10/11) for ReAct: comparison
  ``p = (world, condition, model, task, budget)`` with Vanilla ReAct (V),
  hidden ReAct (H) and disclosed ReAct w/rules (D) in the same Mirror world::

      Gap    = mean_p(V_p - D_p)     (Vanilla minus Disclosed)
      DeltaS = mean_p(D_p - H_p)     (Disclosed minus Hidden)
      RIE    = mean_p(V_p - H_p) = Gap + DeltaS    (exactly, same pairs)

* **IRR / RL** (Section 3.6) from the :class:`Encounter` records of an episode,
  see :class:`Encounter` for the field layout.  Pooled over suites, both are
  the equal-weight mean of the per-suite values (Section 4.1).
* **Checkpoint SR** (Table 5): an episode has succeeded at checkpoint ``c`` if
  it completed its final milestone within its first ``c`` actions
  (``success_action <= c``).

Result dictionaries are keyed by a tuple of the ``by`` field values (``()``
when ``by`` is empty).  A cell with fewer than the minimum number of episodes /
pairs / encounters maps to ``None`` instead of a number.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from runtime.records import DISCLOSED, HIDDEN, VANILLA, Encounter, EpisodeRecord, select

from . import stats as _stats
from .stats import CochranQ, Estimate

__all__ = [
    "CHECKED_FIELDS",
    "ScoreSR",
    "RIE",
    "DisclosureSplit",
    "Behavior",
    "Usage",
    "Heterogeneity",
    "Exclusion",
    "score_sr",
    "rie",
    "rie_sr_interval",
    "rie_sc_interval",
    "disclosure_split",
    "disclosure_split_intervals",
    "behavior",
    "checkpoint_sr",
    "mean_actions_cost",
    "rie_sr_heterogeneity",
    "compared_configurations",
    "within_suite_comparison",
    "disclosure_heterogeneity",
    "check_records",
    "missing_episodes",
]

#: Fields that are constant within a comparison ``p`` (usable for ``by``/strata).
_PAIR_CONSTANT_FIELDS = ("biome", "world", "model", "task", "configuration", "budget", "condition")
#: Fields checked against the study plan before aggregation (Appendix D).
CHECKED_FIELDS = ("biome", "world", "condition", "task", "configuration", "disclosure", "budget")
#: Additionally checked when the plan entry provides them.
_OPTIONAL_CHECKED_FIELDS = ("model", "repetition")



# ==========================================================================
# Helpers
# ==========================================================================


def _norm_by(by: str | Sequence[str]) -> tuple[str, ...]:
    return (by,) if isinstance(by, str) else tuple(by)


def _key(r: EpisodeRecord, by: tuple[str, ...]) -> tuple:
    return tuple(getattr(r, f) for f in by)


def _mean(xs: Iterable[float]) -> float:
    xs = list(xs)
    return math.fsum(xs) / len(xs)


def _check_pair_fields(names: tuple[str, ...], allowed: Sequence[str], what: str) -> None:
    bad = [f for f in names if f not in allowed]
    if bad:
        raise ValueError(f"{what} fields {bad} are not constant within a comparison; allowed: {list(allowed)}")


def _group(records: Iterable[EpisodeRecord], by: tuple[str, ...]) -> dict[tuple, list[EpisodeRecord]]:
    out: dict[tuple, list[EpisodeRecord]] = {}
    for r in records:
        out.setdefault(_key(r, by), []).append(r)
    return out


# ==========================================================================
# Score / SR
# ==========================================================================


@dataclass(frozen=True)
class ScoreSR:
    """Mean Score (0..100) and SR (percent) of ``n`` episodes."""

    n: int
    score: float
    sr: float


def score_sr(
    records: Iterable[EpisodeRecord], by: str | Sequence[str] = (), *, min_episodes: int = 1
) -> dict[tuple, ScoreSR | None]:
    """Mean Score and SR (%) per group of episodes (no pairing)."""
    return _per_group(records, by, min_episodes, lambda rs: ScoreSR(
        len(rs), _mean(r.score for r in rs), 100.0 * _mean(float(r.success) for r in rs)))


def _per_group(records: Iterable[EpisodeRecord], by: str | Sequence[str], min_episodes: int,
               summarize: Callable[[list[EpisodeRecord]], Any]) -> dict[tuple, Any]:
    """``summarize`` of each group's episodes; None for groups smaller than ``min_episodes``."""
    return {k: (None if len(rs) < min_episodes else summarize(rs)) for k, rs in _group(records, _norm_by(by)).items()}


# ==========================================================================
# RIE
# ==========================================================================


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
    _check_pair_fields(by, _PAIR_CONSTANT_FIELDS, "by")
    vanilla: dict[tuple, list[EpisodeRecord]] = defaultdict(list)
    mirror: dict[tuple, dict[tuple, list[EpisodeRecord]]] = {}
    for r in records:
        if r.is_vanilla:
            vanilla[r.twin_key()].append(r)
        elif r.disclosure == HIDDEN:
            mirror.setdefault(_key(r, by), {}).setdefault(r.twin_key() + (r.condition,), []).append(r)
    return {
        g: [(vanilla[pk[:-1]], ms) for pk, ms in pairs.items() if pk[:-1] in vanilla]
        for g, pairs in mirror.items()
    }


def rie(
    records: Iterable[EpisodeRecord], by: str | Sequence[str] = (), *, min_pairs: int = 1
) -> dict[tuple, RIE | None]:
    """``RIE_SC`` and ``RIE_SR`` per group (Section 3.5), paired by comparison.

    ``by`` may use the fields constant within a comparison: biome, world,
    model, task, configuration, budget, condition (the Mirror suite).  Mirror
    episodes are the hidden-rule ones; disclosed episodes are ignored here
    (see :func:`disclosure_split`).
    """
    out: dict[tuple, RIE | None] = {}
    for g, pairs in _comparisons(records, _norm_by(by)).items():
        if len(pairs) < min_pairs or not pairs:
            out[g] = None
            continue
        vs = _mean(_mean(r.score for r in v) for v, _ in pairs)
        ms = _mean(_mean(r.score for r in m) for _, m in pairs)
        vy = 100.0 * _mean(_mean(float(r.success) for r in v) for v, _ in pairs)
        my = 100.0 * _mean(_mean(float(r.success) for r in m) for _, m in pairs)
        sc = _mean(_mean(r.score for r in v) - _mean(r.score for r in m) for v, m in pairs)
        sr = 100.0 * _mean(
            _mean(float(r.success) for r in v) - _mean(float(r.success) for r in m) for v, m in pairs
        )
        out[g] = RIE(len(pairs), vs, ms, vy, my, sc, sr)
    return out


def _strata_sets(
    pairs: Sequence[tuple[Sequence[EpisodeRecord], ...]], strata: tuple[str, ...]
) -> dict[tuple, list[dict[int, EpisodeRecord]]]:
    """Stratum key -> one de-duplicated episode set per side of the comparisons.

    The stratum key is taken from the last side (a Mirror side), so strata may
    use ``condition``.  A Vanilla episode shared by several comparisons of a
    stratum is counted once.
    """
    out: dict[tuple, list[dict[int, EpisodeRecord]]] = {}
    for sides in pairs:
        k = _key(sides[-1][0], strata)
        sets = out.setdefault(k, [dict() for _ in sides])
        for s, side in zip(sets, sides):
            for r in side:
                s[id(r)] = r
    return out


def _counts(rs: Mapping[int, EpisodeRecord]) -> tuple[int, int]:
    return sum(1 for r in rs.values() if r.success), len(rs)


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
    strata_t = _norm_by(strata)
    _check_pair_fields(strata_t, _PAIR_CONSTANT_FIELDS, "strata")
    out: dict[tuple, Estimate | None] = {}
    for g, pairs in _comparisons(records, _norm_by(by)).items():
        if len(pairs) < min_pairs or not pairs:
            out[g] = None
            continue
        cells = [(*_counts(v), *_counts(m)) for v, m in _strata_sets(pairs, strata_t).values()]
        out[g] = _stats.stratified_difference(cells, level, variance=variance).scaled(100.0)
    return out


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
    strata_t = _norm_by(strata)
    _check_pair_fields(strata_t, _PAIR_CONSTANT_FIELDS, "strata")
    out: dict[tuple, Estimate | None] = {}
    for g, pairs in _comparisons(records, _norm_by(by)).items():
        if len(pairs) < min_pairs or not pairs:
            out[g] = None
            continue
        cells = [
            ([r.score for r in v.values()], [r.score for r in m.values()])
            for v, m in _strata_sets(pairs, strata_t).values()
        ]
        if any(len(a) < 2 or len(b) < 2 for a, b in cells):
            out[g] = None
            continue
        out[g] = _stats.stratified_mean_difference(cells, level)
    return out


# ==========================================================================
# Disclosure split
# ==========================================================================


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


_SPLIT_FIELDS = ("biome", "world", "model", "task", "budget", "condition")


def _disclosure_triples(
    records: Iterable[EpisodeRecord],
    by: tuple[str, ...],
    hidden_configuration: str,
    disclosed_configuration: str,
) -> dict[tuple, list[tuple[list[EpisodeRecord], list[EpisodeRecord], list[EpisodeRecord]]]]:
    _check_pair_fields(by, _SPLIT_FIELDS, "by")
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
        keys = groups.setdefault(_key(r, by), [])
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
    out: dict[tuple, DisclosureSplit | None] = {}
    for g, triples in _disclosure_triples(
        records, _norm_by(by), hidden_configuration, disclosed_configuration
    ).items():
        if len(triples) < min_pairs or not triples:
            out[g] = None
            continue
        sc = [tuple(_mean(r.score for r in side) for side in t) for t in triples]
        sr = [tuple(100.0 * _mean(float(r.success) for r in side) for side in t) for t in triples]
        v_sc, h_sc, d_sc = (_mean(x[i] for x in sc) for i in range(3))
        v_sr, h_sr, d_sr = (_mean(x[i] for x in sr) for i in range(3))
        gap_sc = _mean(v - d for v, _, d in sc)
        dsc = _mean(d - h for _, h, d in sc)
        gap_sr = _mean(v - d for v, _, d in sr)
        dsr = _mean(d - h for _, h, d in sr)
        out[g] = DisclosureSplit(
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
    return out


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
    strata_t = _norm_by(strata)
    _check_pair_fields(strata_t, _SPLIT_FIELDS, "strata")
    out: dict[tuple, dict[str, Estimate] | None] = {}
    for g, triples in _disclosure_triples(
        records, _norm_by(by), hidden_configuration, disclosed_configuration
    ).items():
        if len(triples) < min_pairs or not triples:
            out[g] = None
            continue
        sets = list(_strata_sets(triples, strata_t).values())
        V = [_counts(s[0]) for s in sets]
        H = [_counts(s[1]) for s in sets]
        D = [_counts(s[2]) for s in sets]

        def est(a: list, b: list) -> Estimate:
            cells = [(*x, *y) for x, y in zip(a, b)]
            return _stats.stratified_difference(cells, level, variance=variance).scaled(100.0)

        out[g] = {"rie_sr": est(V, H), "gap_sr": est(V, D), "delta_sr": est(D, H)}
    return out


# ==========================================================================
# IRR / RL
# ==========================================================================


@dataclass(frozen=True)
class Behavior:
    """Behavioural diagnostics of a cell (Section 3.6).

    ``irr`` in percent, ``rl`` in semantic actions; ``None`` when undefined
    (no followed / no recovered encounters).  Counts are summed over suites.
    """

    n_encounters: int
    n_followed: int
    n_repeated: int
    n_recovered: int
    irr: float | None
    rl: float | None


def _behavior_cell(encs: Sequence[Encounter], min_encounters: int) -> Behavior:
    followed = [e for e in encs if e.followed]
    recovered = [e.latency for e in encs if e.latency is not None]
    n_rep = sum(1 for e in followed if e.repeated)
    irr = 100.0 * n_rep / len(followed) if len(followed) >= max(min_encounters, 1) else None
    rl = _mean(recovered) if len(recovered) >= max(min_encounters, 1) else None
    return Behavior(len(encs), len(followed), n_rep, len(recovered), irr, rl)


def behavior(
    records: Iterable[EpisodeRecord],
    by: str | Sequence[str] = (),
    *,
    min_encounters: int = 1,
) -> dict[tuple, Behavior]:
    """IRR and RL per group of Mirror episodes (Vanilla episodes are skipped).

    Per suite: ``IRR = #{next_signature == signature} / #{next_signature is not
    None}`` and ``RL = mean(recovery_index - action_index)`` over encounters
    with a recovery.  When ``by`` does not contain ``condition``, each group's
    IRR and RL are the equal-weight means of its per-suite values (suites
    where a value is undefined are left out).  A per-suite value needs at least
    ``min_encounters`` contributing encounters.
    """
    by_t = _norm_by(by)
    per: dict[tuple, dict[str, list[Encounter]]] = {}
    for r in records:
        if r.is_vanilla:
            continue
        per.setdefault(_key(r, by_t), {}).setdefault(r.condition, []).extend(r.encounters)
    out: dict[tuple, Behavior] = {}
    for g, suites in per.items():
        cells = [_behavior_cell(encs, min_encounters) for encs in suites.values()]
        irrs = [c.irr for c in cells if c.irr is not None]
        rls = [c.rl for c in cells if c.rl is not None]
        out[g] = Behavior(
            n_encounters=sum(c.n_encounters for c in cells),
            n_followed=sum(c.n_followed for c in cells),
            n_repeated=sum(c.n_repeated for c in cells),
            n_recovered=sum(c.n_recovered for c in cells),
            irr=_mean(irrs) if irrs else None,
            rl=_mean(rls) if rls else None,
        )
    return out


# ==========================================================================
# Checkpoints, actions and cost
# ==========================================================================


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
    by_t, avg_t = _norm_by(by), _norm_by(average_over)
    sub: dict[tuple, list[dict[int, float]]] = {}
    for k, rs in _group(records, by_t + avg_t).items():
        g = k[: len(by_t)]
        lst = sub.setdefault(g, [])
        if len(rs) >= min_episodes:
            lst.append({c: 100.0 * _mean(float(r.succeeded_by(c)) for r in rs) for c in checkpoints})
    return {g: ({c: _mean(d[c] for d in ds) for c in checkpoints} if ds else None) for g, ds in sub.items()}


@dataclass(frozen=True)
class Usage:
    """Mean semantic actions and API cost (USD) per episode."""

    n: int
    actions: float
    cost_usd: float


def mean_actions_cost(
    records: Iterable[EpisodeRecord], by: str | Sequence[str] = (), *, min_episodes: int = 1
) -> dict[tuple, Usage | None]:
    """Mean actions and cost per episode (Table 2 averages Mirror episodes:
    pass ``select(records, condition=lambda c: c != "vanilla")``)."""
    return _per_group(records, by, min_episodes,
                      lambda rs: Usage(len(rs), _mean(r.actions for r in rs), _mean(r.cost_usd for r in rs)))


# ==========================================================================
# Heterogeneity (Cochran's Q)
# ==========================================================================


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
    return Heterogeneity(_stats.cochran_q([ests[n].value for n in names], [ests[n].variance for n in names]), ests)


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


# ==========================================================================
# Record validation (Appendix D)
# ==========================================================================


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


_MISSING = object()


def _norm_value(name: str, value: Any) -> Any:
    if name in ("budget", "repetition"):
        try:
            return int(value)
        except (TypeError, ValueError):
            return value
    if name == "condition":
        return str(value).lower()
    return value


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
    parsed: list[tuple[Any, EpisodeRecord | None, str | None]] = []
    for item in records:
        if isinstance(item, EpisodeRecord):
            parsed.append((item, item, None))
            continue
        try:
            parsed.append((item, EpisodeRecord.from_dict(item), None))
        except (KeyError, TypeError, ValueError) as exc:
            parsed.append((item, None, f"malformed record: {type(exc).__name__}: {exc}"))
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
            for name in CHECKED_FIELDS + _OPTIONAL_CHECKED_FIELDS:
                want = _plan_value(plan, name)
                if want is _MISSING:
                    if name in CHECKED_FIELDS:
                        reasons.append(f"study plan lacks {name}")
                    continue
                have = getattr(rec, name)
                if _norm_value(name, have) != _norm_value(name, want):
                    reasons.append(f"{name}: recorded {have!r}, expected {want!r}")
        if reasons:
            excluded.append(Exclusion(rec.episode_id, tuple(reasons), item))
        else:
            valid.append(rec)
    return valid, excluded


def missing_episodes(valid: Iterable[EpisodeRecord], expected: Mapping[str, Any]) -> list[str]:
    """Planned episode ids without a valid record (to rerun), in plan order."""
    have = {r.episode_id for r in valid}
    return [eid for eid in expected if eid not in have]
