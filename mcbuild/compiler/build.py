"""The compile pipeline: spec -> validated, packaged, traced and audited artifact, written atomically.

The only module of ``compiler/`` that runs the audits (``audits/`` receives resolved data and
tracer reports from here and never runs the pipeline itself). An ``Artifact`` is the complete
content of ``build/<id>/``; nothing is written until every check has passed, and then the
folder is replaced in one rename. :func:`audit_folder` re-checks an artifact already built.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from mcbuild.audits import worldgen_pack, worldgen_plants, worldgen_spec
from mcbuild.audits.mirror import Expected, audit_mirror
from mcbuild.compiler.biome.pack import build_pack
from mcbuild.compiler.core.canonical import dump_bytes, sha256
from mcbuild.compiler.core.errors import CompileError, SpecError
from mcbuild.compiler.core.findings import Findings
from mcbuild.compiler.core.owned import MARKER, atomic_write_dir, check_replaceable
from mcbuild.compiler.core.paths import ROOT
from mcbuild.compiler.mirror import rulesheet
from mcbuild.compiler.mirror.emit import emit
from mcbuild.compiler.mirror.resolve import Resolved, resolve
from mcbuild.compiler.planning import tracer
from mcbuild.compiler.rules.pack import MINECRAFT_VERSION, PACK_FORMAT, build_zip, read_zip, to_bytes
from mcbuild.compiler.rules.rulebook import Rulebook, vanilla
from mcbuild.compiler.spec.base import read_yaml
from mcbuild.compiler.spec.biome import BiomeSpec
from mcbuild.compiler.spec.kinds import parse_spec
from mcbuild.compiler.spec.mirror import MirrorSpec
from mcbuild.compiler.spec.task import tasks


@dataclass(frozen=True)
class Artifact:
    id: str
    kind: str
    files: dict[str, bytes]

    @property
    def report(self) -> dict[str, Any]:
        return json.loads(self.files["report.json"])


def compile_data(data: Any, file: str) -> Artifact:
    """Compile parsed spec data (as read from YAML or an LLM reply) entirely in memory."""
    spec = parse_spec(data, file)
    if isinstance(spec, MirrorSpec):
        return compile_mirror(spec, file)
    assert isinstance(spec, BiomeSpec)              # parse_spec's compiled kinds are these two
    return Artifact(spec.id, "biome", compile_biome(spec, file))


def compile_path(path: str | Path) -> Artifact:
    return compile_data(read_yaml(Path(path)), str(path))


def display_path(file: str | Path) -> str:
    """The spec path as reports show it: repository-relative when inside the repository."""
    path = Path(file)
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return path.as_posix()


# ----------------------------------------------------------------------------- mirror packs
def tracer_changes(resolved: Iterable[Resolved]) -> list[dict[str, Any]]:
    """The ``changes`` argument of :func:`mcbuild.compiler.planning.tracer.trace` for resolved changes."""
    out = []
    for res in resolved:
        skill = res.transitions[0].skill if res.transitions else ""
        out.append({"id": res.change.id, "skill": skill, "transitions": [t.key() for t in res.transitions]})
    return out


def trace_pack(files: Mapping[str, Any], spec: MirrorSpec, resolved: list[Resolved]) -> dict[str, Any]:
    """Trace the pack as it is (not as the manifest says it should be)."""
    base = vanilla()
    suite = Rulebook(base.catalog, [("pack", {k: to_bytes(v) for k, v in files.items()})])
    known = tasks()
    return tracer.trace(base, suite, [known[t] for t in spec.selected_tasks], tracer_changes(resolved),
                        rated=[known[t] for t in sorted(known)])


def expected_files(resolved: list[Resolved]) -> Expected:
    """What the manifest says the pack holds: every change together, and each change alone."""
    base = vanilla()
    return Expected(emit(resolved, base), tuple(emit([res], base) for res in resolved))


def compile_mirror(spec: MirrorSpec, file: str) -> Artifact:
    base = vanilla()
    resolved = resolve(spec, file, base)
    files = emit(resolved, base)
    zip_bytes = build_zip(files)
    trace = trace_pack(read_zip(zip_bytes), spec, resolved)
    findings = audit_mirror(files, spec, resolved, expected_files(resolved), trace, file)
    if findings.hard_failures:
        raise CompileError(file, "; ".join(f"{f.code} at {f.field}: {f.message}" for f in findings.hard_failures),
                           findings.hard_failures)
    report = {
        "schema_version": "1.0",
        "id": spec.id,
        "kind": "mirror",
        "minecraft_version": MINECRAFT_VERSION,
        "pack_format": PACK_FORMAT,
        "datapack_sha256": sha256(zip_bytes),
        "pack_files": {name: sha256(to_bytes(files[name])) for name in sorted(files)},
        "changes": [{"id": r.change.id, "operator": r.change.operator,
                     "transitions": [{"skill": t.skill, "target": t.target, "station": t.station,
                                      "outputs": [list(o) for o in t.outputs]} for t in r.transitions]}
                    for r in resolved],
        "tracer": trace,
        "audit": findings.to_json(),
    }
    return Artifact(spec.id, "mirror", {
        "datapack.zip": zip_bytes,
        "report.json": dump_bytes(report),
        "spec.json": dump_bytes(spec.model_dump(mode="json")),
        "rules.md": rulesheet.render(spec, resolved).encode("utf-8"),
    })


# ----------------------------------------------------------------------------- biome packs
def _fail(file: str, stage: str, findings: Findings) -> CompileError:
    first = findings.hard_failures[0]      # checks run from the most basic to the most derived
    more = len(findings.hard_failures) - 1
    suffix = f" (+{more} more in report)" if more else ""
    return CompileError(file, f"{stage} check {first.code} failed at {first.field}: {first.message}{suffix}",
                        findings.hard_failures)


def compile_biome(spec: BiomeSpec, file: str) -> dict[str, bytes]:
    """Compile a validated biome spec into ``datapack.zip``, ``report.json`` and ``spec.json``
    (the pre-compile audit, the pack, then the post-packaging audit of the re-read zip, paper F.2)."""
    file = display_path(file)
    pre = worldgen_spec.pre_compile(spec, file)
    if not pre.ok:
        raise _fail(file, "pre-compile", pre)
    datapack = build_pack(spec)
    files = read_zip(datapack)
    post, summary = worldgen_pack.post_package(files, spec)
    if not post.ok:
        raise _fail(file, "post-package", post)
    normalized = spec.normalized()
    report = {
        "schema_version": "1.0",
        "kind": "biome",
        "id": spec.id,
        "file": file,
        "pre_compile": pre.to_json(),
        "post_package": {**post.to_json(), **summary},
        "artifact": {"datapack_sha256": sha256(datapack), "spec_sha256": sha256(normalized),
                     "pack_format": PACK_FORMAT, "minecraft_version": MINECRAFT_VERSION},
        "files": {path: sha256(data) for path, data in sorted(files.items())},
        "world": worldgen_spec.world_summary(spec),
    }
    return {"datapack.zip": datapack, "report.json": dump_bytes(report), "spec.json": normalized}


def audit_world(blocks: Any, names: list[str], origin: tuple[int, int, int], label: str) -> None:
    """The world-gen audit of one generated world (``[x, y, z]`` palette indices whose first cell
    is at ``origin``): every plant survives in 1.19. A hard failure is a CompileError."""
    found = worldgen_plants.audit_plants(blocks, names, origin, label)
    if not found.ok:
        raise _fail(label, "world-gen", found)


# ----------------------------------------------------------------------------- artifacts
def write(artifact: Artifact, out: Path) -> Path:
    """Replace ``out/<id>/`` by the artifact's files (only a folder ``compile`` wrote, or an empty one)."""
    target = out / artifact.id
    atomic_write_dir(target, artifact.files, tool="compile")
    return target


