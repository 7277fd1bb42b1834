"""Tests for mcbuild.runtime.study.metrics (paper Sections 3.4-3.6, Tables 4/5/10/11, Appendix C/D)."""

from __future__ import annotations

import itertools
import math

import pytest
from scipy import stats as sps

from mcbuild.runtime import records
from mcbuild.runtime.study import metrics as m
from mcbuild.runtime.study.metrics import stats as st
from mcbuild.runtime.study.design.config import default_budgets

_ids = itertools.count()

SUITE_IDS = ("m01", "m02", "m03", "m04", "m05", "m06")


def ep(
    score: float = 100.0,
    *,
    world: str = "plains-1",
    condition: str = "vanilla",
    task: str = "iron_armor",
    configuration: str = "react",
    model: str = "gemini",
    budget: int | None = None,
    disclosure: str | None = None,
    actions: int = 50,
    cost_usd: float = 0.1,
    success_action: int | None = None,
    encounters=(),
    score_at=None,
) -> records.EpisodeRecord:
    if disclosure is None:
        disclosure = "disclosed" if configuration == "react_rules" else "hidden"
    return records.EpisodeRecord(
        episode_id=f"e{next(_ids)}",
        biome=world.rsplit("-", 1)[0],
        world=world,
        condition=condition,
        task=task,
        configuration=configuration,
        model=model,
        budget=default_budgets()[task] if budget is None else budget,
        disclosure=disclosure,
        repetition=0,
        score=score,
        success=score == 100,
        actions=actions,
        cost_usd=cost_usd,
        success_action=success_action,
        score_at=score_at or {},
        encounters=encounters,
    )


def batch(n: int, successes: int, fail_score: float = 65.0, **kw) -> list[records.EpisodeRecord]:
    return [ep(100.0 if i < successes else fail_score, **kw) for i in range(n)]


# --------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------


def test_record_from_dict_and_validation():
    d = {
        "episode_id": "x1",
        "biome": "plains",
        "world": "plains-1",
        "condition": "M01",
        "task": "diamond",
        "configuration": "react",
        "model": "gemini",
        "budget": 50,
        "disclosure": "hidden",
        "repetition": 2,
        "score": 100,
        "actions": 41,
        "cost_usd": 0.07,
        "score_at": {"40": 70, "41": 100},
        "encounters": [
            {"rule": "r1", "action_index": 3, "signature": "mine|oak_log", "next_signature": None,
             "score_before": 0, "recovery_index": 7},
        ],
        "unknown_extra": 1,
    }
    r = records.EpisodeRecord.from_dict(d)
    assert r.success is True and r.condition == "m01" and r.suite == "m01" and r.is_mirror
    assert r.success_action == 41  # episodes end at the final milestone
    assert r.score_at == {40: 70.0, 41: 100.0}
    assert r.encounters[0].recovery_index == 7 and r.encounters[0].latency == 4
    assert records.EpisodeRecord.from_dict(r.to_dict()) == r
    hash(r)  # frozen and hashable despite the score_at dict
    with pytest.raises(ValueError):
        records.EpisodeRecord.from_dict({**d, "success": False})
    with pytest.raises(ValueError):
        records.EpisodeRecord.from_dict({**d, "condition": "mirror"})
    with pytest.raises(ValueError):
        records.EpisodeRecord.from_dict({**d, "score": 70, "success_action": 30, "score_at": {}})
    with pytest.raises(ValueError):  # score_at says 100 at 40 but success came at 41
        records.EpisodeRecord.from_dict({**d, "score_at": {40: 100}})
    with pytest.raises(ValueError):
        records.Encounter("r", action_index=5, signature="s", recovery_index=4)


def test_select():
    rs = [ep(condition="vanilla"), ep(condition="m01"), ep(condition="m02", model="deepseek")]
    assert len(records.select(rs, condition={"m01", "m02"})) == 2
    assert len(records.select(rs, condition=lambda c: c != "vanilla", model="gemini")) == 1


