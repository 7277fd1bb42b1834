"""mcbuild compile: snapshots, determinism, bad specs, atomic output, tracer facts."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from mcbuild.compiler.build import compile_path
from mcbuild.compiler.core.owned import MARKER
from mcbuild.compiler.core.paths import SPECS
from mcbuild.compiler.rules.commands import validate_function
from mcbuild.compiler.rules.pack import read_zip
from mcbuild.cli import main

SUITES = ("m01", "m02", "m03", "m04", "m05", "m06")


def artifact_text(artifact) -> dict[str, str]:
    """Every generated file as text: pack entries, report, spec and rule sheet."""
    out = {f"datapack.zip/{k}": v.decode() for k, v in sorted(read_zip(artifact.files["datapack.zip"]).items())}
    for name in ("report.json", "spec.json", "rules.md"):
        out[name] = artifact.files[name].decode()
    return out


@pytest.mark.parametrize("sid", SUITES)
def test_generated_files_snapshot(suites, sid, snapshot):
    assert artifact_text(suites[sid]) == snapshot


def test_two_compiles_are_byte_identical(suites):
    for sid in SUITES:
        again = compile_path(SPECS / f"{sid}.yaml")
        assert again.files == suites[sid].files


def test_zip_entries_sorted_with_fixed_time(suites):
    import io
    import zipfile

    for art in suites.values():
        with zipfile.ZipFile(io.BytesIO(art.files["datapack.zip"])) as zf:
            names = zf.namelist()
            assert names == sorted(names)
            assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_pack_is_valid_for_1_19(suites):
    for art in suites.values():
        files = read_zip(art.files["datapack.zip"])
        assert json.loads(files["pack.mcmeta"])["pack"]["pack_format"] == 10
        for name, data in files.items():
            if name.endswith(".json"):
                doc = json.loads(data)
                if doc.get("type") in ("minecraft:smelting", "minecraft:blasting", "minecraft:smoking"):
                    assert isinstance(doc["result"], str), name
            if name.endswith(".mcfunction"):
                assert validate_function(data.decode().splitlines()) == [], name


def test_only_needed_files_are_emitted(suites):
    m05 = read_zip(suites["m05"].files["datapack.zip"])
    assert sorted(m05) == [
        "data/mcbuild/recipes/cooking/0.json", "data/mcbuild/recipes/cooking/1.json",
        "data/mcbuild/recipes/cooking/2.json",
        "data/minecraft/recipes/diamond_pickaxe.json", "data/minecraft/recipes/furnace.json",
        "data/minecraft/recipes/iron_nugget_from_blasting.json", "data/minecraft/recipes/iron_nugget_from_smelting.json",
        "data/minecraft/recipes/iron_pickaxe.json", "pack.mcmeta"]


# ---------------------------------------------------------------- tracer facts
def routes(art, task):
    t = art.report["tracer"]["tasks"][task]
    return t["vanilla"], t["suite"]


def test_m01_lengthens_every_route(suites):
    for task in ("iron_armor", "diamond", "enchantment"):
        v, s = routes(suites["m01"], task)
        assert s["route_length"] > v["route_length"]


def test_m02_enchanting_table_needs_no_diamond_or_obsidian(suites):
    v, s = routes(suites["m02"], "enchantment")
    assert "craft_grid:minecraft:enchanting_table" in v["route"]
    assert "craft_grid:minecraft:enchanting_table" not in s["route"]
    assert "craft_grid:minecraft:book" in s["route"]
    assert not any(k.startswith("mine:minecraft:obsidian") or "diamond_ore" in k for k in s["route"])
    assert s["route_length"] < v["route_length"]


def test_m04_adds_one_unpacking_craft_per_resource(suites):
    _, s = routes(suites["m04"], "diamond")
    unpacks = [k for k in s["route"] if k in ("craft_grid:minecraft:raw_iron", "craft_grid:minecraft:diamond",
                                               "craft_grid:minecraft:coal", "craft_grid:minecraft:lapis_lazuli")]
    assert "craft_grid:minecraft:raw_iron" in unpacks and "craft_grid:minecraft:diamond" in unpacks
    assert len(unpacks) == len(set(unpacks))


def test_m05_routes_iron_pickaxe_through_smelting_a_hoe(suites):
    v, s = routes(suites["m05"], "diamond")
    hoe = [k for k in s["route"] if k.startswith("smelt:minecraft:iron_hoe@")]
    assert hoe and s["route"].index(hoe[0]) < s["route"].index("mine:minecraft:diamond_ore")
    assert "craft_grid:minecraft:iron_pickaxe" in v["route"]
    assert not any(k.startswith("smelt:minecraft:iron_hoe") for k in v["route"])


def test_every_change_is_on_a_route_and_observed(suites):
    for art in suites.values():
        for ch in art.report["tracer"]["changes"]:
            assert ch["on_routes"], ch["id"]
            assert ch["observed_by"] in ("craft_grid", "smelt", "mine", "attack")


# ---------------------------------------------------------------- CLI
def run(args, cwd=None):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def test_cli_compiles_all_and_check_passes(tmp_path):
    res = run(["compile", *[str(SPECS / f"{s}.yaml") for s in SUITES], "--build", str(tmp_path)])
    assert res.exit_code == 0, res.output
    for sid in SUITES:
        assert sorted(p.name for p in (tmp_path / sid).iterdir()) == [MARKER, "datapack.zip", "report.json", "rules.md",
                                                                    "spec.json"]
    res = run(["compile", *[str(SPECS / f"{s}.yaml") for s in SUITES], "--build", str(tmp_path), "--check"])
    assert res.exit_code == 0, res.output
    (tmp_path / "m03" / "rules.md").write_text("tampered")
    res = run(["compile", str(SPECS / "m03.yaml"), "--build", str(tmp_path), "--check"])
    assert res.exit_code == 1 and "rules.md" in res.output


def broken(tmp_path: Path, edit) -> Path:
    data = yaml.safe_load((SPECS / "m04.yaml").read_text())
    data["id"] = "broken"
    edit(data)
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("edit,field,words", [
    (lambda d: d["changes"][0]["outputs"][0].update(item="minecraft:coal_blok"), "changes[0].outputs[0].item", "unknown item"),
    (lambda d: d["changes"][1]["outputs"][0].update(count=65), "changes[1].outputs[0].count", "64"),
    (lambda d: d["changes"][2].update(operator="teleport"), "changes[2].operator", "Input should be"),
    (lambda d: d.update(kind="mirrror"), "kind", "must be"),
    (lambda d: d["changes"][0].update(target="minecraft:glass"), "changes[0].target", "editable"),
    (lambda d: d.update(selected_tasks=["iron_armor", "nether"]), "selected_tasks", "unknown task"),
])
def test_bad_spec_is_one_line_exit_2_nothing_written(tmp_path, edit, field, words):
    path = broken(tmp_path, edit)
    out = tmp_path / "build"
    res = CliRunner().invoke(main, ["compile", str(path), "--build", str(out)])
    assert res.exit_code == 2, res.output
    line = res.output.strip()
    assert "\n" not in line and str(path) in line and field in line and words in line
    assert not (out / "broken").exists()


def test_malformed_yaml(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("kind: mirror\nchanges: [\n")
    res = CliRunner().invoke(main, ["compile", str(path), "--build", str(tmp_path / "b")])
    assert res.exit_code == 2 and "malformed YAML" in res.output and str(path) in res.output


def test_unreachable_task_fails_and_keeps_old_build(tmp_path):
    out = tmp_path / "build"
    good = broken(tmp_path, lambda d: None)
    assert run(["compile", str(good), "--build", str(out)]).exit_code == 0
    before = {p.name: p.read_bytes() for p in (out / "broken").iterdir()}
    path = broken(tmp_path, lambda d: d["changes"].__setitem__(1, {
        "id": "no-iron", "operator": "block_drops_replace",
        "target": ["minecraft:iron_ore", "minecraft:deepslate_iron_ore"],
        "outputs": [{"item": "minecraft:cobblestone", "count": 1}]}))
    res = CliRunner().invoke(main, ["compile", str(path), "--build", str(out)])
    assert res.exit_code == 1 and "task_unreachable" in res.output
    assert {p.name: p.read_bytes() for p in (out / "broken").iterdir()} == before


def test_change_on_no_route_fails(tmp_path):
    path = broken(tmp_path, lambda d: d.update(selected_tasks=["iron_armor"], changes=[
        d["changes"][1], {"id": "cow-book", "operator": "entity_loot_add", "target": "minecraft:cow",
                          "outputs": [{"item": "minecraft:book", "count": 1}]}]))
    res = CliRunner().invoke(main, ["compile", str(path), "--build", str(tmp_path / "b")])
    assert res.exit_code == 1 and "change_off_route" in res.output and "cow-book" in res.output
    assert not (tmp_path / "b" / "broken").exists()


def test_change_with_an_unchanged_twin_is_refused_naming_it(tmp_path):
    """Smelting raw iron changed in the furnace only: its blasting twin still makes ingots."""
    path = broken(tmp_path, lambda d: d.update(changes=[d["changes"][0], {
        "id": "furnace-nuggets", "operator": "cook_output", "target": "minecraft:raw_iron", "stations": ["furnace"],
        "outputs": [{"item": "minecraft:iron_nugget", "count": 3}]}]))
    res = CliRunner().invoke(main, ["compile", str(path), "--build", str(tmp_path / "b")])
    assert res.exit_code == 1 and "change_bypassed" in res.output and "furnace-nuggets" in res.output
    assert "smelt:minecraft:raw_iron@blast_furnace" in res.output
    assert not (tmp_path / "b" / "broken").exists()


def test_json_schema_export():
    from mcbuild.compiler.spec.kinds import json_schema

    schema = json_schema("mirror")
    assert schema["properties"]["changes"]["maxItems"] == 12


def test_every_spec_file_validates_against_its_exported_schema():
    """`mcbuild schema --kind K` is the schema the spec files meet (checked with jsonschema)."""
    import jsonschema
    import yaml

    from mcbuild.compiler.core.paths import SPECS

    schemas = {}
    for path in sorted(SPECS.glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        kind = data["kind"]
        if kind not in schemas:
            out = CliRunner().invoke(main, ["schema", "--kind", kind])
            assert out.exit_code == 0, out.output
            schemas[kind] = jsonschema.Draft202012Validator(json.loads(out.output))
        assert not list(schemas[kind].iter_errors(data)), path.name
    assert set(schemas) == {"mirror", "biome", "worlds"}


@pytest.mark.parametrize("text, field", [("kind: mirrror\nid: x\n", "kind"), ("kind: [mirror\n", "malformed YAML")])
def test_compile_all_names_a_spec_it_cannot_place(tmp_path, monkeypatch, text, field):
    """`compile --all` never skips a spec it cannot read or place: one line naming the file and field."""
    import mcbuild.cli.cmd_compile as cmd

    (tmp_path / "bad.yaml").write_text(text)
    monkeypatch.setattr(cmd, "SPECS", tmp_path)
    result = CliRunner().invoke(main, ["compile", "--all", "--build", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "bad.yaml" in result.output and field in result.output
    assert not (tmp_path / "out").exists()