def writable(artifact: Artifact, out: Path) -> None:
    """Refuse (:class:`~mcbuild.compiler.core.owned.NotOurs`, exit 2) when :func:`write` would replace a folder
    that ``compile`` did not write."""
    check_replaceable(out / artifact.id, "compile", artifact.files)


def differences(artifact: Artifact, out: Path) -> list[str]:
    """Files under ``out/<id>`` that differ from the freshly compiled artifact."""
    target = out / artifact.id
    diffs = []
    on_disk = {p.name for p in target.iterdir() if p.name != MARKER} if target.is_dir() else set()
    for name in sorted(set(artifact.files) | on_disk):
        path = target / name
        if name not in artifact.files:
            diffs.append(f"{path}: not produced by the compiler")
        elif not path.is_file():
            diffs.append(f"{path}: missing")
        elif path.read_bytes() != artifact.files[name]:
            diffs.append(f"{path}: differs from a fresh compile")
    return diffs


def audit_folder(folder: str | Path) -> Findings:
    """Re-read ``build/<id>/`` (datapack.zip, spec.json, report.json) and re-run the audits.

    Mirror packs are re-resolved from ``spec.json`` and re-traced from the zip as it is on disk,
    so a hand-edited pack is judged by what it does, not by what its report claims.
    """
    folder = Path(folder)
    found = Findings()
    zip_path, spec_path, report_path = folder / "datapack.zip", folder / "spec.json", folder / "report.json"
    for path in (zip_path, spec_path):
        if not path.is_file():
            found.hard("artifact_missing", str(path), "<file>", "required artifact file is missing")
    if found.hard_failures:
        return found
    zip_bytes = zip_path.read_bytes()
    try:
        files = read_zip(zip_bytes)
    except Exception as exc:  # noqa: BLE001 - zipfile.BadZipFile, zlib.error and friends
        found.hard("zip_invalid", str(zip_path), "<file>", f"not a readable zip archive: {exc}")
        return found
    try:
        data = json.loads(spec_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        found.hard("json_invalid", str(spec_path), "<file>", f"not valid JSON: {exc}")
        return found
    if report_path.is_file():
        try:
            report = json.loads(report_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            found.hard("json_invalid", str(report_path), "<file>", f"not valid JSON: {exc}")
        else:
            _check_hashes(found, report, report_path, zip_path, zip_bytes, files)
    try:
        spec = parse_spec(data, str(spec_path))
    except SpecError as exc:
        found.hard("spec_invalid", exc.file, exc.field, exc.message)
        return found
    if not isinstance(spec, MirrorSpec):
        assert isinstance(spec, BiomeSpec)          # parse_spec's compiled kinds are these two
        found.extend(worldgen_spec.pre_compile(spec, str(spec_path)))
        post, _summary = worldgen_pack.post_package(files, spec)
        return found.extend(post)
    try:
        resolved = resolve(spec, str(spec_path), vanilla())
    except SpecError as exc:
        found.hard("spec_invalid", exc.file, exc.field, exc.message)
        return found
    try:
        trace = trace_pack(files, spec, resolved)
    except Exception as exc:  # noqa: BLE001 - a pack broken enough that the rulebook cannot read it
        found.hard("tracer_failed", str(zip_path), "<pack>", f"the tracer could not read the pack: {exc}")
        trace = None                # never the build report's trace: the audit is of the pack on disk
    return found.extend(audit_mirror(files, spec, resolved, expected_files(resolved), trace, str(spec_path)))


def _check_hashes(found: Findings, report: Any, report_path: Path, zip_path: Path, zip_bytes: bytes,
                  files: Mapping[str, Any]) -> None:
    """The zip on disk must be the one ``report.json`` describes: its sha256 and every file's."""
    if not isinstance(report, dict):
        found.hard("report_invalid", str(report_path), "<root>", "report.json is not a JSON object")
        return
    digest = report.get("datapack_sha256", (report.get("artifact") or {}).get("datapack_sha256"))
    listed = report.get("pack_files", report.get("files"))
    if not isinstance(digest, str) or not isinstance(listed, dict):
        found.hard("report_invalid", str(report_path), "datapack_sha256", "report.json lists no pack hashes")
        return
    if sha256(zip_bytes) != digest:
        found.hard("zip_hash_mismatch", str(zip_path), "<file>",
                   f"sha256 {sha256(zip_bytes)[:12]}... differs from report.json's {digest[:12]}...")
    actual = {name: sha256(to_bytes(data)) for name, data in files.items()}
    for name in sorted(set(actual) | set(listed)):
        if actual.get(name) != listed.get(name):
            what = "missing from the zip" if name not in actual else (
                "not listed in report.json" if name not in listed else "sha256 differs from report.json")
            found.hard("pack_file_mismatch", str(zip_path), name, what)
            break