def test_score_sr_and_min_episodes():
    rs = [ep(100), ep(65), ep(35), ep(100, task="diamond")]
    out = m.score_sr(rs, "task")
    assert out[("iron_armor",)].n == 3
    assert out[("iron_armor",)].score == pytest.approx(200 / 3)
    assert out[("iron_armor",)].sr == pytest.approx(100 / 3)
    assert m.score_sr(rs, "task", min_episodes=2)[("diamond",)] is None


# --------------------------------------------------------------------------
# RIE
# --------------------------------------------------------------------------


def test_rie_hand_computed_by_suite_and_pooled():
    rs = [
        ep(100), ep(65),                                        # Vanilla plains-1
        ep(65, condition="m01"), ep(35, condition="m01"),       # M01 twin
        ep(100, condition="m02"), ep(100, condition="m02"),     # M02 twin
        ep(15, condition="m01", configuration="react_rules"),   # disclosed: ignored
    ]
    by_suite = m.rie(rs, "condition")
    assert by_suite[("m01",)].rie_sc == pytest.approx(82.5 - 50.0)
    assert by_suite[("m01",)].rie_sr == pytest.approx(50.0)
    assert by_suite[("m02",)].rie_sc == pytest.approx(82.5 - 100.0)
    assert by_suite[("m02",)].rie_sr == pytest.approx(-50.0)
    pooled = m.rie(rs)[()]
    assert pooled.n_pairs == 2
    assert pooled.rie_sc == pytest.approx((32.5 - 17.5) / 2)
    assert pooled.rie_sr == pytest.approx(0.0)
    assert pooled.vanilla_sr - pooled.mirror_sr == pytest.approx(pooled.rie_sr)


def test_rie_pools_hidden_episodes_only_even_under_the_same_configuration_name():
    """A disclosed Mirror episode that shares its configuration name (and so its twin key) with hidden
    ones is still left out of RIE and its interval: pooling it in moves every number."""
    hidden = [ep(100), ep(100), ep(65, condition="m01"), ep(100, condition="m01")]
    disclosed = [ep(15, condition="m01", disclosure="disclosed") for _ in range(4)]
    alone, pooled = m.rie(hidden)[()], m.rie(hidden + disclosed)[()]
    assert pooled == alone and alone.rie_sc == pytest.approx(17.5) and alone.rie_sr == pytest.approx(50.0)
    assert m.rie_sr_interval(hidden + disclosed)[()] == m.rie_sr_interval(hidden)[()]
    assert m.rie_sc_interval(hidden + disclosed)[()] == m.rie_sc_interval(hidden)[()]


def test_rie_is_mean_of_pair_differences_not_pooled_difference():
    rs = [
        ep(100, world="plains-1"), ep(0, world="plains-1", condition="m01"),
        *[ep(0, world="taiga-1") for _ in range(3)], ep(0, world="taiga-1", condition="m01"),
    ]
    out = m.rie(rs)[()]
    assert out.rie_sc == pytest.approx((100 + 0) / 2)  # pooled episodes would give 25
    assert out.rie_sr == pytest.approx(50.0)
    assert m.rie(rs, "biome")[("plains",)].rie_sr == pytest.approx(100.0)


def test_rie_never_pairs_unpaired_episodes():
    base = [ep(100), ep(100, condition="m01")]
    noise = [
        ep(0, world="taiga-1", condition="m01"),                    # no Vanilla twin in taiga-1
        ep(0, condition="m01", configuration="reflexion"),          # no Vanilla reflexion
        ep(0, condition="m01", budget=200),                         # different budget
        ep(0, condition="m01", model="deepseek"),                   # different model
        ep(0, condition="m01", task="diamond"),                     # different task
        ep(0, world="jungle-2"),                                    # Vanilla without Mirror
    ]
    out = m.rie(base + noise)[()]
    assert out.n_pairs == 1 and out.rie_sc == 0.0 and out.rie_sr == 0.0
    per_cfg = m.rie(base + noise, "configuration")
    assert per_cfg[("reflexion",)] is None  # only an unpaired Mirror episode
    assert m.rie(base, min_pairs=2)[()] is None
    with pytest.raises(ValueError):
        m.rie(base, "repetition")


