"""Benchmark: what structured outputs cost the client (issue 25): the bytes the action schema adds
to each request, with and without the registry's id enums, the one-off cost of building it, and the
client CPU per chat call for ``structured: off``, ``json_schema`` and ``json_schema`` with id enums.

    .venv/bin/python bench/llm_schema_cost.py [--calls 400] [--prompt-chars 14000] [--baseline REF]...

The endpoint (this checkout's ``ThroughputEndpoint``, in its own process) answers every request at
once; the CPU is the client process's (``time.process_time``) over ``--calls`` sequential calls after a
warm-up, with a system + user prompt of ``--prompt-chars`` characters (about 4k tokens: a ReAct
request). Each ``--baseline REF`` (a folder or a commit, in its own environment; bench/harness.py)
measures its own client against the same endpoint, with the load average and the same-run ratios.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import endpoint
import harness

MODES = (("off", True), ("json_schema", False), ("json_schema", True))


def label(structured: str, ids: bool) -> str:
    return structured + (" + id enums" if structured != "off" and ids else "")


def client(base_url: str, structured: str, ids: bool) -> Any:
    """This tree's chat client for the scripted endpoint (``ChatClient(ModelSettings)``, or the
    keyword arguments of trees before ``ModelSettings``)."""
    ChatClient = harness.module("mcbuild.llm.client").ChatClient
    try:
        settings = harness.module("mcbuild.llm.settings").ModelSettings
    except ModuleNotFoundError:
        return ChatClient("scripted", base_url, "MCBUILD_BENCH_NO_KEY", prices={}, temperature=0.7, max_tokens=2048,
                          structured=structured, id_enum=ids)
    return ChatClient(settings(model="scripted", base_url=base_url, api_key_env="MCBUILD_BENCH_NO_KEY", prices={},
                               reasoning=True, structured=structured, id_enum=ids))


def measure(base_url: str, calls: int, prompt_chars: int) -> dict[str, Any]:
    """Schema sizes and build times, and the client's CPU per call in every mode, of this tree."""
    prepared = harness.module("mcbuild.llm.schemas").prepared
    action = harness.module("mcbuild.runtime.agents.llm.reply_schemas").action
    out: dict[str, Any] = {"schemas": []}
    for ids in (True, False):                 # enums first: their time includes loading the registry
        start = time.process_time()
        member = prepared(action(("thought",)), "json_schema", ids).member
        out["schemas"].append([f"action schema, id_enum {'on' if ids else 'off'}", len(member),
                               time.process_time() - start])
    half = prompt_chars // 2
    messages = [{"role": "system", "content": "s" * half}, {"role": "user", "content": "u" * half}]
    schema = action(("thought",))
    for structured, ids in MODES:
        chat = client(base_url, structured, ids).chat
        for _ in range(20):
            chat(messages, schema=schema)
        start = time.process_time()
        for _ in range(calls):
            chat(messages, schema=schema)
        out[label(structured, ids)] = (time.process_time() - start) / calls * 1000
        out[f"{label(structured, ids)} bytes"] = len(prepared(schema, structured, ids).member) if structured != "off" else 0
    return out


def parent(args: argparse.Namespace) -> int:
    print(harness.machine(), flush=True)
    with endpoint.endpoints(["0"]) as endpoints:
        results = harness.row_of_each(args.baseline, __file__, [f"--endpoints={json.dumps(endpoints)}"])
    for tree, r in results.items():
        print(f"{tree}:")
        for name, size, secs in r["schemas"]:
            print(f"  {name:32s} {size:8d} bytes per request   built once in {secs * 1000:.1f} ms CPU")
        print(f"  client CPU per call ({args.calls} calls, {args.prompt_chars}-character prompt; load {harness.load_cell(r)}):")
        for structured, ids in MODES:
            name = label(structured, ids)
            print(f"    {name:24s} {r[name]:6.3f} ms   (+{r[name + ' bytes']} request bytes)")
    metrics = {label(s, i): False for s, i in MODES}           # ms per call: lower is better
    ratios = harness.ratio_lines(results, metrics)
    print("\n".join(ratios))
    here = results["this tree"]
    harness.summary_line("llm_schema_cost", ", ".join(f"{name} {here[name]:.3f} ms" for name in metrics)
                         + " client CPU a call", "; ".join(ratios))
    return 0


def main() -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--prompt-chars", type=int, default=14000)
    ap.add_argument("--endpoints", default="{}", help=argparse.SUPPRESS)
    args = ap.parse_args()
    return harness.dispatch(lambda: measure(json.loads(args.endpoints)["0"][0], args.calls, args.prompt_chars),
                            lambda: parent(args))


if __name__ == "__main__":
    sys.exit(main())
