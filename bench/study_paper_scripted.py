"""Benchmark: the paper's full 8,640-episode design on the embedded simulator, with the scripted
agents standing in for the LLM configurations (target: <= 5 minutes on 2 cores).

    .venv/bin/python bench/study_paper_scripted.py [--workers N] [--limit N] [--report] [--out DIR]
                                                   [--baseline DIR[:PYTHON]]...

Configurations without an explicit memory of changed outcomes (direct, react, reflexion, voyager)
run `vanilla-planner`; those that revise their model from observed effects (xenon, adam) and the
disclosed react_rules run `adaptive-planner`.  The ids, seeds and budgets are the paper plan's.
Prints the wall time and the throughput (and a projection when --limit is given); prints
"worlds not built" and exits 0 when the saves are missing. Each ``--baseline`` checkout first runs
its own copy of this bench in a subprocess (its tree on the path, its own interpreter after ``:``)
on the same build and plan; then the wall time, CPU per episode, load and behaviour hash
(``behaviour_hash.py``) of every run are printed side by side.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcbuild.compiler.core.paths import BUILD  # noqa: E402
from mcbuild.runtime.study.design.config import STUDIES, load_config  # noqa: E402
from mcbuild.runtime.study.design.plan import build_plan  # noqa: E402
from mcbuild.runtime.study.run.runner import run_study  # noqa: E402

from behaviour_hash import behaviour_hash  # noqa: E402  (this folder)

NAME = "paper-scripted"
STAND_INS = {
    "direct": "vanilla-planner", "react": "vanilla-planner", "reflexion": "vanilla-planner",
    "voyager": "vanilla-planner", "xenon": "adaptive-planner", "adam": "adaptive-planner",
    "react_rules": "adaptive-planner",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--limit", type=int, default=None, help="run only the first N episodes")
    ap.add_argument("--report", action="store_true", help="also render the report")
    ap.add_argument("--build", type=Path, default=BUILD, help="build folder with packs and world saves")
    ap.add_argument("--only-built", action="store_true",
                    help="restrict the plan to the worlds whose saves exist (partial benchmark)")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"the study folder, replaced by each run (default: BUILD/studies/{NAME})")
    ap.add_argument("--baseline", action="append", default=[], help="another checkout to run first, DIR[:PYTHON]")
    args = ap.parse_args()

    cfg = load_config(STUDIES / "paper.yaml", name=NAME)
    cfg = cfg.model_copy(update={"agents": STAND_INS})
    from mcbuild.compiler.worlds.layout import world_dir

    def built(world: str) -> bool:
        return all((world_dir(world, c, args.build) / "level.dat").is_file() for c in cfg.conditions)

    if args.only_built:
        worlds = [w for w in cfg.worlds if built(w)]
        if not worlds:
            print(f"worlds not built: no world saves under {args.build}/worlds")
            return 0
        cfg = cfg.model_copy(update={"worlds": worlds})
    plan = build_plan(cfg)
    missing = sorted({(e.world, e.condition) for e in plan if not (world_dir(e.world, e.condition, args.build) / "level.dat").is_file()})
    if missing:
        print(f"worlds not built: {len(missing)} world saves are missing (e.g. {missing[0]}); "
              f"run `mcbuild build worlds` first")
        return 0
    out = args.out or args.build / "studies" / cfg.name
    rows = [_baseline(spec, args) for spec in args.baseline]
    shutil.rmtree(out, ignore_errors=True)
    load, cpu, t0 = os.getloadavg()[0], _cpu(), time.perf_counter()
    summary = run_study(cfg, out_dir=out, build_root=args.build, workers=args.workers, limit=args.limit)
    wall = time.perf_counter() - t0
    n = summary.finished
    rows.append(("this tree", wall, (_cpu() - cpu) / max(n, 1), load, behaviour_hash(out)[0]))
    rate = n / wall if wall else 0.0
    print("\n".join(summary.lines()))
    print(f"bench study_paper_scripted: {n} of {len(plan)} planned episodes in {wall:.1f}s wall "
          f"({rate:.2f} episodes/s, {args.workers} workers)")
    if n < 8640 and rate > 0:
        print(f"  projected for the full 8,640-episode design: {8640 / rate / 60:.1f} min (target <= 5 min on 2 cores)")
    if args.baseline:
        print(f"{'tree':<28}{'wall s':>9}{'CPU ms/episode':>16}{'load':>7}  behaviour hash")
        for name, seconds, per, at, digest in rows:
            print(f"{name:<28}{seconds:>9.1f}{per * 1000:>16.1f}{at:>7.1f}  {digest}")
        for name, seconds, per, _, digest in rows[:-1]:
            print(f"this tree vs {name}: {seconds / wall:.2f}x faster (wall), {per / rows[-1][2]:.2f}x less CPU per "
                  f"episode, behaviour {'identical' if digest == rows[-1][4] else 'DIFFERENT'}")
    if args.report:
        from mcbuild.runtime.study.report import write_report
        from mcbuild.runtime.study.viewer import write_viewer

        res = write_report(out, trajectories=False, viewer=write_viewer)
        print(res.table("table3_suite").markdown())
        print(f"html: {res.html}")
    return 0 if not summary.errors else 1


def _cpu() -> float:
    """CPU seconds of this process and its finished children."""
    return sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
               for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))


def _baseline(spec: str, args: argparse.Namespace) -> tuple[str, float, float, float, str]:
    """(name, wall seconds, CPU seconds per episode, load, behaviour hash) of another checkout's run."""
    tree, _, python = spec.partition(":")
    own = Path(tree) / "build"          # a checkout with worlds of its own (an older layout) runs on them
    build = own if (own / "worlds" / "manifest.json").is_file() else args.build
    cmd = [python or sys.executable, str(Path(tree) / "bench" / "study_paper_scripted.py"), "--workers",
           str(args.workers), "--build", str(build)] + (["--limit", str(args.limit)] if args.limit else [])
    load, cpu, t0 = os.getloadavg()[0], _cpu(), time.perf_counter()
    done = subprocess.run(cmd, cwd=tree, env=dict(os.environ, PYTHONPATH=tree), capture_output=True, text=True,
                          check=False)
    wall = time.perf_counter() - t0
    if done.returncode:
        raise SystemExit(f"error: the baseline {tree} failed: {done.stderr.strip().splitlines()[-1:]}")
    n = args.limit or 8640
    try:
        digest = behaviour_hash(build / "studies" / NAME)[0]      # where every checkout's bench writes
    except Exception as exc:  # noqa: BLE001 - an older checkout's store may not be readable here
        digest = f"n/a ({type(exc).__name__})"
    return tree, wall, (_cpu() - cpu) / n, load, digest


if __name__ == "__main__":
    sys.exit(main())