def test_rie_sr_interval_counts_shared_vanilla_once():
    rs = batch(30, 18) + batch(30, 10, condition="m01") + batch(30, 20, condition="m02")
    est = m.rie_sr_interval(rs)[()]
    var = 0.6 * 0.4 / 30 + 0.5 * 0.5 / 60
    assert est.value == pytest.approx(10.0)
    assert est.value == pytest.approx(m.rie(rs)[()].rie_sr)
    assert est.half_width == pytest.approx(100 * st.z_value() * math.sqrt(var))
    by_suite = m.rie_sr_interval(rs, "condition")
    assert by_suite[("m01",)].value == pytest.approx(60 - 100 / 3)
    assert by_suite[("m01",)].variance == pytest.approx(1e4 * (0.24 / 30 + (1 / 3) * (2 / 3) / 30))


def test_rie_sr_interval_stratified_by_model_and_task():
    rs = []
    cells = {("gemini", "iron_armor"): (27, 12), ("gemini", "diamond"): (20, 9),
             ("deepseek", "iron_armor"): (28, 4), ("deepseek", "diamond"): (15, 15)}
    for (model, task), (xv, xm) in cells.items():
        rs += batch(30, xv, model=model, task=task)
        rs += batch(30, xm, model=model, task=task, condition="m04")
    est = m.rie_sr_interval(rs)[()]
    hand = st.stratified_difference([(xv, 30, xm, 30) for xv, xm in cells.values()]).scaled(100)
    assert est.value == pytest.approx(hand.value)
    assert est.half_width == pytest.approx(hand.half_width)
    assert est.value == pytest.approx(m.rie(rs)[()].rie_sr)
    ac = m.rie_sr_interval(rs, variance="agresti_coull")[()]
    assert ac.value == pytest.approx(est.value) and ac.half_width != est.half_width
    sc = m.rie_sc_interval(rs)[()]
    assert sc.value == pytest.approx(m.rie(rs)[()].rie_sc)


# --------------------------------------------------------------------------
# Disclosure split
# --------------------------------------------------------------------------

# Table 4: ReAct SR (%) hidden / disclosed per suite; Vanilla SR 63.9; then RIE, Gap, DeltaSR.
TABLE4 = {
    "m01": (37.2, 42.8, 26.7, 21.1, 5.6),
    "m02": (67.2, 70.0, -3.3, -6.1, 2.8),
    "m03": (67.2, 73.3, -3.3, -9.4, 6.1),
    "m04": (22.2, 31.7, 41.7, 32.2, 9.4),
    "m05": (58.9, 64.4, 5.0, -0.6, 5.6),
    "m06": (65.0, 68.9, -1.1, -5.0, 3.9),
}
TABLE4_POOLED = (53.0, 58.5, 10.9, 5.4, 5.6)
TABLE4_VANILLA = 63.9


def _split_records(vanilla_sr: float, rows: dict, model: str = "gemini", n: int = 1000):
    """n episodes per cell with success counts matching the percentages."""
    rs = batch(n, round(vanilla_sr * n / 100), model=model)
    for suite, (hidden, disclosed) in rows.items():
        rs += batch(n, round(hidden * n / 100), model=model, condition=suite)
        rs += batch(n, round(disclosed * n / 100), model=model, condition=suite, configuration="react_rules")
    return rs


