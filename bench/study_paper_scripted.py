"""Benchmark: the paper's full 8,640-episode design on the embedded simulator, with the scripted
agents standing in for the LLM configurations (target: <= 5 minutes on 2 cores).

    .venv/bin/python bench/study_paper_scripted.py [--workers N] [--limit N] [--report]

Configurations without an explicit memory of changed outcomes (direct, react, reflexion, voyager)
run `vanilla-planner`; those that revise their model from observed effects (xenon, adam) and the
disclosed react_rules run `adaptive-planner`.  The ids, seeds and budgets are the paper plan's.
Prints the wall time and the throughput (and a projection when --limit is given); prints
"worlds not built" and exits 0 when the saves are missing.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcbuild.compiler.core.paths import BUILD  # noqa: E402
from mcbuild.runtime.study.design.config import STUDIES, load_config  # noqa: E402
from mcbuild.runtime.study.design.plan import build_plan  # noqa: E402
from mcbuild.runtime.study.run.runner import run_study  # noqa: E402

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
    args = ap.parse_args()

    cfg = load_config(STUDIES / "paper.yaml", name="paper-scripted")
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
    out = args.build / "studies" / cfg.name
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    summary = run_study(cfg, out_dir=out, build_root=args.build, workers=args.workers, limit=args.limit)
    wall = time.perf_counter() - t0
    n = summary.finished
    rate = n / wall if wall else 0.0
    print("\n".join(summary.lines()))
    print(f"bench study_paper_scripted: {n} of {len(plan)} planned episodes in {wall:.1f}s wall "
          f"({rate:.2f} episodes/s, {args.workers} workers)")
    if n < 8640 and rate > 0:
        print(f"  projected for the full 8,640-episode design: {8640 / rate / 60:.1f} min (target <= 5 min on 2 cores)")
    if args.report:
        from mcbuild.runtime.study.report import write_report

        res = write_report(out, trajectories=False)
        print(res.table("table3_suite").markdown())
        print(f"html: {res.html}")
    return 0 if not summary.errors else 1


if __name__ == "__main__":
    sys.exit(main())
