"""Compile orchestration: spec -> validated, packaged, traced and audited artifact, written atomically.

An ``Artifact`` is the complete content of ``build/<id>/``; nothing is written until every
check has passed, and then the folder is replaced in one rename.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import mirror, rulesheet, tracer
from .canonical import atomic_write_dir, dump_bytes, sha256
from .errors import CompileError
from .pack import MINECRAFT_VERSION, PACK_FORMAT, build_zip, read_zip
from .rulebook import Rulebook, vanilla
from .spec import MirrorSpec, parse_spec, read_yaml


@dataclass(frozen=True)
class Artifact:
    id: str
    kind: str
    files: dict[str, bytes]

    @property
    def report(self) -> dict[str, Any]:
        import json

        return json.loads(self.files["report.json"])


def compile_data(data: Any, file: str) -> Artifact:
    """Compile parsed spec data (as read from YAML or an LLM reply) entirely in memory."""
    spec = parse_spec(data, file)
    if isinstance(spec, MirrorSpec):
        return compile_mirror(spec, file)
    from .biome import compile_biome

    return Artifact(spec.id, "biome", compile_biome(spec, file))


def compile_path(path: str | Path) -> Artifact:
    return compile_data(read_yaml(Path(path)), str(path))


def compile_mirror(spec: MirrorSpec, file: str) -> Artifact:
    base = vanilla()
    resolved = mirror.resolve(spec, file, base)
    files = mirror.emit(resolved, base)
    zip_bytes = build_zip(files)
    suite = Rulebook(base.catalog, [(f"file/{spec.id}.zip", read_zip(zip_bytes))])
    from audits.mirror import audit_mirror, tracer_changes

    trace = tracer.trace(base, suite, spec.selected_tasks, tracer_changes(resolved))

    findings = audit_mirror(files, spec, resolved, trace, file)
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
        "pack_files": {name: sha256(_bytes(files[name])) for name in sorted(files)},
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


def _bytes(value: Any) -> bytes:
    from .pack import to_bytes

    return to_bytes(value)


def write(artifact: Artifact, out: Path) -> Path:
    target = out / artifact.id
    atomic_write_dir(target, artifact.files)
    return target


def differences(artifact: Artifact, out: Path) -> list[str]:
    """Files under ``out/<id>`` that differ from the freshly compiled artifact."""
    target = out / artifact.id
    diffs = []
    on_disk = {p.name for p in target.iterdir()} if target.is_dir() else set()
    for name in sorted(set(artifact.files) | on_disk):
        path = target / name
        if name not in artifact.files:
            diffs.append(f"{path}: not produced by the compiler")
        elif not path.is_file():
            diffs.append(f"{path}: missing")
        elif path.read_bytes() != artifact.files[name]:
            diffs.append(f"{path}: differs from a fresh compile")
    return diffs
