"""Lean stored trajectories.

An LLM episode's trajectory repeats itself: every call re-sends the system prompt, the skill
table, the task and most of the previous observation. :func:`pack` stores it without the
repetition and :func:`unpack` gives back the exact JSONL text (``compact(step)`` per line):

* every line of every message content is stored once per episode (content-addressed by its
  position in a table of distinct lines); a message keeps its role and the indices of its lines;
* the resulting document is zlib-compressed and marked with ``MAGIC``.

Everything else of a step (action, result, signature, evaluator events, tokens, cost, reply,
prompt hash) is kept as it is, so every Appendix-D field and every request and reply comes back
byte for byte. A stored value without ``MAGIC`` is plain JSONL text (stores written before).
"""
from __future__ import annotations

import json
import zlib
from typing import Any, Iterable

from mcbuild.compiler.core.canonical import compact

__all__ = ["MAGIC", "DamagedTrajectory", "pack", "unpack"]

MAGIC = b"MCT1"
LEVEL = 6


class DamagedTrajectory(ValueError):
    """A stored trajectory value that does not decompress, decode or parse."""


def pack(steps: Iterable[dict[str, Any]]) -> bytes:
    """The lean, compressed form of a trajectory (a list of JSON-able steps)."""
    lines: dict[str, int] = {}
    made: dict[str, list[int]] = {}         # a content sent again (the system prompt, every call) is split once

    def ref(text: str) -> list[int]:
        known = made.get(text)
        if known is None:
            known = made[text] = [lines.setdefault(line, len(lines)) for line in text.split("\n")]
        return known

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
