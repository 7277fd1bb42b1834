"""The Ray scheduler on one session-scoped local cluster: the same records and tables as the local
scheduler, lost workers and actors rerun under the same id, resume after SIGKILL of the
coordinator, workers refusing another build.

The quick study runs on the first ``QUICK_WORLDS`` built world (42 episodes), not all ten: the
full 420 episodes take one to five minutes per scheduler on 2 shared cores. Set
``MCBUILD_SLOW=1`` for the full study.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from mcbuild.compiler.core.paths import ROOT
from mcbuild.runtime.errors import BackendUnavailable
from mcbuild.runtime.study.design.config import load_config
from mcbuild.runtime.study.design.plan import PlanEntry, build_plan
from mcbuild.runtime.study.run.schedulers.ray import RayScheduler, study_env
from mcbuild.runtime.study.run.schedulers.ray_tasks import EpisodeActor, run_items
from mcbuild.runtime.study.report import write_report
from mcbuild.runtime.study.run.runner import for_config, run_study
from mcbuild.runtime.study.run.schedulers.local import LocalScheduler
from mcbuild.runtime.study.store.results import Store, build_fingerprint
from study_fakes import fake_outcome, kill_once, with_env
from waiting import until
from test_study_runner import _count, _wait_rows, assert_exactly_once, sigkill_mid_study, small_config

pytest.importorskip("ray")
pytestmark = pytest.mark.xdist_group("ray")     # one cluster per session: keep these on one xdist worker

QUICK_WORLDS = 1
LANES = {"react": "batch", "adam": "llm", "react_rules": "actor"}


def rows(out: Path, skip: tuple[str, ...] = ()) -> dict[str, tuple]:
    """Every stored episode column but the timing ones (wall_s, finished_at) and ``skip``."""
    with sqlite3.connect(out / "results.sqlite") as c:
        cols = [r[1] for r in c.execute("PRAGMA table_info(episodes)")
                if r[1] not in ("wall_s", "finished_at", *skip)]
        return {r[0]: r for r in c.execute(f"SELECT {', '.join(cols)} FROM episodes")}


def report_files(out: Path) -> dict[str, bytes]:
    rep = write_report(out, out_dir=out / "report")
    return {str(p.relative_to(rep.out_dir)): p.read_bytes() for p in sorted(rep.out_dir.rglob("*")) if p.is_file()}


def lane_of(entry: PlanEntry) -> str:
    return LANES[entry.configuration]


# ------------------------------------------------------------ same results


def _quick(worlds: list[str]):
    cfg = load_config(ROOT / "studies" / "quick.yaml")
    return cfg.model_copy(update={"worlds": worlds}) if worlds != cfg.worlds else cfg


def _same_as_local(cfg, build: Path, tmp_path: Path, *, reports: bool = True, **ray_kw) -> None:
    local, distributed = tmp_path / "local", tmp_path / "ray"
    s = run_study(cfg, out_dir=local, build_root=build, scheduler=LocalScheduler(2))
    r = run_study(cfg, out_dir=distributed, build_root=build, scheduler=RayScheduler(build, **ray_kw))
    assert s.complete and r.complete and not r.errors and r.infrastructure_faults == 0
    assert r.scheduler.startswith("ray cluster: 1 node, 2 CPUs, 2 mc_server")
    a, b = rows(local), rows(distributed)
    assert len(a) == len(build_plan(cfg)) and a == b
    with Store.open(local) as x, Store.open(distributed) as y:
        assert list(x.iter_trajectories()) == list(y.iter_trajectories())
    if not reports:
        return
    fa, fb = report_files(local), report_files(distributed)
    assert fa.keys() == fb.keys() and any(k.startswith("tables/") for k in fa)
    assert [k for k in fa if fa[k] != fb[k]] == ["inputs.json"]      # the digest of each store, not of the results


def test_quick_study_on_ray_matches_local(world_build, built_world_ids, ray_cluster, tmp_path):
    _same_as_local(_quick(built_world_ids[:QUICK_WORLDS]), world_build, tmp_path)


@pytest.mark.slow
def test_full_quick_study_on_ray_matches_local(world_build, built_world_ids, ray_cluster, tmp_path):
    cfg = _quick(built_world_ids)
    if len(cfg.worlds) < 10:
        pytest.skip("the full quick study needs all ten worlds built")
    _same_as_local(cfg, world_build, tmp_path)


def test_simulator_episodes_in_actors_match_local(world_build, built_world_ids, ray_cluster, tmp_path):
    """The actor lane (server-backend episodes) on the simulator backend."""
    cfg = _quick(built_world_ids[:1]).model_copy(update={"tasks": ["iron_armor"]})
    _same_as_local(cfg, world_build, tmp_path, reports=False, lane=lambda e: "actor")


def test_actor_makes_one_factory_and_prewarms(world_build, monkeypatch):
    from mcbuild.runtime.backends import registry
    from mcbuild.runtime.backends.sim.factory import SimFactory
    from mcbuild.runtime.study.run.executor import execute
    from mcbuild.runtime.study.run.attempt import Status, attempt

    warmed: list[Path] = []
    monkeypatch.setattr(SimFactory, "prewarm", lambda self, save: warmed.append(save))
    cfg = _quick(["plains-1"]).model_copy(update={"tasks": ["iron_armor"], "conditions": ["vanilla", "m01"]})
    plan = build_plan(cfg)
    actor = EpisodeActor("sim", str(world_build), build_fingerprint(world_build), {})
    one = functools.partial(attempt, functools.partial(execute, build_root=world_build), max_attempts=1)
    results = [actor.run(one, (e, 0), nxt) for e, nxt in zip(plan, [*plan[1:], None])]
    if actor.warming is not None:
        actor.warming.join()
    assert [r.status for r in results] == [Status.OK] * len(plan) and actor.stats()["episodes"] == len(plan)
    assert actor.factory is registry.factory("sim")
    assert warmed == [world_build / "worlds" / e.world / e.condition for e in plan[1:]]


# ------------------------------------------------------------------ faults


def test_killed_worker_and_actor_are_rerun_under_the_same_id(ray_cluster, tmp_path):
    cfg = small_config()
    plan = build_plan(cfg)
    victims = {c: next(e.episode_id for e in plan if e.configuration == c) for c in LANES}
    (tmp_path / "m").mkdir()
    ex = functools.partial(kill_once, tmp_path / "m", frozenset(victims.values()))
    sched = RayScheduler(tmp_path / "b", batch=5, llm_in_flight=2, lane=lane_of)
    s = run_study(cfg, ex, out_dir=tmp_path / "s", build_root=tmp_path / "b", scheduler=sched)
    assert s.complete and s.infrastructure_faults == 3 and not s.gave_up
    assert_exactly_once(cfg, tmp_path / "s")
    with Store.open(tmp_path / "s") as st:
        faults = st.faults()
        attempts = dict(st.conn.execute("SELECT episode_id, attempts FROM episodes"))
    assert sorted(f["episode_id"] for f in faults) == sorted(victims.values())
    assert all(f["kind"] == "infrastructure" and "lost mid-episode" in f["message"] for f in faults)
    assert any("actor" in f["message"] for f in faults if f["episode_id"] == victims["react_rules"])
    # only the episode that was running counts an attempt; the rest of its batch just runs again
    assert {k for k, v in attempts.items() if v != 1} == set(victims.values())
    assert all(attempts[v] == 2 for v in victims.values())
    run_study(cfg, fake_outcome, out_dir=tmp_path / "seq", build_root=tmp_path / "b")
    assert rows(tmp_path / "s", ("attempts",)) == rows(tmp_path / "seq", ("attempts",))


def test_nodes_without_the_build_stop_the_study_at_start(ray_cluster, tmp_path):
    cfg = small_config()
    for lane in ("batch", "actor"):
        sched = RayScheduler(tmp_path / "b", lane=lambda e, lane=lane: lane)
        sched.fingerprint = "packs:" + "0" * 64                   # the coordinator's build differs
        with pytest.raises(BackendUnavailable, match=r"^ray node 127\.0\.0\.1 \(node id \w{12}\): .* not the study's packs:0000"):
            run_study(cfg, fake_outcome, out_dir=tmp_path / lane, build_root=tmp_path / "b", scheduler=sched)
        assert _count(tmp_path / lane) == 0


def test_server_nodes_that_cannot_start_a_server_stop_the_study_at_start(ray_cluster, tmp_path, monkeypatch):
    """The coordinator names no server.jar: the node's own setting (none here) is not used either."""
    monkeypatch.delenv("MCBUILD_SERVER_JAR", raising=False)
    cfg = small_config(backend="server")
    sched = RayScheduler(tmp_path / "b", backend="server", env=study_env(cfg))
    with pytest.raises(BackendUnavailable, match=r"^ray node 127\.0\.0\.1 \(node id \w{12}\): the server backend "
                                                 r"cannot start on .*: .*MCBUILD_SERVER_JAR"):
        run_study(cfg, fake_outcome, out_dir=tmp_path / "s", build_root=tmp_path / "b", scheduler=sched)


