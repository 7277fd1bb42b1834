"""World construction on ONE world in a reduced area: determinism, read-back by amulet (when the
`amulet` extra is installed) above and below y=0, complete block states and surviving plants read back with nbtlib, what a chunk
carries, level.dat fields, pair identity, verify/freeze, and rejection without output."""
from __future__ import annotations

import hashlib
import json

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from mcbuild.audits.worldgen_plants import audit_plants
from mcbuild.compiler.core.errors import CompileError
from mcbuild.compiler.core.paths import SPECS
from mcbuild.compiler.rules.blockstates import block_states, format_state, parse_state
from mcbuild.compiler.rules.pack import build_zip, pack_mcmeta
from mcbuild.compiler.spec.kinds import load_spec
from mcbuild.pipeline.worlds import WORLD_AREA, WorldArea, build_worlds
from mcbuild.compiler.worlds.features import generate
from mcbuild.compiler.worlds.integrity import freeze_worlds, verify_worlds
from mcbuild.compiler.worlds.layout import world_dir
from mcbuild.compiler.worlds.save.level_dat import read_data

SMALL = WorldArea(chunk_min=-3, chunk_max=2)       # 6 x 6 chunks around spawn, full height
MIRRORS = ["m01", "m02"]
SEED = 190601


def make_inputs(root: Path, seed: int = SEED, plains: dict | None = None) -> Path:
    """specs/ (worlds.yaml with one plains world, plains.yaml) and stand-in rule packs under build/."""
    specs = root / "specs"
    specs.mkdir(parents=True)
    worlds = {"schema_version": "1.0", "kind": "worlds", "id": "worlds",
              "selected_tasks": ["iron_armor", "diamond", "enchantment"], "mirrors": MIRRORS,
              "worlds": [{"id": "plains-1", "biome": "plains", "seed": seed}]}
    (specs / "worlds.yaml").write_text(yaml.safe_dump(worlds))
    if plains is None:
        shutil.copy(SPECS / "plains.yaml", specs / "plains.yaml")
    else:
        (specs / "plains.yaml").write_text(yaml.safe_dump(plains))
    for m in MIRRORS:
        stand_in(root / "build" / m, f"stand-in {m}")
    return specs / "worlds.yaml"


def stand_in(folder: Path, text: str) -> None:
    """A stand-in rule pack with the report.json hash the world builder checks."""
    folder.mkdir(parents=True, exist_ok=True)
    data = build_zip({"pack.mcmeta": pack_mcmeta(text)})
    (folder / "datapack.zip").write_bytes(data)
    (folder / "report.json").write_text(json.dumps({"datapack_sha256": hashlib.sha256(data).hexdigest()}))


def build(root: Path, **kw) -> dict:
    return build_worlds(root / "specs" / "worlds.yaml", root / "build", area=SMALL, jobs=1, **kw)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("worlds")
    make_inputs(root)
    build(root)
    return root


def save(root: Path, condition: str = "vanilla") -> Path:
    return world_dir("plains-1", condition, root / "build")


def test_save_is_a_plain_java_save(built):
    files = sorted(p.relative_to(save(built)).as_posix() for p in save(built).rglob("*") if p.is_file())
    assert files == ["datapacks/plains.zip", "level.dat", "region/r.-1.-1.mca", "region/r.-1.0.mca",
                     "region/r.0.-1.mca", "region/r.0.0.mca"]
    for region in (save(built) / "region").glob("*.mca"):
        assert region.read_bytes()[4096:8192] == bytes(4096)      # no write timestamps


def test_same_seed_gives_same_bytes_other_seed_differs(built, tmp_path):
    again, other = tmp_path / "again", tmp_path / "other"
    make_inputs(again)
    build(again)
    for region in sorted((save(built) / "region").glob("*.mca")):
        assert (save(again) / "region" / region.name).read_bytes() == region.read_bytes()
    assert (save(again) / "level.dat").read_bytes() == (save(built) / "level.dat").read_bytes()
    make_inputs(other, seed=SEED + 1)
    build(other)
    assert (save(other) / "region" / "r.0.0.mca").read_bytes() != (save(built) / "region" / "r.0.0.mca").read_bytes()


