"""Benchmark: bytes per episode of `mcbuild study export` in each format, against the expanded JSONL.

    .venv/bin/python bench/export_size.py [--study DIR ...] [--no-llm] [--build build]

For each study it exports ``full`` (the expanded JSONL every export wrote before 0.3: each episode's
record, events and whole trajectory, prompts and replies included), then the three tables in CSV,
JSONL and Parquet, and prints the bytes per episode of each and of the store itself. Without
``--study`` it measures ``build/studies/quick`` (when it has been run) and, unless ``--no-llm``, an
LLM study made here: ``react`` in plains-1 and plains-2 under Vanilla, M01 and M04 on Iron Armor and
Diamond, two repetitions (24 episodes of 50 actions), against the scripted OpenAI-compatible endpoint
of ``mcbuild.llm.testing`` (its replies are valid actions chosen from the request).
"""
from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import harness
from mcbuild.analysis.export import export
from mcbuild.compiler.core.paths import BUILD
from mcbuild.llm.testing import ScriptedEndpoint
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.run.runner import run_study

FORMATS = ("full", "csv", "jsonl", "parquet")
ACTIONS = [{"skill": "mine", "args": {"block": "log", "count": 1}}, {"skill": "explore", "args": {"target": "log"}},
           {"skill": "mine", "args": {"block": "stone", "count": 1}},
           {"skill": "craft_grid", "args": {"station": "inventory", "grid": [["minecraft:oak_log", None], [None, None]]}}]


def reply(messages: list[dict[str, str]]) -> str:
    h = int(hashlib.sha256(json.dumps(messages).encode()).hexdigest(), 16)
    return json.dumps({"thought": f"t{h % 97}", **ACTIONS[h % len(ACTIONS)]})


def llm_study(out: Path, build: Path) -> Path:
    with ScriptedEndpoint(reply) as ep:
        cfg = StudyConfig.model_validate({
            "name": "llm-export", "worlds": ["plains-1", "plains-2"], "conditions": ["vanilla", "m01", "m04"],
            "tasks": ["iron_armor", "diamond"], "configurations": ["react"], "models": [ep.model], "repetitions": 2,
            "budget": 50, "base_seed": 5, "endpoint": {"base_url": ep.base_url, "api_key_env": "MCBUILD_BENCH_NO_KEY"}})
        run_study(cfg, out_dir=out, build_root=build, concurrency=8)
    return out


def measure(study: Path, scratch: Path) -> str:
    sizes = {}
    for fmt in FORMATS:
        start = time.perf_counter()
        done = export(study, fmt, scratch / fmt / ("export.jsonl" if fmt == "full" else ""))
        sizes[fmt] = (done.bytes / done.episodes, time.perf_counter() - start)
    n = done.episodes
    store = (study / "results.sqlite").stat().st_size / n
    print(f"{study} ({n} episodes; the store holds {store:,.0f} bytes an episode)")
    print(f"  {'format':<8}{'bytes/episode':>15}{'of full':>9}{'seconds':>9}")
    for fmt, (per, seconds) in sizes.items():
        print(f"  {fmt:<8}{per:>15,.0f}{per / sizes['full'][0]:>9.1%}{seconds:>9.1f}")
    return f"{study.name}: " + ", ".join(f"{fmt} {per:,.0f}" for fmt, (per, _) in sizes.items()) + " B/episode"


def main() -> int:
    ap = harness.parser(__doc__, baseline=False)       # the exports are new in this checkout
    ap.add_argument("--study", type=Path, action="append", default=[])
    ap.add_argument("--no-llm", action="store_true")
    ap.add_argument("--build", type=Path, default=BUILD)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcbuild-export-size-") as tmp:
        studies = list(args.study)
        if not studies:
            quick = args.build / "studies" / "quick"
            studies += [quick] if (quick / "results.sqlite").is_file() else []
            if not args.no_llm:
                if not (args.build / "worlds" / "plains-2" / "m04" / "level.dat").is_file():
                    print("worlds not built: the LLM study is skipped (mcbuild compile --all && mcbuild build worlds)")
                else:
                    studies.append(llm_study(Path(tmp) / "llm", args.build))
        lines = [measure(study, Path(tmp) / f"out-{i}") for i, study in enumerate(studies)]
    harness.summary_line("export_size", "; ".join(lines) or "no study to export", ok=bool(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
