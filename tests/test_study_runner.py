"""Study runner and results store: ids, resume after SIGKILL, fault reruns, build pinning, plan checks.

The episode executor is injected; the fake below stands in for the simulator at the test boundary.
"""
from __future__ import annotations

import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from mcbuild.compiler.core.paths import ROOT
from mcbuild.compiler.worlds.layout import WORLDS_SCHEMA
from mcbuild.runtime.agents.base import NO_MODEL
from mcbuild.runtime.errors import InfrastructureFault
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.outcome import EpisodeOutcome
from mcbuild.runtime.study.design.plan import build_plan
from mcbuild.runtime.study.report import load_study
from mcbuild.runtime.study.run.runner import run_study
from mcbuild.runtime.study.store.results import Store, StoreError, build_fingerprint

from study_fakes import MILESTONES, fake_outcome, milestone_outcome  # noqa: F401 - a light module that subprocesses and Ray workers import
from waiting import DEADLINE_S, until


def small_config(**kw) -> StudyConfig:
    data = dict(name="t", worlds=["plains-1", "taiga-1"], conditions=["vanilla", "m01", "m04"], tasks=["iron_armor"],
                configurations=["react", "adam"], disclosure={"configurations": ["react_rules"]}, models=["m"],
                repetitions=2, base_seed=7)
    data.update(kw)
    return StudyConfig.model_validate(data)


def stored_ids(path: Path) -> list[str]:
    with sqlite3.connect(path / "results.sqlite") as c:
        return [r[0] for r in c.execute("SELECT episode_id FROM episodes")]


def assert_exactly_once(cfg: StudyConfig, out: Path) -> None:
    ids = stored_ids(out)
    plan_ids = [e.episode_id for e in build_plan(cfg)]
    assert len(ids) == len(set(ids)) == len(plan_ids)
    assert set(ids) == set(plan_ids)
    d = load_study(out)
    assert not d.excluded and not d.missing and len(d.records) == len(plan_ids)


def test_run_store_and_resume_skip(tmp_path):
    cfg = small_config()
    out, build = tmp_path / "study", tmp_path / "build"
    s = run_study(cfg, fake_outcome, out_dir=out, build_root=build)
    assert s.complete and s.finished == len(build_plan(cfg)) == 2 * 3 * 2 * 2 + 2 * 2 * 2
    assert_exactly_once(cfg, out)
    with Store.open(out) as st:
        rec = st.records()[0]
        assert st.trajectory(rec["episode_id"]).count("\n") == rec["actions"]
        row = st.conn.execute("SELECT tokens_in, tokens_out, events FROM episodes LIMIT 1").fetchone()
        assert row[0] > 0 and row[1] > 0
        assert st.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    calls = []
    s2 = run_study(cfg, lambda e: calls.append(e) or fake_outcome(e), out_dir=out, build_root=build, resume=True)
    assert calls == [] and s2.already_done == s2.planned and s2.finished == 0


def test_milestone_counts_round_trip(tmp_path):
    cfg = small_config()
    out = tmp_path / "study"
    run_study(cfg, milestone_outcome, out_dir=out, build_root=tmp_path / "build")
    by_id = {e.episode_id: milestone_outcome(e) for e in build_plan(cfg)}
    records = load_study(out).records
    assert records and all((r.milestones_met, r.milestones_total) == (by_id[r.episode_id].milestones_met,
                                                                       by_id[r.episode_id].milestones_total)
                           for r in records)
    assert {r.milestones_met for r in records} != {r.milestones_total for r in records}


