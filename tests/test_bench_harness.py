"""The benchmarks cannot measure the wrong thing (bench/harness.py, issue 40): a baseline whose child
imports this checkout's code is refused before anything is measured, and every bench answers -h
without running."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))

import harness


def _stand_in_environment(env: dict[str, str], ref: Path) -> None:
    """A cached environment for the baseline folder ``ref`` that is really this checkout's venv: a
    Python whose editable install imports this checkout (what a baseline run with the wrong venv does)."""
    code = f"import harness, pathlib; print(harness.env_folder(pathlib.Path({str(ref)!r})))"
    where = subprocess.run([sys.executable, "-c", code], env=env, cwd=BENCH, capture_output=True, text=True, check=True)
    venv = Path(where.stdout.strip())
    assert str(venv).startswith(env["MCBUILD_BUILD"])
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    (venv / harness.STAMP).write_text(harness._stamp(ref.resolve()))


def _old_checkout(tmp_path: Path) -> Path:
    """A baseline folder with this checkout's project files (its own copy of the package)."""
    ref = tmp_path / "old"
    ref.mkdir()
    for name in ("pyproject.toml", "setup.py"):
        shutil.copy(ROOT / name, ref / name)
    shutil.copytree(ROOT / "mcbuild", ref / "mcbuild", ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
    return ref


def test_a_baseline_whose_code_is_this_trees_is_refused(tmp_path: Path) -> None:
    ref = _old_checkout(tmp_path).resolve()
    env = {**os.environ, "MCBUILD_BUILD": str(tmp_path / "build")}
    _stand_in_environment(env, ref)
    done = subprocess.run([sys.executable, str(BENCH / "compile_all.py"), "--baseline", str(ref)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "refused" in done.stderr and str(ROOT / "mcbuild" / "__init__.py") in done.stderr
    assert "cold s" not in done.stdout, "nothing is measured once a tree is refused"


def test_the_check_accepts_a_trees_own_code_and_names_foreign_files(tmp_path: Path) -> None:
    here = harness.Tree("this tree", ROOT, Path(sys.executable))
    code = harness.probe(here)
    assert Path(code["mcbuild"]).resolve() == ROOT / "mcbuild" / "__init__.py"
    other = harness.Tree("old", tmp_path, Path(sys.executable))
    with pytest.raises(harness.Refused, match="not in"):
        harness.check(other, code)
    with pytest.raises(harness.Refused, match="elsewhere.py"):
        harness.check(here, {**code, "outside": ["/elsewhere.py"]})


def test_a_baseline_that_is_neither_folder_nor_commit_is_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "MCBUILD_BUILD": str(tmp_path / "build")}
    done = subprocess.run([sys.executable, str(BENCH / "compile_all.py"), "--baseline", "no-such-ref-40"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip() == f"error: --baseline no-such-ref-40: neither a folder nor a commit of {ROOT}"


@pytest.mark.parametrize("script", sorted(p.name for p in BENCH.glob("*.py") if p.name not in ("harness.py", "endpoint.py")))
def test_every_bench_answers_help_without_running(script: str, tmp_path: Path) -> None:
    env = {**os.environ, "MCBUILD_BUILD": str(tmp_path / "build")}
    done = subprocess.run([sys.executable, str(BENCH / script), "-h"], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage:"), done.stdout[:300]      # argparse's help, and its exit before any work


def test_the_summary_marks_a_bench_without_a_line_as_failed(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "summary.jsonl"
    os.environ[harness.SUMMARY] = str(path)
    try:
        harness.summary_line("compile_all", "cold 0.5 s", "this tree vs x: cold_s 1.10x")
    finally:
        del os.environ[harness.SUMMARY]
    assert harness.print_summary(path, ["compile_all"]) == 0
    assert harness.print_summary(path, ["compile_all", "build_worlds"]) == 1
    out = capsys.readouterr().out
    assert "cold 0.5 s" in out and "build_worlds" in out and "no result" in out


def test_forward_drops_only_the_baselines() -> None:
    argv = ["--baseline", "79f6c16", "--limit", "5", "--baseline=/work/old", "--workers", "2"]
    assert harness.forward(argv) == ["--limit", "5", "--workers", "2"]


def test_make_bench_runs_every_bench_and_each_writes_its_summary_line() -> None:
    """Every script of bench/ but the harness and the two tools is in ``make bench`` and adds its line
    to the closing table (a bench added without both would silently drop out of the summary)."""
    import re

    tools = {"harness", "endpoint", "behaviour_hash", "llm_smoke"}          # docs/benchmarks.md: tools, not benches
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    listed = re.search(r"^BENCHES\s*:=(.*)$", makefile, re.M)
    assert listed is not None
    benches = set(listed.group(1).split())
    assert benches == {p.stem for p in BENCH.glob("*.py")} - tools
    for name in sorted(benches):
        assert "summary_line(" in (BENCH / f"{name}.py").read_text(encoding="utf-8"), name
