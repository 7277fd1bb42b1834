"""Structured reply contracts of the Designer and the Judge (paper Appendix F.4/F.5), and of the
task Designer and the task Validator (``kind: task``).

The top-level fields are exactly the paper's; unknown top-level fields are rejected so that a
reply drifting from the contract gets the bounded JSON-repair retry instead of being half-read.
:func:`parse` checks a reply against the model's JSON Schema (jsonschema, Draft 2020-12) before
typing it.
"""
from __future__ import annotations

import json
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from mcbuild.compiler.core.schemas import validator
from mcbuild.llm.schemas import Schema, contract

SCHEMA_VERSION = "1.0"
Kind = Literal["mirror", "biome"]
Texts = list[str | dict[str, Any] | list[Any]]      # what the text-list fields accept (see _as_text)
M = TypeVar("M", bound=BaseModel)


def _as_text(value: Any) -> Any:
    """Models sometimes return a finding as an object; keep it, as one compact line of JSON."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return value


def _as_texts(value: Any) -> Any:
    return [_as_text(v) for v in value] if isinstance(value, list) else value


#: A list of findings or instructions: items the model returned as objects are kept as JSON lines.
TextList = Annotated[list[str], BeforeValidator(_as_texts, json_schema_input_type=Texts)]


class _Contract(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Design(_Contract):
    """The fields of every Designer reply; its ``kind`` is the spec kind asked for."""

    schema_version: Literal["1.0"]
    kind: str
    design_summary: str
    resolved_feedback: TextList = Field(default_factory=list)
    spec: dict[str, Any]


class DesignerReply(_Design):
    kind: Kind


class TaskAssessment(_Contract):
    task: str
    solvable: bool
    route: list[str] = Field(default_factory=list)
    principal_risk: str = ""


class ChangeAssessment(BaseModel):
    """One rule change (mirror) or one design aspect (biome) as the Judge sees it."""

    model_config = ConfigDict(extra="allow")
    change: str
    assessment: str = ""


class JudgeReply(_Contract):
    schema_version: Literal["1.0"]
    kind: Kind
    verdict: Literal["accept", "revise", "reject"]
    confidence: float = Field(ge=0.0, le=1.0)
    summary: str
    hard_failures: TextList = Field(default_factory=list)
    warnings: TextList = Field(default_factory=list)
    task_assessments: list[TaskAssessment] = Field(default_factory=list)
    change_assessments: list[ChangeAssessment] = Field(default_factory=list)
    revision_instructions: TextList = Field(default_factory=list)

    def unsolvable(self, selected: list[str]) -> list[str]:
        """Selected tasks the Judge did not explicitly deem solvable."""
        solvable = {a.task for a in self.task_assessments if a.solvable}
        return [t for t in selected if t not in solvable]


class TaskDesignerReply(_Design):
    """The Designer's reply for a ``kind: task`` spec (the same fields)."""

    kind: Literal["task"]


class MilestoneCheck(_Contract):
    milestone: str
    sound: bool
    problem: str = ""


class ValidatorReply(_Contract):
    """The task Validator's reply: whether the milestone DAG and the checkers do what the task says."""

    schema_version: Literal["1.0"]
    kind: Literal["task"]
    verdict: Literal["accept", "revise"]
    summary: str
    problems: TextList = Field(default_factory=list)
    milestone_checks: list[MilestoneCheck] = Field(default_factory=list)
    revision_instructions: TextList = Field(default_factory=list)

    def unsound(self, milestones: list[str]) -> list[str]:
        """Milestones the Validator did not explicitly deem sound."""
        sound = {c.milestone for c in self.milestone_checks if c.sound}
        return [m for m in milestones if m not in sound]


def not_run(reason: str = "no Judge report yet") -> dict[str, Any]:
    """The Judge report the Designer sees before any Judge has run (verdict ``not_run``)."""
    return {"schema_version": SCHEMA_VERSION, "verdict": "not_run", "summary": reason}


_SCHEMAS: dict[type[BaseModel], Schema] = {m: contract(m.__name__, m) for m in (DesignerReply, JudgeReply, TaskDesignerReply, ValidatorReply)}


class ReplyError(ValueError):
    """A reply that breaks its contract's JSON Schema (the message goes back in the repair turn)."""


def schema(model: type[BaseModel]) -> Schema:
    """The reply schema sent for ``model`` when the model's ``structured`` setting is on."""
    return _SCHEMAS[model]


def parse(model: type[M], data: Any) -> M:
    """``data`` validated against ``model.model_json_schema()``, then as ``model``."""
    errors = list(validator(model).iter_errors(data))
    if errors:
        raise ReplyError("; ".join(f"{'.'.join(map(str, e.absolute_path)) or 'reply'}: {e.message}" for e in errors))
    return model.model_validate(data)
