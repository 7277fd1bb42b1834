"""Record and replay: a study re-run offline from its stored replies gives identical records;
a request the store does not hold stops the run with one line."""
from __future__ import annotations

import json
import sqlite3

import pytest
import yaml
from click.testing import CliRunner

from mcbuild.llm.testing import ScriptedEndpoint
from mcbuild.runtime.errors import BackendUnavailable
from mcbuild.runtime.study.store.replay import exchanges, request_key
from mcbuild.runtime.study.run.runner import run_study
from mcbuild.runtime.study.store.results import Store, StoreError
from mcbuild.runtime.study.store.trajectories import unpack
from test_study_inflight import llm_config, records, responder


@pytest.fixture(scope="module")
def recorded(world_build, tmp_path_factory):
    root = tmp_path_factory.mktemp("replay")
    with ScriptedEndpoint(responder) as ep:
        cfg = llm_config(ep, configurations=["react", "reflexion"], repetitions=1)
        assert run_study(cfg, out_dir=root / "live", build_root=world_build, concurrency=4).complete
        n_requests = len(ep.requests) - 1              # the preflight's request is no episode's
    return cfg, root, n_requests


def test_replay_gives_identical_records_without_an_endpoint(recorded, world_build):
    cfg, root, n_requests = recorded                  # the endpoint is shut down by now
    s = run_study(cfg, out_dir=root / "again", build_root=world_build, replay=root / "live", concurrency=2)
    assert s.complete and not s.errors and s.infrastructure_faults == 0
    live, again = records(root / "live"), records(root / "again")
    assert live == again and len(live) == 4
    with Store.open(root / "live") as st:
        stored = [c for eid in live for c in exchanges(st.trajectory(eid).splitlines())]
    assert len(stored) == n_requests > len(live)
    assert all(len(request_key(c["model"], c["messages"])) == 64 for c in stored)


def test_a_request_not_in_the_store_is_one_clear_error(recorded, world_build, tmp_path):
    cfg, root, _ = recorded
    src = tmp_path / "tampered"
    src.mkdir()
    with sqlite3.connect(root / "live" / "results.sqlite") as c, sqlite3.connect(src / "results.sqlite") as d:
        c.backup(d)
        eid, text = d.execute("SELECT episode_id, trajectory FROM episodes ORDER BY episode_id LIMIT 1").fetchone()
        steps = [json.loads(line) for line in unpack(text).splitlines()]    # written back as plain JSONL
        steps[0]["llm_calls"][0]["messages"][-1]["content"] += " (edited)"
        d.execute("UPDATE episodes SET trajectory = ? WHERE episode_id = ?",
                  ("".join(json.dumps(s) + "\n" for s in steps), eid))
    with pytest.raises(BackendUnavailable, match=f"replay: request [0-9a-f]{{16}} of episode {eid}"):
        run_study(cfg, out_dir=tmp_path / "out", build_root=world_build, replay=src)
    with pytest.raises(StoreError, match="is the store this run writes"):
        run_study(cfg, out_dir=src, build_root=world_build, replay=src)


def test_replay_cli_missing_store_is_one_line(recorded, world_build, tmp_path):
    from mcbuild.cli import main

    cfg, root, _ = recorded
    path = tmp_path / "llm.yaml"
    path.write_text(yaml.safe_dump(cfg.to_json()))
    args = ["study", "run", str(path), "--build", str(world_build), "--quiet"]
    res = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "o"), "--replay", str(tmp_path / "nothing")])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert res.output.strip().splitlines() == [f"error: replay store {tmp_path / 'nothing'} not found "
                                               "(pass a study folder or its results.sqlite)"]
    res = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "o2"), "--replay", str(root / "live")])
    assert res.exit_code == 0, res.output
    assert records(tmp_path / "o2") == records(root / "live")


def test_lean_trajectories_are_exact_and_small(recorded):
    from mcbuild.runtime.study.store.trajectories import MAGIC, pack

    _, root, _ = recorded
    with Store.open(root / "live") as st:
        rows = st.conn.execute("SELECT episode_id, trajectory FROM episodes").fetchall()
        for eid, raw in rows:
            text = st.trajectory(eid)
            steps = [json.loads(line) for line in text.splitlines()]
            assert isinstance(raw, bytes) and raw.startswith(MAGIC) and unpack(raw) == text
            assert unpack(pack(steps)) == text and unpack(text) == text      # plain rows still read
            assert len(raw) * 5 < len(text.encode())                          # far smaller than the JSONL


def test_a_content_sent_again_is_split_once_and_read_back_exactly():
    """The system prompt repeats in every call: its lines are referenced, not stored again, and each
    message (a repeated one and a new one) reads back as it was sent."""
    import zlib

    from mcbuild.compiler.core.canonical import compact
    from mcbuild.runtime.study.store.trajectories import MAGIC, pack

    system = "rules\nskills\nrules"
    steps = [{"llm_calls": [{"messages": [{"role": "system", "content": system},
                                          {"role": "user", "content": f"obs {i}\nrules"}]}]} for i in range(3)]
    doc = json.loads(zlib.decompress(pack(steps)[len(MAGIC):]))
    assert doc["lines"] == ["rules", "skills", "obs 0", "obs 1", "obs 2"]
    assert [c["messages"][0]["content"] for s in doc["steps"] for c in s["llm_calls"]] == [[0, 1, 0]] * 3
    assert unpack(pack(steps)) == "".join(compact(s) + "\n" for s in steps)


def test_export_writes_every_episode_expanded(recorded, tmp_path):
    from mcbuild.cli import main

    _, root, _ = recorded
    out = tmp_path / "all.jsonl"
    res = CliRunner().invoke(main, ["study", "export", str(root / "live"), "--format", "full", "--out", str(out)])
    assert res.exit_code == 0 and res.output.strip() == f"4 episodes -> {out}"
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    with Store.open(root / "live") as st:
        for line in lines:
            eid = line["record"]["episode_id"]
            assert "".join(json.dumps(s, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
                           for s in line["trajectory"]) == st.trajectory(eid)
            assert line["record"]["actions"] == sum(1 for s in line["trajectory"] if "action" in s)
    res = CliRunner().invoke(main, ["study", "export", str(tmp_path / "none")])
    assert res.exit_code == 1 and res.output.strip().startswith("error: no results store at")


def test_a_damaged_trajectory_is_one_clear_error(tmp_path):
    from mcbuild.runtime.study.store.replay import ReplayClient
    from mcbuild.runtime.study.store.trajectories import MAGIC, DamagedTrajectory

    with pytest.raises(DamagedTrajectory, match="damaged stored trajectory"):
        unpack(MAGIC + b"not zlib")
    db = tmp_path / "results.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE episodes (episode_id TEXT, trajectory BLOB)")
    conn.executemany("INSERT INTO episodes VALUES (?, ?)", [("e1", MAGIC + b"not zlib"), ("e2", "{not json\n")])
    conn.commit()
    conn.close()
    for eid in ("e1", "e2"):
        with pytest.raises(BackendUnavailable, match=f"episode {eid}: damaged"):
            ReplayClient(db, eid, "m")
    db.write_bytes(b"this is not a sqlite file" * 100)
    with pytest.raises(BackendUnavailable, match="replay store"):
        ReplayClient(db, "e1", "m")
