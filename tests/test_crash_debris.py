"""No crash leaves debris: each writer is SIGKILLed at several points (``crash_points.py``); the next
run of the same command removes what the dead one left (its temporaries all carry the prefix
``.mcbuild-<tool>.`` and the owner's pid) and gives the same files as a clean run."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcbuild.compiler.core.owned import MARKER
from mcbuild.compiler.core.paths import ROOT, SPECS
from mcbuild.compiler.core.scratch import PREFIX, is_scratch, scratch_name, sweep
from mcbuild.compiler.core.vanilla import MANIFEST, STAMP, import_data, write_manifest
from mcbuild.compiler.worlds.layout import read_manifest
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.report import write_report
from mcbuild.runtime.study.run.runner import run_study
from mcbuild.runtime.study.store.export import export
from mcbuild.runtime.study.viewer import write_viewer
from study_fakes import fake_outcome

HERE = Path(__file__).parent
TIMEOUT = 600                   # seconds: one command on a loaded machine


def mcbuild(*args, point: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """``mcbuild ARGS`` in a new process, SIGKILLed at ``point`` (see crash_points.py) when given."""
    head = [sys.executable, str(HERE / "crash_points.py"), point, "--"] if point else [sys.executable, "-m", "mcbuild"]
    return subprocess.run([*head, *map(str, args)], capture_output=True, text=True, cwd=ROOT, timeout=TIMEOUT,
                          env={**os.environ, **(env or {})})


def killed(*args, point: str, env: dict | None = None) -> None:
    res = mcbuild(*args, point=point, env=env)
    assert res.returncode == -9, f"{point} was not reached: {res.returncode} {res.stdout} {res.stderr}"


def ok(*args, env: dict | None = None) -> None:
    res = mcbuild(*args, env=env)
    assert res.returncode == 0, res.stdout + res.stderr


def debris(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if is_scratch(p.name)]


def files(folder: Path, skip: tuple[str, ...] = ()) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name not in skip}


def test_a_temporary_name_names_its_tool_and_owner(tmp_path):
    """The sweep removes a dead owner's temporaries of its own tool only: a live process's (this
    one's), another tool's and another host's stay."""
    name = scratch_name("compile", ".tmp")
    assert name.startswith(f"{PREFIX}compile.{os.getpid()}-") and is_scratch(name, "compile")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    mine, other_tool = tmp_path / name, tmp_path / scratch_name("worlds")
    host_tag = name.split(".")[2].split("-")[2]
    gone = tmp_path / f"{PREFIX}compile.{pid}-0-{host_tag}.abcd"
    elsewhere = tmp_path / f"{PREFIX}compile.{pid}-0-00000000.abcd"
    for path in (mine, other_tool, gone, elsewhere):
        path.mkdir()
        (path / "f").write_bytes(b"x")
    assert sweep(tmp_path, "compile") == [gone]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (mine, other_tool, elsewhere))


def test_compile_killed_anywhere_then_rerun(tmp_path, suites):
    clean = {f"{sid}/{name}": data for sid in ("m01", "m04") for name, data in suites[sid].files.items()}
    build, specs = tmp_path / "build", [SPECS / "m01.yaml", SPECS / "m04.yaml"]
    # the first file of the first temporary folder; before the first folder is moved in; over an
    # earlier build, after the old m01 was moved aside and before the new one took its place
    for point, earlier in (("pathlib.Path.write_bytes:2", False), ("os.replace:1", False), ("os.replace:2", True)):
        if earlier:
            ok("compile", *specs, "--build", build)
        killed("compile", *specs, "--build", build, point=point)
        assert debris(build), point                 # the kill did leave something
        ok("compile", *specs, "--build", build)
        assert not debris(build) and files(build, (MARKER,)) == clean, point


@pytest.fixture
def tiny_root(tmp_path):
    """A root whose manifest lists 60 small files of a generator output (``MCBUILD_ROOT``): the real
    import, on less data."""
    root, gen = tmp_path / "root", tmp_path / "generated"
    shutil.copytree(ROOT / "catalogs", root / "catalogs")
    for i in range(60):
        (gen / "data/minecraft/recipes").mkdir(parents=True, exist_ok=True)
        (gen / f"data/minecraft/recipes/r{i}.json").write_text(f'{{"n": {i}}}\n')
    write_manifest(gen, None, root / "catalogs" / MANIFEST.name)
    return root, gen


