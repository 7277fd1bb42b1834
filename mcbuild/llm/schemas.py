"""The JSON Schemas a model's replies are held to when its ``structured`` setting is on.

``structured: off`` (the default, the paper's protocol) sends no ``response_format``;
``json_object`` asks for any JSON object; ``json_schema`` sends the reply's own schema:

* an action: one alternative per skill of ``runtime/contract/skills.py`` (the skill a constant,
  its arguments typed and bounded, the required ones required), the configuration's extra text
  fields first;
* every other JSON call: the schema of the pydantic contract its reply is checked against, with
  the contract's nested models (plan subgoals, graph nodes, program actions) as item schemas, and
  what the contract takes only from the episode (supplied sample keys, retrievable skills) as an
  enum of those values (:func:`choices`, :func:`program`), so that a reply the schema allows
  passes the contract.

The schemas keep to what grammar-constrained decoders convert faithfully (llama.cpp's converter
falls back to "any JSON" on a regex pattern or on an ``anyOf`` of bare ``required`` lists): text
is bounded by lengths and lists by item counts, never by a pattern.

Item, block and entity ids are enums of the game registry (``id_enum: true``) or plain strings.
Every schema is built once per process and kept as the ready JSON bytes of its
``"response_format"`` member (:class:`Prepared`), which the client splices into a request body
without serializing the schema again. The contract checks and repair turns stay in force: an
endpoint may ignore the schema.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from pydantic import BaseModel

from mcbuild.runtime.contract.skills import SKILLS, arg_schema, id_defs

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


def _defs(ids: bool) -> dict[str, Any]:
    if not ids:
        return id_defs(None)
    from mcbuild.compiler.rules.catalog import load

    return id_defs(load())


def _alternatives(extras: tuple[str, ...], required: tuple[str, ...], limit: int | None) -> list[dict[str, Any]]:
    """One object schema per skill (ids refer to ``#/$defs``); text fields of at most ``limit`` characters."""
    text: dict[str, Any] = {"type": "string"} if limit is None else {"type": "string", "maxLength": limit}
    alts = []
    for skill, spec in SKILLS.items():
        args = {"type": "object", "properties": {a.name: arg_schema(a) for a in spec},
                "required": [a.name for a in spec if a.required], "additionalProperties": False}
        props = {**{e: dict(text) for e in extras}, "skill": {"const": skill}, "args": args}
        alts.append({"type": "object", "properties": props, "required": [*required, "skill", "args"],
                     "additionalProperties": False})
    return alts


@lru_cache(maxsize=None)
def action(extras: tuple[str, ...] = (), required: tuple[str, ...] = (), limit: int | None = None) -> Schema:
    """An action reply with the text fields ``extras`` (``required`` among them, each at most ``limit``
    characters)."""
    return Schema("action", lambda ids: {"anyOf": _alternatives(extras, required, limit), "$defs": _defs(ids)})


def _nested(model: type[BaseModel], items: dict[str, dict[str, Any]]) -> dict[str, Any]:
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
    return Schema(name, lambda ids: _nested(model, {f: m.model_json_schema() for f, m in (items or {}).items()}))


@lru_cache(maxsize=64)
def choices(schema: Schema, path: tuple[str | int, ...], values: tuple[str, ...]) -> Schema:
    """``schema`` with the string at ``path`` (keys into the schema) one of ``values``: what the
    contract accepts there depends on the episode (the sample keys a prompt supplied)."""
    def make(ids: bool) -> dict[str, Any]:
        out = copy.deepcopy(schema.make(ids))
        node = out
        for key in path:
            node = node[key]
        node["enum"] = list(values)
        return out
    return Schema(schema.name, make)


@lru_cache(maxsize=64)
def program(name: str, model: type[BaseModel], success: type[BaseModel], reusable: tuple[str, ...] = ()) -> Schema:
    """Voyager's reply: a new program (``model``, its actions each an action, and a ``success`` check)
    or, when ``reusable`` names skills, one of them to reuse."""
    def make(ids: bool) -> dict[str, Any]:
        prog = _nested(model, {"actions": {"anyOf": _alternatives((), (), None)}})
        check = success.model_json_schema()
        defs = {**_defs(ids), **prog.pop("$defs", {}), **check.pop("$defs", {})}
        prog["properties"]["success"] = check
        alts = [{"type": "object", "properties": {"program": prog}, "required": ["program"]}]
        if reusable:
            alts.append({"type": "object", "properties": {"reuse_skill": {"enum": list(reusable)}},
                         "required": ["reuse_skill"]})
        return {**(alts[0] if len(alts) == 1 else {"anyOf": alts}), "$defs": defs}
    return Schema(name, make)
