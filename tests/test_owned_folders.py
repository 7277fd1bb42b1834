"""Nothing of the user's is ever lost: each command that replaces a folder (or file) replaces only an
empty one or one it recognizably wrote itself; anything else is one line naming the path, exit 2,
and every file is left as it was."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcbuild.cli import main
from mcbuild.compiler.core.owned import MARKER, NotOurs, atomic_write_dir, check_replaceable
from mcbuild.compiler.core.paths import ROOT, SPECS, VANILLA_DATA
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.run.runner import run_study
from study_fakes import fake_outcome

NOTE = b"my notes: do not lose\n"


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def refused(res, path: Path) -> None:
    """Exit 2 and one error line naming ``path``, no traceback."""
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: "), res.stderr
    assert "Traceback" not in res.output


def users_folder(path: Path, name: str = "notes.txt") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / name).write_bytes(NOTE)
    return path / name


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------------------- the rule itself
def test_replace_only_empty_or_own_folders(tmp_path):
    target = tmp_path / "out"
    atomic_write_dir(target, {"a.txt": b"1"}, tool="compile")              # absent: written, marked
    atomic_write_dir(target, {"b.txt": b"2"}, tool="compile")              # its own: replaced
    assert snapshot(target).keys() == {MARKER, "b.txt"}
    (tmp_path / "empty").mkdir()
    atomic_write_dir(tmp_path / "empty", {"a.txt": b"1"}, tool="compile")  # empty: written
    legacy = tmp_path / "legacy"                    # unmarked, holding only what is written now
    legacy.mkdir()
    (legacy / "a.txt").write_bytes(b"old")
    atomic_write_dir(legacy, {"a.txt": b"new"}, tool="compile")
    assert (legacy / "a.txt").read_bytes() == b"new"
    note = users_folder(target)                     # a user's file added to an own folder
    with pytest.raises(NotOurs, match=f"^{target}: holds notes.txt that `mcbuild compile` did not write"):
        atomic_write_dir(target, {"b.txt": b"3"}, tool="compile")
    assert note.read_bytes() == NOTE and (target / "b.txt").read_bytes() == b"2"
    with pytest.raises(NotOurs, match="written by `mcbuild compile`, not `mcbuild vanilla import`"):
        check_replaceable(tmp_path / "empty", "vanilla", ["a.txt"])
    (tmp_path / "file").write_bytes(NOTE)
    with pytest.raises(NotOurs, match="a file, not a folder"):
        atomic_write_dir(tmp_path / "file", {"a.txt": b"1"}, tool="compile")
    (tmp_path / "link").symlink_to(tmp_path / "empty")
    with pytest.raises(NotOurs, match="a symbolic link"):
        atomic_write_dir(tmp_path / "link", {"a.txt": b"1"}, tool="compile")
    assert (tmp_path / "file").read_bytes() == NOTE and (tmp_path / "link").is_symlink()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]       # no temporaries left


# ---------------------------------------------------------------------------- each writer
def test_vanilla_import_refuses_a_users_folder_and_file(tmp_path):
    """MCBUILD_VANILLA naming a folder of the user's (or a file): refused before anything is read."""
    for dest in (tmp_path / "mine", tmp_path / "data.txt"):
        if dest.suffix:
            dest.write_bytes(NOTE)
        else:
            users_folder(dest)
        before = snapshot(tmp_path)
        res = subprocess.run([sys.executable, "-m", "mcbuild", "vanilla", "import", str(VANILLA_DATA)],
                             capture_output=True, text=True, cwd=ROOT, timeout=300,
                             env={**os.environ, "MCBUILD_VANILLA": str(dest)})
        assert res.returncode == 2, res.stdout + res.stderr
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {dest}: "), res.stderr
        assert snapshot(tmp_path) == before and sorted(p.name for p in tmp_path.iterdir()) == sorted(
            p.name for p in (tmp_path / "mine", tmp_path / "data.txt") if p.exists())


