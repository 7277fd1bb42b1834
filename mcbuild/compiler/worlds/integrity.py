"""Integrity of the built worlds: ``mcbuild build verify`` and ``mcbuild build freeze``.

``verify`` re-hashes every file against the manifest and checks that, within each world, the
seven conditions differ only by the rule pack and the ``DataPacks`` list in level.dat; that the
biome pack is what the current spec compiles to and each rule pack is the current
``build/mXX/datapack.zip``; that no world was built from other sources, specs or seeds; and, when
``build/FROZEN.json`` exists, that everything equals what it pins. ``freeze`` writes that file
(hashes of all packs and saves, plus the fingerprint of compiler sources, catalogs and specs).
"""
from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from mcbuild.compiler.biome.pack import build_pack
from mcbuild.compiler.core.canonical import atomic_write, dump_bytes, sha256
from mcbuild.compiler.core.errors import CompileError, SpecError
from mcbuild.compiler.core.paths import BUILD, PACKAGES, ROOT
from mcbuild.compiler.rules.blockstates import BLOCKS_JSON
from mcbuild.compiler.spec.biome import BiomeSpec
from mcbuild.compiler.spec.kinds import load_spec
from mcbuild.compiler.spec.worldgen_catalog import CATALOG_FILE
from mcbuild.compiler.spec.worlds import WORLDS_FILE, load_worlds
from mcbuild.compiler.worlds.layout import MANIFEST, VANILLA, file_hashes, read_manifest
from mcbuild.compiler.worlds.save.level_dat import read_data

TASKS_FILE = ROOT / "catalogs" / "tasks.yaml"
FACTS_FILE = ROOT / "catalogs" / "game_facts.yaml"

FROZEN = "FROZEN.json"
CODE_GLOBS = ("compiler/**/*.py", "audits/**/*.py")     # below PACKAGES
DATA_GLOBS = ("catalogs/**/*", "specs/*.yaml", "specs/tasks/*.yaml")     # below ROOT


def freeze_path(build: Path = BUILD) -> Path:
    return build / FROZEN


def source_files() -> dict[str, str]:
    """sha256 of every compiler/audit source, catalog file and spec, by repository path."""
    out = {}
    for root, patterns in ((PACKAGES, CODE_GLOBS), (ROOT, DATA_GLOBS)):
        for pattern in patterns:
            for path in root.glob(pattern):
                if path.is_file() and "__pycache__" not in path.parts:
                    out[path.relative_to(root).as_posix()] = sha256(path.read_bytes())
    return dict(sorted(out.items()))


def source_fingerprint() -> str:
    return sha256(dump_bytes(source_files()))


