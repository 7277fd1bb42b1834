"""Verifying a save before an episode runs on it, on every backend.

Every file of ``build/worlds/<world>/<condition>/`` must have the sha256 that
``build/worlds/manifest.json`` lists for it, no file may be missing or extra, and when the build
is frozen (``build/FROZEN.json``) the manifest's hashes of that save must be the frozen ones. A
problem is an :class:`~mcbuild.runtime.errors.InfrastructureFault` naming the file, so a study reruns the
episode and then reports it as a fault; it is never scored.

A process hashes each file at most once while its size and modification time stay the same
(a bounded table), and remembers a verified save until one of its stamps, the manifest's or the
freeze's changes.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from mcbuild.compiler.core.memo import LRU
from mcbuild.compiler.worlds.integrity import FROZEN
from mcbuild.compiler.worlds.layout import MANIFEST, manifest_problem
from mcbuild.runtime.errors import InfrastructureFault

FILE_HASHES = 4096      # files whose hash a process remembers
SAVES = 256             # saves whose verdict a process remembers

Stamp = tuple[int, int]                                   # (size, mtime_ns)
_HASHES: LRU[tuple[Stamp, str]] = LRU(FILE_HASHES)        # path -> (stamp, sha256)
_JSON: LRU[tuple[Stamp, Any]] = LRU(8)                    # manifest / freeze path -> (stamp, data)
_VERIFIED: LRU[tuple] = LRU(SAVES)                        # save -> stamps it was verified with

HINT = "damaged or changed save; run `mcbuild build verify` and rebuild it"


def _stamp(path: Path) -> Stamp:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def file_sha256(path: Path) -> str:
    """sha256 of a file, hashed at most once per process while its size and mtime are unchanged."""
    try:
        stamp = _stamp(path)
        known = _HASHES.get(str(path))
        if known is not None and known[0] == stamp:
            return known[1]
        h = hashlib.sha256()
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError as exc:
        raise InfrastructureFault(f"{path}: cannot read: {exc.strerror or exc}") from None
    _HASHES.put(str(path), (stamp, h.hexdigest()))
    return h.hexdigest()


def _json(path: Path) -> tuple[Stamp, Any] | None:
    """A JSON file (``None`` when absent), parsed once per size and mtime; damage is a fault."""
    try:
        stamp = _stamp(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InfrastructureFault(f"{path}: cannot read: {exc.strerror or exc}") from None
    known = _JSON.get(str(path))
    if known is None or known[0] != stamp:
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError) as exc:
            raise InfrastructureFault(f"{path}: unreadable ({type(exc).__name__}: {exc})") from None
        known = (stamp, data)
        _JSON.put(str(path), known)
    return known


def _stamps(save: str, prefix: str = "") -> list[tuple[str, Stamp]]:
    """(path relative to ``save``, stamp) of every file below it, unsorted (as ``os.walk`` sees
    files: a link to a folder is neither followed nor listed)."""
    out: list[tuple[str, Stamp]] = []
    with os.scandir(save) as entries:
        for entry in entries:
            if entry.is_dir():
                if not entry.is_symlink():
                    out += _stamps(entry.path, f"{prefix}{entry.name}/")
            else:
                st = entry.stat()
                out.append((prefix + entry.name, (st.st_size, st.st_mtime_ns)))
    return out


def expected_files(save: Path, build: Path) -> dict[str, str]:
    """The sha256 the manifest (and, when frozen, FROZEN.json) pins for each file of ``save``."""
    world, condition = save.parent.name, save.name
    manifest_path = build / "worlds" / MANIFEST
    manifest = _json(manifest_path)
    if manifest is None:
        raise InfrastructureFault(f"{manifest_path}: missing; run `mcbuild build worlds`")
    problem = manifest_problem(manifest[1], manifest_path)
    if problem is not None:
        raise InfrastructureFault(problem)
    try:
        entry = manifest[1]["worlds"].get(world)
        files = entry["files"] if entry is not None else None
        prefix = f"{world}/{condition}/"
        pinned = {k[len(prefix):]: str(v) for k, v in files.items() if k.startswith(prefix)} if files else {}
    except (AttributeError, KeyError, TypeError):
        raise InfrastructureFault(f"{manifest_path}: not a worlds manifest (field worlds.{world}.files)") from None
    if not pinned:
        raise InfrastructureFault(f"{manifest_path}: no save {world}/{condition} is listed; run `mcbuild build worlds`")
    frozen_path = build / FROZEN
    frozen = _json(frozen_path)
    if frozen is not None:
        try:
            frozen_files = frozen[1]["files"]
            for rel, digest in pinned.items():
                if frozen_files.get(prefix + rel) != digest:
                    raise InfrastructureFault(f"{save / rel}: the manifest's sha256 differs from {frozen_path}; {HINT}")
            extra = sorted(k for k in frozen_files if k.startswith(prefix) and k[len(prefix):] not in pinned)
        except (AttributeError, KeyError, TypeError):
            raise InfrastructureFault(f"{frozen_path}: not a freeze file (field files)") from None
        if extra:
            raise InfrastructureFault(f"{build / 'worlds' / extra[0]}: frozen but not in {manifest_path}; {HINT}")
    return pinned


def verify_save(save: Path, build: Path) -> tuple[tuple[str, Stamp], ...]:
    """Raise :class:`InfrastructureFault` naming the first file of ``save`` that is missing, extra,
    unreadable or not the bytes the manifest (and the freeze) pin; else the (path relative to
    ``save``, stamp) of every file verified, sorted (the opening reads the rules' stamps from it)."""
    save = Path(save)
    if not save.is_dir():
        raise InfrastructureFault(f"{save}: no save folder; run `mcbuild build worlds`")
    try:
        stamps = tuple(sorted(_stamps(str(save))))
    except OSError as exc:
        raise InfrastructureFault(f"{save}: cannot read: {exc}") from None
    meta = tuple(_stamp(p) if p.is_file() else None for p in (build / "worlds" / MANIFEST, build / FROZEN))
    key = os.path.realpath(save)
    if _VERIFIED.get(key) == (stamps, meta):
        return stamps
    files = {rel: save / rel for rel, _ in stamps}
    pinned = expected_files(save, build)
    for rel in sorted(set(pinned) | set(files)):
        if rel not in files:
            raise InfrastructureFault(f"{save / rel}: missing; {HINT}")
        if rel not in pinned:
            raise InfrastructureFault(f"{save / rel}: not in {build / 'worlds' / MANIFEST}; {HINT}")
        if file_sha256(files[rel]) != pinned[rel]:
            raise InfrastructureFault(f"{save / rel}: sha256 differs from {build / 'worlds' / MANIFEST}; {HINT}")
    _VERIFIED.put(key, (stamps, meta))
    return stamps
