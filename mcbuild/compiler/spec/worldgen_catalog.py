"""The world-generation catalog (``catalogs/worldgen.yaml``): whitelists and numeric bounds.

The biome spec model, the biome compiler, the audits and the world builder all read the catalog
through this module, so the YAML file is the single place where an allowed id or a bound lives.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import yaml

from mcbuild.compiler.core.paths import CATALOGS

CATALOG_FILE = CATALOGS / "worldgen.yaml"


@lru_cache(maxsize=1)
def catalog() -> dict[str, Any]:
    """The parsed catalog (cached; treat as read-only)."""
    return yaml.safe_load(CATALOG_FILE.read_text(encoding="utf-8"))


def plain_floor() -> int:
    """The lowest y that the deepslate blend never reaches (plain stone and plain ores only)."""
    return catalog()["deepslate_level"] + catalog()["deepslate_blend"]


def lookup(path: str) -> Any:
    """A catalog entry by dotted path, e.g. ``lookup("ore_band.vein_size")``."""
    node: Any = catalog()
    for part in path.split("."):
        node = node[part]
    return node


def bounds(path: str) -> tuple[Any, Any]:
    """The ``[low, high]`` pair stored at ``path``."""
    low, high = lookup(path)
    return low, high