def test_amulet_reads_back_blocks_above_and_below_zero(built, tmp_path):
    """An editor that was not used to write the saves reads them (opt-in: ``pip install -e '.[amulet]'``)."""
    amulet = pytest.importorskip("amulet", reason="the independent editor check needs the amulet extra")

    spec = load_spec(SPECS / "plains.yaml")
    world = generate(spec, SEED, SMALL)
    rng = np.random.default_rng(0)
    picks = [(int(x), int(y), int(z)) for x, y, z in zip(rng.integers(SMALL.x_min, SMALL.x_min + SMALL.size, 300),
                                                         rng.integers(-64, 90, 300),
                                                         rng.integers(SMALL.x_min, SMALL.x_min + SMALL.size, 300))]
    picks += [(0, -64, 0), (0, -40, 0), (5, -1, 5), (0, spec.terrain.base_height, 0)]
    copy = shutil.copytree(save(built), tmp_path / "save")     # amulet writes a session.lock
    level = amulet.load_level(str(copy))
    try:
        assert level.bounds("minecraft:overworld").min_y == -64
        below = 0
        for x, y, z in picks:
            block, _ = level.get_version_block(x, y, z, "minecraft:overworld", ("java", (1, 19, 0)))
            expected = world.palette.names[world.blocks[x - SMALL.x_min, y - SMALL.y_min, z - SMALL.x_min]]
            assert block.namespaced_name == expected.split("[")[0], (x, y, z)
            below += y < 0 and block.namespaced_name != "minecraft:air"
        assert below > 50
        grass, _ = level.get_version_block(0, spec.terrain.base_height, 0, "minecraft:overworld", ("java", (1, 19, 0)))
        assert grass.namespaced_name == "minecraft:grass_block"
    finally:
        level.close()


def _chunks(save_dir: Path):
    """Every chunk compound of a save, read with nbtlib (by hand: not through the writer's code)."""
    import io
    import struct
    import zlib

    import nbtlib

    for region in sorted((save_dir / "region").glob("*.mca")):
        raw = region.read_bytes()
        for i in range(1024):
            (loc,) = struct.unpack_from(">I", raw, 4 * i)
            if loc:
                start = (loc >> 8) * 4096
                (length,) = struct.unpack_from(">I", raw, start)
                assert raw[start + 4] == 2                      # zlib
                root = nbtlib.File.parse(io.BytesIO(zlib.decompress(raw[start + 5:start + 4 + length])))
                yield root[""] if "" in root else root


def _state(entry) -> str:
    props = {str(k): str(v) for k, v in entry.get("Properties", {}).items()}
    return format_state(str(entry["Name"]), props)


