"""The JSON Schemas of the agents' replies that follow the skills (sent with ``structured: json_schema``).

* an action: one alternative per skill of ``runtime/contract/skills.py`` (the skill a constant,
  its arguments typed and bounded, the required ones required), the configuration's extra text
  fields first;
* Voyager's program: its actions each an action, its success check, or a skill to reuse (an enum
  of the retrievable skills).

Item, block and entity ids are enums of the game registry (``id_enum: true``) or plain strings.
The other replies (plans, lessons, critiques, graphs) send the schema of their pydantic contract
(``mcbuild.llm.schemas.contract``).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from mcbuild.llm.schemas import Schema, nested
from mcbuild.runtime.contract.skills import SKILLS, arg_schema, id_defs


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


@lru_cache(maxsize=64)
def program(name: str, model: type[BaseModel], success: type[BaseModel], reusable: tuple[str, ...] = ()) -> Schema:
    """Voyager's reply: a new program (``model``, its actions each an action, and a ``success`` check)
    or, when ``reusable`` names skills, one of them to reuse."""
    def make(ids: bool) -> dict[str, Any]:
        prog = nested(model, {"actions": {"anyOf": _alternatives((), (), None)}})
        check = success.model_json_schema()
        defs = {**_defs(ids), **prog.pop("$defs", {}), **check.pop("$defs", {})}
        prog["properties"]["success"] = check
        alts: list[dict[str, Any]] = [{"type": "object", "properties": {"program": prog}, "required": ["program"]}]
        if reusable:
            alts.append({"type": "object", "properties": {"reuse_skill": {"enum": list(reusable)}},
                         "required": ["reuse_skill"]})
        return {**(alts[0] if len(alts) == 1 else {"anyOf": alts}), "$defs": defs}
    return Schema(name, make)
