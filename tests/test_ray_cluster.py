"""The Ray scheduler on a real multi-node cluster on this machine: Ray's own ``ray.cluster_utils.Cluster``
on loopback, a head without CPUs and two worker nodes of 1 CPU each, all in a private ``RAY_TMPDIR``
(never the machine's shared Ray folder).

The worker nodes start without the study's environment: they hold their own, wrong value of the
study's key and an ``OPENAI_BASE_URL`` the coordinator does not set. Every episode checks that it
sees the coordinator's values instead. The coordinator is a subprocess running ``run_study`` with the
scheduler ``for_config`` builds (as ``mcbuild study run --ray-address`` does). The tests show the
study survives the loss of a worker node mid-study, resumes after the coordinator is SIGKILLed, and
stores records identical to the local scheduler's.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from mcbuild.compiler.core.paths import ROOT
from mcbuild.runtime.study.design.plan import build_plan
from mcbuild.runtime.study.run.runner import run_study
from mcbuild.runtime.study.run.schedulers.local import LocalScheduler
from mcbuild.runtime.study.run.schedulers.ray_watchdog import descendants
from mcbuild.runtime.study.store.results import Store
from study_fakes import fake_outcome
from test_study_ray import rows
from test_study_runner import _wait_rows, assert_exactly_once, sigkill_mid_study, small_config, stored_ids

cluster_utils = pytest.importorskip("ray.cluster_utils")
pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("ray")]

KEY = "MCBUILD_CLUSTER_TEST_KEY"
NODE_ENV = {KEY: "the-node's-own-value", "OPENAI_BASE_URL": "http://node-own.invalid/v1"}
SEEN = {KEY: "coordinator-secret", "OPENAI_BASE_URL": ""}      # what every episode must see
HEALTH = {"health_check_initial_delay_ms": 0, "health_check_period_ms": 500, "health_check_timeout_ms": 1000,
          "health_check_failure_threshold": 3}             # a lost node is declared dead in about 2 s
TESTS = str(Path(__file__).parent)

COORDINATOR = r"""
import functools, json, sys
sys.path.insert(0, {tests!r})
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.run.runner import for_config, run_study
from study_fakes import with_env
cfg = StudyConfig.model_validate(json.loads({cfg!r}))
ex = functools.partial(with_env, {seen!r}, {delay!r}, markers={markers!r})
s = run_study(cfg, ex, out_dir={out!r}, build_root={build!r}, scheduler=for_config(cfg, 1, {build!r}),
              resume={resume!r})
print("\n".join(s.lines()), flush=True)
sys.exit(0 if s.complete and not s.errors else 1)
"""


class LoopbackCluster:
    """A head and worker nodes started with ``NODE_ENV`` and without the coordinator's values."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        with self._node_env():
            self.ray = cluster_utils.Cluster(initialize_head=True, head_node_args={
                "num_cpus": 0, "node_ip_address": "127.0.0.1", "_system_config": HEALTH})
        self.workers = [self.add_worker() for _ in range(2)]

    @contextlib.contextmanager
    def _node_env(self):
        """The environment the nodes' processes start with (and workers inherit)."""
        path = os.pathsep.join(filter(None, [str(ROOT), TESTS, os.environ.get("PYTHONPATH")]))
        with pytest.MonkeyPatch.context() as mp:
            for k, v in {**NODE_ENV, "RAY_TMPDIR": str(self.tmp), "RAY_ADDRESS": "", "PYTHONPATH": path}.items():
                mp.setenv(k, v)
            yield

    def add_worker(self):
        with self._node_env():
            return self.ray.add_node(num_cpus=1, node_ip_address="127.0.0.1")

    def shutdown(self) -> None:
        with self._node_env():          # Ray then removes its cluster-address file from the private folder only
            self.ray.shutdown()

    def coordinator(self, cfg, out: Path, build: Path, *, delay: float, resume: bool = False,
                    markers: Path | None = None) -> subprocess.Popen:
        """``run_study`` on this cluster in a new process with the coordinator's environment."""
        src = COORDINATOR.format(tests=TESTS, cfg=json.dumps(cfg.to_json()), seen=SEEN, delay=delay, out=str(out),
                                 build=str(build), resume=resume, markers=markers and str(markers))
        env = {k: v for k, v in os.environ.items() if k not in NODE_ENV}
        env.update({KEY: SEEN[KEY], "RAY_TMPDIR": str(self.tmp)})
        return subprocess.Popen([sys.executable, "-c", src], cwd=str(ROOT), env=env, stdout=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def cluster():
    tmp = Path(tempfile.mkdtemp(prefix="rc", dir="/tmp"))       # short: Ray's socket paths must fit
    c = None
    try:
        c = LoopbackCluster(tmp)
        yield c
    finally:
        if c is not None:
            c.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)