def _read_grid(save_dir: Path, area: WorldArea) -> tuple[np.ndarray, list[str]]:
    """The save's blocks as ``[x, y, z]`` indices into full state strings."""
    index_of: dict[str, int] = {}
    blocks = np.zeros((area.size, area.y_max - area.y_min + 1, area.size), dtype=np.uint16)
    for chunk in _chunks(save_dir):
        x0, z0 = int(chunk["xPos"]) * 16 - area.x_min, int(chunk["zPos"]) * 16 - area.x_min
        for section in chunk["sections"]:
            states = section["block_states"]
            palette = [_state(p) for p in states["palette"]]
            lut = np.array([index_of.setdefault(n, len(index_of)) for n in palette])
            if "data" in states:
                bits = max(4, (len(palette) - 1).bit_length())
                words = np.array([int(v) for v in states["data"]], dtype=np.int64).astype(np.uint64)
                shifts = np.arange(64 // bits, dtype=np.uint64) * np.uint64(bits)
                index = ((words[:, None] >> shifts) & np.uint64((1 << bits) - 1)).ravel()[:4096].astype(np.int64)
            else:
                index = np.zeros(4096, dtype=np.int64)
            y0 = int(section["Y"]) * 16 - area.y_min
            blocks[x0:x0 + 16, y0:y0 + 16, z0:z0 + 16] = lut[index].reshape(16, 16, 16).transpose(2, 0, 1)
    return blocks, list(index_of)


def test_saves_carry_complete_default_states_and_only_plants_that_survive(built):
    """Every palette entry has exactly its block's 1.19 properties with allowed values (minecraft-data),
    the saved grid is the generated one, and every plant in it passes the world-gen audit."""
    states = block_states()
    blocks, names = _read_grid(save(built), SMALL)
    for name in names:
        block, props = parse_state(name)
        assert set(props) == set(states.values[block]), name
        assert all(v in states.values[block][k] for k, v in props.items()), name
    assert "minecraft:grass_block[snowy=false]" in names and "minecraft:deepslate[axis=y]" in names
    assert any(n.startswith("minecraft:oak_leaves[distance=2,persistent=false,waterlogged=false") for n in names)
    world = generate(load_spec(SPECS / "plains.yaml"), SEED, SMALL)
    full = [format_state(*states.complete(n)) for n in world.palette.names]
    saved_index = np.array([names.index(n) if n in names else -1 for n in full])
    assert np.array_equal(saved_index[world.blocks], blocks)
    assert audit_plants(blocks, names, (SMALL.x_min, SMALL.y_min, SMALL.x_min), "plains-1").ok


def test_chunks_leave_heightmaps_and_light_to_the_server(built):
    """What docs/worlds.md says a chunk carries: status full, no heightmaps, isLightOn 0 and no light
    arrays (a 1.19 server computes both on load), the 1.19 structure keys, no ticks or entities."""
    for chunk in _chunks(save(built)):
        assert str(chunk["Status"]) == "full" and int(chunk["DataVersion"]) == 3105
        assert dict(chunk["Heightmaps"]) == {} and int(chunk["isLightOn"]) == 0
        assert sorted(chunk["structures"]) == ["References", "starts"]
        assert all(len(chunk[k]) == 0 for k in ("block_ticks", "fluid_ticks", "entities", "block_entities"))
        assert len(chunk["sections"]) == 24
        assert all(sorted(s) == ["Y", "biomes", "block_states"] for s in chunk["sections"])


def test_level_dat_fields(built):
    data = read_data(save(built) / "level.dat")
    assert int(data["DataVersion"]) == 3105 and str(data["Version"]["Name"]) == "1.19"
    assert int(data["Difficulty"]) == 0
    assert (int(data["SpawnX"]), int(data["SpawnY"]), int(data["SpawnZ"])) == (0, 69, 0)
    assert [str(p) for p in data["DataPacks"]["Enabled"]] == ["vanilla", "file/plains.zip"]
    overworld = data["WorldGenSettings"]["dimensions"]["minecraft:overworld"]
    assert str(overworld["type"]) == "minecraft:overworld"
    assert str(overworld["generator"]["settings"]) == "mcbuild:plains"
    assert int(data["WorldGenSettings"]["seed"]) == SEED
    assert str(data["GameRules"]["doDaylightCycle"]) == "false" and str(data["GameRules"]["doWeatherCycle"]) == "false"
    mirror = read_data(save(built, "m02") / "level.dat")
    assert [str(p) for p in mirror["DataPacks"]["Enabled"]] == ["vanilla", "file/plains.zip", "file/m02.zip"]


def test_mirror_copies_differ_only_by_rule_pack(built):
    vanilla = {p.relative_to(save(built)).as_posix(): p.read_bytes() for p in save(built).rglob("*") if p.is_file()}
    for m in MIRRORS:
        copy = {p.relative_to(save(built, m)).as_posix(): p.read_bytes() for p in save(built, m).rglob("*") if p.is_file()}
        assert set(copy) == set(vanilla) | {f"datapacks/{m}.zip"}
        assert all(copy[k] == v for k, v in vanilla.items() if k != "level.dat")
    assert verify_worlds(built / "build", built / "specs" / "worlds.yaml") == ([], 3 * 6 + 2 + 1)


def test_route_report_lists_resources_near_spawn(built):
    import json

    report = json.loads((built / "build" / "worlds" / "plains-1" / "report.json").read_text())
    assert all(r["ok"] for r in report["routes"].values())
    for ore in ("minecraft:diamond_ore", "minecraft:iron_ore", "minecraft:lapis_ore"):
        assert report["resources"][ore]["nearest_exposed_horizontal"] <= 24
    assert report["resources"]["minecraft:deepslate_diamond_ore"]["count"] > 0
    assert report["resources"]["minecraft:cow"]["count"] == 6


def test_verify_catches_tampering_and_freeze_pins_the_build(tmp_path):
    worlds_file = make_inputs(tmp_path)
    out = tmp_path / "build"
    build(tmp_path)
    region = save(tmp_path, "m01") / "region" / "r.0.0.mca"
    original = region.read_bytes()
    region.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))
    problems, _ = verify_worlds(out, worlds_file)
    assert problems == ["plains-1/m01/region/r.0.0.mca: sha256 differs from the manifest"]
    region.write_bytes(original)

    freeze_worlds(out, worlds_file)
    assert verify_worlds(out, worlds_file)[0] == []
    stand_in(out / "m02", "changed rules")
    assert any("m02.zip differs" in p for p in verify_worlds(out, worlds_file)[0])
    with pytest.raises(CompileError, match="pack m02 differs from the frozen one"):
        build(tmp_path)
    build(tmp_path, unfreeze=True)
    assert not (out / "FROZEN.json").exists()
    assert verify_worlds(out, worlds_file)[0] == []


