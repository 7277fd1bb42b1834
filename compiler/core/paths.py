"""Well-known locations inside the repository."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CATALOGS = ROOT / "catalogs"
VANILLA = CATALOGS / "vanilla-1.19"
SPECS = ROOT / "specs"
BUILD = ROOT / "build"