def test_store_without_milestone_columns_opens_and_resumes(tmp_path):
    cfg = small_config()
    out, build = tmp_path / "study", tmp_path / "build"
    run_study(cfg, milestone_outcome, out_dir=out, build_root=build, limit=5)
    with sqlite3.connect(out / "results.sqlite") as c:          # a store written before the columns existed
        for col in ("milestones_met", "milestones_total"):
            c.execute(f"ALTER TABLE episodes DROP COLUMN {col}")
    old = set(stored_ids(out))
    s = run_study(cfg, milestone_outcome, out_dir=out, build_root=build, resume=True)
    assert s.already_done == 5 and s.finished == s.planned - 5
    assert_exactly_once(cfg, out)
    records = load_study(out).records
    assert all((r.milestones_total is None) == (r.episode_id in old) for r in records)


def test_existing_store_without_resume_is_refused(tmp_path):
    cfg = small_config()
    run_study(cfg, fake_outcome, out_dir=tmp_path / "s", build_root=tmp_path / "b", limit=3)
    with pytest.raises(StoreError, match="--resume"):
        run_study(cfg, fake_outcome, out_dir=tmp_path / "s", build_root=tmp_path / "b")
    s = run_study(cfg, fake_outcome, out_dir=tmp_path / "s", build_root=tmp_path / "b", resume=True)
    assert s.already_done == 3 and s.complete


def test_changed_config_is_refused(tmp_path):
    run_study(small_config(), fake_outcome, out_dir=tmp_path / "s", build_root=tmp_path / "b", limit=2)
    with pytest.raises(StoreError, match="different study plan"):
        run_study(small_config(repetitions=3), fake_outcome, out_dir=tmp_path / "s", build_root=tmp_path / "b",
                  resume=True)


def _build(tmp_path, pack=b"zip1", save="aaa"):
    b = tmp_path / "build"
    (b / "m01").mkdir(parents=True, exist_ok=True)
    (b / "worlds").mkdir(exist_ok=True)
    (b / "m01" / "datapack.zip").write_bytes(pack)
    (b / "worlds" / "manifest.json").write_text(json.dumps(
        {"schema_version": WORLDS_SCHEMA, "worlds": {"w": {"files": {"w/vanilla/level.dat": save}, "inputs_sha256": "x"}}}))
    return b


def test_store_from_different_build_is_refused(tmp_path):
    build = _build(tmp_path)
    fp = build_fingerprint(build)
    assert fp.startswith("content:")
    cfg = small_config()
    run_study(cfg, fake_outcome, out_dir=tmp_path / "s", build_root=build, limit=2)
    (build / "m01" / "datapack.zip").write_bytes(b"zip2")
    with pytest.raises(StoreError, match="different build"):
        run_study(cfg, fake_outcome, out_dir=tmp_path / "s", build_root=build, resume=True)
    # a config pinned to another build is refused before anything runs
    with pytest.raises(StoreError, match="pinned"):
        run_study(small_config(build_fingerprint=fp), fake_outcome, out_dir=tmp_path / "s2", build_root=build)


def test_fingerprint_is_made_of_content_hashes(tmp_path):
    b = _build(tmp_path)
    f1 = build_fingerprint(b)
    (b / "FROZEN.json").write_text('{"packs": {"m01": "whatever"}}\n')        # freezing pins, changes nothing
    manifest = json.loads((b / "worlds" / "manifest.json").read_text())
    manifest["worlds"]["w"]["inputs_sha256"] = "y"                            # same files, other metadata
    (b / "worlds" / "manifest.json").write_text(json.dumps(manifest, indent=4))
    assert build_fingerprint(b) == f1
    assert build_fingerprint(_build(tmp_path, pack=b"zip2")) != f1
    assert build_fingerprint(_build(tmp_path, save="bbb")) != f1


def test_freezing_keeps_a_store_resumable(tmp_path):
    build = _build(tmp_path)
    cfg = small_config()
    run_study(cfg, fake_outcome, out_dir=tmp_path / "s", build_root=build, limit=2)
    (build / "FROZEN.json").write_text('{"files": {"w/vanilla/level.dat": "aaa"}}\n')
    s = run_study(cfg, fake_outcome, out_dir=tmp_path / "s", build_root=build, resume=True)
    assert s.complete and s.already_done == 2