def test_disclosure_split_reproduces_table4_and_identity():
    rs = _split_records(TABLE4_VANILLA, {s: row[:2] for s, row in TABLE4.items()})
    per_suite = m.disclosure_split(rs, "condition")
    for suite, (hidden, disclosed, rie_p, gap_p, dsr_p) in TABLE4.items():
        s = per_suite[(suite,)]
        assert s.n_pairs == 1
        assert (s.hidden_sr, s.disclosed_sr, s.vanilla_sr) == pytest.approx((hidden, disclosed, 63.9))
        # identity holds exactly in our implementation ...
        assert s.rie_sr == pytest.approx(s.gap_sr + s.delta_sr, abs=1e-9)
        assert s.rie_sc == pytest.approx(s.gap_sc + s.delta_score, abs=1e-9)
        # ... and the paper's row agrees within rounding of the displayed values
        assert abs(rie_p - (gap_p + dsr_p)) <= 0.11
        assert s.rie_sr == pytest.approx(rie_p, abs=0.15)
        assert s.gap_sr == pytest.approx(gap_p, abs=0.15)
        assert s.delta_sr == pytest.approx(dsr_p, abs=0.15)
        # the split's RIE is the ordinary paired RIE of ReAct
        assert s.rie_sr == pytest.approx(m.rie(records.select(rs, configuration="react"), "condition")[(suite,)].rie_sr)
    pooled = m.disclosure_split(rs)[()]
    hidden_p, disclosed_p, rie_p, gap_p, dsr_p = TABLE4_POOLED
    assert pooled.n_pairs == 6
    assert pooled.hidden_sr == pytest.approx(hidden_p, abs=0.06)
    assert pooled.disclosed_sr == pytest.approx(disclosed_p, abs=0.06)
    assert pooled.rie_sr == pytest.approx(rie_p, abs=0.06)
    assert pooled.gap_sr == pytest.approx(gap_p, abs=0.06)
    assert pooled.delta_sr == pytest.approx(dsr_p, abs=0.06)
    assert pooled.rie_sr == pytest.approx(pooled.gap_sr + pooled.delta_sr, abs=1e-9)


# Table 10: per model RIE_SR, Gap, DeltaSR (points); Vanilla SR of ReAct from Table 2.
# Each (model, suite) cell pools 3 tasks x 30 episodes = 90, so every value is
# a multiple of 100/90 and the table can be rebuilt from integer counts.
TABLE10 = {
    "gemini": (66.7, {"m01": (33.3, 21.1, 12.2), "m02": (-8.9, -6.7, -2.2), "m03": (-2.2, -6.7, 4.4),
                      "m04": (35.6, 27.8, 7.8), "m05": (10.0, 1.1, 8.9), "m06": (3.3, -6.7, 10.0)},
               (11.9, 5.0, 6.9)),
    "deepseek": (61.1, {"m01": (20.0, 21.1, -1.1), "m02": (2.2, -5.6, 7.8), "m03": (-4.4, -12.2, 7.8),
                        "m04": (47.8, 36.7, 11.1), "m05": (0.0, -2.2, 2.2), "m06": (-5.6, -3.3, -2.2)},
                 (10.0, 5.7, 4.3)),
}


def _table10_records() -> list[records.EpisodeRecord]:
    rs = []
    for model, (v, rows, _) in TABLE10.items():
        xv = round(v * 0.9)
        rs += batch(90, xv, model=model)
        for suite, (r, g, _) in rows.items():
            rs += batch(90, xv - round(r * 0.9), model=model, condition=suite)
            rs += batch(90, xv - round(g * 0.9), model=model, condition=suite, configuration="react_rules")
    return rs


def _displayed(x: float, paper: float) -> bool:
    """x rounds to the paper's one-decimal value."""
    return abs(x - paper) <= 0.05 + 1e-9


