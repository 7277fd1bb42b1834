"""Damaged saves are never used as if whole: verified before every episode, faults in a study.

Every damage experiment runs on a copy of one built world (``plains-1``: its Vanilla and m04
saves, the manifest and the m04 pack) in a temporary build folder.
"""
from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys

import pytest

from mcbuild.compiler.core.paths import ROOT
from mcbuild.compiler.worlds.layout import WORLDS_SCHEMA
from mcbuild.runtime.episode import integrity
from mcbuild.runtime.episode.opening import UnknownName, open_episode
from mcbuild.runtime.errors import InfrastructureFault

WORLD, MIRROR = "plains-1", "m04"
REGION = f"{WORLD}/{MIRROR}/region/r.0.0.mca"


@pytest.fixture
def build(world_build, tmp_path):
    """A private copy of plains-1 (vanilla and m04), its manifest entry and the m04 pack."""
    root = tmp_path / "build"
    for cond in ("vanilla", MIRROR):
        shutil.copytree(world_build / "worlds" / WORLD / cond, root / "worlds" / WORLD / cond)
    manifest = json.loads((world_build / "worlds" / "manifest.json").read_text())
    entry = manifest["worlds"][WORLD]
    entry["files"] = {k: v for k, v in entry["files"].items() if k.split("/")[1] in ("vanilla", MIRROR)}
    (root / "worlds" / "manifest.json").write_text(json.dumps({**manifest, "worlds": {WORLD: entry}}))
    shutil.copytree(world_build / MIRROR, root / MIRROR)
    return root


def _fault(build, match, condition=MIRROR):
    with pytest.raises(InfrastructureFault, match=match):
        open_episode(WORLD, condition, "iron_armor", 3, 0, build=build)