def _cli(args: list[str]):
    from mcbuild.cli import main

    return CliRunner().invoke(main, args)


@pytest.mark.parametrize("problem", ["unknown_block", "band_outside_terrain", "missing_resource", "missing_pack"])
def test_bad_input_is_rejected_with_one_line_and_nothing_written(tmp_path, problem):
    plains = yaml.safe_load((SPECS / "plains.yaml").read_text())
    if problem == "unknown_block":
        plains["ecology"]["water"]["shore"] = "minecraft:gold_block"
    elif problem == "band_outside_terrain":
        plains["resources"]["ores"][1]["bands"][0].update(min_y=120, max_y=140)
    elif problem == "missing_resource":
        plains["ecology"]["creatures"] = [{"entity": "minecraft:sheep", "count": 3, "spawn_weight": 5, "group": 2}]
    worlds_file = make_inputs(tmp_path, plains=plains)
    if problem == "missing_pack":
        (tmp_path / "build" / "m02" / "datapack.zip").unlink()
    result = _cli(["build", "worlds", "--worlds", str(worlds_file), "--build", str(tmp_path / "build")])
    assert result.exit_code == (2 if problem == "unknown_block" else 1)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    expected = {"unknown_block": "ecology.water.shore", "band_outside_terrain": "band_outside_terrain",
                "missing_resource": "needs leather", "missing_pack": "m02/datapack.zip"}[problem]
    assert expected in lines[0]
    assert not (tmp_path / "build" / "worlds").exists()


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("MCBUILD_SLOW") != "1", reason="builds all 70 saves; set MCBUILD_SLOW=1")
def test_all_seventy_saves(tmp_path):
    out = tmp_path / "build"
    for m in ["m01", "m02", "m03", "m04", "m05", "m06"]:
        stand_in(out / m, f"stand-in {m}")
    manifest = build_worlds(SPECS / "worlds.yaml", out, area=WORLD_AREA)
    assert len(manifest["worlds"]) == 10
    assert len(list((out / "worlds").glob("*/*/level.dat"))) == 70
    assert verify_worlds(out, SPECS / "worlds.yaml")[0] == []