def test_disclosure_split_reproduces_table10_per_model():
    rs = _table10_records()
    cells = m.disclosure_split(rs, ("model", "condition"))
    pooled = m.disclosure_split(rs, "model")
    for model, (v, rows, (rie_p, gap_p, dsr_p)) in TABLE10.items():
        for suite, (r, g, d) in rows.items():
            s = cells[(model, suite)]
            assert s.vanilla_sr == pytest.approx(v, abs=0.05)
            assert _displayed(s.rie_sr, r) and _displayed(s.gap_sr, g) and _displayed(s.delta_sr, d), (model, suite)
            assert s.rie_sr == pytest.approx(s.gap_sr + s.delta_sr, abs=1e-9)
        p = pooled[(model,)]
        assert _displayed(p.rie_sr, rie_p) and _displayed(p.gap_sr, gap_p) and _displayed(p.delta_sr, dsr_p)
        assert p.rie_sr == pytest.approx(p.gap_sr + p.delta_sr, abs=1e-9)


def test_table10_counts_also_reproduce_table4_pooled_over_models():
    rs = _table10_records()
    per_suite = m.disclosure_split(rs, "condition")
    for suite, (hidden, disclosed, rie_p, gap_p, dsr_p) in TABLE4.items():
        s = per_suite[(suite,)]
        assert s.n_pairs == 2
        assert _displayed(s.vanilla_sr, TABLE4_VANILLA)
        for ours, paper in ((s.hidden_sr, hidden), (s.disclosed_sr, disclosed), (s.rie_sr, rie_p),
                            (s.gap_sr, gap_p), (s.delta_sr, dsr_p)):
            assert _displayed(ours, paper), (suite, ours, paper)
        assert s.rie_sr == pytest.approx(s.gap_sr + s.delta_sr, abs=1e-9)
    p = m.disclosure_split(rs)[()]
    for ours, paper in zip((p.hidden_sr, p.disclosed_sr, p.rie_sr, p.gap_sr, p.delta_sr), TABLE4_POOLED):
        assert _displayed(ours, paper), (ours, paper)


def test_disclosure_split_requires_all_three_sides():
    rs = batch(4, 2) + batch(4, 1, condition="m01") + batch(4, 3, condition="m01", configuration="react_rules")
    rs += batch(4, 0, condition="m02")  # no disclosed episodes under m02
    rs += batch(4, 4, condition="m03", configuration="react_rules")  # no hidden episodes under m03
    out = m.disclosure_split(rs, "condition")
    assert out[("m01",)].n_pairs == 1
    assert out[("m01",)].delta_sr == pytest.approx(50.0)
    assert out[("m02",)] is None and out[("m03",)] is None
    assert m.disclosure_split(rs)[()].n_pairs == 1


def test_disclosure_split_intervals_and_heterogeneity():
    rs = []
    rows = {s: row[:2] for s, row in TABLE4.items()}
    for task in ("iron_armor", "diamond"):
        rs += batch(30, 19, task=task)
        for suite, (h, d) in rows.items():
            rs += batch(30, round(h * 0.3), task=task, condition=suite)
            rs += batch(30, round(d * 0.3), task=task, condition=suite, configuration="react_rules")
    ints = m.disclosure_split_intervals(rs, "condition")
    split = m.disclosure_split(rs, "condition")
    for suite in SUITE_IDS:
        e = ints[(suite,)]
        assert e["rie_sr"].value == pytest.approx(split[(suite,)].rie_sr)
        assert e["gap_sr"].value == pytest.approx(split[(suite,)].gap_sr)
        assert e["delta_sr"].value == pytest.approx(split[(suite,)].delta_sr)
    # hand check of one cell: strata = task (one model); V 19/30, H 11/30, D 13/30 per task
    xh, xd = round(37.2 * 0.3), round(42.8 * 0.3)
    hand = st.stratified_difference([(xd, 30, xh, 30)] * 2).scaled(100)
    assert ints[("m01",)]["delta_sr"].value == pytest.approx(hand.value)
    assert ints[("m01",)]["delta_sr"].half_width == pytest.approx(hand.half_width)
    gap = st.stratified_difference([(19, 30, xd, 30)] * 2).scaled(100)
    assert ints[("m01",)]["gap_sr"].half_width == pytest.approx(gap.half_width)
    het = m.disclosure_heterogeneity(rs, "delta_sr")
    vals = [ints[(s,)]["delta_sr"].value for s in SUITE_IDS]
    vars_ = [ints[(s,)]["delta_sr"].variance for s in SUITE_IDS]
    assert het.q == st.cochran_q(vals, vars_)
    assert het.q.df == 5