def test_infrastructure_fault_reruns_under_same_id(tmp_path):
    cfg = small_config()
    target = build_plan(cfg)[4].episode_id
    seen: list[tuple[str, int]] = []

    def flaky(e):
        seen.append((e.episode_id, e.seed))
        if e.episode_id == target and sum(1 for i, _ in seen if i == target) <= 2:
            raise InfrastructureFault("server disconnected")
        return fake_outcome(e)

    s = run_study(cfg, flaky, out_dir=tmp_path / "s", build_root=tmp_path / "b")
    assert s.complete and s.infrastructure_faults == 2
    runs = [x for x in seen if x[0] == target]
    assert len(runs) == 3 and len(set(runs)) == 1  # same id, same seed
    assert_exactly_once(cfg, tmp_path / "s")
    with Store.open(tmp_path / "s") as st:
        assert st.conn.execute("SELECT attempts FROM episodes WHERE episode_id=?", (target,)).fetchone()[0] == 3
        faults = st.faults()
    assert [f["episode_id"] for f in faults] == [target, target]
    assert all(f["kind"] == "infrastructure" and "disconnected" in f["message"] for f in faults)


def test_persistent_fault_is_bounded_and_resumable(tmp_path):
    cfg = small_config()
    target = build_plan(cfg)[0].episode_id
    calls = []

    def broken(e):
        if e.episode_id == target:
            calls.append(1)
            raise InfrastructureFault("missing pack")
        return fake_outcome(e)

    s = run_study(cfg, broken, out_dir=tmp_path / "s", build_root=tmp_path / "b")
    assert len(calls) == 3 and s.gave_up == [target] and not s.complete
    assert target not in stored_ids(tmp_path / "s")
    s2 = run_study(cfg, fake_outcome, out_dir=tmp_path / "s", build_root=tmp_path / "b", resume=True)
    assert s2.finished == 1 and s2.complete
    assert_exactly_once(cfg, tmp_path / "s")


def test_outcomes_stay_in_denominator_and_bugs_are_not_stored(tmp_path):
    cfg = small_config()
    plan = build_plan(cfg)
    died, buggy = plan[1].episode_id, plan[2].episode_id

    def ex(e):
        if e.episode_id == died:
            return EpisodeOutcome(score=15, actions=3, end_reason="death")
        if e.episode_id == buggy:
            raise KeyError("bug in the executor")
        return fake_outcome(e)

    s = run_study(cfg, ex, out_dir=tmp_path / "s", build_root=tmp_path / "b")
    assert died in stored_ids(tmp_path / "s")
    assert buggy in s.errors and buggy not in stored_ids(tmp_path / "s")
    assert load_study(tmp_path / "s").missing == [buggy]


def test_parallel_workers_match_sequential(tmp_path):
    cfg = small_config()
    run_study(cfg, fake_outcome, out_dir=tmp_path / "a", build_root=tmp_path / "b", workers=1)
    run_study(cfg, fake_outcome, out_dir=tmp_path / "p", build_root=tmp_path / "b", workers=3)
    ra = {r["episode_id"]: r for r in Store.open(tmp_path / "a").records()}
    rp = {r["episode_id"]: r for r in Store.open(tmp_path / "p").records()}
    assert ra.keys() == rp.keys()
    assert all(ra[k]["score"] == rp[k]["score"] and ra[k]["seed"] == rp[k]["seed"] for k in ra)


def test_tampered_record_is_excluded_with_reason(tmp_path):
    cfg = small_config()
    out = tmp_path / "s"
    run_study(cfg, fake_outcome, out_dir=out, build_root=tmp_path / "b")
    victim = build_plan(cfg)[3].episode_id
    with sqlite3.connect(out / "results.sqlite") as c:
        c.execute("UPDATE episodes SET budget = budget - 1 WHERE episode_id = ?", (victim,))
    d = load_study(out)
    assert [x.episode_id for x in d.excluded] == [victim]
    assert any(r.startswith("budget: recorded 49, expected 50") for r in d.excluded[0].reasons)
    assert victim not in {r.episode_id for r in d.records} and d.missing == [victim]


