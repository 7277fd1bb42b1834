"""World construction: ``specs/worlds.yaml`` -> the Vanilla save of every world and its six
Mirror copies, plus ``build/worlds/manifest.json`` and one route report per world.

Layout (the reader API for backends and the simulator):

    build/worlds/<world_id>/vanilla/   level.dat, region/r.*.mca, datapacks/<biome>.zip
    build/worlds/<world_id>/m01/ ...   the same bytes plus datapacks/m01.zip; level.dat differs
                                       only in Data.DataPacks (one more enabled pack)
    build/worlds/<world_id>/report.json   route validation (resources, distances from spawn)

``world_dir(world_id, condition)`` gives a save folder; ``WORLD_AREA`` is the block volume the
saves contain (chunks -8..7 on x and z, y -64..319). The spawn point is in level.dat (SpawnX/Y/Z);
creature positions are the ``summon`` lines of ``mcbuild:spawn_entities`` in the biome pack.

Each Vanilla world is generated once (numpy, seeded by the world seed), audited (every plant
survives in 1.19: ``audits/worldgen_plants.py``) and written with nbtlib;
Mirror copies copy its files byte for byte. Worlds are built in parallel processes into a
temporary folder and moved into place only when all of them succeeded.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from mcbuild.compiler.biome.layout import WORLD_AREA, WorldArea
from mcbuild.compiler.build import audit_world, compile_biome
from mcbuild.compiler.core.canonical import atomic_write, dump_bytes, naming, sha256, write_file
from mcbuild.compiler.core.errors import CompileError, SpecError
from mcbuild.compiler.core.owned import MARKER, check_replaceable, install, marker_bytes
from mcbuild.compiler.core.scratch import make_dir, sweep
from mcbuild.compiler.core.paths import BUILD
from mcbuild.compiler.spec.biome import BiomeSpec
from mcbuild.compiler.spec.kinds import load_spec
from mcbuild.compiler.spec.worlds import WORLDS_FILE, WorldEntry, load_worlds
from mcbuild.compiler.worlds.features import generate
from mcbuild.compiler.worlds.layout import MANIFEST, VANILLA, WORLDS_SCHEMA, file_hashes, read_manifest
from mcbuild.compiler.worlds.routes import route_report
from mcbuild.compiler.worlds.save.anvil import write_regions
from mcbuild.compiler.worlds.save.level_dat import level_dat

TOOL = "worlds"             # the temporaries and the folder marker of `mcbuild build worlds`


# ----------------------------------------------------------------------------- planning
@dataclass(frozen=True)
class Job:
    """Everything one worker needs to build one world (picklable)."""

    entry: WorldEntry
    spec: BiomeSpec
    biome_pack: bytes
    mirror_packs: tuple[tuple[str, bytes], ...]
    area: WorldArea
    dest: Path


def load_biomes(biomes: set[str], specs_dir: Path) -> dict[str, tuple[BiomeSpec, bytes]]:
    """Each biome's spec and compiled pack (compile runs both audits; errors name the spec)."""
    out = {}
    for biome in sorted(biomes):
        path = specs_dir / f"{biome}.yaml"
        spec = load_spec(path)
        if not isinstance(spec, BiomeSpec) or spec.id != biome:
            raise SpecError(str(path), "id", f"must be a kind: biome spec with id {biome!r}")
        out[biome] = (spec, compile_biome(spec, str(path))["datapack.zip"])
    return out


def read_mirror_packs(mirrors: list[str], packs_dir: Path) -> dict[str, bytes]:
    packs = {}
    for m in mirrors:
        path = packs_dir / m / "datapack.zip"
        if not path.is_file():
            raise CompileError(str(path), f"rule pack {m} is missing; run `mcbuild compile --all` first")
        packs[m] = path.read_bytes()
        _check_pack(path, packs[m])
    return packs