# --------------------------------------------------------------------------
# IRR / RL
# --------------------------------------------------------------------------


def test_semantic_signature_ignores_quantities_and_fuel():
    assert records.semantic_signature("mine", {"block": "iron_ore", "count": 1}) == records.semantic_signature(
        "mine", {"block": "iron_ore", "count": 4})
    assert records.semantic_signature("smelt", {"input": "raw_iron", "station": "furnace", "count": 3, "fuel": "coal"}) \
        == records.semantic_signature("smelt", {"input": "raw_iron", "station": "furnace"})
    assert records.semantic_signature("smelt", {"input": "raw_iron", "station": "furnace"}) != records.semantic_signature(
        "smelt", {"input": "raw_iron", "station": "blast_furnace"})
    g1 = {"station": "inventory", "grid": [["oak_log", None], [None, None]]}
    g2 = {"station": "inventory", "grid": [[None, "oak_log"], [None, None]]}
    assert records.semantic_signature("craft_grid", g1) != records.semantic_signature("craft_grid", g2)
    assert records.semantic_signature("attack", {"target": "cow", "count": 2}) == "attack|cow"
    assert records.semantic_signature("explore", {"target": "iron_ore"}) == "explore"


def test_build_encounters_from_trajectory():
    sigs = ["mine|oak_log", "craft|A", "craft|A", "mine|stone", "craft|B", "smelt|X"]
    scores = [0, 0, 0, 15, 35, 35]
    encs = records.build_encounters(sigs, scores, [(3, "r1"), (2, "r1"), (6, "r2")])
    assert [e.rule for e in encs] == ["r1", "r2"]
    r1, r2 = encs
    assert (r1.action_index, r1.signature, r1.next_signature, r1.score_before) == (2, "craft|A", "craft|A", 0.0)
    assert r1.repeated and r1.recovery_index == 4 and r1.latency == 2
    assert r2.next_signature is None and not r2.followed  # last action: not in IRR
    assert r2.score_before == 35.0 and r2.recovery_index is None  # never rises: not in RL
    # the encounter action itself raises the score -> latency 0
    (e,) = records.build_encounters(["mine|stone", "craft|P"], [15, 35], [(1, "r3")])
    assert e.score_before == 0.0 and e.latency == 0 and not e.repeated


def test_irr_rl_hand_computed_and_pooled_equally_over_suites():
    E = records.Encounter
    a = ep(65, condition="m01", encounters=[
        E("r1", 2, "craft|A", "craft|A", 0, 4),   # followed, repeated, RL 2
        E("r2", 6, "smelt|X", None, 35, None),    # not followed, never recovers
    ])
    b = ep(65, condition="m01", encounters=[E("r1", 3, "mine|s", "craft|Q", 15, 3)])  # followed, RL 0
    c = ep(65, condition="m02", encounters=[E("r9", 1, "mine|log", "mine|planks", 0, 6)])  # RL 5
    d = ep(65, condition="m02", encounters=[E("r8", 4, "mine|x", "mine|y", 35, None)])  # followed only
    van = ep(100)
    per_suite = m.behavior([a, b, c, d, van], "condition")
    assert per_suite[("m01",)].irr == pytest.approx(50.0)
    assert per_suite[("m01",)].rl == pytest.approx(1.0)
    assert (per_suite[("m01",)].n_encounters, per_suite[("m01",)].n_followed) == (3, 2)
    assert per_suite[("m02",)].irr == pytest.approx(0.0)
    assert per_suite[("m02",)].rl == pytest.approx(5.0)
    pooled = m.behavior([a, b, c, d, van])[()]
    assert pooled.irr == pytest.approx((50.0 + 0.0) / 2)  # not 1/4 of followed encounters
    assert pooled.rl == pytest.approx((1.0 + 5.0) / 2)    # not (2+0+5)/3
    assert (pooled.n_encounters, pooled.n_followed, pooled.n_repeated, pooled.n_recovered) == (5, 4, 1, 3)
    strict = m.behavior([a, b, c, d], "condition", min_encounters=2)
    assert strict[("m01",)].irr == pytest.approx(50.0) and strict[("m01",)].rl == pytest.approx(1.0)
    assert strict[("m02",)].irr == pytest.approx(0.0)  # two followed encounters
    assert strict[("m02",)].rl is None                 # only one recovered encounter
    none = m.behavior([ep(65, condition="m03")])[()]
    assert none.irr is None and none.rl is None and none.n_encounters == 0


