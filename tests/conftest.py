"""Shared fixtures: compiled suites are built once per test session (in memory)."""
from __future__ import annotations

import os

import pytest

SUITES = ("m01", "m02", "m03", "m04", "m05", "m06")


def pytest_collection_modifyitems(config, items):
    if os.environ.get("MCBUILD_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow check: set MCBUILD_SLOW=1 to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def suites():
    from compiler.build import compile_path
    from compiler.core.paths import SPECS

    return {sid: compile_path(SPECS / f"{sid}.yaml") for sid in SUITES}


def _built_worlds(root):
    from compiler.spec.worlds import load_worlds

    mirrors = load_worlds().mirrors
    return sorted(p.parent.parent.name for p in (root / "worlds").glob("*/vanilla/level.dat")
                  if all((p.parent.parent / m / "level.dat").is_file() for m in mirrors))


def _current(build, suites) -> bool:
    """Whether ``build`` holds every suite exactly as the current sources compile it and saves
    that verify against the current world-builder sources and specs."""
    from compiler.build import differences
    from compiler.worlds.integrity import verify_worlds

    if not _built_worlds(build) or any(differences(art, build) for art in suites.values()):
        return False
    problems, _ = verify_worlds(build)
    return not problems


@pytest.fixture(scope="session")
def world_build(tmp_path_factory, suites):
    """A build folder with compiled packs and built worlds: ``build/`` when it matches the current
    sources (packs byte-equal to a fresh compile, saves verified), otherwise the packs compiled in
    memory and plains-1 built into a temporary folder (a few seconds)."""
    from compiler.core.paths import BUILD
    from compiler.spec.worlds import WORLDS_FILE
    from compiler.worlds.build import build_worlds

    if _current(BUILD, suites):
        return BUILD
    root = tmp_path_factory.mktemp("build")
    for sid, artifact in suites.items():
        (root / sid).mkdir()
        for name, data in artifact.files.items():
            (root / sid / name).write_bytes(data)
    build_worlds(WORLDS_FILE, root, only="plains-1", jobs=1)
    return root


@pytest.fixture(scope="session")
def built_world_ids(world_build):
    return _built_worlds(world_build)
