"""Benchmark: what the coordinator costs per episode, local process pool against Ray, against the
bound of issue 27 and against baseline checkouts measured in the same run.

    .venv/bin/python bench/scheduler_overhead.py [--episodes 2000] [--single 300] [--cpus 2] [--no-ray]
                                                 [--baseline DIR ...]

Every lane runs the first N episodes of ``studies/paper.yaml`` through the real runner and store
with a trivial executor (a fixed 50-action outcome, no simulator), so what an episode costs is
scheduling, messaging and the store. Per lane it prints the wall time per episode and the
**coordinator's CPU per episode**: the CPU of the study's own process while the scheduler runs
(planning and opening the store are once per study and left out). In the in-process lane that
process also runs the trivial episodes. The bound: one coordinator keeps 100 simulator CPUs busy
at about 24 ms of CPU per episode, so it may spend at most 0.25 ms on each.

Each ``--baseline DIR`` (another checkout, e.g. the commit this work started from) runs the same
lanes with its own code (``DIR/.venv/bin/python`` when it has one) in the same run, one column each.
Ray runs on a private loopback instance of ``--cpus`` CPUs whose start-up is timed separately.
Lanes: ``batch`` (50 episodes per task, the simulator lane) and ``single`` (one episode per task,
the LLM lane, on ``--single`` episodes). The load average is printed before and after.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOUND_MS = 0.25
#: (config, outcome, runner, local scheduler, Ray scheduler) modules of each import layout.
LAYOUTS = (
    ("mcbuild.runtime.study.design.config", "mcbuild.runtime.study.run.outcome", "mcbuild.runtime.study.run.runner",
     "mcbuild.runtime.study.run.schedulers.local", "mcbuild.runtime.study.run.schedulers.ray"),
    ("runtime.study.config", "runtime.study.executor", "runtime.study.runner", "runtime.study.scheduler",
     "runtime.study.ray_scheduler"),
)
TRAJECTORY = [{"i": i + 1, "skill": "mine", "args": {"block": "stone"}, "ok": True} for i in range(50)]


def modules() -> tuple:
    for layout in LAYOUTS:
        try:
            return tuple(importlib.import_module(m) for m in layout[:4]) + (layout[4],)
        except ImportError:
            continue
    raise ImportError("no known study layout on the path")


def trivial(entry):
    """A fixed outcome of the size of a short episode (50 actions)."""
    return modules()[1].EpisodeOutcome(score=35.0, actions=50, trajectory=TRAJECTORY, end_reason="budget")


class Timed:
    """A scheduler whose ``run`` is timed: wall seconds and this process's CPU seconds."""

    def __init__(self, inner):
        self.inner, self.wall, self.cpu = inner, 0.0, 0.0

    def run(self, *args) -> None:
        t, c = time.perf_counter(), time.process_time()
        try:
            self.inner.run(*args)
        finally:
            self.wall, self.cpu = time.perf_counter() - t, time.process_time() - c


def lane(cfg, n: int, scheduler, work: Path, label: str) -> dict:
    timed = Timed(scheduler)
    s = modules()[2].run_study(cfg, trivial, out_dir=work / label, build_root=work / "build", limit=n,
                               scheduler=timed)
    assert s.finished == n, s.lines()
    return {"lane": label, "episodes": n, "wall_ms": 1000 * timed.wall / n, "coord_ms": 1000 * timed.cpu / n}


def lanes(args) -> list[dict]:
    """This checkout's lanes (the code on the path), each row also printed as one JSON line."""
    config, _, _, local, ray_module = modules()
    cfg = config.load_config(config.STUDIES / "paper.yaml", name="overhead")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        emit = lambda row: (rows.append(row), print(json.dumps(row), flush=True))  # noqa: E731
        emit(lane(cfg, args.episodes, local.LocalScheduler(1), work, "local, in-process"))
        emit(lane(cfg, args.episodes, local.LocalScheduler(args.cpus), work, f"local, {args.cpus} workers"))
        if args.no_ray:
            return rows
        try:
            import ray
            ray_scheduler = importlib.import_module(ray_module).RayScheduler
        except ImportError:
            return rows
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")   # loopback only
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        os.environ.setdefault("RAY_worker_niceness", "0")                  # same priority as the local pool
        t = time.perf_counter()
        ray.init(address="local", num_cpus=args.cpus, include_dashboard=False, log_to_driver=False, logging_level="warning")
        print(json.dumps({"note": f"ray.init({args.cpus} CPUs) {time.perf_counter() - t:.1f} s (not counted)"}))
        try:
            lane(cfg, args.cpus, ray_scheduler(work / "build"), work, "ray warm-up")   # workers import the code
            emit(lane(cfg, args.episodes, ray_scheduler(work / "build"), work, "ray, 50 per task"))
            emit(lane(cfg, args.single, ray_scheduler(work / "build", lane=lambda e: "llm"), work, "ray, 1 per task"))
        finally:
            ray.shutdown()
    return rows


def run_tree(tree: Path, argv: list[str]) -> list[dict]:
    """The lanes of checkout ``tree``, run with its own code in a child process."""
    python = tree / ".venv" / "bin" / "python"
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([str(python if python.is_file() else sys.executable), __file__, "--lanes-only", *argv],
                         env=env, cwd=str(tree), capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"baseline {tree} failed: {out.stderr.strip().splitlines()[-1:]}")
    return [row for line in out.stdout.splitlines() if (row := json.loads(line)).get("lane")]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--single", type=int, default=300, help="episodes for the one-per-task lane")
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--no-ray", action="store_true", help="local lanes only")
    ap.add_argument("--baseline", type=Path, action="append", default=[], help="another checkout to measure too")
    ap.add_argument("--lanes-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.lanes_only:
        lanes(args)
        return 0
    child = [f"--episodes={args.episodes}", f"--single={args.single}", f"--cpus={args.cpus}"] + ["--no-ray"] * args.no_ray
    print(f"load average before: {load()}  ({os.cpu_count()} CPUs)")
    trees = [("this checkout", ROOT)] + [(str(b), b.resolve()) for b in args.baseline]
    results = {name: {r["lane"]: r for r in run_tree(tree, child)} for name, tree in trees}
    print(f"load average after:  {load()}")
    print(f"coordinator CPU per episode, bound {BOUND_MS} ms (wall ms per episode in brackets)")
    print(f"{'lane':<20} {'episodes':>8}" + "".join(f"  {name[-24:]:>24}" for name, _ in trees))
    for label, row in results["this checkout"].items():
        cells = []
        for name, _ in trees:
            r = results[name].get(label)
            cells.append(f"{r['coord_ms']:7.3f} ms ({r['wall_ms']:6.2f})" if r else "-")
        print(f"{label:<20} {row['episodes']:>8}" + "".join(f"  {c:>24}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
