"""``mcbuild study run`` as a process: piped stderr gets one summary line and no bar; the first SIGINT
or SIGTERM, sent to the runner alone or to its whole process group, stops it in bounded time with the
count the store holds and the command that resumes it, exit 128 + the signal."""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys

import pytest

from mcbuild.runtime.study.store.results import StoreError
from mcbuild.runtime.study.store.status import read_status
from waiting import DEADLINE_S, until

STUDY = """name: sig
worlds: [plains-1]
conditions: [vanilla, m01, m02]
tasks: [iron_armor, diamond, enchantment]
configurations: [vanilla-planner, adaptive-planner]
repetitions: 3
"""
PLANNED = 54


def mcbuild(*args: str) -> list[str]:
    return [sys.executable, "-m", "mcbuild", *args]


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "sig.yaml"
    path.write_text(STUDY)
    return path


def test_piped_run_prints_one_summary_line_and_no_bar(config, tmp_path, world_build):
    out = tmp_path / "s"
    res = subprocess.run(mcbuild("study", "run", str(config), "--out", str(out), "--build", str(world_build),
                                 "--limit", "3"), capture_output=True, text=True, timeout=DEADLINE_S * 2)
    assert res.returncode == 0, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"study sig: 3/{PLANNED} episodes stored"), res.stderr
    assert "\r" not in res.stderr and "#" not in res.stderr and "ETA" not in res.stderr


def stored_now(out) -> int:
    """Episodes stored so far (0 while the store is being made)."""
    try:
        return read_status(out).stored
    except StoreError:
        return 0


def _stop(config, tmp_path, world_build, signum: int, group: bool):
    out = tmp_path / "s"
    proc = subprocess.Popen(mcbuild("study", "run", str(config), "--out", str(out), "--build", str(world_build),
                                    "--workers", "2"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    until(lambda: proc.poll() is not None or stored_now(out) >= 1, "the first episode stored")
    assert proc.poll() is None, "the study ended before it could be stopped"
    if group:
        os.killpg(proc.pid, signum)
    else:
        os.kill(proc.pid, signum)
    # the runner's own shutdown bound is about 6 s; a loaded machine may take longer (a study that ran on
    # to its end instead would have stored all PLANNED episodes, refused below)
    stdout, stderr = proc.communicate(timeout=DEADLINE_S)
    assert proc.returncode == 128 + signum, stderr
    with pytest.raises(ProcessLookupError):        # no worker outlives it
        os.killpg(proc.pid, 0)
    stored = read_status(out).stored
    assert 1 <= stored < PLANNED
    name = signal.Signals(signum).name
    last = stderr.splitlines()[-1]
    assert last.startswith(f"interrupted by {name}: {stored}/{PLANNED} episodes stored in "), stderr
    command = last.split("continue with: ", 1)[1]
    assert shlex.split(command)[:3] == ["mcbuild", "study", "run"] and command.endswith(" --resume")
    assert f"interrupted by {name}" in stdout
    assert "Traceback" not in stderr and "Exception ignored" not in stderr
    again = subprocess.run(mcbuild(*shlex.split(command)[1:], "--limit", "2"), capture_output=True, text=True,
                           timeout=DEADLINE_S * 2)
    assert again.returncode == 0, again.stderr
    assert read_status(out).stored == stored + 2


def test_sigint_to_the_runner_alone_stops_it_cleanly(config, tmp_path, world_build):
    _stop(config, tmp_path, world_build, signal.SIGINT, group=False)


def test_sigterm_to_the_process_group_stops_it_cleanly(config, tmp_path, world_build):
    _stop(config, tmp_path, world_build, signal.SIGTERM, group=True)
