"""Whether a report folder is still the report of its study: a digest of what it was made from (the
store's episodes and faults, the build the study is bound to, the toolkit's own files and the report's
options), kept in ``<report>/inputs.json``. ``mcbuild demo`` rebuilds the report and the viewer only
when it changed."""
from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from mcbuild.compiler.core.canonical import atomic_write, compact
from mcbuild.runtime.study.store.results import build_fingerprint
from mcbuild.runtime.study.store.status import store_digest

__all__ = ["STAMP_NAME", "inputs_digest", "is_current", "mark_current"]

STAMP_NAME = "inputs.json"
_TOOLKIT_FILES = (".py", ".js", ".j2", ".json", ".yaml", ".tsv")
_SKIPPED = {"__pycache__", "node_modules"}


#: The package's own folder (``mcbuild/``): its __init__ holds the version, so it is hashed too.
PACKAGE = Path(__file__).resolve().parents[3]


@lru_cache(maxsize=1)
def toolkit_digest() -> str:
    """Every source and data file of the ``mcbuild`` package (code, templates, prompts, catalogs)."""
    files = []
    for folder, dirs, names in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED)
        files += [Path(folder, n) for n in names if n.endswith(_TOOLKIT_FILES)]
    h = hashlib.sha256()
    for f in sorted(files):
        h.update(f.relative_to(PACKAGE).as_posix().encode() + b"\0" + hashlib.sha256(f.read_bytes()).digest())
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
    atomic_write(out / STAMP_NAME, json.dumps({"inputs": digest}).encode(), tool="report")