def _check_pack(path: Path, data: bytes) -> None:
    """A rule pack is used only when it is the zip its ``report.json`` describes (never a damaged one)."""
    report = path.parent / "report.json"
    try:
        digest = json.loads(report.read_bytes())["datapack_sha256"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CompileError(str(report), f"unreadable pack report ({type(exc).__name__}: {exc}); "
                           "run `mcbuild compile --all`") from None
    if sha256(data) != digest:
        raise CompileError(str(path), "sha256 differs from report.json (damaged or edited pack); "
                           "run `mcbuild compile --all`")


# ----------------------------------------------------------------------------- building
def _write_pack_copy(src: Path, dest: Path, extra: dict[str, bytes], level: bytes) -> None:
    """Copy a save byte for byte, add datapacks, replace level.dat."""
    for path in sorted(src.rglob("*")):
        if path.is_file() and path.name != "level.dat":
            target = dest / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            with naming(target):
                shutil.copyfile(path, target)
    for name, data in sorted(extra.items()):
        write_file(dest / "datapacks" / name, data)
    write_file(dest / "level.dat", level)


def build_one(job: Job) -> dict[str, Any]:
    """Generate, validate and write one Vanilla world and its Mirror copies; returns its manifest entry."""
    entry, spec = job.entry, job.spec
    world = generate(spec, entry.seed, job.area)
    audit_world(world.blocks, world.palette.names, (job.area.x_min, job.area.y_min, job.area.x_min),
                f"{entry.id} ({spec.id}, seed {entry.seed})")
    routes = route_report(world, entry.id)
    biome_zip = f"{spec.id}.zip"
    vanilla = job.dest / VANILLA
    (vanilla / "datapacks").mkdir(parents=True)
    write_file(vanilla / "datapacks" / biome_zip, job.biome_pack)
    write_regions(world, vanilla, level_dat(spec, entry.id, entry.seed, [f"file/{biome_zip}"]))
    for mirror, pack in job.mirror_packs:
        level = level_dat(spec, entry.id, entry.seed, [f"file/{biome_zip}", f"file/{mirror}.zip"])
        _write_pack_copy(vanilla, job.dest / mirror, {f"{mirror}.zip": pack}, level)
    info = {"world": entry.id, "biome": spec.id, "seed": entry.seed,
            "spec_sha256": sha256(spec.normalized()), "biome_pack_sha256": sha256(job.biome_pack),
            "mirror_packs": {m: sha256(p) for m, p in job.mirror_packs},
            "area": {"chunks": [job.area.chunk_min, job.area.chunk_max], "y": [job.area.y_min, job.area.y_max]}}
    write_file(job.dest / "report.json", dump_bytes({**info, **routes}))
    return {**info, "files": file_hashes(job.dest)}


def _run(job: Job) -> tuple[str, Any]:
    """Worker wrapper: our errors do not pickle with their fields, so send them back as data."""
    try:
        return "ok", build_one(job)
    except SpecError as exc:
        return "spec", (exc.file, exc.field, exc.message)
    except CompileError as exc:
        return "compile", (exc.file, exc.message)


def _raise(kind: str, value: Any) -> None:
    if kind == "spec":
        raise SpecError(*value)
    raise CompileError(*value)


def _each(work: list[Job], n: int) -> Iterator[tuple[str, Any]]:
    """The result of each job, in order, from ``n`` forked processes (in this one when ``n`` is 1)."""
    if n == 1:
        yield from map(_run, work)
        return
    with multiprocessing.get_context("fork").Pool(n) as pool:
        yield from pool.imap(_run, work, chunksize=1)


def build_worlds(worlds_file: Path = WORLDS_FILE, out: Path = BUILD, only: str | None = None,
                 packs_dir: Path | None = None, area: WorldArea = WORLD_AREA, jobs: int | None = None,
                 unfreeze: bool = False, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Build the saves of every world (or ``only`` one) under ``out/worlds``; returns the manifest.
    ``progress(done, total)`` is called as each world's saves are built.

    Nothing is written unless every world builds and passes route validation. If ``out`` holds a
    frozen build (``FROZEN.json``), the rebuilt bytes must equal the frozen ones unless
    ``unfreeze`` is set, which also removes the freeze.
    """
    from mcbuild.compiler.worlds.integrity import check_against_freeze, freeze_path, world_inputs

    worlds = load_worlds(worlds_file)
    selected = [w for w in worlds.worlds if only in (None, w.id)]
    if not selected:
        raise SpecError(str(worlds_file), "worlds", f"no world with id {only!r}")
    biomes = load_biomes({w.biome for w in selected}, worlds_file.parent)
    mirror_packs = read_mirror_packs(worlds.mirrors, packs_dir or out)
    inputs = world_inputs(worlds_file)
    if not unfreeze:
        check_against_freeze(out, mirror_packs, biomes)
    root = out / "worlds"
    built_before = _listed(root)
    for w in selected:      # a folder of the user's is refused before any world is built
        check_replaceable(root / w.id, TOOL, built_before.get(w.id, ()))
    created = not root.exists()
    root.mkdir(parents=True, exist_ok=True)
    sweep(root, TOOL)       # what a killed build left: its staging folder, a world moved aside
    staging = make_dir(root, TOOL)
    try:
        work = [Job(w, biomes[w.biome][0], biomes[w.biome][1], tuple(sorted(mirror_packs.items())), area, staging / w.id)
                for w in selected]
        n = max(1, min(jobs or os.cpu_count() or 1, len(work)))
        results: list[tuple[str, Any]] = []
        if progress is not None:
            progress(0, len(work))
        for result in _each(work, n):
            results.append(result)
            if progress is not None:
                progress(len(results), len(work))
        for kind, value in results:
            if kind != "ok":
                _raise(kind, value)
        entries = {}
        for job, (_, entry) in zip(work, results):
            entry["files"] = {f"{job.entry.id}/{k}": v for k, v in entry["files"].items()}
            entry["inputs_sha256"] = inputs
            entries[job.entry.id] = entry
        if not unfreeze:
            check_against_freeze(out, mirror_packs, biomes, entries)
        for world_id in sorted(entries):
            files = [k.partition("/")[2] for k in entries[world_id]["files"]]
            check_replaceable(root / world_id, TOOL, [*files, *built_before.get(world_id, ())])
            write_file(staging / world_id / MARKER, marker_bytes(TOOL, files))
        for world_id in sorted(entries):
            install(staging / world_id, root / world_id, TOOL)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if created and not any(root.iterdir()):
            root.rmdir()
    manifest = _update_manifest(root, entries)
    if unfreeze:
        freeze_path(out).unlink(missing_ok=True)
    return manifest


def _listed(root: Path) -> dict[str, list[str]]:
    """World id -> the files (relative to its folder) that the current manifest lists for it."""
    try:
        manifest = read_manifest(root.parent) or {"worlds": {}}
    except CompileError:
        return {}
    return {w: [k.partition("/")[2] for k in entry.get("files", {})] for w, entry in manifest["worlds"].items()}


def _update_manifest(root: Path, entries: dict[str, Any]) -> dict[str, Any]:
    path = root / MANIFEST
    try:
        manifest = read_manifest(root.parent) or {"schema_version": WORLDS_SCHEMA, "worlds": {}}
    except CompileError:        # an older mcbuild's (or damaged) manifest: its worlds are built anew
        manifest = {"schema_version": WORLDS_SCHEMA, "worlds": {}}
    manifest["worlds"].update(entries)
    atomic_write(path, dump_bytes(manifest), tool="worlds")
    return manifest


#END
