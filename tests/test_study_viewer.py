"""Trajectory viewer page data (fast, no browser): steps, divergence, pairs, index and files;
plus the report's extra tables (Wilson SR, end reasons, fault log, changed transitions)."""
from __future__ import annotations

import json

import pytest

from mcbuild.runtime.records import EpisodeRecord
from mcbuild.runtime.study.metrics import stats
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.run.outcome import EpisodeOutcome
from mcbuild.runtime.study.report import load_study, write_report
from mcbuild.runtime.study.report.extras import table_changes
from mcbuild.runtime.study.run.runner import run_study
from mcbuild.runtime.study.viewer.episodes import first_divergence, pairs_of, steps_of


def step(i, skill="mine", block="iron_ore", gained=None, evaluator=(), completed=(), llm=()):
    gained = gained or {"minecraft:raw_iron": 1}
    return {"index": i, "action": {"skill": skill, "args": {"block": f"minecraft:{block}", "count": 1}},
            "signature": f"{skill}|minecraft:{block}", "inventory_delta": gained, "score": 10 * i,
            "completed": list(completed), "evaluator": list(evaluator), "llm_calls": list(llm),
            "result": {"ok": True, "reason": None, "message": f"mined 1 minecraft:{block}", "skill": skill}}


def outcome(e) -> EpisodeOutcome:
    mirror = e.condition != "vanilla"
    traj = [step(1, completed=["minecraft:story/root"]),
            step(2, gained={"minecraft:raw_iron_block": 1} if mirror else None,
                 evaluator=[{"action": 2, "first": True, "rule": "loot_table:minecraft:blocks/iron_ore"}] if mirror else [],
                 llm=[{"role": "act", "prompt_tokens": 120, "completion_tokens": 30, "cost_usd": 0.002,
                       "messages": [{"role": "user", "content": "what next?"}], "reply": "mine"}]),
            step(3, completed=["minecraft:story/root", "minecraft:story/mine_stone"])]
    return EpisodeOutcome(score=100 if not mirror else 35, actions=3, cost_usd=0.002, trajectory=traj,
                          success_action=3 if not mirror else None,
                          end_reason="final_milestone" if not mirror else "no_action")


@pytest.fixture()
def study(tmp_path):
    cfg = StudyConfig.model_validate(dict(name="view", worlds=["plains-1", "taiga-1"], conditions=["vanilla", "m04"],
                                          tasks=["iron_armor"], configurations=["react"], models=["none"], base_seed=1))
    out = tmp_path / "studies" / cfg.name
    run_study(cfg, outcome, out_dir=out, build_root=tmp_path / "build")
    return out


def test_wilson_interval_is_informative_at_the_ends():
    lo, hi = stats.wilson_interval(30, 30)
    assert hi == pytest.approx(1.0) and lo == pytest.approx(0.8865, abs=1e-4)
    lo, hi = stats.wilson_interval(0, 30)
    assert lo == pytest.approx(0.0, abs=1e-12) and hi == pytest.approx(0.1135, abs=1e-4)
    assert stats.wilson_interval(8, 10) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    with pytest.raises(ValueError):
        stats.wilson_interval(3, 0)


def test_steps_milestones_encounters_and_model_calls():
    steps = steps_of([s for s in outcome(type("E", (), {"condition": "m04"})).trajectory])
    assert [s["i"] for s in steps] == [1, 2, 3]
    assert steps[0]["new"] == ["story/root"] and steps[2]["new"] == ["story/mine_stone"]
    assert steps[1]["enc"] == [{"rule": "loot_table:minecraft:blocks/iron_ore", "first": True}]
    assert steps[1]["llm"][0]["in"] == 120 and steps[1]["llm"][0]["prompt"] == "what next?"
    assert steps[0]["args"] == {"block": "iron_ore", "count": 1} and "minecraft:" not in steps[0]["msg"]


def test_first_divergence_kinds():
    a = steps_of([step(1), step(2), step(3)])
    assert first_divergence(a, a) is None
    assert first_divergence(a, steps_of([step(1), step(2, gained={"minecraft:x": 1})])) == {"index": 2, "kind": "outcome"}
    assert first_divergence(a, steps_of([step(1, block="stone")])) == {"index": 1, "kind": "action"}
    assert first_divergence(a, steps_of([step(1), step(2)])) == {"index": 3, "kind": "length"}


def test_pairs_match_world_task_configuration_model_and_repetition():
    def rec(eid, world, cond, rep=0):
        return EpisodeRecord(episode_id=eid, biome="plains", world=world, condition=cond, task="diamond", configuration="react",
                             model="none", budget=50, disclosure="hidden", repetition=rep, score=0, success=False,
                             actions=1, cost_usd=0.0)
    rs = [rec("a", "w1", "vanilla"), rec("b", "w1", "m04"), rec("c", "w2", "m04"), rec("d", "w1", "m01", rep=1)]
    assert [(v.episode_id, m.episode_id) for v, m in pairs_of(rs)] == [("a", "b")]


def _load(path):
    text = path.read_text()
    return json.loads(text[text.index("(") + 1: text.rindex(")")])


