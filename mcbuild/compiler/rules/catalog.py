"""The vanilla 1.19 catalog: the game's own data plus the few facts the game keeps in code.

This is the one reader of the game's data. ``load()`` first has ``mcbuild.compiler.core.vanilla.ensure``
verify the imported copy at ``mcbuild.compiler.core.paths.VANILLA_DATA`` against
``catalogs/vanilla-1.19.manifest.tsv`` (recipes, loot tables, advancements and tags under
``data/minecraft/``, in the generator's layout, and ``reports/registries.json``, whose item, block
and entity registries are the lists of every id). ``catalogs/game_facts.yaml`` holds what the
game keeps in code: tool tiers, fuel times, enchanting costs, the blocks that need the correct tool.

The parsed data is cached in ``build/cache/vanilla/`` under the manifest's hash and this reader's
own sources, so a process loads it in a few tens of milliseconds (a build folder that cannot be
written only costs that speed: the data is parsed every time).
"""
from __future__ import annotations

import json
import marshal
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from mcbuild.compiler.core import vanilla
from mcbuild.compiler.core.canonical import atomic_write, sha256
from mcbuild.compiler.core.errors import CompileError
from mcbuild.compiler.core.paths import BUILD, CATALOGS, VANILLA_DATA
from mcbuild.compiler.rules import pack
from mcbuild.compiler.rules.pack import parse_resource_path

CACHE_DIR = BUILD / "cache" / "vanilla"
REGISTRIES = "reports/registries.json"
REGISTRY_KEYS = {"items": "minecraft:item", "blocks": "minecraft:block", "entities": "minecraft:entity_type"}


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


def parse_resources(files: dict[str, bytes], where: str = "") -> dict[tuple[str, str], Any]:
    """``(kind, id) -> parsed JSON`` (or text) of every resource file; one that does not parse is a
    :class:`CompileError` naming ``where`` + its path."""
    out: dict[tuple[str, str], Any] = {}
    for path, data in files.items():
        key = parse_resource_path(path)
        if key is None:
            continue
        json_file = path.endswith(".json")
        try:
            out[key] = json.loads(data) if json_file else data.decode("utf-8")
        except ValueError as exc:
            raise CompileError(f"{where}{path}", f"not valid {'JSON' if json_file else 'UTF-8 text'}: {exc}") from None
    return out


def _parse(root: Path) -> tuple:
    """Everything ``load`` needs from the verified copy, as plain values ``marshal`` can store (a file
    changed behind its stamp, same size and time, is a :class:`DataDamaged` naming it)."""
    files = {rel: path.read_bytes() for rel, path in vanilla.source_files(root).items()}
    hint = f"see `mcbuild vanilla verify`, then {vanilla.HOW_TO_IMPORT}"
    try:
        registries = json.loads(files.pop(REGISTRIES))
        ids = {name: sorted(registries[key]["entries"]) for name, key in REGISTRY_KEYS.items()}
        return files, parse_resources(files, f"{root}/"), ids
    except CompileError as exc:
        raise vanilla.DataDamaged(root, [str(exc)], hint) from None
    except (ValueError, KeyError, TypeError):
        raise vanilla.DataDamaged(root, [f"{root / REGISTRIES}: not the generator's registries report"], hint) from None


def _cache_key(content_key: str) -> str:
    """The data's content key plus this reader's sources and the Python version (marshal's format)."""
    code = b"".join(Path(f).read_bytes() for f in (__file__, pack.__file__ or ""))
    return sha256(content_key.encode() + code + sys.version.encode())[:32]


def _cached(root: Path, content_key: str) -> tuple:
    """The parsed data from the cache file of this key, else parsed and cached (atomically;
    a damaged cache file is parsed again and replaced)."""
    path = CACHE_DIR / f"{_cache_key(content_key)}.marshal"
    try:
        blob = path.read_bytes()
        if sha256(blob[64:]).encode() == blob[:64]:
            return marshal.loads(blob[64:])
    except (OSError, ValueError, EOFError, TypeError):
        pass
    parsed = _parse(root)
    payload = marshal.dumps(parsed)
    try:
        atomic_write(path, sha256(payload).encode() + payload, tool="cache")
        for old in CACHE_DIR.glob("*.marshal"):          # one key is current: drop the others
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        pass          # a read-only build folder: the cache is only a speed-up, so parse every time
    return parsed


@lru_cache(maxsize=1)
def game_facts() -> dict[str, Any]:
    """``catalogs/game_facts.yaml``: the hand-written facts of the game's code (needs no game data)."""
    return yaml.load((CATALOGS / "game_facts.yaml").read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@lru_cache(maxsize=1)
def load() -> Catalog:
    """The verified vanilla catalog (``DataMissing``/``DataDamaged`` name how to import the data)."""
    files, resources, ids = _cached(VANILLA_DATA, vanilla.ensure(VANILLA_DATA))
    return Catalog(files, game_facts(), frozenset(ids["items"]), frozenset(ids["blocks"]), frozenset(ids["entities"]),
                   resources)


def ns(rid: str) -> str:
    """Namespaced form of an id: 'stone' -> 'minecraft:stone'."""
    return rid if ":" in rid else f"minecraft:{rid}"
