"""The JSON Schemas a model's replies are held to when its ``structured`` setting is on.

``structured: off`` (the default, the paper's protocol) sends no ``response_format``;
``json_object`` asks for any JSON object; ``json_schema`` sends the reply's own schema:

* an action: one alternative per skill of ``runtime/contract/skills.py`` (the skill a constant,
  its arguments typed and bounded, the required ones required), the configuration's extra text
  fields first;
* every other JSON call: the schema of the pydantic contract its reply is checked against, with
  the contract's nested models (plan subgoals, graph nodes, program actions) as item schemas.

Item, block and entity ids are enums of the game registry (``id_enum: true``) or plain strings.
Every schema is built once per process and kept as the ready JSON bytes of its
``"response_format"`` member (:class:`Prepared`), which the client splices into a request body
without serializing the schema again. The contract checks and repair turns stay in force: an
endpoint may ignore the schema.
"""
from __future__ import annotations

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


@lru_cache(maxsize=None)
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


def _alternatives(extras: tuple[str, ...], required: tuple[str, ...]) -> list[dict[str, Any]]:
    """One object schema per skill (ids refer to ``#/$defs``)."""
    alts = []
    for skill, spec in SKILLS.items():
        args = {"type": "object", "properties": {a.name: arg_schema(a) for a in spec},
                "required": [a.name for a in spec if a.required], "additionalProperties": False}
        props = {**{e: {"type": "string"} for e in extras}, "skill": {"const": skill}, "args": args}
        alts.append({"type": "object", "properties": props, "required": [*required, "skill", "args"],
                     "additionalProperties": False})
    return alts


@lru_cache(maxsize=None)
def action(extras: tuple[str, ...] = (), required: tuple[str, ...] = ()) -> Schema:
    """An action reply with the text fields ``extras`` (``required`` among them)."""
    return Schema("action", lambda ids: {"anyOf": _alternatives(extras, required), "$defs": _defs(ids)})


def _nested(model: type[BaseModel], items: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``model``'s JSON Schema with ``items`` as the item schema of its list fields."""
    schema = model.model_json_schema()
    for field, item in items.items():
        schema["properties"][field]["items"] = item
    return schema


def contract(name: str, model: type[BaseModel], items: dict[str, type[BaseModel]] | None = None) -> Schema:
    """The schema of a reply checked against ``model`` (``items``: the models of its list fields' items)."""
    return Schema(name, lambda ids: _nested(model, {f: m.model_json_schema() for f, m in (items or {}).items()}))


def program(name: str, model: type[BaseModel], success: type[BaseModel]) -> Schema:
    """Voyager's reply: a new program (``model``, its actions each an action, and a ``success`` check)
    or the name of a retrieved skill to reuse."""
    def make(ids: bool) -> dict[str, Any]:
        prog = _nested(model, {"actions": {"anyOf": _alternatives((), ())}})
        prog["properties"]["success"] = success.model_json_schema()
        return {"type": "object", "properties": {"program": prog, "reuse_skill": {"type": "string"}},
                "anyOf": [{"required": ["program"]}, {"required": ["reuse_skill"]}], "$defs": _defs(ids)}
    return Schema(name, make)
