"""Benchmark: build all 70 saves (10 Vanilla worlds x 7 conditions) into a temporary folder and
report the wall time and the size on disk (target: <= 60 s on 2 cores).

Uses the compiled rule packs in build/mXX/datapack.zip when all six exist, otherwise small
stand-in packs (the copies cost the same either way). Prints one JSON line.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from mcbuild.compiler.core.paths import BUILD
from mcbuild.compiler.rules.pack import build_zip, pack_mcmeta
from mcbuild.compiler.spec.worlds import WORLDS_FILE, load_worlds
from mcbuild.pipeline.worlds import build_worlds

TARGET_SECONDS = 60.0


def main() -> int:
    mirrors = load_worlds(WORLDS_FILE).mirrors
    with tempfile.TemporaryDirectory(prefix="mcbuild-bench-") as tmp:
        out = Path(tmp) / "build"
        packs = BUILD
        stand_ins = not all((BUILD / m / "datapack.zip").is_file() for m in mirrors)
        if stand_ins:
            packs = Path(tmp) / "packs"
            for m in mirrors:
                (packs / m).mkdir(parents=True)
                (packs / m / "datapack.zip").write_bytes(build_zip({"pack.mcmeta": pack_mcmeta(f"stand-in {m}")}))
        start = time.perf_counter()
        manifest = build_worlds(WORLDS_FILE, out, packs_dir=packs)
        seconds = time.perf_counter() - start
        files = [p for p in (out / "worlds").rglob("*") if p.is_file()]
        result = {
            "bench": "build_worlds",
            "worlds": len(manifest["worlds"]),
            "saves": len([p for p in files if p.name == "level.dat"]),
            "seconds": round(seconds, 1),
            "megabytes": round(sum(p.stat().st_size for p in files) / 1e6, 1),
            "cpus": os.cpu_count(),
            "stand_in_rule_packs": stand_ins,
            "target_seconds": TARGET_SECONDS,
        }
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
