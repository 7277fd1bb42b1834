"""Spec models: the single schema of every spec file (JSON Schema is exported from these).

Every spec shares one envelope (``schema_version``, ``kind``, ``id``, ``selected_tasks``).
``kind: mirror`` specs are rule manifests (this module); ``kind: biome`` specs are world-gen
specs (``compiler.biome_spec``). ``load_spec`` parses a YAML file into the right model and turns
every problem into a ``SpecError`` naming the file and the field.
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import SpecError
from .tasks import tasks

SCHEMA_VERSION = "1.0"
SpecId = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")]
Count = Annotated[int, Field(ge=1, le=64)]
Station = Literal["furnace", "blast_furnace", "smoker"]
Operator = Literal["craft_output", "cook_output", "block_drops_replace", "block_drops_add", "entity_loot_add"]


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
        known = tasks()
        for t in value:
            if t not in known:
                raise ValueError(f"unknown task {t!r} (known: {', '.join(sorted(known))})")
        if len(set(value)) != len(value):
            raise ValueError("tasks must not repeat")
        return value


class Output(Strict):
    """One produced stack. ``item`` may be omitted for craft_output (keep the recipe's item) and
    may name a relative output such as ``matching:planks`` defined in catalogs/operators.yaml."""

    item: str | None = None
    count: Count = 1


class Change(Strict):
    id: SpecId
    operator: Operator
    target: str | list[str] = Field(description="recipe/item/block/entity id(s) or group:<name>")
    stations: list[Station] | None = Field(default=None, description="cook_output only")
    outputs: list[Output] = Field(min_length=1, max_length=4)

    def targets(self) -> list[str]:
        return [self.target] if isinstance(self.target, str) else list(self.target)


class MirrorSpec(Envelope):
    """A rule manifest: the changes one Mirror suite makes to vanilla 1.19 rules."""

    kind: Literal["mirror"]
    title: str = Field(min_length=1, max_length=80)
    changes: list[Change] = Field(min_length=1, max_length=12)


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


def parse_spec(data: Any, file: str) -> BaseModel:
    """Validate parsed data as a spec of its declared kind."""
    if not isinstance(data, dict):
        raise SpecError(file, "<root>", "a spec must be a mapping")
    kind = data.get("kind")
    model: type[BaseModel]
    if kind == "mirror":
        model = MirrorSpec
    elif kind == "biome":
        from .biome_spec import BiomeSpec

        model = BiomeSpec
    else:
        raise SpecError(file, "kind", f"must be 'mirror' or 'biome', got {kind!r}")
    return validate(model, data, file)


def load_spec(path: str | Path) -> BaseModel:
    path = Path(path)
    return parse_spec(read_yaml(path), str(path))


def json_schema(kind: str) -> dict[str, Any]:
    if kind == "mirror":
        return MirrorSpec.model_json_schema()
    from .biome_spec import BiomeSpec

    return BiomeSpec.model_json_schema()


