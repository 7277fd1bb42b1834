"""Benchmark: what structured outputs cost the client (issue 25): the bytes the action schema adds
to each request, with and without the registry's id enums, the one-off cost of building it, and the
client CPU per chat call for ``structured: off``, ``json_schema`` and ``json_schema`` with id enums.

    .venv/bin/python bench/llm_schema_cost.py [--calls 400] [--prompt-chars 14000]

The endpoint (``ScriptedEndpoint``, in its own process) answers every request at once; the CPU is
this process's (``time.process_time``) over ``--calls`` sequential calls after a warm-up, with a
system + user prompt of ``--prompt-chars`` characters (about 4k tokens: a ReAct request).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcbuild.llm import schemas  # noqa: E402
from mcbuild.llm.client import ChatClient  # noqa: E402
from mcbuild.llm.settings import ModelSettings  # noqa: E402
from mcbuild.runtime.agents.llm.reply_schemas import action  # noqa: E402

ENDPOINT = """
import time
from mcbuild.llm.testing import ScriptedEndpoint
ep = ScriptedEndpoint(lambda m: (ep.requests.clear(), ep.raw.clear(), '{"skill": "wait", "args": {}}')[-1])
with ep:
    print(ep.base_url, flush=True)
    while True:
        time.sleep(3600)
"""


def schema_sizes() -> list[tuple[str, int, float]]:
    rows = []
    for ids in (True, False):                 # enums first: their time includes loading the registry
        start = time.process_time()
        member = schemas.prepared(action(("thought",)), "json_schema", ids).member
        rows.append((f"action schema, id_enum {'on' if ids else 'off'}", len(member), time.process_time() - start))
    return rows


def cpu_per_call(base_url: str, structured: str, ids: bool, calls: int, prompt_chars: int) -> tuple[float, int]:
    client = ChatClient(ModelSettings(model="scripted", base_url=base_url, api_key_env="MCBUILD_BENCH_NO_KEY", prices={},
                                      reasoning=True, structured=structured, id_enum=ids))
    half = prompt_chars // 2
    messages = [{"role": "system", "content": "s" * half}, {"role": "user", "content": "u" * half}]
    schema = action(("thought",))
    for _ in range(20):
        client.chat(messages, schema=schema)
    start = time.process_time()
    for _ in range(calls):
        client.chat(messages, schema=schema)
    member = schemas.prepared(schema, structured, ids).member if structured != "off" else b""
    return (time.process_time() - start) / calls, len(member)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--prompt-chars", type=int, default=14000)
    args = ap.parse_args()
    for name, size, secs in schema_sizes():
        print(f"{name:32s} {size:8d} bytes per request   built once in {secs * 1000:.1f} ms CPU")
    server = subprocess.Popen([sys.executable, "-c", ENDPOINT], stdout=subprocess.PIPE, text=True,
                              env={"PYTHONPATH": str(Path(__file__).resolve().parent.parent), "PATH": ""})
    try:
        base_url = server.stdout.readline().strip()
        print(f"\nclient CPU per call ({args.calls} calls, {args.prompt_chars}-character prompt):")
        for structured, ids in (("off", True), ("json_schema", False), ("json_schema", True)):
            cpu, added = cpu_per_call(base_url, structured, ids, args.calls, args.prompt_chars)
            label = structured + (" + id enums" if structured != "off" and ids else "")
            print(f"  {label:24s} {cpu * 1000:6.3f} ms   (+{added} request bytes)")
    finally:
        server.terminate()
        server.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
