"""Benchmark: LLM-study throughput against a local endpoint with a fixed latency, as the number of
episodes in flight rises, against the latency bound and against baselines in the same run.

    .venv/bin/python bench/llm_throughput.py [--build DIR] [--latency 0.5,2] [--inflight 2,16,128]
                                             [--workers N] [--episodes 0] [--budget 58]
                                             [--structured off,json_schema] [--threads-cap 512,1024]
                                             [--baseline REF]...

The endpoint (this checkout's ``mcbuild.llm.testing.ThroughputEndpoint``: one asyncio loop, one
process per latency, shared by every tree) answers every request with a valid ``react`` action
chosen from a checksum of the request's bytes, ``--latency`` seconds after the request arrived,
without parsing the request: at 2,048 in flight it must not be the bottleneck, and its CPU per call
is printed beside the client's.
For each structured-output mode (``--structured``: ``off``, the paper's protocol, or ``json_schema``,
each request carrying the action's JSON Schema), each latency and each number of episodes in
flight (``workers`` processes x ``concurrency`` threads; ``--workers``, or what fits the machine,
printed), it runs that many ``react`` episodes (``--episodes`` overrides) of ``--budget`` actions on
the built worlds and prints episodes/hour, model calls/s, the client's CPU per call (study process
and its workers; not the memory sampling) and the endpoint's, the peak memory of the study's process
tree (sum of PSS) and the stored trajectory size per episode, plus the projected wall time of the
paper's 8,640 episodes, and the load average at the start and end of the row. ``--threads-cap``
runs each row once per cap on the episode threads of a worker process (the scheduler's
``THREADS_PER_WORKER``; by default each tree's own), to decide that cap with a same-run measurement.

The bound each row chases is the **latency bound**: with every episode always waiting on the
endpoint, ``in flight x 3600 / (calls per episode x latency)`` episodes an hour; the row prints its
share of it. Issue 40 asks, at 2 s: at 2,048 in flight at least the episodes per hour of 1,024, at
1,024 at least 90% of the bound on a quiet machine (and never less than 79f6c16's share in the same
run), at most 1.5 ms of client CPU per call. Each ``--baseline REF`` (a folder or a commit, in its own
environment; bench/harness.py) runs the same rows with its own code after this tree's (a tree without
structured outputs runs only ``off``), and the same-run ratios close the table. Before each row the
worlds its episodes use are loaded once in the study's process (the forked workers share them).
Prints "worlds not built" and exits 0 when the saves are missing.
"""
from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import endpoint
import harness

PAPER_EPISODES = 8640
TICK = os.sysconf("SC_CLK_TCK")


