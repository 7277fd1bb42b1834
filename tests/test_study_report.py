"""Study report: every paper table, plots, HTML page, n<k cells, exclusions (fake records)."""
from __future__ import annotations

import csv
import random
import sqlite3

import pytest
from click.testing import CliRunner

from mcbuild.runtime.records import select
from mcbuild.runtime.study import metrics
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.run.outcome import EpisodeOutcome
from mcbuild.runtime.study.design.plan import build_plan
from mcbuild.runtime.study.report import build_tables, load_study, write_report
from mcbuild.runtime.study.run.runner import run_study

TABLE_KEYS = {"table2_configuration", "table3_suite", "table4_disclosure", "table5_checkpoints", "table8_task",
              "table9_biome", "table10_model_split", "table11_intervals", "tableH_behavior", "tableQ_within_suite",
              "tableSR_wilson", "tableE_end_reasons", "tableF_faults", "changes_m01", "changes_m02", "changes_m04",
              "tableM_configuration", "tableM_suite", "tableM_task", "tableD_difficulty"}
MSR_TABLES = ("tableM_configuration", "tableM_suite", "tableM_task")


def num0(cell: str) -> float:
    """The number of a cell such as ``+1.5 (n=30)``."""
    return float(cell.split()[0])
VALUES = {"iron_armor": [15, 35, 65, 100], "diamond": [10, 25, 50, 70, 100], "enchantment": [10, 25, 45, 60, 75, 90, 100]}


def outcome(e, milestones: bool = False) -> EpisodeOutcome:
    """A seeded outcome; with ``milestones`` it reports the milestones met up to its Score."""
    r = random.Random(e.seed)
    vals = [0] + VALUES[e.task]
    p = 0.35 if e.condition in ("m01", "m04") and e.disclosure == "hidden" else 0.6
    depth = len(vals) - 1 if r.random() < p else r.randint(0, len(vals) - 2)
    score = vals[depth]
    actions = r.randint(max(1, depth), e.budget)
    encs = []
    if e.condition != "vanilla":
        encs = [{"rule": "r", "action_index": 1, "signature": "craft", "next_signature": r.choice(["craft", "mine"]),
                 "score_before": 0, "recovery_index": r.choice([None, 2, 3])}] if actions > 1 else []
    met = {"milestones_met": depth, "milestones_total": len(vals) - 1} if milestones else {}
    return EpisodeOutcome(score=score, actions=actions, cost_usd=0.01, success_action=actions if score == 100 else None,
                          trajectory=[{"i": i} for i in range(actions)], encounters=encs, **met)


def make_study(tmp_path, executor=outcome, **kw):
    data = dict(name="rep", worlds=["plains-1", "plains-2", "savanna-1"], conditions=["vanilla", "m01", "m02", "m04"],
                tasks=["iron_armor", "diamond"], configurations=["react", "xenon"],
                disclosure={"configurations": ["react_rules"]}, models=["ma", "mb"], repetitions=3, base_seed=3)
    data.update(kw)
    cfg = StudyConfig.model_validate(data)
    out = tmp_path / "studies" / cfg.name
    run_study(cfg, executor, out_dir=out, build_root=tmp_path / "build")
    return cfg, out


def test_report_renders_every_table_plot_and_page(tmp_path):
    cfg, out = make_study(tmp_path)
    res = write_report(out, min_episodes=5)
    assert {t.key for t in res.tables} == TABLE_KEYS
    for t in (t for t in res.tables if not t.omitted):
        assert t.rows, t.key
        assert (res.out_dir / "tables" / f"{t.key}.csv").exists()
        tex = (res.out_dir / "tables" / f"{t.key}.tex").read_text()
        assert "\\begin{tabular}" in tex and "\\bottomrule" in tex
        rows = list(csv.reader((res.out_dir / "tables" / f"{t.key}.csv").open()))
        assert rows[0] == t.columns and len(rows) == len(t.rows) + 1
    md = res.markdown.read_text()
    for n in ("Table 2.", "Table 3.", "Table 4.", "Table 5.", "Table 8.", "Table 9.", "Table 10.", "Table 11."):
        assert n in md
    page = res.html.read_text()
    assert page.count("data:image/png;base64,") == 4 and "<img" in page
    for plot in ("rie_by_suite", "figure3", "checkpoints", "sr_difficulty"):
        assert (res.out_dir / "plots" / f"{plot}.png").stat().st_size > 1000
    first = build_plan(cfg)[0].episode_id
    assert f'href="trajectories/{first}.jsonl"' in page
    lines = (res.out_dir / "trajectories" / f"{first}.jsonl").read_text().splitlines()
    assert '"type": "episode"' in lines[0] and len(lines) >= 2
    # Table 4 has numbers (react + react_rules) and satisfies RIE = Gap + ΔSR
    t4 = res.table("table4_disclosure")
    pooled = next(r for r in t4.rows if r[0] == "Pooled")
    rie, gap, dsr = (num0(x) for x in pooled[3:6])
    assert rie == pytest.approx(gap + dsr, abs=0.11)


