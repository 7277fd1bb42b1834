"""What every spec model builds on, and reading spec files.

:class:`Strict` models refuse unknown fields; the envelope the spec kinds share is
``envelope.Envelope``. :func:`validate` turns the first pydantic problem into a one-line ``SpecError`` naming the file and the field;
:func:`read_yaml` does the same for unreadable or malformed YAML. The models of each kind live
beside this module (``mirror``, ``biome``, ``worlds``); ``kinds`` dispatches on ``kind``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from mcbuild.compiler.core.errors import SpecError

SCHEMA_VERSION = "1.0"
SpecId = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")]
Count = Annotated[int, Field(ge=1, le=64)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


M = TypeVar("M", bound=BaseModel)


def validate(model: type[M], data: Any, file: str) -> M:
    """``model.model_validate(data)``; the first problem becomes a one-line SpecError naming the field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise SpecError(file, _loc(err), err["msg"]) from None


def _loc(err: ErrorDetails) -> str:
    out = ""
    for part in err["loc"]:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("str", "list[str]", "function-after[_known_tasks(), list[str]]"):
            continue
        else:
            out += f".{part}" if out else str(part)
    return out or "<root>"


MAX_SPEC_BYTES = 1 << 20        # 1 MiB: the largest spec, worlds file or study config read


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a mapping key given twice (instead of keeping the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first_line: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                if key in first_line:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r} (first on line {first_line[key]})", key_node.start_mark)
                first_line[key] = key_node.start_mark.line + 1
            except TypeError:          # an unhashable key: the base class reports it
                continue
        return super().construct_mapping(node, deep=deep)


def read_text(path: Path, limit: int = MAX_SPEC_BYTES) -> str:
    """The UTF-8 text of a spec-like file of at most ``limit`` bytes; otherwise a one-line SpecError."""
    try:
        with path.open("rb") as fh:
            raw = fh.read(limit + 1)
    except OSError as exc:
        raise SpecError(str(path), "<file>", f"cannot read: {exc.strerror or exc}") from None
    if len(raw) > limit:
        raise SpecError(str(path), "<file>", f"larger than the {limit // 1024} KiB limit of a spec file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SpecError(str(path), f"line {line}, byte {exc.start}", "not UTF-8 text") from None


def read_yaml(path: Path) -> Any:
    """Parse a YAML spec file: UTF-8, at most :data:`MAX_SPEC_BYTES`, no duplicate keys."""
    text = read_text(path)
    if "\x00" in text:
        raise SpecError(str(path), f"byte {text.index(chr(0))}", "binary data (NUL) in a YAML file")
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        position = getattr(exc, "position", None)           # a ReaderError: a character YAML refuses
        where = (f"line {mark.line + 1}, column {mark.column + 1}" if mark
                 else f"character {position}" if position is not None else "<yaml>")
        problem = getattr(exc, "problem", None) or getattr(exc, "reason", None) or exc
        raise SpecError(str(path), where, f"malformed YAML: {' '.join(str(problem).split())}") from None
    except RecursionError:
        raise SpecError(str(path), "<yaml>", "malformed YAML: nested too deeply") from None
