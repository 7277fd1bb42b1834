"""Post-packaging audit of Mirror packs and ``mcbuild audit`` on hand-broken artifacts."""
from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from mcbuild.audits.mirror import audit_mirror
from mcbuild.pipeline.build import compile_path, expected_files, trace_pack, write
from mcbuild.compiler.core.paths import SPECS
from mcbuild.compiler.mirror.emit import emit
from mcbuild.compiler.mirror.resolve import resolve
from mcbuild.compiler.rules import rulebook
from mcbuild.compiler.rules.pack import build_zip, read_zip
from mcbuild.compiler.spec.kinds import load_spec
from mcbuild.cli import main

DIRT = {"type": "minecraft:block", "pools": [{"rolls": 1.0, "bonus_rolls": 0.0,
                                              "entries": [{"type": "minecraft:item", "name": "minecraft:dirt"}]}]}


def pack(name: str):
    spec = load_spec(SPECS / f"{name}.yaml")
    resolved = resolve(spec, name, rulebook.vanilla())
    files = read_zip(build_zip(emit(resolved, rulebook.vanilla())))
    return spec, resolved, files


def codes(findings) -> set[str]:
    return {f.code for f in findings.hard_failures}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("build")
    for name in ("m01", "m04"):
        write(compile_path(SPECS / f"{name}.yaml"), out)
    return out


@pytest.mark.parametrize("name", ["m01", "m02", "m03", "m04", "m05", "m06"])
def test_shipped_suites_pass(name):
    spec, resolved, files = pack(name)
    found = audit_mirror(files, spec, resolved, expected_files(resolved), trace_pack(files, spec, resolved), name)
    assert found.hard_failures == []


def test_format_checks():
    spec, resolved, files = pack("m01")  # m01 has a cooking marker, functions and a load tag
    broken = dict(files)
    broken["pack.mcmeta"] = json.dumps({"pack": {"pack_format": 12, "description": "x"}}).encode()
    fn = next(p for p in files if p.endswith("_each.mcfunction"))
    broken[fn] = files[fn] + b"givee @s minecraft:stone 1\n"
    cook = "data/minecraft/recipes/iron_ingot_from_smelting_raw_iron.json"
    recipe = json.loads(files[cook])
    broken[cook] = json.dumps({**recipe, "result": {"item": "minecraft:iron_nugget", "count": 3}}).encode()
    broken["data/minecraft/loot_tables/blocks/stone.json"] = b"{not json"
    broken["notes.txt"] = b"hello"
    found = audit_mirror(broken, spec, resolved, expected_files(resolved), None, "m01")
    assert {"pack_format", "function_invalid", "cooking_result_object", "json_invalid", "unexpected_file"} <= codes(found)
    assert "tracer_missing" in {w.code for w in found.warnings}


def test_rule_text_in_the_pack_is_a_leak():
    spec, resolved, files = pack("m04")
    leaky = dict(files)
    leaky["pack.mcmeta"] = json.dumps({"pack": {"pack_format": 10, "description": spec.title}}).encode()
    table = json.loads(files["data/minecraft/loot_tables/entities/cow.json"])
    leaky["data/minecraft/loot_tables/entities/cow.json"] = json.dumps({**table, "comment": "cow-bookshelf"}).encode()
    found = audit_mirror(leaky, spec, resolved, expected_files(resolved), None, "m04")
    leaks = [f for f in found.hard_failures if f.code == "rule_text_leak"]
    assert {f.file for f in leaks} == {"pack.mcmeta", "data/minecraft/loot_tables/entities/cow.json"}


def test_missing_and_mismatched_overrides():
    spec, resolved, files = pack("m04")
    broken = dict(files)
    del broken["data/minecraft/loot_tables/blocks/coal_ore.json"]
    broken["data/minecraft/loot_tables/entities/cow.json"] = json.dumps(DIRT).encode()
    found = audit_mirror(broken, spec, resolved, expected_files(resolved), None, "m04")
    assert {"missing_override", "override_mismatch"} <= codes(found)