# ---------------------------------------------------------------- SIGKILL


CHILD = r"""
import json, sys, time
sys.path.insert(0, {tests!r})
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.run.runner import run_study
from test_study_runner import fake_outcome
cfg = StudyConfig.model_validate(json.loads({cfg!r}))
def slow(e):
    time.sleep({delay})
    return fake_outcome(e)
run_study(cfg, slow, out_dir={out!r}, build_root={build!r}, workers={workers}, resume=True)
"""


def _spawn(cfg: StudyConfig, out: Path, build: Path, workers: int, delay: float) -> subprocess.Popen:
    src = CHILD.format(tests=str(Path(__file__).parent), cfg=json.dumps(cfg.to_json()), out=str(out),
                       build=str(build), workers=workers, delay=delay)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-c", src], env=env, cwd=str(ROOT))


def _count(out: Path) -> int:
    db = out / "results.sqlite"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as c:
            return c.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _wait_rows(out: Path, n: int, proc: subprocess.Popen, timeout: float = DEADLINE_S) -> None:
    def stored() -> bool:
        assert proc.poll() is None, "study finished before it could be killed"
        return _count(out) >= n

    until(stored, f"{n} episodes stored", timeout, every=0.02)


def _children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []


def sigkill_mid_study(proc: subprocess.Popen, out: Path, total: int, rows: int = 5) -> tuple[int, list[int]]:
    """Once ``out`` holds ``rows`` episodes, SIGKILL the study process ``proc``; return the episodes
    stored (checked to be at least ``rows`` and fewer than ``total``) and the children it had."""
    try:
        _wait_rows(out, rows, proc)
        children = _children(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=DEADLINE_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    partial = _count(out)
    assert rows <= partial < total
    return partial, children


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):
        return True


def test_resume_after_sigkill_of_parent(tmp_path):
    cfg = small_config()
    out, build = tmp_path / "s", tmp_path / "b"
    proc = _spawn(cfg, out, build, workers=2, delay=0.03)
    partial, workers = sigkill_mid_study(proc, out, len(build_plan(cfg)))
    until(lambda: all(_gone(p) for p in workers), "orphaned workers notice and exit by themselves")
    s = run_study(cfg, fake_outcome, out_dir=out, build_root=build, resume=True, workers=2)
    assert s.already_done == partial and s.complete
    assert_exactly_once(cfg, out)


KILLED_WITH_A_PENDING_BATCH = r"""
import json, os, signal, sys
sys.path.insert(0, {tests!r})
import mcbuild.runtime.study.store.batch as batch
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.run.runner import run_study
from test_study_runner import fake_outcome
batch.FLUSH_S = 3600.0              # the first episode is committed at once, the next ones wait for a batch
cfg = StudyConfig.model_validate(json.loads({cfg!r}))
done = []
def dies(e):
    if len(done) == 5:
        os.kill(os.getpid(), signal.SIGKILL)
    done.append(e.episode_id)
    return fake_outcome(e)
run_study(cfg, dies, out_dir={out!r}, build_root={build!r}, workers=1, resume=True)
"""


def test_resume_after_sigkill_with_a_batch_waiting(tmp_path):
    """Killed with four finished episodes waiting for their commit: they are not stored, and the
    resumed run stores every episode exactly once."""
    cfg = small_config()
    out, build = tmp_path / "s", tmp_path / "b"
    src = KILLED_WITH_A_PENDING_BATCH.format(tests=str(Path(__file__).parent), cfg=json.dumps(cfg.to_json()),
                                             out=str(out), build=str(build))
    proc = subprocess.run([sys.executable, "-c", src], env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=str(ROOT))
    assert proc.returncode == -signal.SIGKILL
    assert _count(out) == 1
    s = run_study(cfg, fake_outcome, out_dir=out, build_root=build, resume=True)
    assert s.already_done == 1 and s.finished == len(build_plan(cfg)) - 1 and s.complete
    assert_exactly_once(cfg, out)


