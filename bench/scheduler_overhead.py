"""Benchmark: the scheduler's own cost per episode, local process pool against Ray, in one run.

    .venv/bin/python bench/scheduler_overhead.py [--episodes 2000] [--single 300] [--cpus 2]

Every scheduler runs the first N episodes of ``studies/paper.yaml`` through the real runner and
store with a trivial executor (a fixed 50-action outcome, no simulator), so the wall time per
episode is what scheduling, messaging and the store cost. Ray runs on a private loopback instance
of ``--cpus`` CPUs whose start-up is timed separately; its per-episode figures exclude it. Lanes:
``batch`` (50 episodes per task, the simulator lane) and ``single`` (one episode per task, the LLM
lane, on ``--single`` episodes).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")   # loopback only
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("RAY_worker_niceness", "0")                  # same priority as the local pool
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

from mcbuild.runtime.study.design.config import STUDIES, load_config  # noqa: E402
from mcbuild.runtime.study.run.outcome import EpisodeOutcome  # noqa: E402
from mcbuild.runtime.study.run.runner import run_study  # noqa: E402
from mcbuild.runtime.study.run.schedulers.local import LocalScheduler  # noqa: E402

TRAJECTORY = [{"i": i + 1, "skill": "mine", "args": {"block": "stone"}, "ok": True} for i in range(50)]


def trivial(entry) -> EpisodeOutcome:
    """A fixed outcome of the size of a short episode (50 actions)."""
    return EpisodeOutcome(score=35.0, actions=50, trajectory=TRAJECTORY, end_reason="budget")


def timed(cfg, n: int, scheduler, work: Path, label: str) -> float:
    t = time.perf_counter()
    s = run_study(cfg, trivial, out_dir=work / label, build_root=work / "build", limit=n, scheduler=scheduler,
                  progress=False)
    wall = time.perf_counter() - t
    assert s.finished == n, s.lines()
    print(f"{label:<22} {n:>6} episodes  {wall:7.2f} s  {1000 * wall / n:7.3f} ms/episode")
    return wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--single", type=int, default=300, help="episodes for the one-per-task lane")
    ap.add_argument("--cpus", type=int, default=2)
    args = ap.parse_args()
    cfg = load_config(STUDIES / "paper.yaml", name="overhead")
    n = args.episodes
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        timed(cfg, n, LocalScheduler(1), work, "local, in-process")
        timed(cfg, n, LocalScheduler(args.cpus), work, f"local, {args.cpus} workers")
        try:
            import ray
        except ImportError:
            print("ray not installed: pip install 'mcbuild[ray]'")
            return 0
        from mcbuild.runtime.study.run.schedulers.ray import RayScheduler

        t = time.perf_counter()
        ray.init(address="local", num_cpus=args.cpus, include_dashboard=False, log_to_driver=False,
                 logging_level="warning")   # a new instance, whatever RAY_ADDRESS or a stale address file names
        print(f"ray.init({args.cpus} CPUs) {time.perf_counter() - t:.1f} s (not counted below)")
        try:
            timed(cfg, args.cpus, RayScheduler(work / "build"), work, "ray warm-up")   # workers import the code
            timed(cfg, n, RayScheduler(work / "build"), work, "ray, 50 per task")
            timed(cfg, args.single, RayScheduler(work / "build", lane=lambda e: "llm"), work, "ray, 1 per task")
        finally:
            ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
