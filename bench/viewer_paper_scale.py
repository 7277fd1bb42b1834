"""Benchmark: report + trajectory viewer at the paper design's scale (8,640 episodes), without
running the simulator.

Builds a store of the `studies/paper.yaml` plan whose outcomes are copied from a finished quick
study (same world, condition and task, and the scripted stand-in of each configuration, as in
`bench/study_paper_scripted.py`), then writes the report and the viewer and prints their sizes and
times. Replayed map paths use the paper plan's seeds, so a borrowed trajectory may stop matching;
the viewer then says where its path stops.

    .venv/bin/python bench/viewer_paper_scale.py --quick build/studies/quick --build build --out /tmp/paper-view
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcbuild.runtime.study.design.config import STUDIES, load_config  # noqa: E402
from mcbuild.runtime.study.run.outcome import EpisodeOutcome  # noqa: E402
from mcbuild.runtime.study.report import write_report  # noqa: E402
from mcbuild.runtime.study.run.runner import run_study  # noqa: E402
from mcbuild.runtime.study.store.results import Store  # noqa: E402

STAND_INS = {"direct": "vanilla-planner", "react": "vanilla-planner", "reflexion": "vanilla-planner",
             "voyager": "vanilla-planner", "xenon": "adaptive-planner", "adam": "adaptive-planner",
             "react_rules": "adaptive-planner"}


def borrowed(quick: Path) -> dict[tuple, dict]:
    """(world, condition, task, configuration) -> the stored record, events and trajectory of the quick study."""
    out = {}
    with Store.open(quick, create=False) as st:
        records = {r["episode_id"]: r for r in st.records()}
        for eid, trajectory, events in st.iter_trajectories():
            d = {**records[eid], "events": events, "trajectory": trajectory}
            out[(d["world"], d["condition"], d["task"], d["configuration"])] = d
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", type=Path, default=Path("build/studies/quick"))
    ap.add_argument("--build", type=Path, default=Path("build"))
    ap.add_argument("--out", type=Path, default=Path("/tmp/paper-view"))
    ap.add_argument("--map-limit", type=int, default=None)
    a = ap.parse_args()
    src = borrowed(a.quick)
    cfg = load_config(STUDIES / "paper.yaml")

    def execute(e) -> EpisodeOutcome:
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
    res = write_report(a.out, build=a.build, map_limit=a.map_limit)
    t2 = time.perf_counter()
    v = res.viewer
    traj = sum(p.stat().st_size for p in (res.out_dir / "trajectories").glob("*.jsonl"))
    print(f"store: {res.n_valid} episodes in {t1 - t0:.1f} s")
    print(f"report + viewer: {t2 - t1:.1f} s (viewer {v.seconds:.1f} s, {v.replayed} paths replayed)")
    print(f"viewer: {v.bytes / 1e6:.1f} MB in {sum(1 for _ in v.out_dir.rglob('*'))} files; "
          f"trajectories/: {traj / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
