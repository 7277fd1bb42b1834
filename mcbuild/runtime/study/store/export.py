"""The full expanded export of one study: one JSONL line per stored episode with its record, the
hidden evaluator's events and its whole trajectory (``mcbuild study export``)."""
from __future__ import annotations

import json
from pathlib import Path

from mcbuild.compiler.core.canonical import atomic_open, compact
from mcbuild.compiler.core.owned import check_file
from mcbuild.compiler.core.scratch import sweep
from mcbuild.runtime.study.store.results import Store, StoreError

__all__ = ["export", "EXPORT_HEAD"]

#: How every line of an export begins (``compact``: sorted keys), and so how an export is recognized.
EXPORT_HEAD = b'{"events":'


def export(study: str | Path, out: str | Path | None = None) -> tuple[Path, int]:
    """Write ``out`` (default ``<study>/export.jsonl``): one line per stored episode, ``{"record",
    "events", "trajectory": [steps]}``, in episode-id order; written under a temporary name and
    renamed (``atomic_open``: the umask's mode), so a reader never sees half a file. Returns the
    path and the number of episodes."""
    study = Path(study)
    target = Path(out) if out is not None else study / "export.jsonl"
    check_file(target, "export", EXPORT_HEAD)      # never over a file of the user's
    sweep(target.parent, "export")                  # the temporary of a killed export
    n = 0
    with Store.read_only(study) as store, atomic_open(target, tool="export") as fh:
        records = {r["episode_id"]: r for r in store.records()}
        for eid, traj, events in store.iter_trajectories():
            try:
                steps = [json.loads(line) for line in traj.splitlines() if line.strip()]
            except ValueError as exc:
                raise StoreError(f"{store.path}: episode {eid}: damaged stored trajectory "
                                 f"({type(exc).__name__}: {exc})"[:300]) from None
            fh.write(compact({"record": records.get(eid), "events": json.loads(events or "[]"),
                              "trajectory": steps}) + "\n")
            n += 1
    return target, n