def test_compile_refuses_a_users_folder_before_writing_any(tmp_path):
    build = tmp_path / "build"
    note = users_folder(build / "m04")
    refused(cli("compile", SPECS / "m01.yaml", SPECS / "m04.yaml", "--build", build), build / "m04")
    assert note.read_bytes() == NOTE and sorted(p.name for p in build.iterdir()) == ["m04"]   # m01 not written either
    note.unlink()
    assert cli("compile", SPECS / "m04.yaml", "--build", build).exit_code == 0            # empty: written
    users_folder(build / "m04", "extra.yaml")                                             # then a user's file in it
    refused(cli("compile", SPECS / "m04.yaml", "--build", build), build / "m04")
    assert (build / "m04" / "extra.yaml").read_bytes() == NOTE


def test_build_worlds_refuses_a_users_world_folder(tmp_path, suites):
    build = tmp_path / "build"
    for sid, artifact in suites.items():
        (build / sid).mkdir(parents=True)
        for name, data in artifact.files.items():
            (build / sid / name).write_bytes(data)
    note = users_folder(build / "worlds" / "plains-1")
    refused(cli("build", "worlds", "--only", "plains-1", "--build", build), build / "worlds" / "plains-1")
    assert note.read_bytes() == NOTE
    assert sorted(p.name for p in (build / "worlds").iterdir()) == ["plains-1"]


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("owned")
    cfg = StudyConfig.model_validate(dict(name="own", worlds=["plains-1"], conditions=["vanilla", "m01"],
                                          tasks=["iron_armor"], configurations=["vanilla-planner"], repetitions=2))
    out = root / "studies" / "own"
    run_study(cfg, fake_outcome, out_dir=out, build_root=root / "build")
    return out


def test_export_refuses_a_users_file(study, tmp_path):
    mine = tmp_path / "notes.jsonl"
    mine.write_bytes(NOTE)
    refused(cli("study", "export", study, "--format", "full", "--out", mine), mine)
    assert mine.read_bytes() == NOTE and sorted(p.name for p in tmp_path.iterdir()) == ["notes.jsonl"]
    ours = tmp_path / "export.jsonl"
    assert cli("study", "export", study, "--format", "full", "--out", ours).exit_code == 0
    assert cli("study", "export", study, "--format", "full", "--out", ours).exit_code == 0     # its own: replaced


def test_a_table_export_replaces_only_its_own_folder(study, tmp_path):
    mine = tmp_path / "tables"
    users_folder(mine)
    refused(cli("study", "export", study, "--out", mine), mine)
    assert snapshot(mine) == {"notes.txt": NOTE} and sorted(p.name for p in tmp_path.iterdir()) == ["tables"]
    before = snapshot(study)
    refused(cli("study", "export", study, "--out", study), study)       # the study folder is not an export's
    assert snapshot(study) == before
    (mine / "notes.txt").unlink()
    assert cli("study", "export", study, "--out", mine).exit_code == 0                      # empty: taken
    assert sorted(snapshot(mine)) == [MARKER, "actions.csv", "calls.csv", "episodes.csv"]
    assert cli("study", "export", study, "--out", mine, "--format", "jsonl").exit_code == 0  # its own: replaced
    assert sorted(snapshot(mine)) == [MARKER, "actions.jsonl", "calls.jsonl", "episodes.jsonl"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tables"]                         # no debris


def test_report_refuses_a_users_folder_and_the_study_folder(study, tmp_path):
    mine = tmp_path / "papers"
    note = users_folder(mine)
    refused(cli("study", "report", study, "--out", mine, "--no-viewer", "--quiet"), mine)
    assert snapshot(mine) == {"notes.txt": NOTE}
    before = snapshot(study)
    refused(cli("study", "report", study, "--out", study, "--no-viewer", "--quiet"), study)
    assert snapshot(study) == before
    note.unlink()
    assert cli("study", "report", study, "--out", mine, "--no-viewer", "--quiet").exit_code == 0   # empty: taken
    assert (mine / MARKER).is_file() and (mine / "report.html").is_file()
    assert cli("study", "report", study, "--out", mine, "--no-viewer", "--quiet").exit_code == 0   # its own again