def test_resume_after_sigkill_of_worker(tmp_path):
    cfg = small_config()
    out, build = tmp_path / "s", tmp_path / "b"
    proc = _spawn(cfg, out, build, workers=2, delay=0.1)
    try:
        _wait_rows(out, 3, proc)
        kids = _children(proc.pid)
        assert kids, "no worker processes found"
        os.kill(kids[0], signal.SIGKILL)
        assert proc.wait(timeout=DEADLINE_S) == 0  # the parent replaces the worker and reruns its episode
    finally:
        if proc.poll() is None:
            proc.kill()
    assert_exactly_once(cfg, out)
    with Store.open(out) as st:
        faults = st.faults()
    died = [f for f in faults if "worker process" in f["message"]]
    # Workers are busy all but microseconds of each 100 ms episode, so the kill hits an episode:
    # an infrastructure fault whose episode reran under the same id.
    assert died
    with Store.open(out) as st:
        for f in died:
            assert f["kind"] == "infrastructure"
            att = st.conn.execute("SELECT attempts FROM episodes WHERE episode_id=?", (f["episode_id"],)).fetchone()
            assert att is not None and att[0] >= 2
    s = run_study(cfg, fake_outcome, out_dir=out, build_root=build, resume=True)
    assert s.finished == 0 and s.complete


# ---------------------------------------------------------------- simulator executor


def sim_config(**kw) -> StudyConfig:
    data = dict(name="sim", worlds=["plains-1"], conditions=["vanilla", "m04"], tasks=["iron_armor"],
                configurations=["vanilla-planner"], disclosure={"configurations": ["react_rules"]},
                agents={"react_rules": "adaptive-planner"}, repetitions=1, base_seed=3)
    data.update(kw)
    return StudyConfig.model_validate(data)


def test_execute_runs_a_real_episode(world_build):
    from mcbuild.runtime.study.run.executor import execute

    entry = next(e for e in build_plan(sim_config()) if e.condition == "vanilla")
    out = execute(entry, build_root=world_build)
    assert out.success and out.score == 100 and out.success_action == out.actions <= 50
    assert (out.biome, out.world, out.task, out.budget) == ("plains", "plains-1", "iron_armor", 50)
    assert len(out.trajectory) == out.actions and out.cost_usd == 0.0
    disclosed = next(e for e in build_plan(sim_config()) if e.disclosure == "disclosed")
    assert execute(disclosed, build_root=world_build).condition == "m04"


def test_execute_faults_and_policy_errors(world_build, tmp_path, monkeypatch):
    from mcbuild.runtime.agents import registry as agents
    from mcbuild.runtime.study.run.executor import execute

    entry = next(e for e in build_plan(sim_config()) if e.condition == "vanilla")
    with pytest.raises(InfrastructureFault, match="unknown world .nowhere-1."):
        execute(dataclasses.replace(entry, world="nowhere-1"), build_root=world_build)
    disclosed = next(e for e in build_plan(sim_config()) if e.disclosure == "disclosed")
    with pytest.raises(InfrastructureFault, match="rule sheet"):
        execute(disclosed, build_root=tmp_path)

    class Broken:
        name = "broken"

        def reset(self, seed):
            pass

        def act(self, observation):
            raise ValueError("unparseable reply")

        def model_use(self):
            return NO_MODEL

    monkeypatch.setitem(agents.AGENTS, "broken", Broken)
    out = execute(dataclasses.replace(entry, agent="broken"), build_root=world_build)
    assert out.score == 0 and out.end_reason.startswith("policy_error") and out.actions == 0


