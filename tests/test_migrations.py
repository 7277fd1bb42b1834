"""A build folder or results store of another mcbuild version is migrated, or refused with one line
naming the command that fixes it; never misread (CHANGELOG.md, "Upgrading")."""
from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner

from mcbuild.cli import main
from mcbuild.compiler.core.errors import CompileError
from mcbuild.pipeline.worlds import _update_manifest
from mcbuild.compiler.worlds.layout import WORLDS_SCHEMA, read_manifest
from mcbuild.runtime.episode.integrity import expected_files
from mcbuild.runtime.errors import InfrastructureFault
from mcbuild.runtime.study.store.results import SCHEMA_VERSION, STORE_NAME, Store, StoreError, build_fingerprint

ENTRY = {"biome": "plains", "seed": 1, "biome_pack_sha256": "x", "mirror_packs": {},
         "files": {"w/vanilla/level.dat": "aaa"}}


def _old_build(tmp_path, schema="1.0", frozen=False):
    build = tmp_path / "build"
    (build / "worlds").mkdir(parents=True)
    (build / "worlds" / "manifest.json").write_text(json.dumps({"schema_version": schema, "worlds": {"w": ENTRY}}))
    if frozen:
        (build / "FROZEN.json").write_text("{}")
    return build


def test_worlds_of_an_older_mcbuild_are_refused_everywhere_naming_the_rebuild(tmp_path):
    build = _old_build(tmp_path)
    with pytest.raises(CompileError, match="older mcbuild.*rebuild them with `mcbuild build worlds`"):
        read_manifest(build)
    with pytest.raises(StoreError, match="older mcbuild"):
        build_fingerprint(build)                        # a study refuses before it starts
    with pytest.raises(InfrastructureFault, match="older mcbuild"):
        expected_files(build / "worlds" / "w" / "vanilla", build)   # an episode refuses before it opens
    res = CliRunner().invoke(main, ["build", "verify", "--build", str(build)])
    assert res.exit_code == 1 and "`mcbuild build worlds`" in res.stderr
    frozen = _old_build(tmp_path / "f", frozen=True)
    with pytest.raises(CompileError, match="`mcbuild build worlds --unfreeze`"):
        read_manifest(frozen)


def test_worlds_of_a_newer_mcbuild_are_refused(tmp_path):
    with pytest.raises(CompileError, match="newer mcbuild.*upgrade mcbuild"):
        read_manifest(_old_build(tmp_path, schema="9.0"))


def test_building_over_an_older_manifest_starts_a_fresh_one(tmp_path):
    build = _old_build(tmp_path)
    manifest = _update_manifest(build / "worlds", {"v": {**ENTRY, "files": {"v/vanilla/level.dat": "bbb"}}})
    assert manifest["schema_version"] == WORLDS_SCHEMA and set(manifest["worlds"]) == {"v"}   # w is rebuilt, not kept
    assert read_manifest(build) == manifest


def test_a_store_of_a_newer_schema_is_refused_with_one_line(tmp_path):
    study = tmp_path / "study"
    with Store.open(study) as st:
        st.set_meta({"schema_version": str(int(SCHEMA_VERSION) + 1)})
    with pytest.raises(StoreError, match="newer mcbuild.*upgrade mcbuild") as err:
        Store.open(study)
    assert "\n" not in str(err.value)
    res = CliRunner().invoke(main, ["study", "report", str(study)])
    assert res.exit_code == 1 and res.stderr.count("\n") == 1 and "newer mcbuild" in res.stderr
    with sqlite3.connect(study / STORE_NAME) as c:
        c.execute("UPDATE meta SET value = 'x1' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="unknown store schema"):
        Store.open(study)