def tree_pss_mb(pid: int) -> float:
    """Sum of the proportional set sizes of ``pid`` and its descendants, in MB."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) / 1024
            for task in Path(f"/proc/{p}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total


class PeakMemory:
    """Samples the tree's PSS every half second; ``cpu`` is the sampling's own CPU seconds (reading
    ``smaps_rollup`` walks every mapped page), which the CPU per call leaves out."""

    def __init__(self) -> None:
        self.peak, self.cpu, self._stop = 0.0, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            start = time.thread_time()
            self.peak = max(self.peak, tree_pss_mb(os.getpid()))
            self.cpu += time.thread_time() - start

    def __enter__(self) -> "PeakMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def cpu_seconds() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def reap() -> None:
    """Wait until every worker process of the study is reaped: only then does its CPU reach
    ``RUSAGE_CHILDREN`` (a worker with hundreds of threads can outlive the pool's join timeout)."""
    while multiprocessing.active_children():
        time.sleep(0.05)


def config(base_url: str, worlds: list[str], n: int, budget: int, structured: str = "off") -> Any:
    conditions = ["vanilla", "m01", "m02", "m03", "m04", "m05", "m06"]
    reps = max(1, -(-n // (len(worlds) * len(conditions) * 3)))
    endpoint = {"base_url": base_url, "api_key_env": "MCBUILD_BENCH_NO_KEY"}
    if structured != "off":
        endpoint["structured"] = structured
    return harness.module("mcbuild.runtime.study.design.config").StudyConfig(
        name="llm-bench", worlds=worlds, conditions=conditions, configurations=["react"], models=["scripted"],
        repetitions=reps, budget=budget, endpoint=endpoint)


def supports(structured: str) -> bool:
    """Whether this tree's study config takes ``structured`` (trees before it only run ``off``)."""
    if structured == "off":
        return True
    config = harness.module("mcbuild.runtime.study.design.config").StudyConfig
    endpoint = config.model_fields["endpoint"].annotation
    return any("structured" in getattr(t, "model_fields", {}) for t in getattr(endpoint, "__args__", (endpoint,)))


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` so far, threads included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def warm(cfg: Any, build: Path, n: int) -> list:
    """Load every world of the row's ``n`` episodes in this process and keep them (forked workers
    inherit them and share their pages), so the rows measure episodes, not the one-off loading of
    saves in each worker."""
    world_dir = harness.module("mcbuild.compiler.worlds.layout").world_dir
    factory = harness.module("mcbuild.runtime.backends.registry").factory
    plan = harness.module("mcbuild.runtime.study.design.plan").build_plan(cfg)[:n]
    return [factory("sim").world(world_dir(w, "vanilla", build)) for w in dict.fromkeys(e.world for e in plan)]


def measure(cfg: Any, build: Path, n: int, workers: int, concurrency: int, endpoint: int) -> dict:
    """One row; ``endpoint`` is the scripted endpoint's process id (its CPU is counted apart)."""
    run_study = harness.module("mcbuild.runtime.study.run.runner").run_study
    Store = harness.module("mcbuild.runtime.study.store.results").Store
    out = Path(tempfile.mkdtemp(prefix="llm-bench-"))
    worlds = warm(cfg, build, n)        # noqa: F841 - kept alive until the row ends
    try:
        cpu0, served0, t0 = cpu_seconds(), process_cpu(endpoint), time.monotonic()
        with PeakMemory() as mem:
            s = run_study(cfg, out_dir=out, build_root=build, workers=workers, concurrency=concurrency,
                          limit=n)
        reap()
        wall, cpu, served = time.monotonic() - t0, cpu_seconds() - cpu0 - mem.cpu, process_cpu(endpoint) - served0
        with Store.open(out) as st:
            size = sizes(st)
        calls = size["tokens_in"] / 100          # the scripted endpoint bills 100 prompt tokens a call
        episodes = max(size["episodes"], 1)
        return {"episodes": s.finished, "ran": s.scheduler, "faults": s.infrastructure_faults, "errors": len(s.errors),
                "wall_s": wall,
                "episodes_per_hour": s.finished / wall * 3600, "calls_per_s": calls / wall,
                "calls_per_episode": calls / episodes,
                "cpu_ms_per_call": cpu / max(calls, 1) * 1000, "endpoint_ms_per_call": served / max(calls, 1) * 1000,
                "peak_pss_gb": mem.peak / 1024, "actions_per_episode": size["actions"] / episodes,
                "trajectory_kb": size["trajectory_bytes"] / episodes / 1024,
                "paper_hours": PAPER_EPISODES / (s.finished / wall) / 3600 if s.finished else float("inf")}
    finally:
        shutil.rmtree(out, ignore_errors=True)


def sizes(store) -> dict[str, int]:
    """``Store.sizes()``; a baseline checkout from before that method reads the same sums itself."""
    if hasattr(store, "sizes"):
        return store.sizes()
    row = store.conn.execute("SELECT COUNT(*), SUM(tokens_in), SUM(actions), SUM(length(trajectory)) FROM episodes").fetchone()
    return dict(zip(("episodes", "tokens_in", "actions", "trajectory_bytes"), (int(v or 0) for v in row)))


def bound(row: dict) -> float:
    """The latency bound of a row in episodes an hour: every episode always waiting on the endpoint."""
    return row["inflight"] * 3600 / (row["calls_per_episode"] * row["latency"]) if row["calls_per_episode"] else 0.0


def rows(args: argparse.Namespace) -> None:
    """In a child: every row of the tree this process runs, emitted as it is measured."""
    endpoints = json.loads(args.endpoints)
    worlds = sorted(p.parent.parent.name for p in (args.build / "worlds").glob("*/vanilla/level.dat"))
    for structured in args.structured.split(","):
        if not supports(structured):
            harness.emit({"note": f"no structured outputs in this tree: {structured} rows skipped"}, harness.load()[0])
            continue
        for latency in args.latency.split(","):
            base_url, pid = endpoints[latency]
            for inflight in (int(x) for x in args.inflight.split(",")):
                if args.threads_cap:             # every tree's fit() takes the cap as its max_threads default
                    fit = harness.module("mcbuild.runtime.study.run.schedulers.inflight").fit
                    fit.__defaults__ = (int(args.threads_cap), *fit.__defaults__[1:])
                start = harness.load()[0]
                workers = min(args.workers, inflight)
                n = args.episodes or inflight
                row = measure(config(base_url, worlds, n, args.budget, structured), args.build, n, workers,
                              -(-inflight // workers), pid)
                harness.emit({**row, "latency": float(latency), "inflight": inflight, "structured": structured,
                              "workers": workers, "cap": args.threads_cap}, start)


HEADER = (f"{'tree':<14} {'structured':<11} {'latency':>7} {'in flight':>9} {'episodes':>8} {'ep/hour':>8} {'bound':>8} "
          f"{'share':>6} {'calls/s':>8} {'CPU/call':>9} {'endpoint':>9} {'peak PSS':>9} {'traj/ep':>9} {'paper':>8}  load")


def print_row(label: str, row: dict) -> None:
    b = bound(row)
    print(f"{label[-14:]:<14} {row['structured']:<11} {row['latency']:>6.1f}s {row['inflight']:>9} {row['episodes']:>8} "
          f"{row['episodes_per_hour']:>8.0f} {b:>8.0f} {share(row):>5.1f}% {row['calls_per_s']:>8.1f} "
          f"{row['cpu_ms_per_call']:>7.2f}ms {row['endpoint_ms_per_call']:>7.2f}ms {row['peak_pss_gb']:>7.2f}GB "
          f"{row['trajectory_kb']:>7.0f}KB {row['paper_hours']:>7.1f}h  {harness.load_cell(row)}", flush=True)


def share(row: dict) -> float:
    """A row's episodes per hour as a percentage of its latency bound."""
    b = bound(row)
    return 100 * row["episodes_per_hour"] / b if b else 0.0


def label_of(tree: harness.Tree, cap: str) -> str:
    """A row's tree, and the cap on threads a process when the run gives caps (``this x1024``)."""
    return f"{'this' if tree.here else tree.label} x{cap}" if cap else tree.label


def parent(args: argparse.Namespace) -> int:
    from mcbuild.compiler.core.paths import BUILD

    build = (args.build or BUILD).resolve()
    worlds = sorted(p.parent.parent.name for p in (build / "worlds").glob("*/vanilla/level.dat"))
    if not worlds:
        print(f"worlds not built: no world saves under {build}/worlds")
        harness.summary_line("llm_throughput", "skipped: nothing to measure (see above)")
        return 0
    print(harness.machine(), flush=True)
    workers = harness.workers(args.workers)
    trees = harness.trees(args.baseline, warm=build)
    results: dict[str, dict[tuple, dict]] = {}
    with endpoint.endpoints(args.latency.split(",")) as endpoints:
        print(HEADER)
        print("bound: the latency bound, in flight x 3600 / (calls per episode x latency); CPU/call: the client's "
              "(study process and workers), endpoint: the scripted endpoint's", flush=True)
        argv = [*harness.forward(sys.argv[1:]), f"--build={build}", f"--workers={workers}",
                f"--endpoints={json.dumps(endpoints)}"]
        for structured, latency, inflight, cap in itertools.product(args.structured.split(","), args.latency.split(","),
                                                                    args.inflight.split(","), args.threads_cap.split(",")):
            for tree in trees:                  # row by row, the trees in turn: the load drifts alike for all
                one = [f"--structured={structured}", f"--latency={latency}", f"--inflight={inflight}",
                       f"--threads-cap={cap}"]
                for row in harness.run(tree, __file__, [*argv, *one]):
                    if "note" in row:
                        print(f"{tree.label}: {row['note']}", flush=True)
                        continue
                    row["share"] = share(row)
                    label = label_of(tree, cap)
                    results.setdefault(label, {})[(row["structured"], row["latency"], row["inflight"])] = row
                    if row.get("ran"):
                        print(f"{label}: {row['ran']}", flush=True)
                    print_row(label, row)
    first = label_of(trees[0], args.threads_cap.split(",")[0])
    here = results.get(first, {})
    against = f", this tree meaning {first}" if first != "this tree" else ""
    ratios = [harness.ratio_line(f"{label} ({key[0]}, {key[1]:g} s, {key[2]} in flight{against})", here[key], row,
                                 {"share": True, "cpu_ms_per_call": False})
              for label, got in results.items() if label != first for key, row in got.items() if key in here]
    for (structured, latency, inflight), row in here.items():      # more in flight must not run fewer episodes
        for (s2, l2, fewer), other in here.items():
            if (s2, l2) == (structured, latency) and fewer < inflight:
                ratios.append(f"this tree, {structured} {latency:g} s: {inflight} in flight run "
                              f"{row['episodes_per_hour'] / other['episodes_per_hour']:.2f}x the episodes an hour of {fewer}")
    print("\n".join(ratios))
    harness.summary_line("llm_throughput", "; ".join(
        f"{r['structured']} {r['latency']:g} s x {r['inflight']}: {r['share']:.0f}% of the bound, "
        f"{r['cpu_ms_per_call']:.2f} ms/call" for r in here.values()) or "no rows", "; ".join(ratios))
    return 0


def main() -> int:
    ap = harness.parser(__doc__)
    harness.build_option(ap, "the world saves")
    ap.add_argument("--latency", default="0.5,2", help="comma-separated seconds per reply")
    ap.add_argument("--inflight", default="2,16,128", help="comma-separated episodes in flight (whole study)")
    ap.add_argument("--workers", type=int, default=None, help="worker processes (default: what fits the machine)")
    ap.add_argument("--episodes", type=int, default=0, help="episodes per row (default: as many as in flight)")
    ap.add_argument("--budget", type=int, default=58)
    ap.add_argument("--structured", default="off", help="comma-separated structured-output modes: off, json_schema")
    ap.add_argument("--threads-cap", default="", help="comma-separated caps on the episode threads of a worker process, "
                    "each run as its own rows (default: each tree's own)")
    ap.add_argument("--endpoints", default="{}", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if harness.in_child():
        rows(args)
        return 0
    return harness.main_guard(lambda: parent(args))


if __name__ == "__main__":
    sys.exit(main())
