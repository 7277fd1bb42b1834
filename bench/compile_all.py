"""Benchmark: time to compile the six rule suites on one core (target < 1 s in total).

    .venv/bin/python bench/compile_all.py [--baseline REF]...

Prints the cold time (first compile in a fresh process, catalog loading included) and the warm time
(the best of three more passes over the six suites in the same process), for this tree and each
``--baseline`` (a folder or a commit, in its own environment; bench/harness.py), with the load
average during each tree's run and the same-run ratios.
"""
from __future__ import annotations

import argparse
import sys
import time

import harness

METRICS = {"cold_s": False, "warm_s": False}      # lower is better


def measure() -> dict[str, float]:
    """Cold and warm compile time of the tree this process runs."""
    compile_path = harness.module("mcbuild.pipeline.build").compile_path
    specs = harness.module("mcbuild.compiler.core.paths").SPECS
    suites = [specs / f"m0{i}.yaml" for i in range(1, 7)]

    def once() -> float:
        start = time.perf_counter()
        for path in suites:
            compile_path(path)
        return time.perf_counter() - start

    return {"cold_s": once(), "warm_s": min(once() for _ in range(3))}


def parent(args: argparse.Namespace) -> int:
    print(harness.machine(), flush=True)
    results = harness.row_of_each(args.baseline, __file__)
    ratios = harness.table(results, [("cold s", "cold_s", ".3f"), ("warm s", "warm_s", ".3f")], METRICS)
    here = results["this tree"]
    harness.summary_line("compile_all", f"cold {here['cold_s']:.3f} s, warm {here['warm_s']:.3f} s (target < 1 s)",
                         "; ".join(ratios))
    return 0


def main() -> int:
    args = harness.parser(__doc__).parse_args()
    return harness.dispatch(measure, lambda: parent(args))


if __name__ == "__main__":
    sys.exit(main())
