"""Reply contracts of the LLM agents (paper L.12): JSON Schemas exported from pydantic models.

A contract is a pydantic model; :func:`check` validates a parsed reply against its
``model_json_schema()`` with jsonschema and raises :class:`ContractError` in the contract's own
words for the first offending field (in model order): that message goes back to the model in
the repair turn. What depends on the skill table or on the episode (argument names, library
entries, supplied sample keys) is checked in code after the schema.

The same models are the JSON Schemas sent with ``structured: json_schema`` (``schemas.py``), so
they keep to what grammar-constrained decoders honour: text is bounded with lengths (never a
regex pattern, which llama.cpp's converter cannot take) and lists with item counts, so that a
reply that follows the schema is a bounded reply.
"""
from __future__ import annotations

import json
import re
from typing import Annotated, Any, Iterable, Mapping

from pydantic import BaseModel, StringConstraints

from mcbuild.compiler.core.schemas import validator
from mcbuild.llm.replies import extract_json
from mcbuild.runtime.contract.skills import ID_CHARS, SKILLS

NOT_OBJECT = "the reply is not one JSON object"
NOTE_CHARS = 160            # a free-text note (a reason, a diagnosis, a hint)
EXTRA_CHARS = 240           # an action reply's text fields (thought, subgoal) in its schema; the contract
                            # takes any length (the paper's free-text protocol refuses no long thought)


def text(limit: int, *, required: bool = True) -> StringConstraints:
    """Annotated metadata of a string of at most ``limit`` characters (and at least one when ``required``)."""
    return StringConstraints(min_length=1 if required else 0, max_length=limit)


Id = Annotated[str, text(ID_CHARS)]
Note = Annotated[str, text(NOTE_CHARS, required=False)]


class ContractError(ValueError):
    """A reply that does not satisfy its JSON contract (the message goes back to the model)."""


def check(model: type[BaseModel], data: Any, problems: Mapping[str, str], *, root: str = NOT_OBJECT) -> None:
    """Return when ``data`` satisfies ``model``'s schema; otherwise raise ``ContractError(root)`` for a
    reply that is not an object, or the problem of the first offending field in ``model``'s order
    (``{value!r}`` in a problem shows the field's value)."""
    fields: list[str] = []
    for error in validator(model).iter_errors(data):
        if error.path:
            fields.append(str(error.path[0]))
        elif error.validator == "required":
            fields.append(next(f for f in error.validator_value if f not in error.instance))
        else:                                   # the reply itself: not an object
            raise ContractError(root)
    if fields:
        order = [f.alias or name for name, f in model.model_fields.items()]
        first = min(fields, key=order.index)
        raise ContractError(problems[first].format(value=data.get(first)))


def reply_json(text: str) -> Any:
    """The JSON object of a reply; :class:`ContractError` when there is none."""
    try:
        return extract_json(text)
    except (ValueError, TypeError) as exc:
        raise ContractError(f"not valid JSON ({exc})") from None


# ---------------------------------------------------------------------------- the action contract
class ActionReply(BaseModel):
    """``{"skill": <a listed skill>, "args": {...}}``; args may also come at the top level."""

    skill: Annotated[str, StringConstraints(pattern=r"^\s*(?:" + "|".join(map(re.escape, SKILLS)) + r")\s*$")]
    args: dict[str, Any] | None = None


ACTION_PROBLEMS = {"skill": "skill must be one of " + ", ".join(SKILLS) + "; got {value!r}",
                   "args": "args must be a JSON object"}


def parse_action(data: Any, extras: Iterable[str] = (), *, required_extras: Iterable[str] = ()) -> dict[str, Any]:
    """``{"skill", "args", **extras}`` from a parsed reply; raises :class:`ContractError`.

    Checks what L.12 checks: one object, a listed skill, an ``args`` object with every required
    argument and no unknown one, and a nested row grid for craft_grid. Id validity is the
    body's business (``mcbuild.runtime.contract.skills.validate``), not the contract's.
    """
    if not _plainly_valid(data):
        check(ActionReply, data, ACTION_PROBLEMS)
    skill = data["skill"].strip()
    names = [a.name for a in SKILLS[skill]]
    args = data.get("args")
    if args is None:       # tolerate arguments given at the top level
        args = {k: v for k, v in data.items() if k in names}
    unknown = sorted(set(args) - set(names))
    if unknown:
        raise ContractError(f"{skill}: unknown argument(s) {', '.join(unknown)}")
    missing = [a.name for a in SKILLS[skill] if a.required and args.get(a.name) in (None, "")]
    if missing:
        raise ContractError(f"{skill}: missing required argument(s) {', '.join(missing)}")
    if skill == "craft_grid":
        grid = args.get("grid")
        if not isinstance(grid, list) or not grid or not all(isinstance(r, list) for r in grid):
            raise ContractError("craft_grid: grid must be a nested array of row arrays")
    out: dict[str, Any] = {"skill": skill, "args": dict(args)}
    for key in required_extras:
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ContractError(f"the reply needs a non-empty {key!r} string")
    for key in extras:
        value = data.get(key, "")
        out[key] = value if isinstance(value, str) else json.dumps(value)
    return out


def _plainly_valid(data: Any) -> bool:
    """Whether ``data`` obviously satisfies :class:`ActionReply`'s schema (an object, a listed skill
    with only whitespace around it, ``args`` an object or null or absent): most replies, which then
    skip the jsonschema pass (about 0.05 ms a call). Anything else takes the full :func:`check`."""
    if type(data) is not dict:
        return False
    skill, args = data.get("skill"), data.get("args")
    return type(skill) is str and skill.strip() in SKILLS and (args is None or type(args) is dict)


def action_only(action: Mapping[str, Any]) -> dict[str, Any]:
    return {"skill": action["skill"], "args": dict(action.get("args", {}))}
