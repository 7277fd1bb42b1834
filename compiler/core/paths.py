"""Well-known locations inside the repository."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CATALOGS = ROOT / "catalogs"
VANILLA_DATA = CATALOGS / "vanilla-1.19"      # the vanilla 1.19.0 data files (recipes, loot tables, tags...)
SPECS = ROOT / "specs"
BUILD = ROOT / "build"
