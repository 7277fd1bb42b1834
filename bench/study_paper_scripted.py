"""Benchmark: the paper's full 8,640-episode design on the embedded simulator, with the scripted
agents standing in for the LLM configurations (target: <= 5 minutes on 2 cores).

    .venv/bin/python bench/study_paper_scripted.py [--workers N[,N...]] [--limit N] [--report] [--out DIR]
                                                   [--only-built] [--build DIR] [--baseline REF]...

Configurations without an explicit memory of changed outcomes (direct, react, reflexion, voyager)
run `vanilla-planner`; those that revise their model from observed effects (xenon, adam) and the
disclosed react_rules run `adaptive-planner`. The ids, seeds and budgets are the paper plan's.
Prints the wall time and the throughput (and a projection when --limit is given); prints
"worlds not built" and exits 0 when the saves are missing. The worker count is ``--workers``, or
what fits the machine (the usable CPUs less the busy ones; printed with its reason), the same for
every tree; ``--workers 1,2`` runs each tree once per count and compares them. Each ``--baseline
REF`` (a folder or a commit, in its own environment; bench/harness.py) runs the same plan on the
same build, in turn with this tree, into ``BUILD/studies/paper-scripted-<REF>``; then the wall time,
CPU per episode, load and behaviour hash (``behaviour_hash.py``, computed by this tree's code for
every store) of every run are printed side by side, with the same-run ratios.
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import sys
import time
from pathlib import Path

import harness

NAME = "paper-scripted"
STAND_INS = {
    "direct": "vanilla-planner", "react": "vanilla-planner", "reflexion": "vanilla-planner",
    "voyager": "vanilla-planner", "xenon": "adaptive-planner", "adam": "adaptive-planner",
    "react_rules": "adaptive-planner",
}


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children."""
    return sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
               for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))


def study(args: argparse.Namespace) -> None:
    """Run the plan with the tree this process runs and emit one row (or a 'missing' row)."""
    config = harness.module("mcbuild.runtime.study.design.config")
    build_plan = harness.module("mcbuild.runtime.study.design.plan").build_plan
    run_study = harness.module("mcbuild.runtime.study.run.runner").run_study
    world_dir = harness.module("mcbuild.compiler.worlds.layout").world_dir
    start = harness.load()[0]
    cfg = config.load_config(config.STUDIES / "paper.yaml", name=NAME).model_copy(update={"agents": STAND_INS})
    if args.only_built:
        worlds = [w for w in cfg.worlds
                  if all((world_dir(w, c, args.build) / "level.dat").is_file() for c in cfg.conditions)]
        cfg = cfg.model_copy(update={"worlds": worlds or cfg.worlds[:1]})
    plan = build_plan(cfg)
    missing = sorted({(e.world, e.condition) for e in plan
                      if not (world_dir(e.world, e.condition, args.build) / "level.dat").is_file()})
    if missing:
        harness.emit({"missing": len(missing), "example": list(missing[0])}, start)
        return
    shutil.rmtree(args.out, ignore_errors=True)
    cpu, t0 = cpu_seconds(), time.perf_counter()
    summary = run_study(cfg, out_dir=args.out, build_root=args.build, workers=int(args.workers), limit=args.limit)
    wall = time.perf_counter() - t0
    harness.emit({"episodes": summary.finished, "planned": len(plan), "wall_s": wall, "errors": len(summary.errors),
                  "cpu_ms_per_episode": (cpu_seconds() - cpu) / max(summary.finished, 1) * 1000,
                  "summary": summary.lines()}, start)


def out_dir(args: argparse.Namespace, build: Path, tree: harness.Tree) -> Path:
    if tree.here:
        return (args.out or build / "studies" / NAME).resolve()
    return build / "studies" / f"{NAME}-{re.sub(r'[^A-Za-z0-9._-]+', '_', tree.label)}"


def plural(workers: int) -> str:
    return f"{workers} worker{'s' * (workers != 1)}"


def worker_counts(given: str | None) -> list[int]:
    """``--workers``: comma-separated counts (each warned about when above the usable CPUs), or what
    fits the machine (printed with its reason)."""
    return [harness.workers(int(n)) for n in given.split(",")] if given else [harness.workers(None)]


