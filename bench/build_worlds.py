"""Benchmark: build all 70 saves (10 Vanilla worlds x 7 conditions) into a temporary folder and
report the wall time and the size on disk (target: <= 60 s on 2 cores).

    .venv/bin/python bench/build_worlds.py [--workers N] [--baseline REF]...

Uses the compiled rule packs in this checkout's build/mXX/datapack.zip when all six exist, otherwise
small stand-in packs (the copies cost the same either way); every tree builds with the same packs and
the same worker count (``--workers``, or what fits the machine; printed). Each ``--baseline`` (a folder
or a commit, in its own environment; bench/harness.py) builds the same saves after this tree, with
the load average and the same-run ratio.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import harness

TARGET_SECONDS = 60.0


def stand_in_packs(folder: Path, mirrors: list[str]) -> Path:
    """Minimal rule packs (a pack.mcmeta each) in ``folder``."""
    pack = harness.module("mcbuild.compiler.rules.pack")
    for m in mirrors:
        (folder / m).mkdir(parents=True)
        (folder / m / "datapack.zip").write_bytes(pack.build_zip({"pack.mcmeta": pack.pack_mcmeta(f"stand-in {m}")}))
    return folder


def measure(packs: Path | None, jobs: int) -> dict:
    """Wall time and size of the 70 saves built by the tree this process runs."""
    spec = harness.module("mcbuild.compiler.spec.worlds")
    build_worlds = harness.module("mcbuild.pipeline.worlds").build_worlds
    with tempfile.TemporaryDirectory(prefix="mcbuild-bench-") as tmp:
        out = Path(tmp) / "build"
        packs = packs or stand_in_packs(Path(tmp) / "packs", spec.load_worlds(spec.WORLDS_FILE).mirrors)
        start = time.perf_counter()
        manifest = build_worlds(spec.WORLDS_FILE, out, packs_dir=packs, jobs=jobs)
        seconds = time.perf_counter() - start
        files = [p for p in (out / "worlds").rglob("*") if p.is_file()]
        return {"worlds": len(manifest["worlds"]), "saves": len([p for p in files if p.name == "level.dat"]),
                "seconds": seconds, "megabytes": sum(p.stat().st_size for p in files) / 1e6}


def parent(args: argparse.Namespace) -> int:
    from mcbuild.compiler.core.paths import BUILD
    from mcbuild.compiler.spec.worlds import WORLDS_FILE, load_worlds

    print(harness.machine(), flush=True)
    mirrors = load_worlds(WORLDS_FILE).mirrors
    own = all((BUILD / m / "datapack.zip").is_file() for m in mirrors)
    jobs = harness.workers(args.workers, len(load_worlds(WORLDS_FILE).worlds))
    print(f"rule packs: {'the compiled ones in ' + str(BUILD) if own else 'stand-ins (compile the suites for the real ones)'}")
    results = harness.row_of_each(args.baseline, __file__, [f"--workers={jobs}"] + [f"--packs={BUILD}"] * own)
    print(f"target <= {TARGET_SECONDS:.0f} s")
    ratios = harness.table(results, [("saves", "saves", "d"), ("seconds", "seconds", ".1f"), ("MB", "megabytes", ".1f")],
                           {"seconds": False})
    here = results["this tree"]
    harness.summary_line("build_worlds", f"{here['saves']} saves in {here['seconds']:.1f} s, {here['megabytes']:.0f} MB, "
                         f"{jobs} workers (target <= {TARGET_SECONDS:.0f} s)", "; ".join(ratios))
    return 0


def main() -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--workers", type=int, default=None, help="worker processes (default: what fits the machine)")
    ap.add_argument("--packs", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    return harness.dispatch(lambda: measure(args.packs, args.workers), lambda: parent(args))


if __name__ == "__main__":
    sys.exit(main())