def test_every_task_refuses_another_build(tmp_path):
    """The per-task check behind the start check (a node that joins later)."""
    from mcbuild.runtime.study.run.attempt import AttemptResult, Status

    items = [(e, 0) for e in build_plan(small_config())[:2]]
    results = list(run_items(lambda e, n: AttemptResult(Status.OK, e.episode_id, n + 1), items, str(tmp_path),
                             "packs:" + "0" * 64, {}))
    assert [r.status for r in results] == [Status.FATAL] and "not the study's packs:0000" in results[0].message


def test_study_environment_reaches_workers_from_the_coordinator(ray_cluster, tmp_path, monkeypatch):
    """The key is set in the coordinator after the cluster started (its workers never had it):
    ``for_config`` names it and the tasks carry the coordinator's value."""
    monkeypatch.setenv("MCBUILD_TEST_STUDY_KEY", "coordinator-secret")
    cfg = small_config(endpoint={"api_key_env": "MCBUILD_TEST_STUDY_KEY"}, scheduler="ray")
    assert "MCBUILD_TEST_STUDY_KEY" in study_env(cfg) and "OPENAI_BASE_URL" in study_env(cfg)
    assert "MCBUILD_SERVER_JAR" in study_env(cfg.model_copy(update={"backend": "server"}))
    two = small_config(models=["m", {"name": "n", "api_key_env": "MCBUILD_TEST_OTHER_KEY"}])
    assert {"OPENAI_API_KEY", "MCBUILD_TEST_OTHER_KEY"} <= set(study_env(two))
    ex = functools.partial(with_env, {"MCBUILD_TEST_STUDY_KEY": "coordinator-secret"}, 0.0)
    s = run_study(cfg, ex, out_dir=tmp_path / "s", build_root=tmp_path / "b",
                  scheduler=for_config(cfg, 1, tmp_path / "b"))
    assert not s.errors and s.complete