def parent(args: argparse.Namespace) -> int:
    from behaviour_hash import behaviour_hash
    from mcbuild.compiler.core.paths import BUILD

    print(harness.machine(), flush=True)
    build = (args.build or BUILD).resolve()
    counts = worker_counts(args.workers)
    argv = harness.forward(sys.argv[1:])
    rows: dict[str, dict] = {}                 # "tree" or "tree, N workers" -> its run
    outs: dict[str, Path] = {}
    trees = harness.trees(args.baseline, warm=build)
    for workers in counts:
        for tree in trees:                      # the trees in turn at each count: the load drifts alike for all
            out = outs[tree.label] = out_dir(args, build, tree)
            own = [f"--workers={workers}", f"--build={build}", f"--out={out}"]
            row = next(iter(harness.run(tree, __file__, [*argv, *own])))
            if "missing" in row:
                print(f"worlds not built: {row['missing']} world saves are missing (e.g. {tuple(row['example'])}); "
                      f"run `mcbuild build worlds` first")
                harness.summary_line("study_paper_scripted", "skipped: nothing to measure (see above)")
                return 0
            row.update(hash=behaviour_hash(out)[0], workers=workers)
            name = tree.label if len(counts) == 1 else f"{tree.label}, {plural(workers)}"
            rows[name] = row
            print("\n".join(row["summary"]))
            print(f"{name}: {row['episodes']} of {row['planned']} planned episodes in {row['wall_s']:.1f}s wall "
                  f"({row['episodes'] / row['wall_s']:.2f} episodes/s, {plural(workers)}, load {harness.load_cell(row)}), "
                  f"behaviour hash {row['hash']}", flush=True)
    ratios = compare(rows, counts)
    here = rows["this tree" if len(counts) == 1 else f"this tree, {plural(counts[0])}"]
    rate = here["episodes"] / here["wall_s"] if here["wall_s"] else 0.0
    if here["episodes"] < 8640 and rate > 0:
        print(f"projected for the full 8,640-episode design: {8640 / rate / 60:.1f} min (target <= 5 min on 2 cores)")
    harness.summary_line("study_paper_scripted", f"{here['episodes']} episodes in {here['wall_s']:.1f} s "
                         f"({rate:.1f}/s, {plural(here['workers'])}), hash {here['hash']}", "; ".join(ratios),
                         ok=not any(r["errors"] for r in rows.values()))
    if args.report:
        from mcbuild.runtime.study.report import write_report

        res = write_report(outs["this tree"], trajectories=False)
        print(res.table("table3_suite").markdown())
        print(f"html: {res.html}")
    return 0 if not any(r["errors"] for r in rows.values()) else 1


def compare(rows: dict[str, dict], counts: list[int]) -> list[str]:
    """Print the runs side by side and return the same-run ratios: this tree against each baseline at
    each worker count, and each count against the first one in this tree."""
    print(f"{'tree':<36}{'wall s':>9}{'CPU ms/episode':>16}{'load':>11}  behaviour hash")
    for name, r in rows.items():
        print(f"{name:<36}{r['wall_s']:>9.1f}{r['cpu_ms_per_episode']:>16.1f}{harness.load_cell(r):>11}  {r['hash']}")
    metrics = {"wall_s": False, "cpu_ms_per_episode": False}
    ratios = []
    for workers in counts:
        mine = {n: r for n, r in rows.items() if r["workers"] == workers}
        here = mine.pop(next(n for n in mine if n.startswith("this tree")))
        ratios += [harness.ratio_line(name, here, r, metrics)
                   + f", behaviour {'identical' if r['hash'] == here['hash'] else 'DIFFERENT'}" for name, r in mine.items()]
    first = rows.get(f"this tree, {plural(counts[0])}")
    for workers in counts[1:]:
        r = rows[f"this tree, {plural(workers)}"]
        ratios.append(f"this tree, {plural(workers)} vs {counts[0]}: {first['wall_s'] / r['wall_s']:.2f}x the speed "
                      f"(wall), behaviour {'identical' if r['hash'] == first['hash'] else 'DIFFERENT'}")
    print("\n".join(ratios))
    return ratios


def main() -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--workers", default=None,
                    help="worker processes, or several counts to compare, e.g. 1,2 (default: what fits the machine)")
    ap.add_argument("--limit", type=int, default=None, help="run only the first N episodes")
    ap.add_argument("--report", action="store_true", help="also render the report")
    ap.add_argument("--build", type=Path, default=None, help="build folder with packs and world saves")
    ap.add_argument("--only-built", action="store_true",
                    help="restrict the plan to the worlds whose saves exist (partial benchmark)")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"this tree's study folder, replaced by each run (default: BUILD/studies/{NAME})")
    args = ap.parse_args()
    if harness.in_child():
        os.environ.pop(harness.SUMMARY, None)
        study(args)
        return 0
    return harness.main_guard(lambda: parent(args))


if __name__ == "__main__":
    sys.exit(main())