def test_a_backend_that_cannot_start_fails_before_any_episode(tmp_path, monkeypatch):
    from mcbuild.runtime.backends import registry
    from mcbuild.runtime.errors import BackendUnavailable

    monkeypatch.delenv("MCBUILD_SERVER_JAR", raising=False)
    registry._OPEN.pop("server", None)
    with pytest.raises(BackendUnavailable, match="MCBUILD_SERVER_JAR"):
        run_study(sim_config(backend="server"), out_dir=tmp_path / "s", build_root=tmp_path / "b")
    assert not (tmp_path / "s").exists() or not any((tmp_path / "s").iterdir())


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("MCBUILD_SLOW") != "1", reason="builds a world; set MCBUILD_SLOW=1")
def test_real_simulator_end_to_end(tmp_path):
    """Compile the packs, build plains-1, run a small paired study on the embedded simulator."""
    from click.testing import CliRunner

    from mcbuild.cli import main
    from mcbuild.runtime.study.report import write_report

    build = tmp_path / "build"
    cli = CliRunner()
    assert cli.invoke(main, ["compile", "--all", "--build", str(build)]).exit_code == 0
    assert cli.invoke(main, ["build", "worlds", "--only", "plains-1", "--build", str(build), "--workers", "1"]).exit_code == 0
    cfg = StudyConfig(name="e2e", worlds=["plains-1"], conditions=["vanilla", "m01", "m03"], tasks=["iron_armor"],
                      configurations=["vanilla-planner", "adaptive-planner"])
    s = run_study(cfg, out_dir=tmp_path / "s", build_root=build, workers=2)
    assert s.complete and not s.errors
    d = load_study(tmp_path / "s")
    assert len(d.records) == 6 and not d.excluded
    assert all(r.actions > 0 for r in d.records)
    assert any(r.encounters for r in d.records if r.condition == "m01")
    assert write_report(tmp_path / "s", min_episodes=1).html.exists()


def test_a_damaged_stored_record_or_trajectory_is_a_store_error(tmp_path):
    from mcbuild.runtime.study.store.trajectories import MAGIC

    cfg = small_config()
    out = tmp_path / "study"
    run_study(cfg, fake_outcome, out_dir=out, build_root=tmp_path / "build", limit=2)
    eid = stored_ids(out)[0]
    with sqlite3.connect(out / "results.sqlite") as c:
        c.execute("UPDATE episodes SET score_at = '{damaged', trajectory = ? WHERE episode_id = ?",
                  (MAGIC + b"not zlib", eid))
    with Store.open(out) as st:
        with pytest.raises(StoreError, match=f"episode {eid}: damaged record"):
            st.records()
        with pytest.raises(StoreError, match=f"episode {eid}: damaged stored trajectory"):
            st.trajectory(eid)
    with sqlite3.connect(out / "results.sqlite") as c:
        c.execute("UPDATE episodes SET events = '[{' WHERE episode_id = ?", (eid,))
        c.execute("UPDATE meta SET value = '{damaged' WHERE key = 'config'")
    with Store.open(out) as st:
        with pytest.raises(StoreError, match=f"episode {eid}: damaged events"):
            list(st.iter_trajectories())
        with pytest.raises(StoreError, match="damaged study config"):
            st.config_json()


def test_export_of_a_damaged_plain_trajectory_is_a_store_error(tmp_path):
    from mcbuild.runtime.study.store.export import export

    out = tmp_path / "study"
    run_study(small_config(), fake_outcome, out_dir=out, build_root=tmp_path / "build", limit=2)
    eid = stored_ids(out)[0]
    with sqlite3.connect(out / "results.sqlite") as c:
        c.execute("UPDATE episodes SET trajectory = '{\"step\": 1' WHERE episode_id = ?", (eid,))
    with pytest.raises(StoreError, match=f"episode {eid}: damaged stored trajectory"):
        export(out)
    assert not list(out.glob("*.tmp")) and not (out / "export.jsonl").exists()