def test_viewer_files_index_pairs_and_determinism(study):
    build = study.parents[1] / "build"          # no saves: episodes get no replayed map path
    res = write_report(study, min_episodes=1, build=build)
    v = res.out_dir / "viewer"
    assert res.viewer.episodes == 4 and (v / "index.html").is_file() and (v / "app.js").is_file()
    html = (v / "index.html").read_text()
    assert "http://" not in html and "https://" not in html and "http" not in (v / "app.js").read_text()
    idx = _load(v / "data" / "index.js")
    assert len(idx["rows"]) == 4 and len(idx["pairs"]) == 2
    cond = idx["fields"].index("condition")
    assert [r[cond] for r in idx["rows"]] == ["vanilla", "m04", "vanilla", "m04"]   # grouped by world
    info = next(iter(idx["pairs"].values()))
    assert info["divergence"] == {"index": 2, "kind": "outcome"}
    assert info["first_encounter"] == {"index": 2, "rule": "loot_table:minecraft:blocks/iron_ore"}
    assert idx["labels"]["model"]["none"] == "scripted (no LLM)"
    eid = idx["rows"][1][0]
    ep = _load(v / "data" / "ep" / eid[:2] / f"{eid}.js")
    assert ep["end"] == "no_action" and ep["path"] is None and len(ep["steps"]) == 3
    before = {p: p.read_bytes() for p in v.rglob("*") if p.is_file()}
    write_report(study, min_episodes=1, build=build)
    assert {p: p.read_bytes() for p in v.rglob("*") if p.is_file()} == before


def test_end_reasons_and_fault_log(study):
    import sqlite3

    with sqlite3.connect(study / "results.sqlite") as c:
        c.execute("INSERT INTO faults(episode_id, attempt, kind, message, at) VALUES ('abc', 1, 'infrastructure', "
                  "'backend crashed:\n boom', 0)")
    res = write_report(study, min_episodes=1, viewer=False)
    ends = res.table("tableE_end_reasons")
    assert ends.columns == ["Configuration", "Condition", "final_milestone", "no_action", "n"]
    assert ["ReAct", "M04", "0", "2", "2"] in ends.rows
    faults = res.table("tableF_faults")
    assert faults.rows == [["abc", "1", "infrastructure", "no", "backend crashed: boom"]]
    assert "1 logged faults" in faults.caption
    sr = res.table("tableSR_wilson")
    assert sr.rows[0][1].startswith("100.0 [") and sr.rows[0][1].endswith("(n=2)")


def test_changed_transitions_from_suite_report(tmp_path, suites):
    from mcbuild.compiler.build import write

    write(suites["m04"], tmp_path)
    t = table_changes("m04", tmp_path)
    assert ["iron-ore-block", "iron_ore", "break", "raw_iron", "raw_iron_block"] in t.rows
    missing = table_changes("m05", tmp_path)
    assert missing.omitted and "report.json is missing" in missing.omitted
    (tmp_path / "m04" / "datapack.zip").unlink()
    assert "datapack.zip is missing" in table_changes("m04", tmp_path).omitted


def test_figure3_uses_the_compared_set(study):
    from mcbuild.runtime.study.report.plots import figure3_cells

    d = load_study(study)
    compared, cells = figure3_cells(d, 1)[("none", "iron_armor")]
    assert compared == ["react"] and cells[("react", "m04")].value == pytest.approx(100.0)


def test_path_note_for_a_missing_save_but_a_bug_propagates(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from mcbuild.runtime.errors import InfrastructureFault
    from mcbuild.runtime.study.viewer import build as vb

    r = SimpleNamespace(world="w", condition="vanilla", task="diamond", budget=5)

    def missing(*a, **k):
        raise InfrastructureFault("build/worlds/w/vanilla: save missing")

    monkeypatch.setattr(vb, "replay_path", missing)
    path, note = vb._path(r, {"seed": 1}, [], tmp_path, "sim")
    assert path is None and note.startswith("Path not available: InfrastructureFault")

    def bug(*a, **k):
        raise KeyError("index")

    monkeypatch.setattr(vb, "replay_path", bug)
    with pytest.raises(KeyError):
        vb._path(r, {"seed": 1}, [], tmp_path, "sim")


def test_a_damaged_suite_report_is_one_clear_line(tmp_path):
    from mcbuild.runtime.study.report.difficulty import load_difficulty

    (tmp_path / "m04").mkdir()
    (tmp_path / "m04" / "report.json").write_text("{damaged")
    assert table_changes("m04", tmp_path).omitted.startswith(f"{tmp_path / 'm04' / 'report.json'} is damaged")
    assert load_difficulty(tmp_path, ["m04"]) == ({}, ["m04 (damaged)"])


def test_a_damaged_map_cache_entry_is_redrawn(tmp_path):
    from mcbuild.runtime.study.viewer.build import _cached_bounds

    png, meta = tmp_path / "w.png", tmp_path / "w.json"
    png.write_bytes(b"png")
    meta.write_text(json.dumps({"stamp": [["level.dat", 1, 2]], "bounds": {"x0": 0}}))
    assert _cached_bounds(png, meta, [["level.dat", 1, 2]]) == {"x0": 0}
    assert _cached_bounds(png, meta, [["level.dat", 1, 3]]) is None
    for damaged in ("{not json", "[]", json.dumps({"stamp": [["level.dat", 1, 2]]})):
        meta.write_text(damaged)
        assert _cached_bounds(png, meta, [["level.dat", 1, 2]]) is None
