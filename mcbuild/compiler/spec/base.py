"""What every spec model builds on, and reading spec files.

:class:`Strict` models refuse unknown fields; the envelope the spec kinds share is
``envelope.Envelope``. :func:`validate` turns the first pydantic problem into a one-line ``SpecError``
naming the file and the field as the file spells it (an unknown key with the nearest known one);
:func:`read_yaml` does the same for unreadable or malformed YAML. The models of each kind live
beside this module (``mirror``, ``biome``, ``worlds``); ``kinds`` dispatches on ``kind``.
"""
from __future__ import annotations

import difflib
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Callable, TypeVar, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mcbuild.compiler.core.errors import SpecError

SCHEMA_VERSION = "1.0"
SpecId = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")]
Count = Annotated[int, Field(ge=1, le=64)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldError(ValueError):
    """A problem a model-wide check finds in one field: ``field`` is its path as the file spells it
    (``worlds[3]``), so the error names it rather than the whole file."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


Loc = tuple[str | int, ...]


M = TypeVar("M", bound=BaseModel)


def validate(model: type[M], data: Any, file: str, as_written: Callable[[Loc], Loc] = lambda loc: loc) -> M:
    """``model.model_validate(data)``; the first problem becomes a one-line SpecError naming the field
    as the file spells it (``as_written`` maps the model's path back to the file's, where a validator
    moved it), with pydantic's own message, its "Value error," prefix dropped, and for an unknown key
    the nearest known one."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        error = (err.get("ctx") or {}).get("error")
        loc = _plain(err["loc"])
        if isinstance(error, FieldError):
            raise SpecError(file, error.field, str(error)) from None
        message = str(error) if err["type"] in ("value_error", "assertion_error") and error else err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown key" + _did_you_mean(str(loc[-1]), _keys_at(model, loc[:-1]))
        raise SpecError(file, _path(as_written(loc)), message) from None


def _plain(loc: Loc) -> Loc:
    """A pydantic error location without its union-member tags."""
    return tuple(p for p in loc if not (isinstance(p, str) and (p in ("str", "int", "float", "bool") or "[" in p)))


def _path(loc: Loc) -> str:
    """``models[0].temperature``: keys joined by dots, list indexes in brackets."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _did_you_mean(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return f"; did you mean `{close[0]}`?" if close else (f"; known keys: {', '.join(sorted(known))}" if known else "")


def _keys_at(model: Any, loc: Loc) -> list[str]:
    """The keys the model accepts at ``loc`` (empty when that is not a model)."""
    tp: Any = model
    for part in loc:
        tp = _model_of(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            field = tp.model_fields.get(str(part)) or next(
                (f for f in tp.model_fields.values() if f.alias == part), None)
            if field is None:
                return []
            tp = field.annotation
        elif get_origin(tp) in (list, tuple, set, frozenset) and get_args(tp):
            tp = get_args(tp)[0]
        elif get_origin(tp) is dict and len(get_args(tp)) == 2:
            tp = get_args(tp)[1]
        else:
            return []
    tp = _model_of(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return sorted({f.alias or name for name, f in tp.model_fields.items()})
    return []


def _model_of(tp: Any) -> Any:
    """``tp`` without ``Annotated`` and ``Optional``: the model of an optional model field."""
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    if get_origin(tp) in (Union, UnionType):
        members = [a for a in get_args(tp) if a is not type(None)]
        return next((a for a in members if isinstance(a, type) and issubclass(a, BaseModel)), members[0])
    return tp


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
