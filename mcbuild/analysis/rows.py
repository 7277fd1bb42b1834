"""Rows of the ``actions`` and ``calls`` tables from one episode's stored trajectory.

A row is a tuple in the column order of :mod:`mcbuild.analysis.schema`; ``json`` columns hold
compact JSON text. The trajectory is the store's JSONL text: one step per budgeted action (its
action, result, Score after it, completed advancements, the evaluator's events and, for an LLM
agent, the model calls made for it), and for an LLM agent a last line holding the calls made
after the last action.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import orjson

from mcbuild.compiler.core.canonical import compact
from mcbuild.analysis.schema import CALL_TEXT, CALLS

if TYPE_CHECKING:
    from mcbuild.compiler.rules.tasks import Task

__all__ = ["parse_steps", "action_rows", "call_rows"]

_CALL_FIELDS = tuple(c.name for c in CALLS if c.name not in ("episode_id", "call", "action", "extra"))
_CALL_JSON = frozenset(c.name for c in CALLS if c.kind == "json")
#: Call-record fields no column shows: the text (:data:`CALL_TEXT`) and the agent's own action counter
#: (``action`` says where the call was made).
_NOT_EXTRA = frozenset(_CALL_FIELDS) | frozenset(CALL_TEXT) | {"step"}


def parse_steps(text: str) -> list[dict[str, Any]]:
    """The steps of a stored trajectory's JSONL text."""
    return [orjson.loads(line) for line in text.splitlines() if line.strip()]


def _first_met(encounters: Iterable[Mapping[str, Any]]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for e in encounters:
        out.setdefault(int(e["action_index"]), []).append(str(e["rule"]))
    return out


def _reached(task: "Task | None", new: set[str], before: float, after: float) -> list[str]:
    """The codes of ``task``'s milestones first completed by an action: an advancement milestone when
    its advancement is in ``new``, a checked one when the Score (the deepest milestone's value) rose
    to its value."""
    if task is None:
        return []
    return [m.code for m in task.milestones
            if (m.advancement in new if m.advancement else before < m.value == after)]


def action_rows(episode_id: str, steps: Sequence[Mapping[str, Any]],
                encounters: Iterable[Mapping[str, Any]] = (), task: "Task | None" = None) -> list[tuple]:
    """One row per budgeted action; ``encounters`` are the episode record's (rule, action_index),
    ``task`` the episode's task (None: an unknown task, no milestone codes)."""
    met = _first_met(encounters)
    rows = []
    done: set[str] = set()
    score = 0.0
    for step in steps:
        if "action" not in step:
            continue
        result = step.get("result") or {}
        action = step.get("action") or {}
        index = int(step["index"])
        completed = set(step.get("completed") or ())
        new, after = completed - done, float(step.get("score") or 0.0)
        rows.append((episode_id, index, action.get("skill"), compact(action.get("args") or {}),
                     bool(result.get("ok")), result.get("reason"), compact(result.get("gained") or {}),
                     compact(result.get("lost") or {}), after, compact(_reached(task, new, score, after)),
                     compact(sorted(new)), compact(met.get(index, [])), len(step.get("llm_calls") or ())))
        done, score = completed, after
    return rows


def call_rows(episode_id: str, steps: Sequence[Mapping[str, Any]]) -> list[tuple]:
    """One row per model call, in call order (none for a scripted agent)."""
    rows: list[tuple] = []
    for step in steps:
        action = step.get("index")
        for record in step.get("llm_calls") or ():
            values = [record.get(name) for name in _CALL_FIELDS]
            values = [compact(v) if name in _CALL_JSON and v is not None else v
                      for name, v in zip(_CALL_FIELDS, values)]
            extra = {k: v for k, v in record.items() if k not in _NOT_EXTRA}
            rows.append((episode_id, len(rows), action, *values, compact(extra) if extra else None))
    return rows
