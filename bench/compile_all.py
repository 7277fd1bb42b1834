"""Benchmark: time to compile the six rule suites on one core (target < 1 s in total).

Prints the cold time (first compile, catalog loading included) and the warm time (the six suites
again in the same process), and their ratio, from one run.
"""
from __future__ import annotations

import time

from mcbuild.pipeline.build import compile_path
from mcbuild.compiler.core.paths import SPECS

SUITES = [SPECS / f"m0{i}.yaml" for i in range(1, 7)]


def run() -> float:
    start = time.perf_counter()
    for path in SUITES:
        compile_path(path)
    return time.perf_counter() - start


if __name__ == "__main__":
    cold = run()
    warm = min(run() for _ in range(3))
    print(f"compile m01..m06: cold {cold:.3f} s, warm {warm:.3f} s (target < 1 s), cold/warm {cold / warm:.1f}x")
