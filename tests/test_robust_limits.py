"""Bounds and conflicts refused at load, and messages that name the file: a full disk (injected as
SQLite's page limit or the OS's file-size limit), the umask, a closed pipe, unexpected errors."""
from __future__ import annotations

import os
import resource
import signal
import stat
import subprocess
import sys
import time

import pytest

from mcbuild.cli import one_line
from mcbuild.compiler.core.paths import ROOT, SPECS
from mcbuild.runtime.study.design.config import MAX_BUDGET, MAX_EPISODES, MAX_REPETITIONS
from mcbuild.runtime.study.design.plan import build_plan
from mcbuild.runtime.study.run.runner import run_study
from mcbuild.runtime.study.store.results import Store, StoreError

from study_fakes import fake_outcome
from waiting import DEADLINE_S
from test_study_runner import small_config


def mcbuild(*args, limit_bytes: int | None = None, umask: int | None = None, **kw) -> subprocess.CompletedProcess:
    """The CLI in a child; ``limit_bytes`` caps the size of any file it writes (EFBIG past it)."""
    def before() -> None:
        if limit_bytes is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
        if umask is not None:
            os.umask(umask)

    return subprocess.run([sys.executable, "-m", "mcbuild", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=DEADLINE_S, preexec_fn=before, **kw)


def error_line(res: subprocess.CompletedProcess, code: int) -> str:
    lines = res.stderr.strip().splitlines()
    assert res.returncode == code and len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    return lines[0]


# ------------------------------------------------------------------------ bounds and conflicts
@pytest.mark.parametrize("change, needle", [
    ("repetitions: 1000000000000", f"repetitions: Input should be less than or equal to {MAX_REPETITIONS}"),
    (f"repetitions: {MAX_REPETITIONS}\nworlds: [plains-1, plains-2, taiga-1]",
     f"repetitions: {MAX_REPETITIONS} repetitions make a plan of"),
    ("budget: 100000000", f"budget: Input should be less than or equal to {MAX_BUDGET}"),
    ("budgets: {diamond: 100000000}", f"budgets.diamond: Input should be less than or equal to {MAX_BUDGET}"),
    ("ray_address: 10.0.0.1:6379", "ray_address: set, but scheduler is local"),
    ("disclosure: {configurations: [react_rules, react_rules]}",        # found by test_property_specs
     "disclosure.configurations: duplicate entries ['react_rules']"),
])
def test_bounds_and_conflicts_in_a_study_config_exit_2_at_once(tmp_path, change, needle):
    cfg = tmp_path / "study.yaml"
    cfg.write_text(f"configurations: [vanilla-planner, adaptive-planner]\n{change}\n")
    start = time.monotonic()
    line = error_line(mcbuild("study", "plan", cfg), 2)
    # a process starts slowly on a loaded machine; building the plan first would take far longer (and all memory)
    assert line.startswith(f"error: {cfg}: ") and needle in line and time.monotonic() - start < DEADLINE_S


def test_the_largest_plan_within_the_bound_builds():
    cfg = small_config(worlds=["plains-1"], conditions=["vanilla"], configurations=["a"], disclosure={},
                       models=["m"], repetitions=MAX_REPETITIONS)
    assert len(build_plan(cfg)) == MAX_REPETITIONS <= MAX_EPISODES


@pytest.mark.parametrize("args, needle", [
    (["compile", "--all", SPECS / "m01.yaml"], "--all compiles every spec"),
    (["study", "run", "quick", "--scheduler", "local", "--ray-address", "10.0.0.1:6379"],
     "--ray-address needs --scheduler ray"),
])
def test_conflicting_flags_exit_2_naming_the_flag(args, needle):
    assert needle in error_line(mcbuild(*args), 2)


# ------------------------------------------------------------------------ a full disk
def test_a_full_store_names_the_store(tmp_path):
    cfg = small_config()
    run_study(cfg, fake_outcome, out_dir=tmp_path, build_root=tmp_path / "build", limit=1)
    plan = build_plan(cfg)
    with Store.open(tmp_path) as store:
        pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
        store.conn.execute(f"PRAGMA max_page_count = {pages}")       # SQLite's own "database or disk is full"
        with pytest.raises(StoreError, match=r"results\.sqlite: cannot write the results store \(database or disk"):
            for entry in plan:
                store.insert_episode(entry.to_dict(), fake_outcome(entry))


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    out = tmp_path_factory.mktemp("study")
    run_study(small_config(), fake_outcome, out_dir=out, build_root=out / "build")
    return out


def test_a_full_disk_during_an_export_names_the_export(study, tmp_path):
    target = tmp_path / "export.jsonl"
    line = error_line(mcbuild("study", "export", study, "--format", "full", "--out", target, limit_bytes=40_000), 1)
    assert line == f"error: {target}: File too large" and not list(tmp_path.iterdir())


def test_a_full_disk_during_a_compile_names_the_file(tmp_path):
    line = error_line(mcbuild("compile", SPECS / "m01.yaml", "--build", tmp_path, limit_bytes=1_000), 1)
    assert line.startswith(f"error: {tmp_path / 'm01'}/") and line.endswith(": File too large")


# ------------------------------------------------------------------------ modes, pipes, names
def test_the_export_follows_the_umask(study, tmp_path):
    for mask in (0o022, 0o077):
        target = tmp_path / f"export-{mask:o}.jsonl"
        assert mcbuild("study", "export", study, "--format", "full", "--out", target, umask=mask).returncode == 0
        assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask


def test_a_closed_pipe_ends_quietly():
    read_end, write_end = os.pipe()
    os.close(read_end)                                               # `| head` that has already gone
    res = subprocess.run([sys.executable, "-m", "mcbuild", "study", "plan", "paper"], cwd=ROOT, stdout=write_end,
                         stderr=subprocess.PIPE, timeout=DEADLINE_S)
    os.close(write_end)
    assert res.stderr == b"" and res.returncode != 0


def test_unexpected_errors_name_a_file_never_only_a_type():
    assert one_line(FileNotFoundError(2, "No such file or directory", "/x/y.json")) == \
        "/x/y.json: No such file or directory"
    try:
        {}["k"]
    except KeyError as exc:
        line = one_line(exc)
    assert line.startswith("KeyError: 'k' (raised at tests/test_robust_limits.py:")
