"""Worker counts that fit the machine (mcbuild.compiler.core.cpus, issue 40): the CPUs this process may
use (affinity and cgroup quota), less the busy ones at the start."""
from __future__ import annotations

from pathlib import Path

import pytest

from mcbuild.compiler.core import cpus


def _machine(monkeypatch: pytest.MonkeyPatch, affinity: int, online: int, load: float, quota: float | None) -> None:
    monkeypatch.setattr(cpus.os, "sched_getaffinity", lambda pid: set(range(affinity)))
    monkeypatch.setattr(cpus.os, "cpu_count", lambda: online)
    monkeypatch.setattr(cpus.os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(cpus, "quota", lambda: quota)


@pytest.mark.parametrize("affinity, online, load, quota, expected", [
    (2, 2, 0.1, None, 2),        # a quiet 2-core machine: both
    (2, 2, 1.0, None, 1),        # one core taken by other work: 2 workers were slower than 1
    (2, 2, 12.0, None, 1),       # a loaded machine: never fewer than 1
    (8, 8, 0.0, 2.5, 2),         # a cgroup quota of 2.5 CPUs allows 2
    (4, 64, 16.0, None, 3),      # 4 of 64 CPUs: a quarter of the machine-wide load counts
])
def test_auto_workers(monkeypatch: pytest.MonkeyPatch, affinity: int, online: int, load: float,
                      quota: float | None, expected: int) -> None:
    _machine(monkeypatch, affinity, online, load, quota)
    choice = cpus.auto_workers()
    assert choice.workers == expected
    assert choice.line().startswith(f"workers: {expected} (") and f"load {load:.1f}" in choice.line()


def test_auto_workers_never_exceeds_the_work(monkeypatch: pytest.MonkeyPatch) -> None:
    _machine(monkeypatch, 8, 8, 0.0, None)
    assert cpus.auto_workers(limit=3).workers == 3
    assert "only 3 to run" in cpus.auto_workers(limit=3).reason


def test_oversubscribed_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    _machine(monkeypatch, 2, 2, 0.0, None)
    assert cpus.oversubscribed(2, "studies/quick.yaml") is None
    warning = cpus.oversubscribed(4, "studies/paper.yaml")
    assert warning is not None and "\n" not in warning
    assert warning.startswith("warning: studies/paper.yaml asks for 4 workers on 2 CPUs")


def _cgroup(tmp_path: Path, lines: str, files: dict[str, str]) -> tuple[Path, Path]:
    tmp_path.mkdir(exist_ok=True)
    proc = tmp_path / "cgroup"
    proc.write_text(lines)
    root = tmp_path / "fs"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return proc, root


def test_quota_v2_takes_the_tightest_of_the_cgroup_and_its_ancestors(tmp_path: Path) -> None:
    proc, root = _cgroup(tmp_path, "0::/jobs/one\n", {"jobs/cpu.max": "150000 100000\n",
                                                     "jobs/one/cpu.max": "max 100000\n"})
    assert cpus.quota(proc, root) == 1.5
    proc, root = _cgroup(tmp_path / "none", "0::/\n", {"cpu.max": "max 100000\n"})
    assert cpus.quota(proc, root) is None


def test_quota_v1(tmp_path: Path) -> None:
    proc, root = _cgroup(tmp_path, "4:memory:/x\n2:cpu,cpuacct:/box\n",
                         {"cpu,cpuacct/box/cpu.cfs_quota_us": "300000\n", "cpu,cpuacct/box/cpu.cfs_period_us": "100000\n",
                          "cpu,cpuacct/cpu.cfs_quota_us": "-1\n", "cpu,cpuacct/cpu.cfs_period_us": "100000\n"})
    assert cpus.quota(proc, root) == 3.0


def test_usable_counts_a_fractional_quota_down(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpus, "affinity", lambda: 8)
    monkeypatch.setattr(cpus, "quota", lambda: 1.5)
    assert cpus.usable() == (1, "1 CPUs usable: affinity 8, cgroup quota 1.5")


def test_a_study_with_workers_auto_says_its_choice_and_a_config_over_the_cpus_warns_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from mcbuild.runtime.study.design.config import StudyConfig
    from mcbuild.runtime.study.run.runner import worker_count

    _machine(monkeypatch, 2, 2, 1.0, None)
    auto = StudyConfig(name="auto", configurations=["vanilla-planner"], workers="auto")
    assert worker_count(auto, None) == (1, "workers: 1 (2 CPUs usable, no cgroup quota; load 1.0 leaves 1 idle)")
    four = StudyConfig(name="paper", configurations=["vanilla-planner"], workers=4)
    n, note = worker_count(four, None)
    assert n == 4 and note is not None and "\n" not in note and note.startswith("warning: study 'paper' asks for 4 workers")
    assert worker_count(four, 2) == (2, None)
    assert worker_count(four, "auto")[0] == 1


def test_the_runner_prints_the_choice_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from mcbuild.runtime.study.design.config import StudyConfig
    from mcbuild.runtime.study.run.runner import run_study
    from study_fakes import fake_outcome

    _machine(monkeypatch, 2, 2, 0.0, None)
    cfg = StudyConfig(name="auto", worlds=["plains-1"], conditions=["vanilla"], tasks=["diamond"],
                      configurations=["vanilla-planner"], workers="auto")
    run_study(cfg, fake_outcome, out_dir=tmp_path / "s", build_root=tmp_path, workers=None)
    assert capsys.readouterr().err.splitlines() == ["workers: 2 (2 CPUs usable, no cgroup quota; load 0.0 leaves 2 idle)"]


@pytest.mark.parametrize("workers, concurrency, cpus, expected", [
    (1, 300, 2, (1, 300)),          # under the cap: as asked
    (1, 2048, 2, (2, 512)),         # over it: a second process, as there is a second CPU
    (1, 2048, 1, (1, 512)),         # no CPU for a second process: the rest waits its turn
    (2, 1024, 8, (4, 512)),
    (4, 1024, 2, (4, 512)),         # never fewer processes than asked
])
def test_threads_per_worker_are_capped(workers: int, concurrency: int, cpus: int, expected: tuple[int, int]) -> None:
    from mcbuild.runtime.study.run.schedulers.inflight import fit

    processes, threads, note = fit(workers, concurrency, max_threads=512, cpus=cpus)
    assert (processes, threads) == expected
    assert (note == "") == (concurrency <= 512)


def test_build_worlds_prints_the_workers_it_chose(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``mcbuild build worlds`` without --workers builds on what fits the machine (one core busy of two:
    1), says so, and hands the count to the build; --workers is taken as given."""
    from click.testing import CliRunner

    from mcbuild.cli import main
    from mcbuild.pipeline import worlds as build

    _machine(monkeypatch, 2, 2, 1.0, None)
    asked: list[int | None] = []
    monkeypatch.setattr(build, "build_worlds", lambda *a, jobs=None, **k: asked.append(jobs) or {"worlds": {}})
    done = CliRunner().invoke(main, ["build", "worlds", "--build", str(tmp_path), "--quiet"])
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[0] == "workers: 1 (2 CPUs usable, no cgroup quota; load 1.0 leaves 1 idle)"
    done = CliRunner().invoke(main, ["build", "worlds", "--build", str(tmp_path), "--quiet", "--workers", "2"])
    assert done.exit_code == 0 and "workers:" not in done.output
    assert asked == [1, 2]