def test_report_numbers_come_from_metrics(tmp_path):
    cfg, out = make_study(tmp_path)
    d = load_study(out)
    tables = {t.key: t for t in build_tables(d, 1)}
    r = metrics.rie(d.records, "condition")[("m04",)]
    row = next(x for x in tables["table3_suite"].rows if x[0] == "M04")
    assert row[4] == f"{r.rie_sc:+.1f} (n={r.n_pairs})" and row[5] == f"{r.rie_sr:+.1f} (n={r.n_pairs})"
    v = metrics.score_sr(select(d.records, condition="vanilla"), ("configuration", "model"))[("react", "ma")]
    row = next(x for x in tables["table2_configuration"].rows if x[0] == "ReAct")
    assert row[1] == f"{v.score:.1f} / {v.sr:.1f} (n={v.n})"
    assert tables["table2_configuration"].columns[1] == "ma: Vanilla"
    iv = metrics.rie_sr_interval(d.records, ())[()]
    pooled = next(x for x in tables["table11_intervals"].rows if x[0] == "Pooled")
    assert pooled[1].endswith(f"± {iv.half_width:.1f}")


def test_sparse_cells_say_n_less_than_k(tmp_path):
    cfg, out = make_study(tmp_path, worlds=["plains-1"], repetitions=1, models=["ma"])
    res = write_report(out, min_episodes=5, trajectories=False)
    t9 = res.table("table9_biome")
    assert t9.rows[0][1:3] == ["n<5", "n<5"]  # 4 Vanilla episodes in the biome
    assert t9.rows[0][4].endswith("(n=12)")
    assert "n<5" not in t9.rows[0][3:5]  # 12 Mirror episodes
    t2 = res.table("table2_configuration")
    assert any("n<5" in c for row in t2.rows for c in row)
    assert "n<5" in res.table("table11_intervals").rows[0][1]
    assert "n<5" in res.markdown.read_text()
    # with k=1 the same cells are numbers
    res1 = write_report(out, min_episodes=1, trajectories=False)
    assert not any("n<1" in c for t in res1.tables for row in t.rows for c in row)


def test_tables_without_disclosure_are_left_out_with_a_reason(tmp_path):
    cfg, out = make_study(tmp_path, disclosure={"configurations": []}, models=["ma"], repetitions=1)
    res = write_report(out, min_episodes=2, trajectories=False)
    assert {t.key for t in res.tables} == TABLE_KEYS
    for key in ("table4_disclosure", "table10_model_split"):
        t = res.table(key)
        assert t.omitted and not t.rows and "no disclosed configuration" in t.omitted
        assert not (res.out_dir / "tables" / f"{key}.csv").exists()
    page = res.html.read_text()
    assert "Not shown: the study has no disclosed configuration" in page and "<td>–</td><td>–</td><td>–</td>" not in page
    # one model: headers name the columns, the caption names the model
    assert res.table("table2_configuration").columns[1] == "Vanilla"
    assert "Model: ma." in res.table("table2_configuration").caption


def test_excluded_record_is_reported(tmp_path):
    cfg, out = make_study(tmp_path, repetitions=1, models=["ma"])
    victim = build_plan(cfg)[0].episode_id
    with sqlite3.connect(out / "results.sqlite") as c:
        c.execute("UPDATE episodes SET budget = 49 WHERE episode_id = ?", (victim,))
    res = write_report(out, min_episodes=2, trajectories=False)
    assert res.n_excluded == 1 and res.n_missing == 1
    excl = (res.out_dir / "exclusions.csv").read_text()
    assert victim in excl and "budget: recorded 49, expected 50" in excl
    assert "budget: recorded 49" in res.html.read_text()


def test_cli_report(tmp_path):
    from mcbuild.cli import main

    cfg, out = make_study(tmp_path, repetitions=1, models=["ma"])
    res = CliRunner().invoke(main, ["study", "report", str(out), "--min-episodes", "2", "--no-trajectories"])
    assert res.exit_code == 0, res.output
    assert "Table 3." in res.output and "report.html" in res.output


