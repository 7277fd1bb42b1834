"""Benchmark: report + trajectory viewer at the paper design's scale (8,640 episodes), without
running the simulator.

    .venv/bin/python bench/viewer_paper_scale.py [--quick build/studies/quick] [--build build]
                                                 [--out /tmp/paper-view] [--map-limit N] [--baseline REF]...

Builds a store of the `studies/paper.yaml` plan whose outcomes are copied from a finished quick
study (same world, condition and task, and the scripted stand-in of each configuration, as in
`bench/study_paper_scripted.py`), then writes the report and the viewer and prints their sizes and
times. Replayed map paths use the paper plan's seeds, so a borrowed trajectory may stop matching;
the viewer then says where its path stops. Prints "no quick study" and exits 0 without one (`mcbuild
demo` makes it). Each ``--baseline REF`` (a folder or a commit, in its own environment;
bench/harness.py) does the same from the same quick study into ``OUT-<REF>``, with the load average
and the same-run ratios.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import harness

STAND_INS = {"direct": "vanilla-planner", "react": "vanilla-planner", "reflexion": "vanilla-planner",
             "voyager": "vanilla-planner", "xenon": "adaptive-planner", "adam": "adaptive-planner",
             "react_rules": "adaptive-planner"}
METRICS = {"store_s": False, "report_s": False, "viewer_mb": False}     # lower is better


def borrowed(quick: Path) -> dict[tuple, dict]:
    """(world, condition, task, configuration) -> the stored record, events and trajectory of the quick study."""
    Store = harness.module("mcbuild.runtime.study.store.results").Store
    out = {}
    with Store.open(quick, create=False) as st:
        records = {r["episode_id"]: r for r in st.records()}
        for eid, trajectory, events in st.iter_trajectories():
            d = {**records[eid], "events": events, "trajectory": trajectory}
            out[(d["world"], d["condition"], d["task"], d["configuration"])] = d
    return out


def measure(a: argparse.Namespace) -> dict:
    """Store, report and viewer of the paper plan, made by the tree this process runs."""
    config = harness.module("mcbuild.runtime.study.design.config")
    EpisodeOutcome = harness.module("mcbuild.runtime.study.outcome").EpisodeOutcome
    write_report = harness.module("mcbuild.runtime.study.report").write_report
    run_study = harness.module("mcbuild.runtime.study.run.runner").run_study
    src = borrowed(a.quick)
    cfg = config.load_config(config.STUDIES / "paper.yaml")

    def execute(e) -> object:
        d = src[(e.world, e.condition, e.task, STAND_INS[e.configuration])]
        return EpisodeOutcome(
            score=d["score"], success=bool(d["success"]), actions=d["actions"], cost_usd=d["cost_usd"],
            tokens_in=d["tokens_in"], tokens_out=d["tokens_out"],
            trajectory=[json.loads(x) for x in d["trajectory"].splitlines() if x.strip()],
            encounters=d["encounters"], events=json.loads(d["events"]),
            success_action=d["success_action"], end_reason=d["end_reason"], biome=d["biome"], world=e.world,
            condition=e.condition, task=e.task, budget=d["budget"])

    t0 = time.perf_counter()
    run_study(cfg, execute, out_dir=a.out, build_root=a.build, workers=1)
    t1 = time.perf_counter()
    try:                                    # the viewer writer handed in (#35); older trees write it by default
        viewer = {"viewer": harness.module("mcbuild.runtime.study.viewer").write_viewer}
    except (ModuleNotFoundError, AttributeError):
        viewer = {}
    res = write_report(a.out, build=a.build, map_limit=a.map_limit, **viewer)
    t2 = time.perf_counter()
    v = res.viewer
    return {"episodes": res.n_valid, "store_s": t1 - t0, "report_s": t2 - t1, "viewer_s": v.seconds,
            "replayed": v.replayed, "viewer_mb": v.bytes / 1e6, "files": sum(1 for _ in v.out_dir.rglob("*")),
            "trajectories_mb": sum(p.stat().st_size for p in (res.out_dir / "trajectories").glob("*.jsonl")) / 1e6}


def parent(a: argparse.Namespace) -> int:
    if not (a.quick / "results.sqlite").is_file():
        print(f"no quick study: {a.quick}/results.sqlite is missing (`mcbuild demo` runs it)")
        harness.summary_line("viewer_paper_scale", "skipped: nothing to measure (see above)")
        return 0
    print(harness.machine(), flush=True)
    rows = {}
    argv = harness.forward(sys.argv[1:])
    for tree in harness.trees(a.baseline, warm=a.build.resolve()):
        out = a.out if tree.here else a.out.with_name(f"{a.out.name}-{re.sub(r'[^A-Za-z0-9._-]+', '_', tree.label)}")
        own = [f"--quick={a.quick.resolve()}", f"--build={a.build.resolve()}", f"--out={out.resolve()}"]
        rows[tree.label] = r = next(iter(harness.run(tree, __file__, [*argv, *own])))
        print(f"{tree.label}: store of {r['episodes']} episodes in {r['store_s']:.1f} s; report + viewer {r['report_s']:.1f} s "
              f"(viewer {r['viewer_s']:.1f} s, {r['replayed']} paths replayed); viewer {r['viewer_mb']:.1f} MB in "
              f"{r['files']} files; trajectories/ {r['trajectories_mb']:.1f} MB; load {harness.load_cell(r)}", flush=True)
    ratios = harness.ratio_lines(rows, METRICS)
    print("\n".join(ratios))
    here = rows["this tree"]
    harness.summary_line("viewer_paper_scale", f"store {here['store_s']:.1f} s, report + viewer {here['report_s']:.1f} s, "
                         f"viewer {here['viewer_mb']:.0f} MB", "; ".join(ratios))
    return 0


def main() -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--quick", type=Path, default=Path("build/studies/quick"))
    ap.add_argument("--build", type=Path, default=Path("build"))
    ap.add_argument("--out", type=Path, default=Path("/tmp/paper-view"))
    ap.add_argument("--map-limit", type=int, default=None)
    a = ap.parse_args()
    return harness.dispatch(lambda: measure(a), lambda: parent(a))


if __name__ == "__main__":
    sys.exit(main())
