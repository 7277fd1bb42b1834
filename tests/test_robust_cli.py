"""Bad input and damaged artifacts at the command line: one ``error:`` line, the right exit code
(2 bad input, 1 a failed check), no traceback (``--debug`` shows one), nothing half-written."""
from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import time
import zipfile

import pytest
from click.testing import CliRunner

from mcbuild.compiler.core.paths import ROOT, SPECS
from mcbuild.cli import main
from waiting import DEADLINE_S

QUICK = str(ROOT / "studies" / "quick.yaml")


def cli(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line(res, code: int, *needles: str) -> str:
    """Assert the exit code and that stderr is exactly one error line holding every needle."""
    assert res.exit_code == code, (res.exit_code, res.output)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


# ---------------------------------------------------------------------------- spec files
def test_binary_spec(tmp_path):
    spec = tmp_path / "bin.yaml"
    spec.write_bytes(b"schema_version: '1.0'\n\xff\xfe\x00\x01")
    one_line(cli("compile", spec, "--build", tmp_path / "out"), 2, str(spec), "not UTF-8")
    assert not (tmp_path / "out").exists()


def test_duplicate_keys_name_the_key_and_line(tmp_path):
    spec = tmp_path / "dup.yaml"
    spec.write_text((SPECS / "m04.yaml").read_text().replace("id: m04", "id: a\nid: b", 1))
    one_line(cli("compile", spec, "--build", tmp_path / "out"), 2, "duplicate key 'id'", "line")
    assert not (tmp_path / "out").exists()


def test_a_huge_spec_is_refused_at_once(tmp_path):
    spec = tmp_path / "big.yaml"
    spec.write_bytes(b"a: " + b"x" * (50 << 20))
    start = time.monotonic()
    one_line(cli("compile", spec), 2, str(spec), "1024 KiB limit")
    assert time.monotonic() - start < 60          # never parsed: PyYAML would take many minutes over 50 MB


def test_debug_shows_the_traceback(tmp_path):
    spec = tmp_path / "bin.yaml"
    spec.write_bytes(b"\xff\xfe")
    res = subprocess.run([sys.executable, "-c", "from mcbuild.cli import main; main()", "--debug", "compile", str(spec)],
                         capture_output=True, text=True, cwd=ROOT, timeout=DEADLINE_S)
    assert res.returncode == 1 and "Traceback" in res.stderr and "SpecError" in res.stderr
    res = subprocess.run([sys.executable, "-c", "from mcbuild.cli import main; main()", "compile", str(spec)],
                         capture_output=True, text=True, cwd=ROOT, timeout=DEADLINE_S)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


# ---------------------------------------------------------------------------- numbers and names
@pytest.mark.parametrize("args, needle", [
    (["episode", "run", "--world", "plains-1", "--task", "iron_armor", "--budget", "0"], "--budget"),
    (["episode", "run", "--world", "plains-1", "--task", "iron_armor", "--budget", "-1"], "--budget"),
    (["episode", "run", "--world", "plains-1", "--task", "iron_armor", "--seed", "-1"], "--seed"),
    (["episode", "run", "--world", "plains-9", "--task", "iron_armor"], "known: plains-1, plains-2"),
    (["episode", "run", "--world", "plains-1", "--condition", "m9", "--task", "iron_armor"], "known: vanilla, m01"),
    (["episode", "run", "--world", "plains-1", "--task", "iron"], "known: camp, diamond, enchantment, iron_armor, iron_sword"),
    (["episode", "run", "--world", "plains-1", "--task", "iron_armor", "--agent", "nobody"], "known: "),
    (["episode", "run", "--world", "plains-1", "--task", "iron_armor", "--agent", "react_rules", "--model", "m"],
     "a Vanilla world has no rule sheet"),
    (["episode", "run", "--world", "plains-1", "--task", "iron_armor", "--model", "m"],
     "agent 'vanilla-planner' takes no option 'model' (its options: none)"),
    (["episode", "run", "--world", "plains-1", "--task", "iron_armor", "--agent", "adaptive-planner",
      "--temperature", "0.2"], "agent 'adaptive-planner' takes no option 'temperature'"),
    (["study", "run", QUICK, "--workers", "0"], "--workers"),
    (["study", "run", QUICK, "--workers", "-3"], "--workers"),
    (["study", "run", QUICK, "--limit", "-1"], "--limit"),
    (["study", "report", "x", "--min-episodes", "0"], "--min-episodes"),
    (["design", "--kind", "mirror", "--static-only", "--rounds", "0"], "--rounds"),
    (["build", "worlds", "--workers", "0"], "--workers"),
    (["demo", "--workers", "0"], "--workers"),
])
def test_bad_numbers_and_names_exit_2(args, needle):
    line = one_line(cli(*args), 2, needle)
    assert "rules.md" not in line


@pytest.mark.parametrize("change, needle", [
    ("repetitions: 0", "repetitions"),
    ("workers: -3", "workers"),
    ("conditions: [vanilla, m09]", "conditions[1]: unknown condition 'm09'"),
    ("worlds: [nowhere-1]", "nowhere-1"),
    ("name: a\nname: b", "duplicate key 'name'"),
])
def test_bad_study_configs_exit_2_naming_file_and_field(tmp_path, change, needle):
    cfg = tmp_path / "study.yaml"
    cfg.write_text(f"configurations: [vanilla-planner]\n{change}\n")
    one_line(cli("study", "plan", cfg), 2, str(cfg), needle)


# ---------------------------------------------------------------------------- the results store
@pytest.fixture
def damaged_store(tmp_path):
    folder = tmp_path / "study"
    folder.mkdir()
    conn = sqlite3.connect(folder / "results.sqlite")
    conn.execute("CREATE TABLE episodes (episode_id TEXT PRIMARY KEY, trajectory TEXT)")
    conn.executemany("INSERT INTO episodes VALUES (?, ?)", [(f"e{i}", "x" * 2000) for i in range(200)])
    conn.commit()
    conn.close()
    with open(folder / "results.sqlite", "r+b") as fh:
        fh.truncate(4096)
    return folder


def test_a_damaged_store_is_one_line(damaged_store, tmp_path):
    one_line(cli("study", "run", QUICK, "--resume", "--out", damaged_store, "--build", tmp_path / "b", "--quiet"),
             1, "results.sqlite: damaged results store")
    one_line(cli("study", "report", damaged_store), 1, "results.sqlite: damaged results store")


# ---------------------------------------------------------------------------- built artifacts
@pytest.fixture
def pack(suites, tmp_path):
    from mcbuild.pipeline.build import write

    return write(suites["m01"], tmp_path / "build")


def test_audit_rechecks_the_zip_against_the_report(pack):
    assert cli("audit", pack).exit_code == 0
    zpath = pack / "datapack.zip"
    with zipfile.ZipFile(zpath) as z:
        files = {i.filename: z.read(i) for i in z.infolist()}
    name = next(n for n in files if n.endswith(".json") and not n.endswith(".mcmeta"))
    files[name] += b"\n"
    with zipfile.ZipFile(zpath, "w") as z:
        for n, data in files.items():
            z.writestr(n, data)
    res = cli("audit", pack)
    assert res.exit_code == 1 and "pack_file_mismatch" in res.output and "zip_hash_mismatch" in res.output


@pytest.mark.parametrize("mask", [0o022, 0o027])
def test_outputs_follow_the_umask(suites, tmp_path, mask):
    from mcbuild.pipeline.build import write
    from mcbuild.compiler.core.canonical import atomic_write

    old = os.umask(mask)
    try:
        target = write(suites["m01"], tmp_path / "build")
        atomic_write(tmp_path / "build" / "FROZEN.json", b"{}\n", tool="test")
    finally:
        os.umask(old)
    assert stat.S_IMODE(target.stat().st_mode) == 0o777 & ~mask
    assert {stat.S_IMODE(p.stat().st_mode) for p in target.iterdir()} == {0o666 & ~mask}
    assert stat.S_IMODE((tmp_path / "build" / "FROZEN.json").stat().st_mode) == 0o666 & ~mask


# ---------------------------------------------------------------------------- design runs
def test_design_never_writes_into_specs_unless_asked(tmp_path):
    out = SPECS / "sampled-test.yaml"
    one_line(cli("design", "--kind", "mirror", "--static-only", "--out", out, "--design-dir", tmp_path), 2,
             "--into-specs")
    assert not out.exists() and not any(tmp_path.iterdir())


def test_design_default_output_is_build_designs(tmp_path):
    """One designs folder: the transcripts and the accepted spec side by side in <build>/designs."""
    res = cli("design", "--kind", "mirror", "--static-only", "--seed", "7", "--build", tmp_path, "--run-id", "r7")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "designs" / "r7.yaml").is_file() and (tmp_path / "designs" / "r7" / "run.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["designs"]


def test_a_failed_design_run_leaves_its_run_json(tmp_path):
    import json

    from mcbuild.designer_judge.loop import DesignRequest, run_design
    from mcbuild.llm.client import LLMError

    class Down:
        def chat_json(self, *a, **k):
            raise LLMError("endpoint unreachable")

    req = DesignRequest(kind="mirror", tasks=["iron_armor"], run_id="r1", design_root=tmp_path / "design",
                        from_spec=__import__("yaml").safe_load((SPECS / "m04.yaml").read_text()), from_path="m04")
    with pytest.raises(LLMError):
        run_design(req, Down())
    run = json.loads((tmp_path / "design" / "r1" / "run.json").read_text())
    assert run["status"] == "failed" and "endpoint unreachable" in run["error"]
    assert not (tmp_path / "design" / "r1.yaml").exists()


def test_the_world_builder_never_copies_a_damaged_rule_pack(pack):
    from mcbuild.compiler.core.errors import CompileError
    from mcbuild.pipeline.worlds import read_mirror_packs

    assert set(read_mirror_packs(["m01"], pack.parent)) == {"m01"}
    zpath = pack / "datapack.zip"
    zpath.write_bytes(zpath.read_bytes()[:-10])
    with pytest.raises(CompileError, match="datapack.zip: sha256 differs from report.json"):
        read_mirror_packs(["m01"], pack.parent)
    (pack / "report.json").write_text("{")
    with pytest.raises(CompileError, match="report.json: unreadable pack report"):
        read_mirror_packs(["m01"], pack.parent)


def test_a_binary_worlds_file_is_a_spec_error(tmp_path):
    from mcbuild.compiler.core.errors import SpecError
    from mcbuild.compiler.worlds.layout import world_biomes

    worlds = tmp_path / "worlds.yaml"
    worlds.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(SpecError, match="not UTF-8 text"):
        world_biomes(worlds)


def test_a_control_character_is_one_line(tmp_path):
    spec = tmp_path / "ctl.yaml"
    spec.write_bytes(b"\x01 schema_version: '1.0'\n")
    one_line(cli("compile", spec), 2, str(spec), "character 0", "special characters are not allowed")