def _config(cluster: LoopbackCluster):
    """20 LLM episodes (one per task) and 12 of a scripted planner (in batches of 2), keyed by ``KEY``."""
    return small_config(configurations=["react", "vanilla-planner"], endpoint={"api_key_env": KEY}, scheduler="ray",
                        ray_address=cluster.ray.address, ray_batch=2)


def _local(cfg, tmp_path: Path) -> Path:
    out = tmp_path / "local"
    local = cfg.model_copy(update={"scheduler": "local", "ray_address": None})
    assert run_study(local, fake_outcome, out_dir=out, build_root=tmp_path / "b", scheduler=LocalScheduler(1)).complete
    return out


def _finish(proc: subprocess.Popen, timeout: float = 300) -> str:
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out
    return out


def _started(proc: subprocess.Popen, out: Path, n: int) -> None:
    """Wait until ``out`` holds ``n`` episodes; fail with the coordinator's output if it ended first."""
    try:
        _wait_rows(out, n, proc, timeout=300)
    except AssertionError:
        raise AssertionError(proc.communicate()[0]) from None


def _busy_node(cluster: LoopbackCluster, markers: Path, out: Path, proc: subprocess.Popen):
    """The worker node that started the latest episode not stored yet (its raylet is the episode's
    parent), waiting until one runs."""
    while True:
        assert proc.poll() is None, "the study ended before a node could be lost"
        done = set(stored_ids(out))
        running = [m for m in markers.iterdir() if m.name not in done]
        if running:
            pid = max(running, key=lambda m: m.stat().st_mtime).read_text()
            return next(n for n in cluster.workers if str(n.all_processes["raylet"][0].process.pid) == pid)
        time.sleep(0.05)


def test_study_survives_the_loss_of_a_worker_node(cluster, tmp_path):
    cfg, out, markers = _config(cluster), tmp_path / "s", tmp_path / "m"
    markers.mkdir()
    proc = cluster.coordinator(cfg, out, tmp_path / "b", delay=1.0, markers=markers)
    try:
        _started(proc, out, 4)
        victim = _busy_node(cluster, markers, out, proc)
        for pid in descendants(victim.all_processes["raylet"][0].process.pid):   # the node's workers die with it
            os.kill(pid, signal.SIGKILL)
        cluster.ray.remove_node(victim, allow_graceful=False)
        cluster.workers.remove(victim)
        summary = _finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
        cluster.workers.append(cluster.add_worker())
    assert "ray cluster: 3 nodes, 2 CPUs" in summary
    assert_exactly_once(cfg, out)
    with Store.open(out) as st:
        faults = st.faults()
    assert faults and all(f["kind"] == "infrastructure" and "lost mid-episode" in f["message"] for f in faults)
    assert rows(out, ("attempts",)) == rows(_local(cfg, tmp_path), ("attempts",))


def test_resume_on_the_cluster_after_sigkill_of_the_coordinator(cluster, tmp_path):
    cfg, out = _config(cluster), tmp_path / "s"
    partial, _ = sigkill_mid_study(cluster.coordinator(cfg, out, tmp_path / "b", delay=0.3), out,
                                   len(build_plan(cfg)), rows=4)
    summary = _finish(cluster.coordinator(cfg, out, tmp_path / "b", delay=0.0, resume=True))
    assert f"{partial} from earlier runs" in summary
    assert_exactly_once(cfg, out)
    assert rows(out) == rows(_local(cfg, tmp_path))