# --------------------------------------------------------------------------
# Checkpoints, actions, cost
# --------------------------------------------------------------------------


def test_checkpoint_sr():
    rs = [
        ep(100, budget=200, actions=90),
        ep(100, budget=200, actions=120),
        ep(100, budget=200, actions=180, score_at={100: 70, 150: 90, 200: 100}),
        ep(90, budget=200, actions=200, score_at={100: 45, 200: 90}),
    ]
    out = m.checkpoint_sr(rs, (100, 150, 200))[()]
    assert out == pytest.approx({100: 25.0, 150: 50.0, 200: 75.0})
    # explicit success_action overrides the default (= actions)
    r = ep(100, budget=200, actions=199, success_action=150)
    assert r.succeeded_by(150) and not r.succeeded_by(149)


def test_checkpoint_sr_averaged_over_tasks():
    rs = [ep(100, actions=80, budget=200), ep(65, actions=200, budget=200)]
    rs += [ep(65, task="diamond", actions=200, budget=200) for _ in range(4)]
    assert m.checkpoint_sr(rs, (100,))[()][100] == pytest.approx(100 / 6)
    assert m.checkpoint_sr(rs, (100,), average_over="task")[()][100] == pytest.approx(25.0)
    assert m.checkpoint_sr(rs, (100,), "task", min_episodes=3)[("iron_armor",)] is None


def test_mean_actions_cost():
    rs = [ep(65, condition="m01", actions=50, cost_usd=0.10), ep(100, condition="m02", actions=30, cost_usd=0.04),
          ep(100, actions=20, cost_usd=1.0)]
    u = m.mean_actions_cost(records.select(rs, condition=lambda c: c != "vanilla"))[()]
    assert (u.n, u.actions, u.cost_usd) == (2, 40.0, pytest.approx(0.07))
    assert m.mean_actions_cost(rs, "condition", min_episodes=2)[("m01",)] is None


# --------------------------------------------------------------------------
# Within-suite comparison (Cochran's Q)
# --------------------------------------------------------------------------


