"""The parent's warm-up before forking workers (``executor.warm``): it fills what the workers
inherit, never fails a run, and a forked run stores what a one-process run stores."""
from __future__ import annotations

from dataclasses import replace

from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.run.schedulers.inflight import InflightScheduler
from mcbuild.runtime.study.run.schedulers.local import LocalScheduler
from study_fakes import plan_entries


def test_only_pools_of_several_workers_fork():
    assert LocalScheduler(2).forks and InflightScheduler(3, 4).forks
    assert not LocalScheduler(1).forks and not InflightScheduler(1, 8).forks


def test_warm_loads_each_world_once_for_the_workers(world_build, built_world_ids, monkeypatch):
    from mcbuild.runtime.backends.sim import factory as sim_factory
    from mcbuild.runtime.episode.opening import open_episode
    from mcbuild.runtime.study.run.executor import warm

    world = built_world_ids[0]
    entries = [replace(e, world=world, condition=c, agent=a) for e, (c, a) in zip(
        plan_entries(*"abcd"), [(c, a) for c in ("vanilla", "m01") for a in ("vanilla-planner", "adaptive-planner")])]
    warm(entries, build_root=world_build)

    def load_again(*_):
        raise AssertionError("the world was loaded again after warm")

    monkeypatch.setattr(sim_factory, "load_save", load_again)
    with open_episode(world, "m01", "iron_armor", 3, 1, build=world_build) as ep:
        assert ep.observe()["task"]["id"] == "iron_armor"


def test_warm_leaves_failures_to_the_episodes(world_build, tmp_path):
    from mcbuild.runtime.study.run.executor import warm

    entry = plan_entries("a")[0]
    warm([replace(entry, world="nowhere-1")], build_root=world_build)
    warm([entry], build_root=tmp_path)


def test_a_forked_warm_run_stores_what_one_process_stores(world_build, built_world_ids, tmp_path):
    from mcbuild.runtime.study.run.runner import run_study
    from mcbuild.runtime.study.store.results import Store

    cfg = StudyConfig.model_validate(dict(
        name="warm", worlds=[built_world_ids[0]], conditions=["vanilla", "m01"], tasks=["iron_armor"],
        configurations=["vanilla-planner", "adaptive-planner"], budget=12))
    stored = {}
    for n in (1, 2):
        run_study(cfg, out_dir=tmp_path / str(n), build_root=world_build, workers=n)
        with Store.open(tmp_path / str(n), create=False) as store:
            records = [{k: v for k, v in r.items() if k not in ("wall_s", "finished_at")} for r in store.records()]
            stored[n] = (sorted(records, key=lambda r: r["episode_id"]), list(store.iter_trajectories()))
    assert stored[1] == stored[2] and len(stored[1][0]) == 4
