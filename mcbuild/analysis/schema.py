"""The columns of a study's three tables: ``episodes``, ``actions`` and ``calls``.

Each column has a kind, the same in every format: ``str``, ``int``, ``float``, ``bool`` or ``json``
(JSON text in Parquet and CSV, the nested value in JSONL). The ``episodes`` columns follow the
store's own (``mcbuild.runtime.study.store.columns.COLUMNS``): a field added to the episode record
or the outcome is a column here without another edit. The ``actions`` columns come from the
trajectory steps the episode writes, the ``calls`` columns from the model-call records an LLM
agent keeps (``runtime/agents/llm/base.py``); a call field this table does not name yet is kept
in its ``extra`` column, so nothing a newer mcbuild records is dropped.
"""
from __future__ import annotations

from dataclasses import dataclass

from mcbuild.runtime.study.store.columns import COLUMNS

__all__ = ["Col", "EPISODES", "ACTIONS", "CALLS", "TABLES", "BULKY", "CALL_TEXT"]

#: Store columns left out of ``episodes``: read on demand (``Study.trajectory``, the ``actions`` table).
BULKY = ("trajectory", "events")
#: Call-record fields left out of ``calls``: the prompt and the reply (in the store, ``Study.trajectory``).
CALL_TEXT = ("messages", "reply")


@dataclass(frozen=True)
class Col:
    name: str
    kind: str            # str | int | float | bool | json
    doc: str = ""


_KIND = {"INTEGER": "int", "REAL": "float", "TEXT": "str", "BLOB": "str"}


def _store_kind(sql: str, kind: str) -> str:
    return "bool" if kind == "bool" else "json" if kind.startswith("json") else _KIND[sql]


EPISODES: tuple[Col, ...] = (
    *(Col(c.name, _store_kind(c.sql, c.kind), "store column") for c in COLUMNS if c.name not in BULKY),
    Col("model_settings", "json", "how the episode's model sampled, as the study stored it (empty for scripted agents)"),
)

ACTIONS: tuple[Col, ...] = (
    Col("episode_id", "str"),
    Col("index", "int", "1-based budgeted action"),
    Col("skill", "str"),
    Col("args", "json", "the arguments as validated (or as sent, when refused)"),
    Col("ok", "bool"),
    Col("reason", "str", "the reason code of a failure (None when ok)"),
    Col("gained", "json", "items that entered the inventory"),
    Col("lost", "json", "items that left it"),
    Col("score", "float", "the Score after the action"),
    Col("milestones", "json", "the task's milestones (codes) first completed by this action"),
    Col("advancements", "json", "advancements first completed by this action"),
    Col("encounters", "json", "changed rules this action met first (the hidden evaluator's encounters)"),
    Col("calls", "int", "model calls made for this action"),
)

CALLS: tuple[Col, ...] = (
    Col("episode_id", "str"),
    Col("call", "int", "0-based order of the call in the episode"),
    Col("action", "int", "the action the call was made for (None: after the last action)"),
    Col("role", "str", "which part of the configuration asked (actor, critic, planner, ...)"),
    Col("repair", "int", "0 for a first request, n for the n-th repair turn"),
    Col("model", "str"),
    Col("attempts", "int", "HTTP attempts the call took (retries included)"),
    Col("prompt_tokens", "int"),
    Col("completion_tokens", "int"),
    Col("cached_prompt_tokens", "int", "prompt tokens the provider served from its cache (when it reports them)"),
    Col("reasoning_tokens", "int", "completion tokens spent reasoning (when the provider reports them)"),
    Col("cost_usd", "float"),
    Col("priced", "bool", "whether the model has a price"),
    Col("seconds", "float", "wall time of the call (when recorded)"),
    Col("adaptations", "json", "how the client adapted the request to the endpoint (when recorded)"),
    Col("prompt_hash", "str"),
    Col("extra", "json", "any other field of the call record"),
)

TABLES: dict[str, tuple[Col, ...]] = {"episodes": EPISODES, "actions": ACTIONS, "calls": CALLS}
