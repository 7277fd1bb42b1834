"""Where the saves live and what each one holds: the reader API of backends and the simulator.

    build/worlds/<world_id>/vanilla/   level.dat, region/r.*.mca, datapacks/<biome>.zip
    build/worlds/<world_id>/m01/ ...   the same bytes plus datapacks/m01.zip
    build/worlds/manifest.json         every file hash of every save

:func:`rules_of` is the one reader of a save's rules: the packs its ``level.dat`` enables.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcbuild.compiler.core.canonical import sha256
from mcbuild.compiler.core.errors import CompileError
from mcbuild.compiler.core.owned import MARKER
from mcbuild.compiler.core.paths import BUILD
from mcbuild.compiler.rules.catalog import Catalog
from mcbuild.compiler.rules.pack import read_zip
from mcbuild.compiler.rules.rulebook import Rulebook
from mcbuild.compiler.spec.base import read_text
from mcbuild.compiler.spec.worlds import WORLDS_FILE, load_worlds
from mcbuild.compiler.worlds.save.level_dat import read_data

VANILLA = "vanilla"
MANIFEST = "manifest.json"
#: The manifest's format. "2.0" since the worlds were built anew (nbtlib writer, plant survival rules,
#: gravel patches: CHANGELOG 0.2.0); a build folder of another format is rebuilt, never read.
WORLDS_SCHEMA = "2.0"


_BIOMES: dict[tuple[str, str], dict[str, str]] = {}    # (path, text) -> world id -> biome


def world_biomes(path: Path = WORLDS_FILE) -> dict[str, str]:
    """World id -> biome of the worlds spec, in its order (parsed once per content of the file)."""
    key = (str(path), read_text(path))          # an unreadable, binary or huge file is a SpecError
    if key not in _BIOMES:
        _BIOMES.clear()
        _BIOMES[key] = {w.id: w.biome for w in load_worlds(path).worlds}
    return dict(_BIOMES[key])


def world_dir(world_id: str, condition: str = VANILLA, build: Path = BUILD) -> Path:
    """The save folder of one world under one condition (``vanilla`` or ``m01`` ... ``m06``)."""
    return build / "worlds" / world_id / condition


def file_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file below ``root`` but a folder marker (``core/owned.py``), keyed by posix
    path relative to ``root``."""
    return {p.relative_to(root).as_posix(): sha256(p.read_bytes())
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != MARKER}


def manifest_problem(manifest: Any, path: Path) -> str | None:
    """One line naming the command that fixes it when the manifest at ``path`` is of another
    format than :data:`WORLDS_SCHEMA` (a build folder of an older or newer mcbuild); else None."""
    found = manifest.get("schema_version") if isinstance(manifest, dict) else None
    if found == WORLDS_SCHEMA:
        return None
    unfreeze = " --unfreeze" if (path.parent.parent / "FROZEN.json").is_file() else ""
    if found is None:
        return f"{path}: no schema_version, not a worlds manifest of mcbuild; rebuild with `mcbuild build worlds{unfreeze}`"
    try:
        newer = tuple(map(int, str(found).split("."))) > tuple(map(int, WORLDS_SCHEMA.split(".")))
    except ValueError:
        newer = False
    if newer:
        return (f"{path}: worlds of a newer mcbuild (schema {found}; this one reads {WORLDS_SCHEMA}); upgrade mcbuild "
                f"or rebuild them with `mcbuild build worlds{unfreeze}`")
    return (f"{path}: worlds of an older mcbuild (schema {found}; now {WORLDS_SCHEMA}, the worlds changed); "
            f"rebuild them with `mcbuild build worlds{unfreeze}`")


def read_manifest(build: Path = BUILD) -> dict[str, Any] | None:
    """The manifest of the saves under ``build/worlds`` (``None`` before the first build); a damaged
    one is a ``CompileError`` naming the file and the field."""
    path = build / "worlds" / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_bytes())
        worlds = data["worlds"]
        for world_id, entry in worlds.items():
            for key in ("files", "mirror_packs"):
                if not isinstance(entry.get(key), dict):
                    raise ValueError(f"field worlds.{world_id}.{key} must be an object")
            for key in ("biome", "biome_pack_sha256"):
                if not isinstance(entry.get(key), str):
                    raise ValueError(f"field worlds.{world_id}.{key} must be a string")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
        raise CompileError(str(path), f"damaged worlds manifest ({what}); rebuild with `mcbuild build worlds`") from None
    problem = manifest_problem(data, path)
    if problem is not None:
        raise CompileError(str(path), problem.removeprefix(f"{path}: "))
    return data


def enabled_packs(save_dir: Path) -> list[tuple[str, bytes]]:
    """(name, zip bytes) of the packs a Java save's ``level.dat`` enables, in order."""
    enabled = [str(p) for p in read_data(save_dir / "level.dat")["DataPacks"]["Enabled"]]
    packs = []
    for name in enabled:
        if name == VANILLA:
            continue
        if not name.startswith("file/"):
            raise FileNotFoundError(f"{save_dir}: unsupported pack source {name!r}")
        path = save_dir / "datapacks" / name[len("file/"):]
        if not path.is_file():
            raise FileNotFoundError(f"{save_dir}: enabled datapack {name!r} is missing")
        packs.append((name, path.read_bytes()))
    return packs


def packs_rules(packs: list[tuple[str, bytes]], catalog: Catalog | None = None) -> Rulebook:
    """The vanilla catalog plus ``packs`` ((name, zip bytes), in order)."""
    return Rulebook(catalog, [(name, read_zip(data)) for name, data in packs])


def rules_of(save_dir: Path, catalog: Catalog | None = None) -> Rulebook:
    """The rules of a Java save: the vanilla catalog plus the packs its ``level.dat`` enables, in order."""
    return packs_rules(enabled_packs(save_dir), catalog)
