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

It prints each lane's wall and CPU time per episode (the study's process and its workers), the
CPU the live logs add (``logged / plain``) and the CPU of the watcher's process against the watched
study's: on a machine whose cores the study keeps busy, that is what watching takes from it (wall
times are printed too, but on a shared machine they move with everyone else's load). The load
average is printed before and after.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
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


def own_cpu() -> float:
    """CPU seconds of this process and of its children that ended (the study's workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def proc_cpu(pid: int) -> float:
    """CPU seconds of a running process (``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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


def steady(url: str, pid: int, out: Path, n: int = 30) -> float:
    """The watcher's CPU seconds for one second of the page's polling (one look at the study, two at an
    episode), its map already drawn: ``n`` such seconds asked back to back, on the finished study."""
    from mcbuild.runtime.study.store.results import Store

    store = Store.read_only(out)
    try:
        eid = store.conn.execute("SELECT episode_id FROM episodes LIMIT 1").fetchone()[0]
    finally:
        store.close()
    urllib.request.urlopen(f"{url}api/episode/{eid}?since=1", timeout=60).read()      # its map drawn first
    c0 = proc_cpu(pid)
    for _ in range(n):
        urllib.request.urlopen(url + "api/state", timeout=60).read()
        for _ in range(2):
            urllib.request.urlopen(f"{url}api/episode/{eid}?since=1000", timeout=60).read()
    return (proc_cpu(pid) - c0) / n


def watched_lane(cfg, out: Path, build: Path, workers: int, episodes: int) -> tuple[float, float, float, int, float]:
    """The study in this process's main thread while a client polls a watch server on the same folder:
    (wall s, study CPU s, watcher CPU s, requests, the watcher's CPU s per second of polling)."""
    from mcbuild.runtime.study.run.runner import run_study
    from mcbuild.runtime.study.store.results import Store

    Store.open(out).close()                     # the watcher needs a store to open before the run starts
    server = subprocess.Popen([sys.executable, "-m", "mcbuild", "study", "watch", str(out), "--port", "0",
                               "--build", str(build)], stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        url = server.stderr.readline().split(" at ", 1)[1].split(" ", 1)[0]
        stop, counted = threading.Event(), {}
        client = threading.Thread(target=lambda: counted.update(n=poll(url, stop)), daemon=True)
        w0, c0, t0 = proc_cpu(server.pid), own_cpu(), time.perf_counter()
        client.start()
        s = run_study(cfg, out_dir=out, build_root=build, workers=workers, limit=episodes, live=True)
        wall, study = time.perf_counter() - t0, own_cpu() - c0
        stop.set()
        client.join(timeout=60)
        watcher = proc_cpu(server.pid) - w0
        assert s.finished == episodes, s.lines()
        return wall, study, watcher, counted.get("n", 0), steady(url, server.pid, out)
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
    wall: dict[str, list[float]] = {"plain": [], "logged": [], "watched": []}
    cpu: dict[str, list[float]] = {k: [] for k in wall}
    watcher_cpu, requests, per_second = 0.0, 0, []
    with tempfile.TemporaryDirectory(prefix="mcbuild-watch-bench-") as tmp:
        for r in range(a.rounds):
            for name in (("plain", "logged", "watched") if r % 2 == 0 else ("watched", "logged", "plain")):
                out = Path(tmp) / f"{name}-{r}"
                if name == "watched":
                    w, c, wc, n, ps = watched_lane(cfg, out, build, a.workers, a.episodes)
                    watcher_cpu, requests = watcher_cpu + wc, requests + n
                    per_second.append(ps)
                else:
                    from mcbuild.runtime.study.run.runner import run_study

                    c0, t0 = own_cpu(), time.perf_counter()
                    s = run_study(cfg, out_dir=out, build_root=build, workers=a.workers, limit=a.episodes,
                                  live=name == "logged")
                    w, c = time.perf_counter() - t0, own_cpu() - c0
                    assert s.finished == a.episodes, s.lines()
                wall[name].append(w / a.episodes)
                cpu[name].append(c / a.episodes)
                print(f"round {r + 1} {name:8s} {1000 * wall[name][-1]:8.1f} ms wall, {1000 * cpu[name][-1]:8.1f} ms CPU "
                      "a episode", flush=True)
    print(f"{'lane':10s}{'wall ms/ep best':>17s}{'median':>9s}{'CPU ms/ep best':>16s}{'median':>9s}")
    for k in wall:
        print(f"{k:10s}{1000 * min(wall[k]):17.1f}{1000 * statistics.median(wall[k]):9.1f}"
              f"{1000 * min(cpu[k]):16.1f}{1000 * statistics.median(cpu[k]):9.1f}")
    study_cpu = sum(cpu["watched"]) * a.episodes
    print(f"wall, watched / plain: best {min(wall['watched']) / min(wall['plain']):.3f}, median "
          f"{statistics.median(wall['watched']) / statistics.median(wall['plain']):.3f} (noisy on a shared machine)")
    print(f"CPU, logged / plain (the live logs): median {statistics.median(cpu['logged']) / statistics.median(cpu['plain']):.3f}")
    print(f"the watcher's CPU / the watched study's CPU: {watcher_cpu / study_cpu:.3f} ({watcher_cpu:.1f} s of "
          f"{study_cpu:.1f} s, its one-time world map included; {requests} page requests answered)")
    ps = statistics.median(per_second)
    print(f"the watcher in steady state: {1000 * ps:.1f} ms CPU per second of the page's polling = "
          f"{ps / os.cpu_count():.4f} of this machine's {os.cpu_count()} cores (bound 0.05)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
