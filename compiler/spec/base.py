"""The envelope every spec file shares, and reading spec files.

Every spec carries ``schema_version``, ``kind``, ``id`` and ``selected_tasks``. :func:`validate`
turns the first pydantic problem into a one-line ``SpecError`` naming the file and the field;
:func:`read_yaml` does the same for unreadable or malformed YAML. The models of each kind live
beside this module (``mirror``, ``biome``, ``worlds``); ``kinds`` dispatches on ``kind``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from compiler.core.errors import SpecError

SCHEMA_VERSION = "1.0"
SpecId = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")]
Count = Annotated[int, Field(ge=1, le=64)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Envelope(Strict):
    schema_version: Literal["1.0"]
    kind: str
    id: SpecId
    selected_tasks: list[str] = Field(min_length=1)

    @field_validator("selected_tasks")
    @classmethod
    def _known_tasks(cls, value: list[str]) -> list[str]:
        from compiler.spec.task import tasks     # the task specs are themselves spec files

        known = tasks()
        for t in value:
            if t not in known:
                raise ValueError(f"unknown task {t!r} (known: {', '.join(sorted(known))})")
        if len(set(value)) != len(value):
            raise ValueError("tasks must not repeat")
        return value


def validate(model: type[BaseModel], data: Any, file: str) -> BaseModel:
    """``model.model_validate(data)``; the first problem becomes a one-line SpecError naming the field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise SpecError(file, _loc(err), err["msg"]) from None


def _loc(err: dict[str, Any]) -> str:
    out = ""
    for part in err["loc"]:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("str", "list[str]", "function-after[_known_tasks(), list[str]]"):
            continue
        else:
            out += f".{part}" if out else str(part)
    return out or "<root>"


def read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(str(path), "<file>", f"cannot read: {exc.strerror}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "<yaml>"
        raise SpecError(str(path), where, f"malformed YAML: {getattr(exc, 'problem', exc)}") from None
