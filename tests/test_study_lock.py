"""One writer per results store (``store/lock.py``), the summary that counts the store, and
``mcbuild study status`` reading a live or finished store without taking the lock."""
from __future__ import annotations

import json
import multiprocessing
import os
import socket
import subprocess
import sys
import time

import pytest

from mcbuild.compiler.core.paths import ROOT
from mcbuild.runtime.study.design.plan import build_plan
from mcbuild.runtime.study.run.runner import run_study
from mcbuild.runtime.study.store.lock import StoreLock, StoreLocked, holder, lock_path
from mcbuild.runtime.study.store.results import Store, fault_row
from mcbuild.runtime.study.store.status import read_status

from study_fakes import fake_outcome
from waiting import DEADLINE_S
from test_study_runner import small_config


def _lock(out, pid: int, host: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    lock_path(out / "results.sqlite").write_text(json.dumps({"pid": pid, "host": host, "started": time.time()}))


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _run(tmp_path, cfg=None, **kw):
    return run_study(cfg or small_config(), fake_outcome, out_dir=tmp_path / "study", build_root=tmp_path / "build",
                     **kw)


def test_a_second_writer_is_refused_naming_the_live_holder(tmp_path):
    holder_proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        _lock(tmp_path / "study", holder_proc.pid, socket.gethostname())
        with pytest.raises(StoreLocked, match=f"being written by pid {holder_proc.pid} on host {socket.gethostname()}"):
            _run(tmp_path)
    finally:
        holder_proc.kill()
        holder_proc.wait()
    assert not (tmp_path / "study" / "results.sqlite").exists()


def test_a_dead_holders_lock_is_taken_over_and_released(tmp_path):
    _lock(tmp_path / "study", _dead_pid(), socket.gethostname())
    assert _run(tmp_path).complete
    assert not lock_path(tmp_path / "study" / "results.sqlite").exists()


def test_a_lock_from_another_host_is_broken_only_on_request(tmp_path):
    _lock(tmp_path / "study", 4242, "elsewhere.example")
    with pytest.raises(StoreLocked, match="pid 4242 on host elsewhere.example.*pass --break-lock"):
        _run(tmp_path)
    assert _run(tmp_path, break_lock=True).complete


def _take(store, barrier, results) -> None:
    barrier.wait()
    try:
        lock = StoreLock.acquire(store)
        results.put("won")
        barrier.wait()                                  # hold it until every racer has tried
        lock.release()
    except StoreLocked:
        results.put("refused")
        barrier.wait()


def test_racers_for_a_stale_lock_leave_exactly_one_writer(tmp_path):
    _lock(tmp_path, _dead_pid(), socket.gethostname())
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(4), ctx.Queue()
    procs = [ctx.Process(target=_take, args=(tmp_path / "results.sqlite", barrier, results)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(DEADLINE_S)
    assert sorted(results.get(timeout=5) for _ in procs) == ["refused"] * 3 + ["won"]


def test_the_summary_counts_what_the_store_holds(tmp_path):
    """Episodes another writer stored meanwhile (here: before this run's first episode ends) count."""
    cfg = small_config()
    out = tmp_path / "study"

    def others_first(entry):
        if not getattr(others_first, "done", False):
            others_first.done = True
            with Store.open(out) as other:
                for e in build_plan(cfg):
                    other.insert_episode(e.to_dict(), fake_outcome(e))
        return fake_outcome(entry)

    s = run_study(cfg, others_first, out_dir=out, build_root=tmp_path / "build")
    assert s.finished == 0 and s.complete
    assert f"episodes: {s.planned}/{s.planned} stored" in s.lines()[1]


def test_status_reads_a_live_store_without_the_lock(tmp_path):
    cfg = small_config(max_cost_usd=1000.0)
    _run(tmp_path, cfg, limit=5)
    out = tmp_path / "study"
    writer = StoreLock.acquire(out / "results.sqlite")
    try:
        with Store.open(out) as store:
            store.insert_rows([], [fault_row("x", 1, "infrastructure", "lost")])
            status = read_status(out)
            text = "\n".join(status.lines())
            assert status.stored == 5 and status.planned == len(build_plan(cfg))
            assert f"episodes: 5/{status.planned} stored; faults logged: 1 infrastructure" in text
            assert f"pid {os.getpid()} on host {socket.gethostname()}" in text
            assert "of max_cost_usd $1000" in text and text.count("%") == len(status.by_condition) >= 1
            assert sum(n for _, n, _, _ in status.by_condition) == 5
            store.insert_rows([], [fault_row("y", 1, "error", "the writer goes on")])   # the reader left no lock behind
    finally:
        writer.release()
    assert holder(out / "results.sqlite") is None
    assert read_status(out).lines()[-1] == "writer: no live run"


def test_status_cli_is_one_line_on_a_missing_store(tmp_path):
    r = subprocess.run([sys.executable, "-m", "mcbuild", "study", "status", str(tmp_path / "none")],
                       capture_output=True, text=True, cwd=ROOT, timeout=DEADLINE_S)
    assert r.returncode == 1 and r.stderr.strip() == f"error: no results store at {tmp_path / 'none' / 'results.sqlite'}"


@pytest.mark.parametrize("raw", ["[1, 2]", "\"quick\"", "{\"name\": "])
def test_status_of_a_store_with_a_damaged_config_is_one_line(tmp_path, raw):
    """Valid JSON that is not an object is as damaged as broken JSON: one StoreError naming the store."""
    from mcbuild.runtime.study.store.results import StoreError

    _run(tmp_path, limit=2)
    with Store.open(tmp_path / "study") as store:
        store.set_meta({"config": raw})
    with pytest.raises(StoreError, match="damaged study config"):
        read_status(tmp_path / "study")
