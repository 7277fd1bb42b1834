"""mcbuild.analysis: a study as DataFrames (episodes, actions, calls), read-only and in parts, and
`study export` in Parquet, CSV and JSONL reading back as the same tables."""
from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3

import pytest
from click.testing import CliRunner

pd = pytest.importorskip("pandas")

import mcbuild.analysis as analysis
from mcbuild.analysis import source as source_module
from mcbuild.analysis.export import export
from mcbuild.analysis.frames import DTYPES
from mcbuild.analysis.schema import ACTIONS, CALLS, EPISODES
from mcbuild.cli import main
from mcbuild.compiler.core.canonical import compact
from mcbuild.compiler.core.owned import MARKER
from mcbuild.llm.testing import ScriptedEndpoint
from mcbuild.runtime.study.run.runner import run_study
from mcbuild.runtime.study.store.results import Store, StoreError
from test_study_inflight import llm_config, responder


def caching_responder(messages: list[dict[str, str]]) -> dict:
    """The scripted replies, each with a usage that reports prompt tokens served from a cache (as
    OpenAI's ``usage.prompt_tokens_details.cached_tokens``; every other request none)."""
    cached = 64 if len(json.dumps(messages)) % 2 else 0
    return {"id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
                                                                          "content": responder(messages)}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110,
                      "prompt_tokens_details": {"cached_tokens": cached}}}


@pytest.fixture(scope="module")
def llm_study(world_build, tmp_path_factory):
    out = tmp_path_factory.mktemp("llm-analysis") / "llm"
    with ScriptedEndpoint(caching_responder) as ep:
        cfg = llm_config(ep, configurations=["react"], repetitions=1, budget=5)
        assert run_study(cfg, out_dir=out, build_root=world_build).complete
    return out


def _store(path):
    with Store.open(path, create=False) as st:
        return st.records(), {r["episode_id"]: [json.loads(x) for x in st.trajectory(r["episode_id"]).splitlines()]
                              for r in st.records()}


