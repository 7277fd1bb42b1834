"""Whether a report folder is still the report of its study: a digest of what it was made from (the
store's episodes and faults, the build the study is bound to, the toolkit's own files and the report's
options), kept in ``<report>/inputs.json``. ``mcbuild demo`` rebuilds the report and the viewer only
when it changed."""
from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from mcbuild.compiler.core.canonical import atomic_write, compact
from mcbuild.runtime.study.store.results import build_fingerprint
from mcbuild.runtime.study.store.status import store_digest

__all__ = ["STAMP_NAME", "inputs_digest", "is_current", "mark_current"]

STAMP_NAME = "inputs.json"
_TOOLKIT_FILES = ("*.py", "*.js", "*.j2", "*.json", "*.yaml", "*.tsv")


@lru_cache(maxsize=1)
def toolkit_digest() -> str:
    """Every source and data file of the installed ``mcbuild`` package (code, templates, catalogs)."""
    import mcbuild

    root = Path(mcbuild.__file__).parent
    roots = [Path(p) for p in getattr(mcbuild, "__path__", [root])]
    h = hashlib.sha256(mcbuild.__version__.encode())
    for base in roots:
        for pattern in _TOOLKIT_FILES:
            for f in sorted(base.rglob(pattern)):
                if "__pycache__" not in f.parts:
                    h.update(f.relative_to(base).as_posix().encode() + b"\0" + hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


def inputs_digest(study: Path, build: Path, options: dict[str, Any]) -> str:
    parts = {"store": store_digest(study), "build": build_fingerprint(build), "toolkit": toolkit_digest(),
             "options": options}
    return hashlib.sha256(compact(parts).encode()).hexdigest()


def is_current(out: Path, digest: str) -> bool:
    """Whether ``out`` holds a finished report made from exactly these inputs."""
    try:
        return json.loads((out / STAMP_NAME).read_bytes()).get("inputs") == digest and (out / "report.html").is_file()
    except (OSError, ValueError, AttributeError):
        return False


def mark_current(out: Path, digest: str) -> None:
    atomic_write(out / STAMP_NAME, json.dumps({"inputs": digest}).encode())