def test_tracer_findings_from_report():
    spec, resolved, files = pack("m04")
    report = trace_pack(files, spec, resolved)
    report["tasks"]["diamond"]["suite"] = {"reachable": False, "route_length": None, "route": []}
    report["changes"][4] = {**report["changes"][4], "on_routes": []}
    report["changes"][3] = {**report["changes"][3], "encountered_before_completion": [], "observed_by": ""}
    found = audit_mirror(files, spec, resolved, expected_files(resolved), report, "m04")
    fields = {(f.code, f.field) for f in found.hard_failures}
    assert ("task_unreachable", "selected_tasks[diamond]") in fields
    assert ("change_off_route", "changes[4]") in fields
    assert ("change_unobservable", "changes[3]") in fields
    assert ("change_not_encountered", "changes[3]") in {(w.code, w.field) for w in found.warnings}


def test_a_plain_ore_change_is_bypassed_by_its_deepslate_twin():
    """The paper's M06 rule sheet names only plain iron ore; the worlds also place deepslate iron ore,
    which still drops raw iron alone with the same pickaxe, so an agent need never meet the paper."""
    spec, _, _ = pack("m06")
    spec = spec.model_copy(update={"changes": [spec.changes[0], spec.changes[1].model_copy(update={"target": "minecraft:iron_ore"})]})
    resolved = resolve(spec, "m06", rulebook.vanilla())
    files = read_zip(build_zip(emit(resolved, rulebook.vanilla())))
    report = trace_pack(files, spec, resolved)
    assert report["changes"][1]["bypassed_by"] == {"mine:minecraft:iron_ore": ["mine:minecraft:deepslate_iron_ore"]}
    assert report["changes"][0]["bypassed_by"] == {}
    found = audit_mirror(files, spec, resolved, expected_files(resolved), report, "m06")
    bypassed = [f for f in found.hard_failures if f.code == "change_bypassed"]
    assert [f.field for f in bypassed] == ["changes[1]"] and "deepslate_iron_ore" in bypassed[0].message


def test_cli_clean_build_passes(built):
    result = CliRunner().invoke(main, ["audit", str(built / "m04"), str(built / "m01")])
    assert result.exit_code == 0, result.output
    assert "0 hard failure(s)" in result.output


def test_cli_flags_hand_broken_pack(built, tmp_path):
    broken = tmp_path / "m04"
    shutil.copytree(built / "m04", broken)
    files = read_zip((broken / "datapack.zip").read_bytes())
    # an extra vanilla override the manifest never declares, and no iron anywhere: tasks unreachable
    files["data/minecraft/loot_tables/blocks/stone.json"] = json.dumps(DIRT).encode()
    for ore in ("iron_ore", "deepslate_iron_ore"):
        files[f"data/minecraft/loot_tables/blocks/{ore}.json"] = json.dumps(DIRT).encode()
    (broken / "datapack.zip").write_bytes(build_zip(files))
    result = CliRunner().invoke(main, ["audit", str(broken)])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert any(ln.startswith("HARD undeclared_override: data/minecraft/loot_tables/blocks/stone.json") for ln in lines)
    assert any(ln.startswith("HARD task_unreachable:") and "iron_armor" in ln for ln in lines)
    as_json = CliRunner().invoke(main, ["audit", "--json", str(broken)])
    assert as_json.exit_code == 1
    assert "undeclared_override" in {f["code"] for f in json.loads(as_json.output)["hard_failures"]}


def test_a_pack_the_tracer_cannot_read_is_a_hard_failure(built, tmp_path):
    """The folder audit re-traces the pack on disk; it never falls back to the build report's trace."""
    from mcbuild.pipeline.build import audit_folder

    broken = tmp_path / "m04"
    shutil.copytree(built / "m04", broken)
    files = read_zip((broken / "datapack.zip").read_bytes())
    dangling = {"type": "minecraft:block", "pools": [{"rolls": 1.0, "entries": [
        {"type": "minecraft:loot_table", "name": "minecraft:blocks/no_such_table"}]}]}
    files["data/minecraft/loot_tables/blocks/oak_log.json"] = json.dumps(dangling).encode()
    (broken / "datapack.zip").write_bytes(build_zip(files))
    found = audit_folder(broken)
    assert "tracer_failed" in codes(found)
    assert "tracer_missing" in {f.code for f in found.warnings}


def test_cli_missing_artifact(tmp_path):
    result = CliRunner().invoke(main, ["audit", str(tmp_path)])
    assert result.exit_code == 1 and "HARD artifact_missing" in result.output