def _run_cli(*args):
    return subprocess.run([sys.executable, "-c", "from mcbuild.cli import main; main()", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_the_intact_copy_runs(build):
    with open_episode(WORLD, MIRROR, "iron_armor", 3, 0, build=build) as ep:
        assert ep.setup.condition == MIRROR


@pytest.mark.parametrize("damage, match", [
    ("remove", "r.0.0.mca: missing"),
    ("truncate", "r.0.0.mca: sha256 differs"),
    ("flip", "r.0.0.mca: sha256 differs"),
    ("extra", "r.9.9.mca: not in"),
])
def test_a_damaged_region_file_is_a_fault_naming_it(build, damage, match):
    path = build / "worlds" / REGION
    if damage == "remove":
        path.unlink()
    elif damage == "truncate":
        path.write_bytes(path.read_bytes()[:5000])
    elif damage == "flip":
        data = bytearray(path.read_bytes())
        data[9000] ^= 0xFF
        path.write_bytes(bytes(data))
    else:
        shutil.copy(path, path.with_name("r.9.9.mca"))
    _fault(build, match)


def test_damage_to_the_vanilla_twin_is_a_fault_of_the_mirror_episode(build):
    (build / "worlds" / WORLD / "vanilla" / "level.dat").write_bytes(b"garbage")
    _fault(build, "vanilla/level.dat: sha256 differs")


@pytest.mark.parametrize("content, match", [
    (None, "manifest.json: missing"),
    ("{not json", "manifest.json: unreadable"),
    ('{"worlds": {}}', "no schema_version, not a worlds manifest"),
    (f'{{"schema_version": "{WORLDS_SCHEMA}", "worlds": {{}}}}', "no save plains-1/m04 is listed"),
])
def test_a_missing_or_damaged_manifest_is_a_fault(build, content, match):
    path = build / "worlds" / "manifest.json"
    path.unlink() if content is None else path.write_text(content)
    _fault(build, match)


def test_a_frozen_build_is_checked_against_the_freeze(build):
    manifest = json.loads((build / "worlds" / "manifest.json").read_text())
    files = dict(manifest["worlds"][WORLD]["files"])
    (build / "FROZEN.json").write_text(json.dumps({"files": files}))
    open_episode(WORLD, MIRROR, "iron_armor", 3, 0, build=build).close()
    files[REGION] = "0" * 64                      # the manifest and the save agree, the freeze does not
    (build / "FROZEN.json").write_text(json.dumps({"files": files}))
    _fault(build, "differs from .*FROZEN.json")


def test_unknown_names_list_the_valid_ones(build):
    with pytest.raises(UnknownName, match=r"unknown world 'plains-9' \(known: plains-1, plains-2"):
        open_episode("plains-9", MIRROR, "iron_armor", build=build)
    with pytest.raises(UnknownName, match=r"unknown condition 'm09' \(known: vanilla, m01"):
        open_episode(WORLD, "m09", "iron_armor", build=build)
    with pytest.raises(ValueError, match="budget must be at least 1"):
        open_episode(WORLD, MIRROR, "iron_armor", 0, build=build)


def test_each_file_is_hashed_once_per_size_and_mtime(build, monkeypatch):
    hashed = []
    real = integrity.hashlib.sha256

    def counting(*args):
        hashed.append(1)
        return real(*args)

    save = build / "worlds" / WORLD / MIRROR
    monkeypatch.setattr(integrity.hashlib, "sha256", counting)
    integrity.verify_save(save, build)
    first = len(hashed)
    assert first == sum(1 for p in save.rglob("*") if p.is_file())
    integrity.verify_save(save, build)
    integrity._VERIFIED.pop(str(save.resolve()))             # forget the verdict, keep the file hashes
    integrity.verify_save(save, build)
    assert len(hashed) == first
    st = (save / "level.dat").stat()
    os.utime(save / "level.dat", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    integrity.verify_save(save, build)
    assert len(hashed) == first + 1


def test_cli_episode_on_a_damaged_save_is_one_line_exit_1(build):
    (build / "worlds" / REGION).unlink()
    res = _run_cli("episode", "run", "--world", WORLD, "--condition", MIRROR, "--task", "iron_armor",
                   "--agent", "adaptive-planner", "--build", str(build))
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr.strip().splitlines() == [f"error: {build / 'worlds' / REGION}: missing; damaged or changed "
                                               "save; run `mcbuild build verify` and rebuild it"]


def test_a_study_on_a_damaged_save_stores_no_score(build, tmp_path):
    from mcbuild.runtime.study.design.config import StudyConfig
    from mcbuild.runtime.study.run.runner import MAX_ATTEMPTS, run_study
    from mcbuild.runtime.study.store.results import Store

    (build / "FROZEN.json").write_text(json.dumps(
        {"files": json.loads((build / "worlds" / "manifest.json").read_text())["worlds"][WORLD]["files"]}))
    path = build / "worlds" / REGION
    path.write_bytes(path.read_bytes()[:4096])
    cfg = StudyConfig.model_validate(dict(name="dmg", worlds=[WORLD], conditions=["vanilla", MIRROR],
                                          tasks=["iron_armor"], configurations=["vanilla-planner"], budget=3))
    summary = run_study(cfg, out_dir=tmp_path / "s", build_root=build, workers=1)
    with Store.open(tmp_path / "s", create=False) as store:
        records, faults = store.records(), store.faults()
    assert [r["condition"] for r in records] == ["vanilla"]
    assert len(summary.gave_up) == 1 and not summary.complete
    assert len(faults) == MAX_ATTEMPTS and all("r.0.0.mca" in f["message"] for f in faults)


def test_region_and_level_dat_readers_name_the_damage(build):
    from mcbuild.compiler.worlds.save.level_dat import read_data
    from mcbuild.runtime.backends.sim.save import SaveError, read

    save = build / "worlds" / WORLD / MIRROR
    region = save / "region" / "r.0.0.mca"
    region.write_bytes(region.read_bytes()[:9000])
    with pytest.raises(SaveError, match=r"r\.0\.0\.mca: chunk \d+ at byte \d+"):
        read(save)
    region.write_bytes(b"\0" * 100)
    with pytest.raises(SaveError, match="shorter than the 8192-byte region header"):
        read(save)
    (save / "level.dat").write_bytes(gzip.compress(b"\x0a\x00"))
    with pytest.raises(ValueError, match="level.dat: unreadable level.dat"):
        read_data(save / "level.dat")


def test_a_damaged_simulator_cache_is_rebuilt(build, tmp_path):
    from mcbuild.runtime.backends.sim.loading import load_save, save_key

    save = build / "worlds" / WORLD / MIRROR
    key = save_key(save)
    first = load_save(save, key, tmp_path / "cache")
    cache = tmp_path / "cache" / f"{key}.npz"
    cache.write_bytes(cache.read_bytes()[:100])
    again = load_save(save, key, tmp_path / "cache")
    assert (again.data.blocks == first.data.blocks).all()
    assert cache.stat().st_size > 100


def test_verify_names_a_missing_save_folder_once(build):
    from mcbuild.compiler.spec.worlds import WORLDS_FILE
    from mcbuild.compiler.worlds.integrity import verify_worlds

    shutil.rmtree(build / "worlds" / WORLD / MIRROR)
    problems, _ = verify_worlds(build, WORLDS_FILE, build)
    mine = [p for p in problems if f"{WORLD}/{MIRROR}" in p or f"{MIRROR}.zip" in p]
    assert mine == [f"{WORLD}/{MIRROR}: save folder missing; rebuild with `mcbuild build worlds --only {WORLD}`"]
    shutil.rmtree(build / "worlds" / WORLD)
    problems, _ = verify_worlds(build, WORLDS_FILE, build)
    assert [p for p in problems if p.startswith(WORLD)] == [
        f"{WORLD}: world folder missing; rebuild with `mcbuild build worlds --only {WORLD}`"]


def test_a_region_file_with_a_bad_name_is_named(build):
    from mcbuild.runtime.backends.sim.save import SaveError, read

    save = build / "worlds" / WORLD / MIRROR
    (save / "region" / "r.0.0.mca").rename(save / "region" / "r.x.0.mca")
    with pytest.raises(SaveError, match=r"r\.x\.0\.mca: not a region file name"):
        read(save)


def _edit_first_chunk(build, field, value) -> None:
    """Rewrite the m04 save's first region chunk with ``field`` set to ``value`` and re-hash the
    manifest, so every hash agrees with the edited save."""
    from nbtlib import tag

    from mcbuild.compiler.worlds.save.anvil import region_bytes
    from mcbuild.compiler.worlds.save.level_dat import nbt_bytes
    from mcbuild.runtime.backends.sim.save import _chunks
    from mcbuild.runtime.episode.integrity import file_sha256

    path = build / "worlds" / REGION
    chunks = {(cx % 32, cz % 32): chunk for cx, cz, chunk in _chunks(path)}
    first = min(chunks, key=lambda k: (k[1], k[0]))
    chunks[first][field] = tag.Int(value)
    path.write_bytes(region_bytes({k: nbt_bytes(c) for k, c in chunks.items()}))
    manifest_path = build / "worlds" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["worlds"][WORLD]["files"][REGION] = file_sha256(path)
    manifest_path.write_text(json.dumps(manifest))


@pytest.mark.parametrize("field, value, match", [
    ("xPos", 7, r"r\.0\.0\.mca: the chunk in the slot of chunk \(0, 0\) says it is chunk \(7, 0\)"),
    ("zPos", -3, r"r\.0\.0\.mca: the chunk in the slot of chunk \(0, 0\) says it is chunk \(0, -3\)"),
    ("DataVersion", 3120, r"r\.0\.0\.mca: chunk \(0, 0\) has DataVersion 3120, not 1\.19\.0's 3105"),
])
def test_a_moved_or_foreign_chunk_is_refused_though_every_hash_agrees(build, field, value, match):
    from mcbuild.runtime.backends.sim.save import SaveError, read

    _edit_first_chunk(build, field, value)
    integrity.verify_save(build / "worlds" / WORLD / MIRROR, build)          # the hashes agree
    with pytest.raises(SaveError, match=match):
        read(build / "worlds" / WORLD / MIRROR)
    res = _run_cli("episode", "run", "--world", WORLD, "--condition", MIRROR, "--task", "iron_armor",
                   "--agent", "adaptive-planner", "--budget", "3", "--build", str(build))
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 1 and len(lines) == 1 and lines[0].startswith(f"error: {build / 'worlds' / REGION}: ")
