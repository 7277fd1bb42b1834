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
    from compiler.paths import SPECS

    return {sid: compile_path(SPECS / f"{sid}.yaml") for sid in SUITES}