def _digest(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def test_episodes_are_the_stored_records(planner_studies):
    records, _ = _store(planner_studies["planners"])
    with analysis.open(planner_studies["planners"]) as study:
        eps = study.episodes
        assert study.name == "planners" and study.config["tasks"] == ["iron_armor"]
    assert list(eps.columns) == [c.name for c in EPISODES]
    assert {c: str(t) for c, t in eps.dtypes.items()} == {c.name: DTYPES[c.kind] for c in EPISODES}
    assert len(eps) == len(records) == 14 and list(eps.episode_id) == sorted(r["episode_id"] for r in records)
    for rec, row in zip(records, eps.to_dict("records")):
        for name in ("score", "success", "actions", "end_reason", "configuration", "condition", "seed", "tokens_in",
                     "milestones_met", "cost_usd", "world", "repetition"):
            assert row[name] == rec[name], name
        assert json.loads(row["encounters"]) == rec["encounters"]
        assert pd.isna(row["model_settings"])


def test_actions_follow_the_trajectories(planner_studies):
    records, trajectories = _store(planner_studies["planners"])
    with analysis.open(planner_studies["planners"]) as study:
        acts = study.actions
        assert study.calls.empty and list(study.calls.columns) == [c.name for c in CALLS]
    assert list(acts.columns) == [c.name for c in ACTIONS]
    assert len(acts) == sum(r["actions"] for r in records)
    for rec in records:
        mine = acts[acts.episode_id == rec["episode_id"]]
        steps = [s for s in trajectories[rec["episode_id"]] if "action" in s]
        assert list(mine["index"]) == list(range(1, rec["actions"] + 1))
        assert mine.score.iloc[-1] == rec["score"]
        assert sum(len(json.loads(m)) for m in mine.milestones) == rec["milestones_met"]
        met = {(e["rule"], e["action_index"]) for e in rec["encounters"]}
        assert {(rule, i) for i, rules in zip(mine["index"], mine.encounters) for rule in json.loads(rules)} == met
        for row, step in zip(mine.to_dict("records"), steps):
            assert (row["skill"], json.loads(row["args"])) == (step["action"]["skill"], step["action"]["args"])
            assert (row["ok"], None if pd.isna(row["reason"]) else row["reason"]) == \
                (step["result"]["ok"], step["result"]["reason"])
            assert json.loads(row["gained"]) == step["result"]["gained"]
            assert json.loads(row["lost"]) == step["result"]["lost"]
    assert (acts.encounters != "[]").any() and (acts.milestones != "[]").any() and (~acts.ok).any()


def test_columns_and_trajectories_on_demand(planner_studies, monkeypatch):
    with analysis.open(planner_studies["planners"]) as study:
        whole = study.actions
        some = study.read_episodes(["score", "condition"])
        assert list(some.columns) == ["episode_id", "score", "condition"] and len(some) == 14
        with pytest.raises(ValueError, match="unknown episodes column"):
            study.read_episodes(["not_a_column"])
        eid = some.episode_id.iloc[3]
        one = study.read_actions(episodes=[eid])
        assert set(one.episode_id) == {eid}
        pd.testing.assert_frame_equal(one, whole[whole.episode_id == eid].reset_index(drop=True))
        monkeypatch.setattr(source_module, "BATCH", 4)
        decoded = []
        real = source_module.parse_steps
        monkeypatch.setattr(source_module, "parse_steps", lambda text: decoded.append(1) or real(text))
        batches = []
        for frame in study.iter_actions():
            batches.append(frame)
            assert len(decoded) <= 4 * len(batches)           # never more than a batch ahead
        assert len(batches) == 4
        pd.testing.assert_frame_equal(pd.concat(batches, ignore_index=True), whole)
        assert study.trajectory(eid)[0]["index"] == 1
        with pytest.raises(KeyError):
            study.trajectory("no-such-episode")


def test_reading_and_exporting_leave_the_store_byte_for_byte(planner_studies, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(planner_studies["planners"], folder)
    before = _digest(folder)
    with analysis.open(folder) as study:
        study.episodes, study.actions, study.calls  # noqa: B018
    for fmt in ("csv", "jsonl", "parquet", "full"):
        export(folder, fmt, tmp_path / f"out-{fmt}" / ("x.jsonl" if fmt == "full" else ""))
    assert _digest(folder) == before


def test_an_older_store_reads_its_missing_columns_as_na(planner_studies, tmp_path):
    folder = tmp_path / "old"
    shutil.copytree(planner_studies["adaptive-planner"], folder)
    with sqlite3.connect(folder / "results.sqlite") as conn:
        conn.execute("ALTER TABLE episodes DROP COLUMN milestones_met")
        conn.execute("ALTER TABLE episodes DROP COLUMN encounters")
    with analysis.open(folder) as study:
        eps, acts = study.episodes, study.actions
    assert eps.milestones_met.isna().all() and eps.encounters.isna().all() and eps.score.notna().all()
    assert (acts.encounters == "[]").all() and len(acts) == eps.actions.sum()


def test_a_damaged_or_missing_store_is_one_store_error(tmp_path):
    with pytest.raises(StoreError, match="no results store"):
        analysis.open(tmp_path)
    (tmp_path / "results.sqlite").write_bytes(b"")
    with pytest.raises(StoreError, match="an empty file"):
        analysis.open(tmp_path)
    (tmp_path / "results.sqlite").write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError, match="damaged results store"):
        analysis.open(tmp_path)


def test_calls_of_an_llm_study_without_their_prompts(llm_study):
    records, trajectories = _store(llm_study)
    with analysis.open(llm_study) as study:
        calls, eps = study.calls, study.episodes
        steps = study.trajectory(eps.episode_id.iloc[0])
    stored = {eid: [c for s in steps_ for c in s.get("llm_calls") or ()] for eid, steps_ in trajectories.items()}
    assert len(calls) == sum(map(len, stored.values())) > len(eps)
    for eid, group in calls.groupby("episode_id"):
        assert list(group["call"]) == list(range(len(stored[eid])))
        assert list(group.prompt_tokens) == [c["prompt_tokens"] for c in stored[eid]]
        assert list(group.repair) == [c["repair"] for c in stored[eid]]
    sums = calls.groupby("episode_id")[["prompt_tokens", "completion_tokens"]].sum()
    assert sums.prompt_tokens.to_dict() == dict(zip(eps.episode_id, eps.tokens_in))
    assert sums.completion_tokens.to_dict() == dict(zip(eps.episode_id, eps.tokens_out))
    cached = calls.groupby("episode_id").cached_prompt_tokens.sum()      # cached tokens: the call's and the episode's
    assert cached.to_dict() == dict(zip(eps.episode_id, eps.cached_prompt_tokens)) and 0 < cached.sum() < sums.prompt_tokens.sum()
    assert set(calls.cached_prompt_tokens) <= {0, 64} and (calls.cached_prompt_tokens == 64).any()   # 0: none reported
    assert calls.seconds.notna().all() and (calls.seconds >= 0).all() and calls.extra.isna().all()
    assert not any("messages" in c or "reply" in c for c in calls.columns)
    assert "messages" in steps[0]["llm_calls"][0]                     # the prompts stay in the store
    assert json.loads(eps.model_settings.iloc[0])["temperature"] == 0.7


def _read(fmt, path, columns):
    names = [c.name for c in columns]
    if fmt == "parquet":
        df = pd.read_parquet(path, dtype_backend="numpy_nullable")
    elif fmt == "csv":
        df = pd.read_csv(path, dtype={c.name: "string" for c in columns if c.kind in ("str", "json")},
                         keep_default_na=False, na_values={c.name: [""] for c in columns})
    else:
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        df = pd.DataFrame([[compact(r[n]) if c.kind == "json" and r[n] is not None else r[n]
                            for n, c in zip(names, columns)] for r in rows], columns=names)
    return df.reindex(columns=names).astype({c.name: DTYPES[c.kind] for c in columns})


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_each_export_reads_back_as_the_frames(llm_study, tmp_path, fmt):
    done = export(llm_study, fmt, tmp_path / fmt)
    with analysis.open(llm_study) as study:
        frames = {"episodes": study.episodes, "actions": study.actions, "calls": study.calls}
    columns = {"episodes": EPISODES, "actions": ACTIONS, "calls": CALLS}
    for name, frame in frames.items():
        path, n = done.files[name]
        assert path == tmp_path / fmt / f"{name}.{fmt}" and n == len(frame)
        pd.testing.assert_frame_equal(_read(fmt, path, columns[name]), frame, check_exact=False)
    assert sorted(p.name for p in (tmp_path / fmt).iterdir()) == sorted([MARKER, *(f"{n}.{fmt}" for n in frames)])


def test_the_export_is_lean_and_the_full_one_is_still_there(llm_study, tmp_path):
    full = export(llm_study, "full", tmp_path / "full.jsonl")
    per_episode = {fmt: export(llm_study, fmt, tmp_path / fmt).bytes / full.episodes for fmt in ("csv", "jsonl",
                                                                                                 "parquet")}
    assert all(size * 5 < full.bytes / full.episodes for size in per_episode.values()), (per_episode, full.bytes)
    first = json.loads((tmp_path / "full.jsonl").read_text().splitlines()[0])
    assert first["trajectory"][0]["llm_calls"][0]["messages"]


def test_export_command(planner_studies, tmp_path):
    res = CliRunner().invoke(main, ["study", "export", str(planner_studies["planners"]), "--out", str(tmp_path / "t")])
    assert res.exit_code == 0, res.output
    line = res.output.strip()
    assert line.startswith(f"14 episodes -> {tmp_path / 't'} (episodes.csv: 14 rows, actions.csv: ")
    assert "calls.csv: 0 rows" in line and line.endswith(" an episode)")
    res = CliRunner().invoke(main, ["study", "export", str(planner_studies["planners"]), "--format", "parquet",
                                    "--out", str(tmp_path / "p")])
    assert res.exit_code == 0 and (tmp_path / "p" / "actions.parquet").is_file()
    res = CliRunner().invoke(main, ["study", "export", str(tmp_path / "none")])
    assert res.exit_code == 1 and res.output.strip() == f"error: no results store at {tmp_path / 'none' / 'results.sqlite'}"


def test_a_full_disk_during_a_table_export_names_the_file(planner_studies, tmp_path):
    from test_robust_limits import error_line, mcbuild

    out = tmp_path / "tables"
    line = error_line(mcbuild("study", "export", planner_studies["planners"], "--out", out, limit_bytes=20_000), 1)
    assert line == f"error: {out / 'actions.csv'}: File too large"
    assert list(tmp_path.iterdir()) == []                     # no half-written export, no temporary folder


def test_parquet_without_pyarrow_is_one_line(planner_studies, tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)
    res = CliRunner().invoke(main, ["study", "export", str(planner_studies["planners"]), "--format", "parquet",
                                    "--out", str(tmp_path / "p")])
    assert res.exit_code == 1 and res.output.strip() == ("error: --format parquet needs pyarrow: pip install "
                                                         "'mcbuild[analysis]' (or export --format csv or jsonl)")
    assert not (tmp_path / "p").exists()
