"""Spec files by kind: parse any spec file into the model its ``kind`` names."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from mcbuild.compiler.core.errors import SpecError
from mcbuild.compiler.spec.base import read_yaml, validate
from mcbuild.compiler.spec.biome import BiomeSpec
from mcbuild.compiler.spec.mirror import MirrorSpec
from mcbuild.compiler.spec.task import TaskSpec
from mcbuild.compiler.spec.worlds import WorldsSpec

KINDS: dict[str, type[BaseModel]] = {"mirror": MirrorSpec, "biome": BiomeSpec, "worlds": WorldsSpec,
                                 "task": TaskSpec}
COMPILED = ("mirror", "biome")          # the kinds `mcbuild compile` turns into datapacks


def parse_spec(data: Any, file: str, kinds: tuple[str, ...] = COMPILED) -> BaseModel:
    """Validate parsed data as a spec of its declared kind (one of ``kinds``)."""
    if not isinstance(data, dict):
        raise SpecError(file, "", "a spec must be a mapping")
    kind = data.get("kind")
    if kind not in kinds:
        raise SpecError(file, "kind", f"must be {' or '.join(repr(k) for k in kinds)}, got {kind!r}")
    return validate(KINDS[kind], data, file)


def load_spec(path: str | Path, kinds: tuple[str, ...] = COMPILED) -> BaseModel:
    path = Path(path)
    return parse_spec(read_yaml(path), str(path), kinds)


def json_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of one spec kind, exported from its model."""
    return KINDS[kind].model_json_schema()