def test_within_suite_comparison_matches_hand_cochran_q():
    # (vanilla successes, M04 successes) per task, 30 episodes per cell
    plan = {
        "react": {"iron_armor": (28, 4), "diamond": (27, 10)},
        "reflexion": {"iron_armor": (27, 23), "diamond": (25, 21)},
        "voyager": {"iron_armor": (26, 22), "diamond": (24, 20)},
        "direct": {"iron_armor": (10, 8), "diamond": (3, 2)},  # Vanilla SR < 50%: not compared
    }
    rs = []
    for cfg, tasks in plan.items():
        for task, (xv, xm) in tasks.items():
            rs += batch(30, xv, configuration=cfg, task=task)
            rs += batch(30, xm, configuration=cfg, task=task, condition="m04")
            rs += batch(30, 15, configuration=cfg, task=task, condition="m01")
            rs += batch(30, 30, configuration=cfg, task=task, model="deepseek", condition="m04")
    configs, het = m.within_suite_comparison(rs, model="gemini", suite="m04")
    assert configs == ["react", "reflexion", "voyager"]
    compared = {c: plan[c] for c in configs}
    est = {c: st.stratified_difference([(*(t[0], 30), *(t[1], 30)) for t in tasks.values()])
           for c, tasks in compared.items()}
    theta = [100 * est[c].value for c in configs]
    var = [1e4 * est[c].variance for c in configs]
    w = [1 / v for v in var]
    bar = sum(wi * t for wi, t in zip(w, theta)) / sum(w)
    q_hand = sum(wi * (t - bar) ** 2 for wi, t in zip(w, theta))
    assert het.q.q == pytest.approx(q_hand)
    assert het.q.df == 2
    assert het.q.p_value == pytest.approx(sps.chi2.sf(q_hand, 2))
    assert het.q.p_value < 0.01
    assert het.estimates["react"].value == pytest.approx(100 * ((28 - 4) / 30 + (27 - 10) / 30) / 2)
    _, het_ac = m.within_suite_comparison(rs, model="gemini", suite="m04", variance="agresti_coull")
    assert het_ac.q.df == 2 and het_ac.q.q != het.q.q
    # explicit configuration list, and a degenerate binomial variance -> q None
    _, het2 = m.within_suite_comparison(rs, model="gemini", suite="m04", configurations=["react"])
    assert het2.q is None
    assert m.compared_configurations(records.select(rs, model="gemini"), threshold=90.0) == ["react"]


# --------------------------------------------------------------------------
# Record validation (Appendix D)
# --------------------------------------------------------------------------


def test_check_records():
    def plan_entry(r: records.EpisodeRecord) -> dict:
        return {f: getattr(r, f) for f in m.CHECKED_FIELDS + ("model",)}

    good = ep(100, condition="m01")
    wrong_budget = ep(65, condition="m01")
    wrong_cond = ep(65, condition="m02")
    wrong_disc = ep(65, condition="m02", configuration="react_rules")
    dup = ep(65)
    unknown = ep(65)
    expected = {r.episode_id: plan_entry(r) for r in (good, wrong_budget, wrong_cond, wrong_disc, dup)}
    expected[wrong_budget.episode_id]["budget"] = 75
    expected[wrong_cond.episode_id]["condition"] = "M03"
    expected[wrong_disc.episode_id]["disclosure"] = "hidden"
    expected["planned-but-missing"] = plan_entry(good)
    malformed = {"episode_id": "bad", "biome": "plains"}
    dup_dict = dup.to_dict()
    valid, excluded = m.check_records(
        [good, wrong_budget, wrong_cond, wrong_disc, dup, dup_dict, unknown, malformed], expected
    )
    assert valid == [good]
    reasons = {x.episode_id: x.reasons for x in excluded}
    assert reasons[wrong_budget.episode_id] == ("budget: recorded 50, expected 75",)
    assert reasons[wrong_cond.episode_id] == ("condition: recorded 'm02', expected 'M03'",)
    assert reasons[wrong_disc.episode_id] == ("disclosure: recorded 'disclosed', expected 'hidden'",)
    assert any("duplicate" in s for s in reasons[dup.episode_id])
    assert sum(1 for x in excluded if x.episode_id == dup.episode_id) == 2
    assert reasons[unknown.episode_id] == ("episode id not in study plan",)
    assert reasons["bad"][0].startswith("malformed record")
    assert m.missing_episodes(valid, expected) == [
        wrong_budget.episode_id, wrong_cond.episode_id, wrong_disc.episode_id, dup.episode_id,
        "planned-but-missing",
    ]
    # the condition comparison is case-insensitive ("M01" plan vs "m01" record)
    ok, bad = m.check_records([good], {good.episode_id: {**plan_entry(good), "condition": "M01"}})
    assert ok == [good] and bad == []
