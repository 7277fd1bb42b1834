"""Readers never write: ``study status``, ``report``, ``export`` (full and tables), ``compare``,
``estimate --pilot`` and ``watch`` open the store read-only (``Store.read_only``: SQLite ``mode=ro``).
On a 0-byte store, a read-only store file and a store being written, every file of the study folder
is byte-equal before and after, and no file appears beside the store."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcbuild.cli import main
from mcbuild.compiler.core.paths import ROOT
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.design.plan import PlanEntry
from mcbuild.runtime.study.run.runner import run_study
from mcbuild.runtime.study.store.results import Store, StoreError, episode_row
from mcbuild.runtime.study.watch.state import Watcher
from study_fakes import fake_outcome

CONFIG = dict(name="readers", worlds=["plains-1"], conditions=["vanilla", "m01"], tasks=["iron_armor"],
              configurations=["vanilla-planner"], repetitions=2)


def readers(study: Path, out: Path) -> dict[str, list[str]]:
    """Every reading command on ``study``, writing its own output (if any) under ``out``."""
    return {
        "status": ["study", "status", study],
        "report": ["study", "report", study, "--out", out / "report", "--no-viewer", "--quiet"],
        "export": ["study", "export", study, "--format", "full", "--out", out / "export.jsonl"],
        "export tables": ["study", "export", study, "--format", "jsonl", "--out", out / "tables"],
        "compare": ["study", "compare", study, study],
        "estimate": ["study", "estimate", ROOT / "studies" / "quick.yaml", "--pilot", study],
    }


def snapshot(folder: Path, skip: tuple[str, ...] = ()) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file() and not p.name.endswith(skip)}


def run(args) -> object:
    return CliRunner().invoke(main, [str(a) for a in args])


def watch(study: Path, tmp_path: Path) -> dict:
    """What ``study watch`` serves for the study as a whole (it never returns once serving)."""
    return Watcher(study, tmp_path / "no-build").state()


@pytest.fixture
def study(tmp_path) -> Path:
    out = tmp_path / "study"
    run_study(StudyConfig.model_validate(CONFIG), fake_outcome, out_dir=out, build_root=tmp_path / "build")
    (out / "results.sqlite.lock.guard").unlink(missing_ok=True)
    return out


def test_a_zero_byte_store_is_refused_and_stays_zero_bytes(tmp_path):
    study = tmp_path / "study"
    study.mkdir()
    (study / "results.sqlite").touch()
    for name, args in readers(study, tmp_path / "out").items():
        res = run(args)
        assert res.exit_code == 1, (name, res.output)
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and "results.sqlite: an empty file, not a results store" in lines[0], (name, lines)
        assert snapshot(study) == {"results.sqlite": b""}, name
        assert not (tmp_path / "out").exists(), name
    res = run(["study", "watch", study, "--port", "0"])          # refused before it serves
    assert res.exit_code == 1 and "an empty file, not a results store" in res.stderr, res.output
    with pytest.raises(StoreError, match="an empty file, not a results store"):
        watch(study, tmp_path)                                  # each look the page takes
    assert snapshot(study) == {"results.sqlite": b""}


def test_a_read_only_store_is_read_and_left_as_it_was(study, tmp_path):
    store = study / "results.sqlite"
    before = snapshot(study)
    assert set(before) == {"results.sqlite"}
    os.chmod(store, 0o444)
    os.chmod(study, 0o555)
    try:
        for name, args in readers(study, tmp_path / "out").items():
            res = run(args)
            assert res.exit_code == 0, (name, res.output)
            assert snapshot(study) == before, name       # not a byte changed, no -wal or -shm made
        assert watch(study, tmp_path)["stored"] == 4 and snapshot(study) == before
    finally:
        os.chmod(study, 0o755)
    assert stat.S_IMODE(store.stat().st_mode) == 0o444
    assert "episodes: 4/4 stored" in run(readers(study, tmp_path)["status"]).output


def test_a_store_being_written_is_read_without_disturbing_its_writer(study, tmp_path):
    """A writer holds the store with an open transaction (one episode not yet committed): each reader
    sees the committed episodes, and neither the store nor the writer's journal changes by a byte."""
    writer = Store.open(study)
    writer.conn.execute("BEGIN IMMEDIATE")
    entry = {"episode_id": "late", "world": "plains-1", "biome": "plains", "condition": "vanilla", "task": "iron_armor",
             "configuration": "vanilla-planner", "agent": "vanilla-planner", "model": "none", "disclosure": "hidden",
             "repetition": 9, "budget": 50, "seed": 1, "backend": "sim"}
    row = episode_row(entry, fake_outcome(PlanEntry.from_dict(entry)))
    writer.conn.execute(f"INSERT INTO episodes ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))
    try:
        before = snapshot(study, ("-shm",))             # readers record read marks in the shared memory file
        assert {"results.sqlite", "results.sqlite-wal"} <= set(before)
        for name, args in readers(study, tmp_path / "out").items():
            res = run(args)
            assert res.exit_code == 0, (name, res.output)
            assert snapshot(study, ("-shm",)) == before, name
        assert watch(study, tmp_path)["stored"] == 4 and snapshot(study, ("-shm",)) == before
        assert "episodes: 4/4 stored" in run(readers(study, tmp_path)["status"]).output
        assert (tmp_path / "out" / "export.jsonl").read_text().count("\n") == 4
    finally:
        writer.conn.execute("ROLLBACK")
        writer.close()
