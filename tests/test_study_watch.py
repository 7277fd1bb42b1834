"""``mcbuild study watch``: what the page reads from a study folder, served read-only."""
from __future__ import annotations

import io
import json
import threading
import urllib.error
import urllib.request

import pytest

from mcbuild.runtime.study.run.live import LIVE_DIR
from mcbuild.runtime.study.store.lock import StoreLock
from mcbuild.runtime.study.watch import WatchServer
from mcbuild.runtime.study.watch.state import Watcher
from test_study_report import make_study
from waiting import DEADLINE_S


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("watch")
    _, out = make_study(tmp, configurations=["react"], disclosure={}, models=["ma"], repetitions=1)
    return out


def plant(study, eid: str, steps: int, end: bool = False) -> None:
    """A live log as an episode in flight writes it (the last line still being written)."""
    live = study / LIVE_DIR
    live.mkdir(exist_ok=True)
    lines = [{"type": "episode", "id": eid, "world": "plains-1", "condition": "m01", "task": "diamond",
              "configuration": "react", "model": "ma", "budget": 50, "repetition": 0, "pos": [0, 69, 0]}]
    lines += [{"i": i, "skill": "mine", "args": {"block": "minecraft:stone", "count": 1}, "ok": i % 2 == 1,
               "reason": None if i % 2 else "needs_tool", "pos": [i, 69, 0], "score": 10} for i in range(1, steps + 1)]
    if end:
        lines.append({"type": "end", "end": "budget_exhausted", "score": 10, "success": False})
    (live / f"{eid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"i": 99, "ski')


def snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_episodes_in_flight_are_the_live_logs_of_a_running_study(study):
    plant(study, "feedbeef00000001", 7)
    w = Watcher(study, study / "no-build")
    idle = w.state()
    assert not idle["running"] and idle["inflight"] == []            # no writer: nothing is in flight
    assert idle["stored"] == idle["planned"] == sum(c["planned"] for c in idle["cells"])
    with StoreLock.acquire(study / "results.sqlite"):
        s = w.state()
    assert s["running"] and [e["id"] for e in s["inflight"]] == ["feedbeef00000001"]
    e = s["inflight"][0]
    assert e["actions"] == 7 and [a["i"] for a in e["last"]] == [3, 4, 5, 6, 7]
    assert e["last"][1]["reason"] == "needs_tool" and e["last"][0]["text"] == "mine stone"
    ep = w.episode("feedbeef00000001", since=5)
    assert ep["n"] == 7 and [x["i"] for x in ep["steps"]] == [6, 7] and ep["steps"][0]["pos"] == [6, 69, 0]
    assert ep["head"]["pos"] == [0, 69, 0] and ep["end"] is None and not ep["stored"]


def test_a_stored_episode_opens_from_the_store(study):
    from mcbuild.runtime.study.store.results import Store

    w = Watcher(study, study / "no-build")

    store = Store.read_only(study)
    try:
        eid = store.conn.execute("SELECT episode_id FROM episodes LIMIT 1").fetchone()[0]
    finally:
        store.close()
    ep = w.episode(eid)
    assert ep["stored"] and ep["head"]["id"] == eid and ep["end"]["actions"] > 0     # the fakes store no trajectory
    assert w.episode("0000000000000000") is None


def test_the_server_is_read_only_and_serves_only_its_routes(study):
    plant(study, "feedbeef00000002", 3, end=True)
    before = snapshot(study)
    server = WatchServer(study, study / "no-build", port=0)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()

    def get(path: str) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(server.url + path.lstrip("/"), timeout=DEADLINE_S) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as exc:
            return exc.code, b""

    try:
        assert server.url.startswith("http://127.0.0.1:")
        status, page = get("/")
        assert status == 200 and b"study watch" not in page and b'src="map.js"' in page
        assert get("/map.js")[0] == 200
        status, body = get("/api/state")
        assert status == 200 and json.loads(body)["stored"] > 0
        assert get("/api/episode/feedbeef00000002?since=1")[0] == 200
        for bad in ("/report/../results.sqlite", "/api/episode/..%2Fresults", "/maps/../../x.png", "/results.sqlite"):
            assert get(bad)[0] == 404, bad
    finally:
        server.shutdown()
        server.server_close()
    assert snapshot(study) == before                          # nothing written, no lock taken
    assert not (study / "results.sqlite.lock").exists()


def test_each_live_line_is_in_the_file_as_soon_as_it_is_written(tmp_path):
    """Nothing of the live log waits in a buffer: a reader sees every action's line at once, and a
    log that fails stops without stopping the episode."""
    from types import SimpleNamespace

    from mcbuild.runtime.study.run.live import LiveLog
    from mcbuild.runtime.study.watch.state import read_log

    entry = SimpleNamespace(episode_id="e1", world="plains-1", condition="m01", task="iron_armor",
                            configuration="react", model="m", budget=3, repetition=0)
    log = LiveLog(tmp_path, entry)
    log.start((1, 64, 2))
    for i in range(1, 4):
        log.step(i, {"skill": "mine", "args": {"block": "log"}, "ok": i != 2, "reason": "no_target" if i == 2 else None},
                 (i, 64, 2), 10 * i)
        lines = read_log(tmp_path / "e1.jsonl")
        assert len(lines) == i + 1 and lines[-1] == {"i": i, "skill": "mine", "args": {"block": "log"}, "ok": i != 2,
                                                     "reason": "no_target" if i == 2 else None, "pos": [i, 64, 2],
                                                     "score": 10 * i}
    log.fh.close()                          # as a full disk would: the next line turns the log off
    log.end("budget", 30, False)
    assert log.fh is None and len(read_log(tmp_path / "e1.jsonl")) == 4

    class Stuck(io.RawIOBase):              # a file that takes no more bytes (write returns 0)
        def writable(self) -> bool:
            return True

        def write(self, data) -> int:
            return 0

    stuck = LiveLog(tmp_path, SimpleNamespace(**{**vars(entry), "episode_id": "e2"}))
    stuck.fh = Stuck()
    stuck.start((0, 64, 0))                 # stops the log (it looped for ever on a write of 0 bytes)
    assert stuck.fh is None


def test_an_episode_writes_its_live_log_as_it_plays(world_build, tmp_path):
    """The executor's log: the head, one line per action with the body's position, the end; the runner
    removes the logs once the episodes are stored."""
    from mcbuild.runtime.study.design.config import StudyConfig
    from mcbuild.runtime.study.design.plan import build_plan
    from mcbuild.runtime.study.run.executor import execute
    from mcbuild.runtime.study.run.runner import run_study
    from mcbuild.runtime.study.watch.state import read_log

    cfg = StudyConfig.model_validate(dict(name="lv", worlds=["plains-1"], conditions=["m01"], tasks=["iron_armor"],
                                          configurations=["adaptive-planner"]))
    entry = build_plan(cfg)[0]
    outcome = execute(entry, build_root=world_build, live=tmp_path)
    lines = read_log(tmp_path / f"{entry.episode_id}.jsonl")
    assert lines[0]["type"] == "episode" and lines[0]["id"] == entry.episode_id and len(lines[0]["pos"]) == 3
    steps = [x for x in lines if "i" in x]
    assert [s["i"] for s in steps] == list(range(1, outcome.actions + 1))
    assert len({tuple(s["pos"]) for s in steps}) > 1                # the body moved
    assert steps[-1]["score"] == outcome.score and lines[-1] == {"type": "end", "end": outcome.end_reason,
                                                                 "score": outcome.score, "success": outcome.success}
    assert "evaluator" not in json.dumps(lines)                      # no hidden rule reaches the log
    s = run_study(cfg, out_dir=tmp_path / "s", build_root=world_build)
    assert s.complete and not (tmp_path / "s" / LIVE_DIR).exists()
