"""Task difficulty d(τ) per condition, as the tracer wrote it into ``build/<suite>/report.json``."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from mcbuild.runtime.records import VANILLA


def suite_report(path: Path) -> dict | None:
    """A suite's ``report.json`` (``None`` when absent); one that does not read or parse as a JSON
    object is a ``ValueError`` naming it."""
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} is damaged ({type(exc).__name__}: {exc}); rebuild the suite") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path} is damaged (not a JSON object); rebuild the suite")
    return doc


def load_difficulty(build: Path, suites: Sequence[str]) -> tuple[dict[tuple[str, str], float | None], list[str]]:
    """((task, condition) -> d(τ), suites without it) from ``tracer.difficulty`` of each suite's ``report.json``.

    The Vanilla value is the same in every suite's report; a study without suites takes it from the
    first built suite of ``build``. A pair the tracer could not route (a milestone has no route)
    maps to ``None``; a pair no report names is absent. The second list names the suites whose
    report is missing, damaged (marked so) or older than ``tracer.difficulty``.
    """
    paths = [build / s / "report.json" for s in suites] or sorted(build.glob("m*/report.json"))[:1]
    values: dict[tuple[str, str], float | None] = {}
    missing = []
    for path in paths:
        try:
            report = suite_report(path) or {}
        except ValueError:
            missing.append(f"{path.parent.name} (damaged)")
            continue
        rated = (report.get("tracer") or {}).get("difficulty")
        if rated is None:
            missing.append(path.parent.name)
            continue
        for task, d in sorted(rated.items()):
            values.setdefault((task, VANILLA), d.get("vanilla"))
            if suites:
                values[(task, path.parent.name)] = d.get("suite")
    return values, missing
