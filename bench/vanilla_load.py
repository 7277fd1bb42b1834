"""Benchmark: what loading the game's data costs a fresh process (target <= 0.5 s).

    .venv/bin/python bench/vanilla_load.py [--runs 5] [--baseline REF]...

Each figure is ``mcbuild.compiler.rules.catalog.load()`` timed inside a new Python process (imports not
included), the median of ``--runs`` processes:
  * re-hash: the stamp does not match (as after a copy), so every file is hashed, then parsed;
  * cold: the copy is trusted by its stamp, but the parsed-data cache is gone;
  * warm: stamp and cache both current (every process after the first).
The cache goes to a temporary build folder; a load that re-hashes writes the stamp anew. Each
``--baseline`` (a folder or a commit, in its own environment; bench/harness.py) is measured the same
way on the same copy of the data, with the load average and the same-run ratios.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

import harness

PROBE = ("import time; from mcbuild.compiler.rules import catalog; t = time.perf_counter(); catalog.load(); "
         "print(time.perf_counter() - t)")
METRICS = {"rehash_s": False, "cold_s": False, "warm_s": False}      # lower is better


def measure(runs: int) -> dict[str, float]:
    """The three medians of the tree this process runs."""
    vanilla = harness.module("mcbuild.compiler.core.paths").VANILLA_DATA
    stamp = vanilla / harness.module("mcbuild.compiler.core.vanilla").STAMP

    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "MCBUILD_BUILD": tmp}          # a private cache folder: the real one is untouched
        cache = Path(tmp) / "cache" / "vanilla"

        def median(prepare: Callable[[], object]) -> float:
            times = []
            for _ in range(runs):
                prepare()
                out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
                times.append(float(out.stdout))
            return statistics.median(times)

        rehash = median(lambda: (stamp.unlink(missing_ok=True), shutil.rmtree(cache, ignore_errors=True)))
        cold = median(lambda: shutil.rmtree(cache, ignore_errors=True))
        warm = median(lambda: None)
    return {"rehash_s": rehash, "cold_s": cold, "warm_s": warm}


def parent(args: argparse.Namespace) -> int:
    print(harness.machine(), flush=True)
    results = harness.row_of_each(args.baseline, __file__)
    print(f"load the game's data, median of {args.runs} processes (target <= 0.5 s)")
    ratios = harness.table(results, [("re-hash s", "rehash_s", ".3f"), ("cold s", "cold_s", ".3f"),
                                     ("warm s", "warm_s", ".3f")], METRICS)
    here = results["this tree"]
    harness.summary_line("vanilla_load", f"re-hash {here['rehash_s']:.3f} s, cold {here['cold_s']:.3f} s, "
                         f"warm {here['warm_s']:.3f} s (target <= 0.5 s)", "; ".join(ratios))
    return 0


def main() -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--runs", type=int, default=5, help="processes per figure (the median counts)")
    args = ap.parse_args()
    return harness.dispatch(lambda: measure(args.runs), lambda: parent(args))


if __name__ == "__main__":
    sys.exit(main())