def test_vanilla_import_killed_anywhere_then_rerun(tmp_path, tiny_root):
    root, gen = tiny_root
    clean, dest = tmp_path / "clean", tmp_path / "copy"
    import_data(gen, clean, root / "catalogs" / MANIFEST.name)
    env = {"MCBUILD_ROOT": str(root), "MCBUILD_VANILLA": str(dest)}
    # mid-copy; at the stamp, after the copy was moved in; over an earlier copy moved aside
    for point, earlier in (("pathlib.Path.write_bytes:30", False), ("os.replace:2", False), ("os.replace:1", True)):
        if earlier:
            ok("vanilla", "import", gen, env=env)
        killed("vanilla", "import", gen, point=point, env=env)
        assert debris(tmp_path), point
        ok("vanilla", "import", gen, env=env)
        assert not debris(tmp_path), point
        assert files(dest, (STAMP,)) == files(clean, (STAMP,)) and (dest / STAMP).is_file(), point


def test_build_worlds_killed_anywhere_then_rerun(tmp_path, suites, world_build):
    build = tmp_path / "build"
    for sid, artifact in suites.items():
        (build / sid).mkdir(parents=True)
        for name, data in artifact.files.items():
            (build / sid / name).write_bytes(data)
    args = ("build", "worlds", "--only", "plains-1", "--workers", "1", "--build", build)
    reference = read_manifest(world_build)["worlds"]["plains-1"]
    # mid-way through the Mirror copies in the staging folder; after the world was moved in,
    # before the manifest names it
    for point in ("shutil.copyfile:30", "os.replace:2"):
        killed(*args, point=point)
        assert debris(build / "worlds") or point == "os.replace:2", point
        ok(*args)
        assert not debris(build), point
        assert read_manifest(build)["worlds"] == {"plains-1": reference}, point


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("crash")
    cfg = StudyConfig.model_validate(dict(name="crash", worlds=["plains-1"], conditions=["vanilla", "m01"],
                                          tasks=["iron_armor", "diamond"], configurations=["vanilla-planner"],
                                          repetitions=2))
    out = root / "studies" / "crash"
    run_study(cfg, fake_outcome, out_dir=out, build_root=root / "build")
    return out


def test_export_killed_anywhere_then_rerun(study, tmp_path):
    export(study, tmp_path / "clean.jsonl")
    target = tmp_path / "out" / "export.jsonl"
    # mid-file (the third line); before the finished file is renamed into place
    for point in ("mcbuild.runtime.study.store.export.compact:3", "os.replace:1"):
        killed("study", "export", study, "--format", "full", "--out", target, point=point)
        assert debris(tmp_path / "out"), point
        ok("study", "export", study, "--format", "full", "--out", target)
        assert not debris(tmp_path) and target.read_bytes() == (tmp_path / "clean.jsonl").read_bytes(), point


def test_table_export_killed_anywhere_then_rerun(study, tmp_path):
    ok("study", "export", study, "--out", tmp_path / "clean")
    target = tmp_path / "out" / "tables"
    # with the first table written, as the second starts; as the finished folder is renamed into place
    for point in ("mcbuild.analysis.export.naming:2", "os.replace:1"):
        killed("study", "export", study, "--out", target, point=point)
        assert debris(tmp_path / "out"), point
        ok("study", "export", study, "--out", target)
        assert not debris(tmp_path) and files(target) == files(tmp_path / "clean"), point


def test_report_killed_anywhere_then_rerun(study, tmp_path):
    args = ("--quiet", "--map-limit", "0", "--build", tmp_path / "nobuild")
    write_report(study, out_dir=tmp_path / "clean", map_limit=0, build=tmp_path / "nobuild", viewer=write_viewer)
    for point in ("os.replace:4", "os.replace:26"):          # among the tables; in the viewer
        out = tmp_path / point
        killed("study", "report", study, "--out", out, *args, point=point)
        assert debris(out), point
        ok("study", "report", study, "--out", out, *args)
        # the command also writes the results card beside the report (write_report alone does not)
        assert not debris(out) and files(out, ("card.json",)) == files(tmp_path / "clean"), point
    assert (out / MARKER).is_file() and (out / "card.json").is_file()