# ---------------------------------------------------------------- SIGKILL

CHILD = r"""
import functools, json, sys
sys.path.insert(0, {tests!r})
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.run.schedulers.ray import RayScheduler
from mcbuild.runtime.study.run.runner import for_config, run_study
from study_fakes import slow
cfg = StudyConfig.model_validate(json.loads({cfg!r}))
sched = RayScheduler({build!r}, address={address!r}, batch=3)
run_study(cfg, functools.partial(slow, 0.05), out_dir={out!r}, build_root={build!r}, scheduler=sched)
"""


def test_resume_after_sigkill_of_the_coordinator(ray_cluster, tmp_path):
    cfg = small_config()
    out, build = tmp_path / "s", tmp_path / "b"
    src = CHILD.format(tests=str(Path(__file__).parent), cfg=json.dumps(cfg.to_json()), build=str(build),
                       address=ray_cluster, out=str(out))
    proc = subprocess.Popen([sys.executable, "-c", src], cwd=str(ROOT), env=dict(os.environ))
    partial, _ = sigkill_mid_study(proc, out, len(build_plan(cfg)))
    s = run_study(cfg, fake_outcome, out_dir=out, build_root=build, resume=True,
                  scheduler=RayScheduler(build))
    assert s.already_done == partial and s.finished == len(build_plan(cfg)) - partial and s.complete
    assert_exactly_once(cfg, out)
    with Store.open(out) as st:
        assert st.faults() == []      # the episodes in flight were never stored, so nothing to undo


# ------------------------------------------------------- private instance

PRIVATE = r"""
import functools, json, sys
sys.path.insert(0, {tests!r})
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.run.schedulers.ray import RayScheduler
from mcbuild.runtime.study.run.runner import run_study
from study_fakes import slow
cfg = StudyConfig.model_validate(json.loads({cfg!r}))
sched = RayScheduler({build!r}, num_cpus=1, batch=2)
run_study(cfg, functools.partial(slow, 0.2), out_dir={out!r}, build_root={build!r}, scheduler=sched)
"""


def _using(folder: Path) -> list[int]:
    """The pids of every process with a file open under ``folder`` (a Ray process keeps its logs open)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and any(os.readlink(fd).startswith(f"{folder}/") for fd in (proc / "fd").iterdir()):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def test_private_instance_ignores_a_stale_address_and_dies_with_its_coordinator(tmp_path):
    """A dead cluster's ``ray_current_cluster`` file in Ray's temp folder (and ``RAY_ADDRESS``) do not
    stop a private instance from starting; SIGKILL of its coordinator leaves none of its processes
    (each keeps a log file open in the instance's private ``RAY_TMPDIR``)."""
    tmp = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))         # short: Ray's socket paths must fit
    try:
        (tmp / "ray").mkdir()
        (tmp / "ray" / "ray_current_cluster").write_text("127.0.0.1:9\n")
        cfg, out, build = small_config(), tmp_path / "s", tmp_path / "b"
        src = PRIVATE.format(tests=str(Path(__file__).parent), cfg=json.dumps(cfg.to_json()), build=str(build),
                             out=str(out))
        path = os.pathsep.join(filter(None, [str(ROOT), str(Path(__file__).parent), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "RAY_TMPDIR": str(tmp), "RAY_ADDRESS": "127.0.0.1:9", "PYTHONPATH": path}
        proc = subprocess.Popen([sys.executable, "-c", src], cwd=str(ROOT), env=env)
        _wait_rows(out, 2, proc, timeout=300)
        assert len(_using(tmp)) > 3                               # GCS, raylet, agents, workers
        sigkill_mid_study(proc, out, len(build_plan(cfg)), rows=2)
        until(lambda: not _using(tmp), "the private instance's processes end with their coordinator", every=0.2)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
