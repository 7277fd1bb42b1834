"""The ``episodes`` table of the results store, derived from the record's one definition.

Its columns are the plan entry's fields (without the backend, which the config pins), the
executor's outcome fields (without the reported identity, which :func:`~mcbuild.runtime.study.outcome.stored_fields`
has already merged into the plan's) and three of the store's own (``attempts``, ``wall_s``,
``finished_at``). Each column's SQL type, nullability and default follow from its field's type
hint and default, so a field added to :class:`~mcbuild.runtime.records.EpisodeResult`, the outcome or the
plan entry is a column (and an old store gains it on open: :func:`missing`) without another edit.
"""
from __future__ import annotations

import json
import types
import typing
from dataclasses import MISSING, dataclass, fields
from typing import Any, Mapping

from mcbuild.compiler.core.canonical import compact
from mcbuild.runtime.records import Encounter
from mcbuild.runtime.study.design.plan import PlanEntry
from mcbuild.runtime.study.outcome import REPORTED_FIELDS, EpisodeOutcome
from mcbuild.runtime.study.store.trajectories import pack

__all__ = ["Column", "COLUMNS", "RECORD_COLUMNS", "create_table", "missing", "encode", "decode"]


@dataclass(frozen=True)
class Column:
    name: str
    sql: str                       # INTEGER | REAL | TEXT | BLOB
    kind: str                      # "plain" | "bool" | "json" | "json-int-keys" | "packed"
    nullable: bool
    default: str | None            # SQL literal, or None: every insert gives it

    def ddl(self) -> str:
        return " ".join(filter(None, (self.name, self.sql, None if self.nullable else "NOT NULL",
                                      None if self.default is None else f"DEFAULT {self.default}")))


_SCALARS = {int: ("INTEGER", "plain"), float: ("REAL", "plain"), str: ("TEXT", "plain"), bool: ("INTEGER", "bool")}


def _literal(value: Any) -> str | None:
    """A field's default as an SQL literal (None: no default, every insert gives the value)."""
    if value is MISSING or value is None:
        return None
    return "'" + value.replace("'", "''") + "'" if isinstance(value, str) else str(int(value) if isinstance(value, bool)
                                                                                   else value)


def _column(name: str, hint: Any, default: Any) -> Column:
    """The column of one dataclass field: SQL type and kind from its type hint (``X | None`` is
    nullable), its default from the field's; containers are JSON text, the trajectory is packed."""
    args = typing.get_args(hint)
    nullable = isinstance(hint, types.UnionType) and type(None) in args
    base = next(a for a in args if a is not type(None)) if nullable else hint
    origin = typing.get_origin(base) or base
    if name == "trajectory":
        return Column(name, "BLOB", "packed", False, "''")
    if origin in _SCALARS:
        sql, kind = _SCALARS[origin]
        return Column(name, sql, kind, nullable, _literal(default))
    if issubclass(origin, Mapping):
        int_keys = typing.get_args(base)[:1] == (int,)
        return Column(name, "TEXT", "json-int-keys" if int_keys else "json", False, "'{}'")
    return Column(name, "TEXT", "json", False, "'[]'")


def _columns(cls: type, skip: tuple[str, ...]) -> list[Column]:
    hints = typing.get_type_hints(cls)
    return [_column(f.name, hints[f.name], f.default) for f in fields(cls) if f.name not in skip]


COLUMNS: tuple[Column, ...] = (
    *_columns(PlanEntry, ("backend",)),
    *_columns(EpisodeOutcome, REPORTED_FIELDS),
    Column("attempts", "INTEGER", "plain", False, "1"),
    Column("wall_s", "REAL", "plain", False, "0"),
    Column("finished_at", "REAL", "plain", False, None),
)
_BY_NAME = {c.name: c for c in COLUMNS}
#: The columns ``Store.records`` returns: all but the bulky ones and the timestamp.
RECORD_COLUMNS = tuple(c.name for c in COLUMNS if c.name not in ("trajectory", "events", "finished_at"))


def create_table() -> str:
    cols = ",\n    ".join(c.ddl() if c.name != "episode_id" else "episode_id TEXT PRIMARY KEY" for c in COLUMNS)
    return f"CREATE TABLE IF NOT EXISTS episodes (\n    {cols}\n);"


def missing(have: set[str]) -> list[Column]:
    """The columns a store written before them lacks (each nullable or with a default)."""
    return [c for c in COLUMNS if c.name not in have]


def encode(name: str, value: Any) -> Any:
    """A field's value as its column holds it."""
    kind = _BY_NAME[name].kind
    if kind.startswith("json"):
        if isinstance(value, Mapping):
            return compact({str(k): v for k, v in value.items()})
        return compact([v.to_dict() if isinstance(v, Encounter) else v for v in value])
    if kind == "packed":
        return pack(value)
    if kind == "bool":
        return None if value is None else int(value)
    return value


def decode(name: str, value: Any) -> Any:
    """A column's value as the record dict has it (``score_at`` keys are ints again)."""
    kind = _BY_NAME[name].kind
    if kind == "bool":
        return None if value is None else bool(value)
    if kind == "json-int-keys":
        return {int(k): v for k, v in json.loads(value).items()}
    if kind == "json":
        return json.loads(value)
    return value