def test_checkpoints_come_from_the_config_and_undefined_q_says_why(tmp_path):
    cfg, out = make_study(tmp_path, checkpoints=[10, 20, 50], configurations=["react"], models=["ma"],
                          disclosure={"configurations": []}, repetitions=1)
    d = load_study(out)
    tables = {t.key: t for t in build_tables(d, 1)}
    t5 = tables["table5_checkpoints"]
    assert t5.columns[1:3] == ["10 actions Vanilla", "10 actions Mirror"] and "study config's" in t5.caption
    q = tables["tableQ_within_suite"]
    assert all(r[3] in ("undefined: needs ≥ 2 compared configurations",) for r in q.rows)


def test_records_without_milestone_counts_leave_the_msr_tables_out_with_a_reason(tmp_path):
    cfg, out = make_study(tmp_path, repetitions=1, models=["ma"])
    res = write_report(out, min_episodes=2, trajectories=False, viewer=False)
    for key in MSR_TABLES:
        t = res.table(key)
        assert t.omitted and not t.rows and "carries milestone counts" in t.omitted
    assert "Not shown: none of the" in res.markdown.read_text()


def test_msr_tables_and_difficulty_come_from_metrics_and_report_json(tmp_path):
    import functools
    import json

    build = tmp_path / "build"
    for suite, d in (("m01", 1.5), ("m02", None)):
        (build / suite).mkdir(parents=True)
        rated = {"iron_armor": {"vanilla": 1.25, "suite": d}, "diamond": {"vanilla": 2.0, "suite": 2.5}}
        (build / suite / "report.json").write_text(json.dumps({"tracer": {"difficulty": rated}}))
    cfg, out = make_study(tmp_path, executor=functools.partial(outcome, milestones=True), models=["ma"])
    res = write_report(out, min_episodes=1, trajectories=False, viewer=False, build=build)
    d = load_study(out)
    r = metrics.rie_msr(d.records, "condition")[("m04",)]
    row = next(x for x in res.table("tableM_suite").rows if x[0] == "M04")
    assert row[-1] == f"{r.rie_msr:+.1f} (n={r.n_pairs})"
    v = metrics.milestone_rates(select(d.records, condition="vanilla"), ("task", "configuration"))[("diamond", "xenon")]
    row = next(x for x in res.table("tableM_task").rows if x[:2] == ["Diamond", "XENON"])
    assert row[2] == f"{v.score:.1f} / {v.sr:.1f} / {v.msr:.1f} / {v.tsr:.1f} (n={v.n})"
    assert v.tsr == v.sr       # a chain of milestones: all met exactly when the final one is
    t = res.table("tableD_difficulty")
    assert t.columns == ["Task", "Vanilla d(τ) / SR", "M01 d(τ) / SR", "M02 d(τ) / SR", "M04 d(τ) / SR"]
    armor = next(x for x in t.rows if x[0] == "Iron Armor")
    assert [c.split(" / ")[0] for c in armor[1:]] == ["1.25", "1.50", "no route", "–"]
    assert "No difficulty for M04" in t.caption
    assert (res.out_dir / "plots" / "sr_difficulty.png").stat().st_size > 1000


def test_a_report_is_current_until_the_store_or_the_toolkit_changes(tmp_path, monkeypatch):
    """What `mcbuild demo` decides on: a second report of the same store is skipped; a new episode, or
    a change to the toolkit's files, makes it stale."""
    from mcbuild.runtime.study.report import stamp
    from mcbuild.runtime.study.report.writers import report_options

    cfg = StudyConfig.model_validate(dict(name="cur", worlds=["plains-1"], conditions=["vanilla", "m01"],
                                          tasks=["diamond"], configurations=["react"], models=["ma"]))
    out, build = tmp_path / "cur", tmp_path / "build"
    run_study(cfg, outcome, out_dir=out, build_root=build, limit=1)
    write_report(out, build=build, viewer=False)
    digest = stamp.inputs_digest(out, build, report_options(viewer=False))
    assert stamp.is_current(out / "report", digest)
    assert not stamp.is_current(out / "report", stamp.inputs_digest(out, build, report_options()))   # other options
    run_study(cfg, outcome, out_dir=out, build_root=build, resume=True, limit=1)
    assert not stamp.is_current(out / "report", stamp.inputs_digest(out, build, report_options(viewer=False)))
    write_report(out, build=build, viewer=False)
    now = stamp.inputs_digest(out, build, report_options(viewer=False))
    assert stamp.is_current(out / "report", now)
    monkeypatch.setattr(stamp, "toolkit_digest", lambda: "another toolkit")
    assert not stamp.is_current(out / "report", stamp.inputs_digest(out, build, report_options(viewer=False)))
