"""An independent check of the report's numbers: the paper's Table 3 (by suite) and Table 2 (by
configuration and model) recomputed from the study's DataFrames with plain pandas (groupby, merge,
mean), not with mcbuild's metrics, and compared cell by cell with the report's tables."""
from __future__ import annotations

import re

import pytest

pd = pytest.importorskip("pandas")

import mcbuild.analysis as analysis
from mcbuild.runtime.study.report import build_tables, load_study
from test_study_report import make_study

TWIN = ["world", "model", "task", "configuration", "budget"]
CELL = re.compile(r"^([+-]?\d+\.\d)(?: / (\d+\.\d))? \(n=(\d+)\)$")


def cell(text: str) -> tuple[float, ...]:
    """``57.3 / 40.0 (n=18)`` -> (57.3, 40.0, 18); ``+1.5 (n=6)`` -> (1.5, 6)."""
    m = CELL.match(text)
    assert m, text
    return tuple(float(g) for g in m.groups() if g is not None)


def near(got: tuple[float, ...], *want: float) -> bool:
    """Numbers within the report's rounding (one decimal), counts exact."""
    return len(got) == len(want) and all(abs(g - w) <= 0.05 + 1e-9 for g, w in zip(got[:-1], want[:-1])) \
        and got[-1] == want[-1]


def comparisons(eps: "pd.DataFrame", by: list[str]) -> "pd.DataFrame":
    """RIE by ``by``: each hidden Mirror (world, condition, model, task, configuration, budget) against
    the mean of its Vanilla twins; the mean over comparisons of Vanilla minus Mirror, and n."""
    vanilla = eps[eps.condition == "vanilla"].groupby(TWIN, as_index=False).agg(vs=("score", "mean"),
                                                                                   vy=("success", "mean"))
    mirror = eps[(eps.condition != "vanilla") & (eps.disclosure == "hidden")]
    mirror = mirror.groupby(TWIN + ["condition"], as_index=False).agg(ms=("score", "mean"), my=("success", "mean"))
    pairs = mirror.merge(vanilla, on=TWIN, how="inner")
    pairs["sc"] = pairs.vs - pairs.ms
    pairs["sr"] = 100.0 * (pairs.vy.astype(float) - pairs.my.astype(float))
    if not by:
        return pd.DataFrame({"sc": [pairs.sc.mean()], "sr": [pairs.sr.mean()], "n": [len(pairs)]})
    return pairs.groupby(by).agg(sc=("sc", "mean"), sr=("sr", "mean"), n=("sc", "size"))


def score_sr(frame: "pd.DataFrame") -> tuple[float, float, int]:
    return frame.score.mean(), 100.0 * frame.success.astype(float).mean(), len(frame)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    _, out = make_study(tmp_path_factory.mktemp("tables"))
    with analysis.open(out) as s:
        eps = s.episodes
    data = load_study(out)
    assert len(data.records) == len(eps) and not data.excluded
    return eps, {t.key: t for t in build_tables(data, 1)}, data


def test_table3_by_suite_from_plain_pandas(study):
    eps, tables, data = study
    rows = {r[0]: r for r in tables["table3_suite"].rows}
    hidden = eps[eps.disclosure == "hidden"]
    v_score, v_sr, v_n = score_sr(hidden[hidden.condition == "vanilla"])
    assert near(cell(rows["Vanilla"][2]), v_score, v_n) and near(cell(rows["Vanilla"][3]), v_sr, v_n)
    rie = comparisons(eps, ["condition"])
    for suite in data.suites:
        m_score, m_sr, m_n = score_sr(hidden[hidden.condition == suite])
        r = rows[suite.upper()]
        assert near(cell(r[2]), m_score, m_n) and near(cell(r[3]), m_sr, m_n), (suite, r)
        assert near(cell(r[4]), rie.loc[suite, "sc"], rie.loc[suite, "n"]), (suite, r)
        assert near(cell(r[5]), rie.loc[suite, "sr"], rie.loc[suite, "n"]), (suite, r)
    pooled, everything = rows["Pooled"], comparisons(eps, []).iloc[0]
    m_score, m_sr, m_n = score_sr(hidden[hidden.condition != "vanilla"])
    assert near(cell(pooled[2]), m_score, m_n) and near(cell(pooled[3]), m_sr, m_n)
    assert near(cell(pooled[4]), everything.sc, everything.n) and near(cell(pooled[5]), everything.sr, everything.n)


def test_table2_by_configuration_and_model_from_plain_pandas(study):
    eps, tables, data = study
    t2 = tables["table2_configuration"]
    rie = comparisons(eps, ["configuration", "model"])
    names = {"ReAct": "react", "XENON": "xenon", "ReAct w/rules": "react_rules"}
    checked = 0
    for row in t2.rows:
        configuration = names[row[0]]
        for m, model in enumerate(data.models):
            vanilla, mirror, rie_sc, rie_sr, actions, cost = row[1 + 6 * m: 7 + 6 * m]
            assert t2.columns[1 + 6 * m] == f"{model}: Vanilla"
            own = eps[(eps.configuration == configuration) & (eps.model == model)]
            mine = own[own.condition != "vanilla"]
            ms, my, mn = score_sr(mine)
            assert near(cell(mirror), ms, my, mn), (configuration, model, mirror)
            assert float(actions) == pytest.approx(mine.actions.mean(), abs=0.05 + 1e-9)
            assert float(cost) == pytest.approx(mine.cost_usd.mean(), abs=0.005 + 1e-9)
            if configuration in data.disclosed_configs:
                assert vanilla == rie_sc == rie_sr == "–"
                continue
            vs, vy, vn = score_sr(own[own.condition == "vanilla"])
            assert near(cell(vanilla), vs, vy, vn), (configuration, model, vanilla)
            pairs = rie.loc[(configuration, model)]
            assert near(cell(rie_sc), pairs.sc, pairs.n) and near(cell(rie_sr), pairs.sr, pairs.n)
            checked += 1
    assert checked == 4 and len(t2.rows) == 3
