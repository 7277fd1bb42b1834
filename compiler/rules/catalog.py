"""The vanilla 1.19 catalog: the game's own data files plus the few facts the game keeps in code.

The game's data (recipes, loot tables, advancements and tags under ``data/minecraft/``, in the
generator's layout) is read from the imported copy at ``compiler.core.paths.VANILLA_DATA``; ``catalogs/game_facts.yaml`` holds tool tiers, fuel times, enchanting costs and
the blocks that need the correct tool; ``catalogs/registry-1.19.json`` lists every id.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from compiler.core.paths import CATALOGS, VANILLA_DATA
from compiler.rules.pack import parse_resource_path


@dataclass(frozen=True)
class Catalog:
    files: dict[str, bytes]            # archive path ("data/minecraft/...") -> bytes
    facts: dict[str, Any]
    items: frozenset[str]
    blocks: frozenset[str]
    entities: frozenset[str]
    resources: dict[tuple[str, str], Any] = field(default_factory=dict)  # (kind, id) -> parsed JSON

    def get(self, kind: str, rid: str) -> Any:
        return self.resources.get((kind, rid))


def read_tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` keyed by its posix path relative to ``root``."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def parse_resources(files: dict[str, bytes]) -> dict[tuple[str, str], Any]:
    out: dict[tuple[str, str], Any] = {}
    for path, data in files.items():
        key = parse_resource_path(path)
        if key is None:
            continue
        if path.endswith(".json"):
            out[key] = json.loads(data)
        else:
            out[key] = data.decode("utf-8")
    return out


@lru_cache(maxsize=1)
def load() -> Catalog:
    files = {f"data/{k}": v for k, v in read_tree(VANILLA_DATA / "data").items()}
    facts = yaml.safe_load((CATALOGS / "game_facts.yaml").read_text())
    reg = json.loads((CATALOGS / "registry-1.19.json").read_text())
    return Catalog(files, facts, frozenset(reg["items"]), frozenset(reg["blocks"]),
                   frozenset(reg["entities"]), parse_resources(files))


def ns(rid: str) -> str:
    """Namespaced form of an id: 'stone' -> 'minecraft:stone'."""
    return rid if ":" in rid else f"minecraft:{rid}"
