"""The JSON Schemas a model's replies are held to when its ``structured`` setting is on.

``structured: off`` (the default, the paper's protocol) sends no ``response_format``;
``json_object`` asks for any JSON object; ``json_schema`` sends the reply's own schema: the schema
of the pydantic contract its reply is checked against (:func:`contract`), with the contract's
nested models (plan subgoals, graph nodes) as item schemas, and what the contract takes only from
the caller (supplied sample keys) as an enum of those values (:func:`choices`), so that a reply
the schema allows passes the contract. The schemas of the agents' actions and Voyager's programs,
which follow the skills, are built by the agents (``runtime/agents/llm/reply_schemas.py``) as
:class:`Schema` values too.

The schemas keep to what grammar-constrained decoders convert faithfully (llama.cpp's converter
falls back to "any JSON" on a regex pattern or on an ``anyOf`` of bare ``required`` lists): text
is bounded by lengths and lists by item counts, never by a pattern.

A schema is built with or without registry enums for its item, block and entity ids (the model's
``id_enum`` setting is handed to :attr:`Schema.make`). Every schema is built once per process and
kept as the ready JSON bytes of its ``"response_format"`` member (:class:`Prepared`), which the
client splices into a request body without serializing the schema again. The contract checks and
repair turns stay in force: an endpoint may ignore the schema.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from pydantic import BaseModel

STRUCTURED = ("off", "json_object", "json_schema")


@dataclass(frozen=True, eq=False)
class Schema:
    """A named reply schema; ``make(ids)`` builds it, with registry enums when ``ids`` is true."""

    name: str
    make: Callable[[bool], dict[str, Any]]


@dataclass(frozen=True)
class Prepared:
    """A ``response_format`` value and its bytes as a request-body member (``, "response_format": ...``)."""

    body: dict[str, Any]
    member: bytes


@lru_cache(maxsize=256)
def prepared(schema: Schema, mode: str, ids: bool) -> Prepared:
    """The response format of ``schema`` under ``mode`` (``json_object`` or ``json_schema``), built once."""
    if mode == "json_object":
        body: dict[str, Any] = {"type": "json_object"}
    elif mode == "json_schema":
        body = {"type": "json_schema", "json_schema": {"name": schema.name, "schema": schema.make(ids)}}
    else:
        raise ValueError(f"structured must be one of {', '.join(STRUCTURED)}, got {mode!r}")
    return Prepared(body, b', "response_format": ' + json.dumps(body).encode())


def nested(model: type[BaseModel], items: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``model``'s JSON Schema with ``items`` as the item schema of its list fields; every ``$defs``
    (pydantic's nested models) gathered at the top, where their references point."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})
    for field, item in items.items():
        item = dict(item)
        defs.update(item.pop("$defs", {}))
        schema["properties"][field]["items"] = item
    return {**schema, "$defs": defs} if defs else schema


def contract(name: str, model: type[BaseModel], items: dict[str, type[BaseModel]] | None = None) -> Schema:
    """The schema of a reply checked against ``model`` (``items``: the models of its list fields' items)."""
    return Schema(name, lambda ids: nested(model, {f: m.model_json_schema() for f, m in (items or {}).items()}))


@lru_cache(maxsize=64)
def choices(schema: Schema, path: tuple[str | int, ...], values: tuple[str, ...]) -> Schema:
    """``schema`` with the string at ``path`` (keys into the schema) one of ``values``: what the
    contract accepts there depends on the episode (the sample keys a prompt supplied)."""
    def make(ids: bool) -> dict[str, Any]:
        out = copy.deepcopy(schema.make(ids))
        node: Any = out
        for key in path:
            node = node[key]
        node["enum"] = list(values)
        return out
    return Schema(schema.name, make)
