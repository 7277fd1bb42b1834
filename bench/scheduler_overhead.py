"""Benchmark: what the coordinator costs per episode, local process pool against Ray, against the
bound of issue 27 and against baseline checkouts measured in the same run.

    .venv/bin/python bench/scheduler_overhead.py [--episodes 2000] [--single 300] [--cpus 2] [--no-ray]
                                                 [--baseline REF]...

Every lane runs the first N episodes of ``studies/paper.yaml`` through the real runner and store
with a trivial executor (a fixed 50-action outcome, no simulator), so what an episode costs is
scheduling, messaging and the store. Per lane it prints the wall time per episode and the
**coordinator's CPU per episode**: the CPU of the study's own process while the scheduler runs
(planning and opening the store are once per study and left out). In the in-process lane that
process also runs the trivial episodes. The bound: one coordinator keeps 100 simulator CPUs busy
at about 24 ms of CPU per episode, so it may spend at most 0.25 ms on each.

Each ``--baseline REF`` (a folder or a commit, in its own environment built without the Ray extra, so
its Ray lanes show "-"; bench/harness.py) runs the same lanes with its own code in the same run, one
column each. Ray runs on a private loopback instance of ``--cpus`` CPUs whose start-up is timed
separately. Lanes: ``batch`` (50 episodes per task, the simulator lane) and ``single`` (one episode per
task, the LLM lane, on ``--single`` episodes). The load average is printed with every lane.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harness

BOUND_MS = 0.25
OUTCOME: Any = None            # the tree's EpisodeOutcome, set in the child (a Ray task's pickled function reads it)
TRAJECTORY = [{"i": i + 1, "skill": "mine", "args": {"block": "stone"}, "ok": True} for i in range(50)]


def trivial(entry):
    """A fixed outcome of the size of a short episode (50 actions)."""
    return OUTCOME(score=35.0, actions=50, trajectory=TRAJECTORY, end_reason="budget")


class Timed:
    """A scheduler whose ``run`` is timed: wall seconds and this process's CPU seconds."""

    def __init__(self, inner):
        self.inner, self.wall, self.cpu = inner, 0.0, 0.0

    @property
    def forks(self) -> bool:
        return getattr(self.inner, "forks", False)      # a baseline's scheduler may not say

    @property
    def info(self) -> str:
        return getattr(self.inner, "info", "")

    def run(self, *args) -> None:
        t, c = time.perf_counter(), time.process_time()
        try:
            self.inner.run(*args)
        finally:
            self.wall, self.cpu = time.perf_counter() - t, time.process_time() - c


def lane(cfg, n: int, scheduler, work: Path, label: str) -> dict:
    timed = Timed(scheduler)
    start = harness.load()[0]
    # progress=False draws nothing in either API (a baseline's bool; this tree's callable, where False is none)
    s = harness.module("mcbuild.runtime.study.run.runner").run_study(
        cfg, trivial, out_dir=work / label, build_root=work / "build", limit=n, scheduler=timed, progress=False)
    assert s.finished == n, s.lines()
    return {"lane": label, "episodes": n, "wall_ms": 1000 * timed.wall / n, "coord_ms": 1000 * timed.cpu / n,
            "load_start": start}


def lanes(args) -> None:
    """This tree's lanes (the code this process runs), each emitted as a row."""
    global OUTCOME
    OUTCOME = harness.module("mcbuild.runtime.study.outcome").EpisodeOutcome
    config = harness.module("mcbuild.runtime.study.design.config")
    local = harness.module("mcbuild.runtime.study.run.schedulers.local")
    cfg = config.load_config(config.STUDIES / "paper.yaml", name="overhead")

    def emit(row: dict) -> None:
        harness.emit(row, row.pop("load_start"))

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        emit(lane(cfg, args.episodes, local.LocalScheduler(1), work, "local, in-process"))
        emit(lane(cfg, args.episodes, local.LocalScheduler(args.cpus), work, f"local, {args.cpus} workers"))
        if args.no_ray:
            return
        try:
            import ray
            ray_scheduler = harness.module("mcbuild.runtime.study.run.schedulers.ray").RayScheduler
        except ImportError:
            return
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")   # loopback only
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        os.environ.setdefault("RAY_worker_niceness", "0")                  # same priority as the local pool
        t = time.perf_counter()
        ray.init(address="local", num_cpus=args.cpus, include_dashboard=False, log_to_driver=False, logging_level="warning")
        print(f"ray.init({args.cpus} CPUs) {time.perf_counter() - t:.1f} s (not counted)", file=sys.stderr)
        try:
            lane(cfg, args.cpus, ray_scheduler(work / "build"), work, "ray warm-up")   # workers import the code
            emit(lane(cfg, args.episodes, ray_scheduler(work / "build"), work, "ray, 50 per task"))
            emit(lane(cfg, args.single, ray_scheduler(work / "build", lane=lambda e: "llm"), work, "ray, 1 per task"))
        finally:
            ray.shutdown()


def parent(args: argparse.Namespace) -> int:
    print(harness.machine(), flush=True)
    results = {label: {r["lane"]: r for r in rows} for label, rows in harness.rows_of_each(args.baseline, __file__).items()}
    print(f"coordinator CPU per episode, bound {BOUND_MS} ms (wall ms per episode in brackets; load at start-end)")
    print(f"{'lane':<20} {'episodes':>8}" + "".join(f"  {name[-32:]:>32}" for name in results))
    for label, row in results["this tree"].items():
        cells = []
        for name in results:
            r = results[name].get(label)
            cells.append(f"{r['coord_ms']:7.3f} ms ({r['wall_ms']:6.2f}) {harness.load_cell(r)}" if r else "-")
        print(f"{label:<20} {row['episodes']:>8}" + "".join(f"  {c:>32}" for c in cells))
    here = results["this tree"]
    ratios = [harness.ratio_line(f"{name} ({lane})", {"coord_ms": here[lane]["coord_ms"]}, {"coord_ms": r["coord_ms"]},
                                 {"coord_ms": False})
              for name, rows in results.items() if name != "this tree" for lane, r in rows.items() if lane in here]
    print("\n".join(ratios))
    harness.summary_line("scheduler_overhead", ", ".join(f"{lane} {r['coord_ms']:.3f} ms" for lane, r in here.items())
                         + f" coordinator CPU per episode (bound {BOUND_MS} ms)", "; ".join(ratios))
    return 0


def main() -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--single", type=int, default=300, help="episodes for the one-per-task lane")
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--no-ray", action="store_true", help="local lanes only")
    args = ap.parse_args()
    if harness.in_child():
        lanes(args)
        return 0
    return harness.main_guard(lambda: parent(args))


if __name__ == "__main__":
    sys.exit(main())
