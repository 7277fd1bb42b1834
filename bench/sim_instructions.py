"""Instructions per action of the simulator's agent loop, counted by callgrind: a figure the load
of a shared machine does not move, beside each baseline's in the same run.

The action mix is ``sim_throughput.py``'s (a complete vanilla-planner Enchantment episode on the
first built Vanilla world), replayed with an observation before every step (``ep.observe();
ep.step(action)``). Each tree's child runs its own Python under ``valgrind --tool=callgrind`` twice,
with ``PYTHONHASHSEED=0``: once for ``--warm`` replays and once for ``--warm`` plus ``--replays``; the
difference of the two totals over the extra replays' actions is the figure (the interpreter's start,
the imports, the world's loading and the planner's run cancel out). Runs vary by about 1-3% (read
the figures to that); a tree's code is compiled to bytecode before it is counted. Needs valgrind
(`apt-get install valgrind`); a few minutes per tree. Not part of ``make bench``.

    .venv/bin/python bench/sim_instructions.py [--baseline REF]... [--replays 10] [--warm 2] [--build DIR]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import harness


def replay(build: Path, times: int) -> int:
    """The bench episode's actions, ``times`` times, observed; their number."""
    from sim_throughput import bench_episode

    with bench_episode(build) as (episode, actions, *_):
        for _ in range(times):
            episode.reset()
            for action in actions:
                episode.observe()
                episode.step(action)
    return len(actions)


def counted(build: Path, times: int, folder: Path) -> tuple[int, int]:
    """Instructions of a whole run of ``times`` replays under callgrind, and the episode's action count."""
    out = folder / f"callgrind.{times}.out"
    done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__,
                           f"--build={build}", f"--replay={times}"],
                          env={**os.environ, "PYTHONHASHSEED": "0"}, capture_output=True, text=True)
    actions = re.search(r"^actions (\d+)$", done.stdout, re.M)
    total = re.search(r"^(?:summary|totals): (\d+)", out.read_text() if out.exists() else "", re.M)
    if done.returncode or actions is None or total is None:
        raise SystemExit(f"error: the callgrind run of {times} replays failed: "
                         f"{(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return int(total.group(1)), int(actions.group(1))


def measure(build: Path, replays: int, warm: int) -> dict[str, float]:
    """The figure of the tree on ``sys.path``."""
    replay(build, 1)                    # its bytecode compiled and its caches filled before anything is counted
    with tempfile.TemporaryDirectory(prefix="sim-instructions-") as folder:
        base, actions = counted(build, warm, Path(folder))
        total, _ = counted(build, warm + replays, Path(folder))
    return {"actions": actions, "replays": replays, "instructions_per_action": (total - base) / (replays * actions)}


def parent(args: argparse.Namespace) -> int:
    from mcbuild.compiler.core.paths import BUILD

    if shutil.which("valgrind") is None:
        print("error: valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    print(harness.machine(), flush=True)
    build = (args.build or BUILD).resolve()
    rows = {tree.label: next(iter(harness.run(tree, __file__, [f"--build={build}", f"--replays={args.replays}",
                                                               f"--warm={args.warm}"])))
            for tree in harness.trees(args.baseline, warm=build)}
    ratios = harness.table(rows, [("instructions/action", "instructions_per_action", ",.0f"),
                                  ("actions", "actions", "d"), ("replays", "replays", "d")],
                           {"instructions_per_action": False})
    harness.summary_line("sim_instructions", f"{rows['this tree']['instructions_per_action']:,.0f} instructions "
                         "per observed action (callgrind)", "; ".join(ratios))
    return 0


def main() -> int:
    ap = harness.parser(__doc__)
    harness.build_option(ap)
    ap.add_argument("--replays", type=int, default=10, help="replays counted (beyond the --warm ones)")
    ap.add_argument("--warm", type=int, default=2, help="replays of the run whose count is subtracted")
    ap.add_argument("--replay", type=int, default=None, help=argparse.SUPPRESS)     # a callgrind grandchild
    args = ap.parse_args()
    if args.replay is not None:         # a callgrind grandchild: says how many actions it replayed
        print(f"actions {replay((args.build or Path('build')).resolve(), args.replay)}", flush=True)
        return 0
    return harness.dispatch(lambda: measure(args.build, args.replays, args.warm), lambda: parent(args))


if __name__ == "__main__":
    sys.exit(main())