def _module_file(module: str) -> Path | None:
    """The file of module ``mcbuild.<folder>...``: the folders sit in PACKAGES (a checkout or the installed package)."""
    base = PACKAGES.joinpath(*module.split(".")[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imports(module: str, path: Path) -> set[str]:
    """Project modules that ``module`` imports anywhere (also inside functions)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            anchor = ".".join(parts[: len(parts) - node.level + 1]) if node.level else ""
            base = ".".join(p for p in (anchor, node.module or "") if p)
            found |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return {m for m in found if m.split(".")[:2] in (["mcbuild", "compiler"], ["mcbuild", "audits"])}


def pipeline_sources(start: str = "mcbuild.compiler.worlds.build") -> list[Path]:
    """The project source files the world builder runs (its transitive project imports)."""
    seen: dict[str, Path] = {}
    todo = [start]
    while todo:
        module = todo.pop()
        path = _module_file(module)
        if path is None or module in seen:
            continue
        seen[module] = path
        todo += sorted(_imports(module, path))
    return sorted(set(seen.values()))


def world_inputs(worlds_file: Path) -> str:
    """Fingerprint of everything the saves are built from: the builder's sources, the world-gen,
    task and game-fact catalogs, minecraft-data's block states, the worlds spec and its biome specs."""
    from mcbuild.compiler.spec.worlds import load_worlds

    files = pipeline_sources() + [CATALOG_FILE, TASKS_FILE, FACTS_FILE, BLOCKS_JSON, worlds_file]
    files += [worlds_file.parent / f"{b}.yaml" for b in sorted({w.biome for w in load_worlds(worlds_file).worlds})]
    digests = {(p.relative_to(ROOT).as_posix() if p.is_relative_to(ROOT) else p.name): sha256(p.read_bytes())
               for p in files}
    return sha256(dump_bytes(dict(sorted(digests.items()))))


def read_freeze(build: Path) -> dict[str, Any] | None:
    """``FROZEN.json`` (``None`` when the build is not frozen); a damaged one is a CompileError."""
    path = freeze_path(build)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_bytes())
        if not all(isinstance(data.get(k), dict) for k in ("sources", "packs", "files")):
            raise ValueError("fields sources, packs and files must be objects")
        if not isinstance(data.get("inputs_sha256"), str):
            raise ValueError("field inputs_sha256 must be a string")
    except (OSError, ValueError, AttributeError) as exc:
        raise CompileError(str(path), f"damaged freeze file ({exc}); restore it or rebuild with --unfreeze") from None
    return data


def _changed_sources(frozen: dict[str, Any]) -> str:
    now = source_files()
    changed = sorted(p for p in set(now) | set(frozen.get("sources", {})) if now.get(p) != frozen["sources"].get(p))
    return ", ".join(changed[:4]) + (f" (+{len(changed) - 4} more)" if len(changed) > 4 else "")


def check_against_freeze(build: Path, mirror_packs: dict[str, bytes], biomes: dict[str, tuple[BiomeSpec, bytes]],
                         entries: dict[str, Any] | None = None) -> None:
    """Refuse to mix a rebuild with a frozen build: sources, packs and (if given) the new files
    must equal what ``FROZEN.json`` pins."""
    frozen = read_freeze(build)
    if frozen is None:
        return
    where = str(freeze_path(build))
    hint = "; rebuild with `mcbuild build worlds --unfreeze` to replace the frozen build"
    if frozen["inputs_sha256"] != source_fingerprint():
        raise CompileError(where, f"sources or specs changed since the freeze: {_changed_sources(frozen)}{hint}")
    for name, data in sorted(mirror_packs.items()) + sorted((b, p) for b, (_, p) in biomes.items()):
        if frozen["packs"].get(name) != sha256(data):
            raise CompileError(where, f"pack {name} differs from the frozen one{hint}")
    for _world, entry in sorted((entries or {}).items()):
        for path, digest in sorted(entry["files"].items()):
            if frozen["files"].get(path) != digest:
                raise CompileError(where, f"rebuilt {path} differs from the frozen build{hint}")


# ----------------------------------------------------------------------------- verify
def _level_problems(world_id: str, condition: str, save: Path, vanilla: Path) -> list[str]:
    """level.dat of a Mirror copy equals the Vanilla one except for one more enabled pack."""
    mine, base = read_data(save / "level.dat"), read_data(vanilla / "level.dat")
    problems = []
    expected = [str(p) for p in base["DataPacks"]["Enabled"]] + [f"file/{condition}.zip"]
    if [str(p) for p in mine["DataPacks"]["Enabled"]] != expected:
        problems.append(f"{world_id}/{condition}/level.dat: enabled packs {list(map(str, mine['DataPacks']['Enabled']))}, "
                        f"expected {expected}")
    if mine["DataPacks"]["Disabled"] != base["DataPacks"]["Disabled"]:
        problems.append(f"{world_id}/{condition}/level.dat: disabled packs differ from vanilla")
    rest_mine = {k: v for k, v in mine.items() if k != "DataPacks"}
    rest_base = {k: v for k, v in base.items() if k != "DataPacks"}
    for key in sorted(set(rest_mine) | set(rest_base)):
        if rest_mine.get(key) != rest_base.get(key):
            problems.append(f"{world_id}/{condition}/level.dat: Data.{key} differs from vanilla")
    return problems


def _pair_problems(world_id: str, entry: dict[str, Any], root: Path) -> list[str]:
    problems = []
    prefix = f"{world_id}/{VANILLA}/"
    vanilla = {k[len(prefix):]: v for k, v in entry["files"].items() if k.startswith(prefix)}
    for condition in sorted(entry["mirror_packs"]):
        cprefix = f"{world_id}/{condition}/"
        copy = {k[len(cprefix):]: v for k, v in entry["files"].items() if k.startswith(cprefix)}
        extra = f"datapacks/{condition}.zip"
        if set(copy) != set(vanilla) | {extra}:
            diff = sorted(set(copy) ^ (set(vanilla) | {extra}))
            problems.append(f"{world_id}/{condition}: files differ from vanilla plus {extra}: {', '.join(diff[:4])}")
        for rel in sorted(set(copy) & set(vanilla) - {"level.dat"}):
            if copy[rel] != vanilla[rel]:
                problems.append(f"{world_id}/{condition}/{rel}: bytes differ from {world_id}/{VANILLA}/{rel}")
        if (root / world_id / condition / "level.dat").is_file() and (root / world_id / VANILLA / "level.dat").is_file():
            problems += _level_problems(world_id, condition, root / world_id / condition, root / world_id / VANILLA)
    return problems


def _pack_problems(world_id: str, entry: dict[str, Any], root: Path, specs_dir: Path, packs_dir: Path) -> list[str]:
    problems = []
    biome_zip = root / world_id / VANILLA / "datapacks" / f"{entry['biome']}.zip"
    try:
        spec = load_spec(specs_dir / f"{entry['biome']}.yaml")
    except SpecError as exc:
        return [f"{world_id}: biome spec does not load: {exc}"]
    if not isinstance(spec, BiomeSpec) or not biome_zip.is_file() or biome_zip.read_bytes() != build_pack(spec):
        problems.append(f"{world_id}: datapacks/{entry['biome']}.zip is not what specs/{entry['biome']}.yaml compiles to")
    for mirror in sorted(entry["mirror_packs"]):
        current = packs_dir / mirror / "datapack.zip"
        built = root / world_id / mirror / "datapacks" / f"{mirror}.zip"
        if not current.is_file():
            problems.append(f"{world_id}: rule pack {current} is missing")
        elif not built.is_file() or built.read_bytes() != current.read_bytes():
            problems.append(f"{world_id}/{mirror}: datapacks/{mirror}.zip differs from {current}")
    return problems


def verify_worlds(build: Path = BUILD, worlds_file: Path = WORLDS_FILE, packs_dir: Path | None = None) -> tuple[list[str], int]:
    """All integrity problems (one line each) and the number of files checked."""
    try:
        manifest = read_manifest(build)
    except CompileError as exc:         # damaged, or of another mcbuild's worlds format
        return [str(exc)], 0
    if manifest is None:
        return [f"{build / 'worlds' / MANIFEST}: missing; run `mcbuild build worlds`"], 0
    root = build / "worlds"
    problems: list[str] = []
    try:
        worlds = {w.id: w for w in load_worlds(worlds_file).worlds}
    except SpecError as exc:
        return [f"{exc}"], 0
    inputs = world_inputs(worlds_file)
    built = manifest["worlds"]
    for world_id in sorted(set(worlds) - set(built)):
        problems.append(f"{world_id}: listed in {worlds_file.name} but not built")
    checked = 0
    for world_id, entry in sorted(built.items()):
        spec_entry = worlds.get(world_id)
        if spec_entry is None:
            problems.append(f"{world_id}: built but not listed in {worlds_file.name}")
        elif (spec_entry.biome, spec_entry.seed) != (entry["biome"], entry["seed"]):
            problems.append(f"{world_id}: built as {entry['biome']} seed {entry['seed']}, "
                            f"{worlds_file.name} says {spec_entry.biome} seed {spec_entry.seed}")
        if entry.get("inputs_sha256") != inputs:
            problems.append(f"{world_id}: built from other builder sources, catalogs or specs; rebuild it")
        if not (root / world_id).is_dir():
            problems.append(f"{world_id}: world folder missing; rebuild with `mcbuild build worlds --only {world_id}`")
            continue
        actual = {f"{world_id}/{k}": v for k, v in file_hashes(root / world_id).items()}
        checked += len(actual)
        gone = sorted(_folders(entry["files"]) - _folders(actual))
        for condition in gone:
            problems.append(f"{world_id}/{condition}: save folder missing; rebuild with "
                            f"`mcbuild build worlds --only {world_id}`")
        for path in sorted(set(actual) | set(entry["files"])):
            if path.split("/")[1] in gone:
                continue
            if path not in actual:
                problems.append(f"{path}: missing")
            elif path not in entry["files"]:
                problems.append(f"{path}: not in the manifest")
            elif actual[path] != entry["files"][path]:
                problems.append(f"{path}: sha256 differs from the manifest")
        problems += _pair_problems(world_id, entry, root)
        problems += [line for line in _pack_problems(world_id, entry, root, worlds_file.parent, packs_dir or build)
                     if not any(line.startswith(f"{world_id}/{c}:") for c in gone)]
    problems += _freeze_problems(build, manifest)
    return problems, checked


def _folders(paths: dict[str, str]) -> set[str]:
    """The save folders (conditions) that ``world/condition/...`` paths lie in."""
    return {parts[1] for parts in (p.split("/") for p in paths) if len(parts) > 2}


def _freeze_problems(build: Path, manifest: dict[str, Any]) -> list[str]:
    frozen = read_freeze(build)
    if frozen is None:
        return []
    where = freeze_path(build).name
    problems = []
    if frozen["inputs_sha256"] != source_fingerprint():
        problems.append(f"{where}: sources or specs changed since the freeze: {_changed_sources(frozen)}")
    files = {k: v for e in manifest["worlds"].values() for k, v in e["files"].items()}
    if files != frozen["files"]:
        diff = sorted(p for p in set(files) | set(frozen["files"]) if files.get(p) != frozen["files"].get(p))
        problems.append(f"{where}: {len(diff)} save file(s) differ from the frozen build, e.g. {diff[0]}")
    if _pack_hashes(manifest) != frozen["packs"]:
        problems.append(f"{where}: packs differ from the frozen ones")
    return problems


def _pack_hashes(manifest: dict[str, Any]) -> dict[str, str]:
    packs = {}
    for entry in manifest["worlds"].values():
        packs[entry["biome"]] = entry["biome_pack_sha256"]
        packs.update(entry["mirror_packs"])
    return dict(sorted(packs.items()))


def freeze_worlds(build: Path = BUILD, worlds_file: Path = WORLDS_FILE, packs_dir: Path | None = None) -> Path:
    """Verify, then pin every pack and save file and the source fingerprint in FROZEN.json."""
    problems, _ = verify_worlds(build, worlds_file, packs_dir)
    if problems:
        more = f" (+{len(problems) - 1} more; see `mcbuild build verify`)" if len(problems) > 1 else ""
        raise CompileError(str(freeze_path(build)), f"cannot freeze: {problems[0]}{more}")
    manifest = read_manifest(build)
    assert manifest is not None
    frozen = {
        "schema_version": "1.0",
        "inputs_sha256": source_fingerprint(),
        "sources": source_files(),
        "packs": _pack_hashes(manifest),
        "worlds": {w: {"biome": e["biome"], "seed": e["seed"]} for w, e in sorted(manifest["worlds"].items())},
        "files": {k: v for e in manifest["worlds"].values() for k, v in e["files"].items()},
    }
    atomic_write(freeze_path(build), dump_bytes(frozen), tool="worlds")
    return freeze_path(build)
