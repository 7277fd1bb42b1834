"""Benchmark: what watching a study costs the study (issue 38: at most 5%).

    .venv/bin/python bench/watch_overhead.py [--episodes 84] [--rounds 2] [--workers 2] [--build build]

The same scripted study (the first ``--episodes`` of ``studies/quick.yaml``, real simulator episodes)
runs in two lanes, alternated ``--rounds`` times in one run so that a change in the machine's load
falls on both:

* ``plain``: ``run_study(..., live=False)``: no live logs, nobody watching;
* ``logged``: ``run_study(..., live=True)``: the live logs ``study run`` writes, nobody watching;
* ``watched``: ``run_study(..., live=True)`` (every episode writes its live log, as ``study run`` does)
  while ``mcbuild study watch``'s server, in another process, is polled as its page polls it: the
  study every second and an episode in flight twice a second, followed until it is stored.

It prints each lane's best and median wall time per episode and their ratios to ``plain``;
the load average is printed before and after.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def poll(url: str, stop: threading.Event) -> int:
    """Ask what the page asks until ``stop``: the study every second; one episode in flight followed
    twice a second until it is stored, then (as a reader would) another. Returns the requests made."""
    n, next_state, open_id, since, inflight = 0, 0.0, None, 0, []
    while not stop.is_set():
        now = time.monotonic()
        try:
            if now >= next_state:
                with urllib.request.urlopen(url + "api/state", timeout=30) as r:
                    inflight = [e["id"] for e in json.load(r).get("inflight", [])]
                n += 1
                next_state = now + 1.0
            if open_id is None and inflight:
                open_id, since = inflight[0], 0
            if open_id:
                with urllib.request.urlopen(f"{url}api/episode/{open_id}?since={since}", timeout=30) as r:
                    d = json.load(r)
                n += 1
                since = d["n"]
                if d["stored"]:
                    open_id = None
        except OSError:
            open_id = None
        stop.wait(0.5)
    return n


def watched_lane(cfg, out: Path, build: Path, workers: int, episodes: int) -> tuple[float, int]:
    """The study in this process's main thread while a client polls a watch server on the same folder."""
    from mcbuild.runtime.study.run.runner import run_study
    from mcbuild.runtime.study.store.results import Store

    Store.open(out).close()                     # the watcher needs a store to open before the run starts
    server = subprocess.Popen([sys.executable, "-m", "mcbuild", "study", "watch", str(out), "--port", "0",
                               "--build", str(build)], stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        url = server.stderr.readline().split(" at ", 1)[1].split(" ", 1)[0]
        stop, counted = threading.Event(), {}
        client = threading.Thread(target=lambda: counted.update(n=poll(url, stop)), daemon=True)
        client.start()
        t0 = time.perf_counter()
        s = run_study(cfg, out_dir=out, build_root=build, workers=workers, limit=episodes, live=True)
        wall = time.perf_counter() - t0
        stop.set()
        client.join(timeout=60)
        assert s.finished == episodes, s.lines()
        return wall / episodes, counted.get("n", 0)
    finally:
        server.terminate()
        server.wait(timeout=60)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=84)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--build", default=str(ROOT / "build"))
    a = ap.parse_args()
    from mcbuild.runtime.study.design.config import load_config

    cfg, build = load_config("studies/quick.yaml"), Path(a.build)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    times: dict[str, list[float]] = {"plain": [], "logged": [], "watched": []}
    requests = 0
    with tempfile.TemporaryDirectory(prefix="mcbuild-watch-bench-") as tmp:
        for r in range(a.rounds):
            for name in (("plain", "logged", "watched") if r % 2 == 0 else ("watched", "logged", "plain")):
                out = Path(tmp) / f"{name}-{r}"
                if name in ("plain", "logged"):
                    from mcbuild.runtime.study.run.runner import run_study

                    t0 = time.perf_counter()
                    s = run_study(cfg, out_dir=out, build_root=build, workers=a.workers, limit=a.episodes,
                                  live=name == "logged")
                    assert s.finished == a.episodes, s.lines()
                    times[name].append((time.perf_counter() - t0) / a.episodes)
                else:
                    per, n = watched_lane(cfg, out, build, a.workers, a.episodes)
                    times[name].append(per)
                    requests += n
                print(f"round {r + 1} {name:8s} {1000 * times[name][-1]:8.1f} ms/episode", flush=True)
    best = {k: min(v) for k, v in times.items()}
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{'lane':10s}{'best ms/ep':>12s}{'median ms/ep':>14s}")
    for k in times:
        print(f"{k:10s}{1000 * best[k]:12.1f}{1000 * med[k]:14.1f}")
    for k in ("logged", "watched"):
        print(f"{k} / plain: best {best[k] / best['plain']:.3f}, median {med[k] / med['plain']:.3f}"
              + (f" ({requests} page requests answered; bound 1.05)" if k == "watched" else ""))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
