"""The results store on its own: one row per episode id, stores written by earlier versions still
open, and a damaged page anywhere in the file is found at open (one line naming the file)."""
from __future__ import annotations

import dataclasses
import random
import sqlite3

import pytest
from click.testing import CliRunner

from mcbuild.cli import main
from mcbuild.runtime.records import EpisodeRecord
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.design.plan import build_plan
from mcbuild.runtime.study.run.runner import run_study
from mcbuild.runtime.study.store.results import STORE_NAME, Store, StoreError, episode_row

from study_fakes import fake_outcome

PAGE = 4096

#: The ``episodes`` table as the first stores wrote it (before the milestone columns), verbatim.
FIRST_EPISODES_TABLE = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE episodes (
    episode_id     TEXT PRIMARY KEY,
    world          TEXT NOT NULL,
    biome          TEXT NOT NULL,
    condition      TEXT NOT NULL,
    task           TEXT NOT NULL,
    configuration  TEXT NOT NULL,
    model          TEXT NOT NULL,
    budget         INTEGER NOT NULL,
    disclosure     TEXT NOT NULL,
    repetition     INTEGER NOT NULL,
    seed           INTEGER NOT NULL,
    agent          TEXT NOT NULL,
    score          REAL NOT NULL,
    success        INTEGER NOT NULL,
    actions        INTEGER NOT NULL,
    cost_usd       REAL NOT NULL,
    tokens_in      INTEGER NOT NULL DEFAULT 0,
    tokens_out     INTEGER NOT NULL DEFAULT 0,
    success_action INTEGER,
    score_at       TEXT NOT NULL DEFAULT '{}',
    encounters     TEXT NOT NULL DEFAULT '[]',
    events         TEXT NOT NULL DEFAULT '[]',
    trajectory     TEXT NOT NULL DEFAULT '',
    end_reason     TEXT NOT NULL DEFAULT '',
    attempts       INTEGER NOT NULL DEFAULT 1,
    wall_s         REAL NOT NULL DEFAULT 0,
    finished_at    REAL NOT NULL
);
"""


def _config() -> StudyConfig:
    return StudyConfig.model_validate(dict(name="s", worlds=["plains-1", "taiga-1"], conditions=["vanilla", "m01"],
                                           tasks=["iron_armor", "diamond"], configurations=["react"], models=["m"],
                                           repetitions=3, base_seed=3))


def test_the_same_episode_id_is_stored_once(tmp_path):
    entry = build_plan(_config())[0]
    first = fake_outcome(entry)
    other = dataclasses.replace(first, score=0.0, success=False, success_action=None, actions=first.actions + 1)
    with Store.open(tmp_path) as st:
        assert st.insert_episode(entry.to_dict(), first)
        assert not st.insert_episode(entry.to_dict(), other)          # refused, and the first row kept
        assert st.count() == 1
        (row,) = st.records()
        assert (row["episode_id"], row["score"], row["actions"]) == (entry.episode_id, first.score, first.actions)
        with pytest.raises(sqlite3.IntegrityError):                   # the table itself keys on the id
            st.conn.execute("INSERT INTO episodes (episode_id, biome, world, condition, task, configuration, model, "
                            "budget, disclosure, repetition, seed, agent, score, actions, finished_at) "
                            "SELECT episode_id, biome, world, condition, task, configuration, model, budget, "
                            "disclosure, repetition, seed, agent, score, actions, finished_at FROM episodes")


def test_a_batch_interrupted_mid_way_stores_none_of_its_episodes(tmp_path):
    plan = build_plan(_config())
    rows = [episode_row(e.to_dict(), fake_outcome(e)) for e in plan[:4]]
    broken = {**rows[2], "finished_at": None}                         # NOT NULL: the insert fails on the 3rd row
    with Store.open(tmp_path) as st:
        with pytest.raises(sqlite3.IntegrityError):
            st.insert_rows([*rows[:2], broken, rows[3]], [(plan[0].episode_id, 1, "infrastructure", "x", 0.0)])
        assert st.count() == 0 and st.faults() == []                 # the whole batch rolled back
        assert st.insert_rows(rows[:3]) == 3 and st.insert_rows(rows) == 1   # stored ids are skipped
        assert sorted(r["episode_id"] for r in st.records()) == sorted(e.episode_id for e in plan[:4])


def test_sizes_sum_the_stored_episodes(tmp_path):
    plan = build_plan(_config())[:3]
    with Store.open(tmp_path) as st:
        assert st.sizes() == {"episodes": 0, "tokens_in": 0, "actions": 0, "trajectory_bytes": 0}
        st.insert_rows([episode_row(e.to_dict(), fake_outcome(e)) for e in plan])
        size = st.sizes()
        packed = st.conn.execute("SELECT SUM(length(trajectory)) FROM episodes").fetchone()[0]
    outcomes = [fake_outcome(e) for e in plan]
    assert size == {"episodes": 3, "tokens_in": sum(o.tokens_in for o in outcomes),
                    "actions": sum(o.actions for o in outcomes), "trajectory_bytes": packed}


def test_a_store_of_the_first_version_opens_reads_and_takes_new_episodes(tmp_path):
    plan = build_plan(_config())
    old, new = plan[0], plan[1]
    db = tmp_path / STORE_NAME
    with sqlite3.connect(db) as c:
        c.executescript(FIRST_EPISODES_TABLE)
        c.execute("INSERT INTO episodes (episode_id, world, biome, condition, task, configuration, model, budget, "
                  "disclosure, repetition, seed, agent, score, success, actions, cost_usd, score_at, encounters, "
                  "trajectory, end_reason, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 35, 0, 2, 0.5, "
                  "'{\"1\": 15.0}', '[]', ?, 'budget', 1.0)",
                  (old.episode_id, old.world, old.biome, old.condition, old.task, old.configuration, old.model,
                   old.budget, old.disclosure, old.repetition, old.seed, old.agent, '{"i":1}\n{"i":2}\n'))
    with Store.open(tmp_path) as st:
        assert st.insert_episode(new.to_dict(), fake_outcome(new))
        rows = {r["episode_id"]: r for r in st.records()}
        assert st.trajectory(old.episode_id) == '{"i":1}\n{"i":2}\n'
    first = EpisodeRecord.from_dict(rows[old.episode_id])
    assert (first.score, first.success, first.actions, first.score_at, first.milestones_total) == (35.0, False, 2, {1: 15.0},
                                                                                                 None)
    assert rows[new.episode_id]["seed"] == new.seed and EpisodeRecord.from_dict(rows[new.episode_id]).episode_id == new.episode_id


def test_a_page_damaged_in_the_middle_of_the_store_is_found_at_open(tmp_path):
    out = tmp_path / "study"
    run_study(_config(), fake_outcome, out_dir=out, build_root=tmp_path / "build")
    db = out / STORE_NAME
    with sqlite3.connect(db) as c:                               # everything in the main file, nothing in the WAL
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = db.stat().st_size
    pages = size // PAGE
    assert pages >= 6
    with open(db, "r+b") as fh:                                  # one whole page in the middle, the size kept
        fh.seek(pages // 2 * PAGE)
        fh.write(random.Random(1).randbytes(PAGE))
    assert db.stat().st_size == size
    with pytest.raises(StoreError, match="damaged results store") as err:
        Store.open(out)
    assert str(db) in str(err.value) and "\n" not in str(err.value)
    res = CliRunner().invoke(main, ["study", "report", str(out)])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert res.stderr.strip().splitlines() == [res.stderr.strip()] and str(db) in res.stderr
