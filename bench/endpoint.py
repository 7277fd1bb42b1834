"""The LLM benches' scripted endpoint: this checkout's ``ThroughputEndpoint`` in a process of its own
per latency (``llm_throughput.py``, ``llm_schema_cost.py``)."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterable, Iterator

import harness

ENDPOINT = """
import sys, time, zlib
sys.path.insert(0, sys.argv[2])
import harness
ThroughputEndpoint = harness.module("mcbuild.llm.testing").ThroughputEndpoint
ACTIONS = ['"skill": "mine", "args": {"block": "log", "count": 1}}', '"skill": "explore", "args": {"target": "log"}}',
           '"skill": "mine", "args": {"block": "stone", "count": 1}}']
def reply(body):
    h = zlib.crc32(body)
    return '{"thought": "t%d", ' % (h % 97) + ACTIONS[h % len(ACTIONS)]
with ThroughputEndpoint(reply, latency=float(sys.argv[1])) as ep:
    print(ep.base_url, flush=True)
    while True:
        time.sleep(3600)
"""


@contextlib.contextmanager
def endpoints(latencies: Iterable[str]) -> Iterator[dict[str, tuple[str, int]]]:
    """This checkout's scripted endpoint, one process per latency (seconds, as given), answering a
    valid ``react`` action chosen from a checksum of the request's bytes, ``latency`` seconds after
    the request arrived, without parsing it; yields latency -> (base URL, process id)."""
    env = {k: v for k, v in os.environ.items() if k not in (harness.CHILD, "PYTHONPATH")}
    servers: dict[str, subprocess.Popen[str]] = {}
    try:
        for latency in latencies:
            servers[latency] = subprocess.Popen([sys.executable, "-c", ENDPOINT, latency, str(Path(__file__).parent)],
                                                stdout=subprocess.PIPE, text=True, cwd=str(harness.HERE), env=env)
        urls = {latency: (p.stdout.readline().strip(), p.pid) for latency, p in servers.items() if p.stdout}
        if not all(url for url, _ in urls.values()):
            raise harness.Refused("error: the scripted endpoint did not start")
        yield urls
    finally:
        for server in servers.values():
            server.kill()
            server.wait()
