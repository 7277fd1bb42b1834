"""Benchmark: what loading the game's data costs a fresh process (target <= 0.5 s).

Each figure is ``mcbuild.compiler.rules.catalog.load()`` timed inside a new Python process (imports not
included), the median of a few runs, in one run of this script:
  * re-hash: the stamp does not match (as after a copy), so every file is hashed, then parsed;
  * cold: the copy is trusted by its stamp, but the parsed-data cache is gone;
  * warm: stamp and cache both current (every process after the first).
The cache goes to a temporary build folder; a load that re-hashes writes the stamp anew.
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from mcbuild.compiler.core.paths import VANILLA_DATA
from mcbuild.compiler.core.vanilla import STAMP
from mcbuild.compiler.rules.catalog import CACHE_DIR

PROBE = ("import time; from mcbuild.compiler.rules import catalog; t = time.perf_counter(); catalog.load(); "
         "print(time.perf_counter() - t)")
RUNS = 5


def timed(env: dict[str, str]) -> float:
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout)


def median(prepare, env: dict[str, str]) -> float:
    times = []
    for _ in range(RUNS):
        prepare()
        times.append(timed(env))
    return statistics.median(times)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "MCBUILD_BUILD": tmp}          # a private cache folder: the real one is untouched
        cache = Path(tmp) / "cache" / "vanilla"
        assert cache != CACHE_DIR
        stamp = VANILLA_DATA / STAMP                            # each load that re-hashes writes it anew
        rehash = median(lambda: (stamp.unlink(missing_ok=True), shutil.rmtree(cache, ignore_errors=True)), env)
        cold = median(lambda: shutil.rmtree(cache, ignore_errors=True), env)
        warm = median(lambda: None, env)
    print(f"load the game's data ({VANILLA_DATA}), median of {RUNS} processes: re-hash {rehash:.3f} s, "
          f"cold {cold:.3f} s, warm {warm:.3f} s (target <= 0.5 s)")
