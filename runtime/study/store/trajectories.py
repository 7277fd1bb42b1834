"""Lean stored trajectories, and the full expanded export.

An LLM episode's trajectory repeats itself: every call re-sends the system prompt, the skill
table, the task and most of the previous observation. :func:`pack` stores it without the
repetition and :func:`unpack` gives back the exact JSONL text (``compact(step)`` per line):

* every line of every message content is stored once per episode (content-addressed by its
  position in a table of distinct lines); a message keeps its role and the indices of its lines;
* the resulting document is zlib-compressed and marked with ``MAGIC``.

Everything else of a step (action, result, signature, evaluator events, tokens, cost, reply,
prompt hash) is kept as it is, so every Appendix-D field and every request and reply comes back
byte for byte. A stored value without ``MAGIC`` is plain JSONL text (stores written before).

:func:`export` writes one study's expanded JSONL: one line per episode with its record, evaluator
events and full trajectory.
"""
from __future__ import annotations

import json
import os
import tempfile
import zlib
from pathlib import Path
from typing import Any, Iterable

from compiler.core.canonical import compact

__all__ = ["MAGIC", "DamagedTrajectory", "pack", "unpack", "export"]

MAGIC = b"MCT1"
LEVEL = 6


class DamagedTrajectory(ValueError):
    """A stored trajectory value that does not decompress, decode or parse."""


def pack(steps: Iterable[dict[str, Any]]) -> bytes:
    """The lean, compressed form of a trajectory (a list of JSON-able steps)."""
    lines: dict[str, int] = {}

    def ref(text: str) -> list[int]:
        return [lines.setdefault(line, len(lines)) for line in text.split("\n")]

    lean = []
    for step in steps:
        calls = step.get("llm_calls")
        if calls:
            step = {**step, "llm_calls": [{**c, "messages": [{**m, "content": ref(m["content"])}
                                                             for m in c.get("messages", ())]} for c in calls]}
        lean.append(step)
    doc = compact({"lines": list(lines), "steps": lean})
    return MAGIC + zlib.compress(doc.encode(), LEVEL)


def unpack(value: str | bytes | None) -> str:
    """The exact JSONL text of a stored trajectory (packed or plain); a damaged value is one
    :class:`DamagedTrajectory`."""
    if not value:
        return ""
    if isinstance(value, str):
        return value
    try:
        if not value.startswith(MAGIC):
            return value.decode()
        doc = json.loads(zlib.decompress(value[len(MAGIC):]))
        table = doc["lines"]
        out = []
        for step in doc["steps"]:
            for call in step.get("llm_calls") or ():
                for m in call.get("messages", ()):
                    m["content"] = "\n".join(table[i] for i in m["content"])
            out.append(compact(step) + "\n")
    except (zlib.error, ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise DamagedTrajectory(f"damaged stored trajectory ({type(exc).__name__}: {exc})"[:300]) from None
    return "".join(out)


def export(study: str | Path, out: str | Path | None = None) -> tuple[Path, int]:
    """Write ``out`` (default ``<study>/export.jsonl``): one line per stored episode, ``{"record",
    "events", "trajectory": [steps]}``, in episode-id order; written under a temporary name and
    renamed, so a reader never sees half a file. Returns the path and the number of episodes."""
    from runtime.study.store.results import Store

    study = Path(study)
    target = Path(out) if out is not None else study / "export.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    n = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh, Store.open(study, create=False) as store:
            records = {r["episode_id"]: r for r in store.records()}
            for eid, traj, events in store.iter_trajectories():
                steps = [json.loads(line) for line in traj.splitlines() if line.strip()]
                fh.write(compact({"record": records.get(eid), "events": json.loads(events or "[]"),
                                  "trajectory": steps}) + "\n")
                n += 1
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target, n
