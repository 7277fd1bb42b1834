"""``mcbuild study export``: a study's three tables as Parquet, CSV or JSONL files.

``export(study, "parquet")`` writes ``episodes``, ``actions`` and ``calls`` (the columns of
:mod:`mcbuild.analysis.schema`) as the folder ``<study>/export/`` (or ``out``), a batch of episodes
at a time, into a temporary folder that replaces the old one when all three are whole
(``compiler/core/owned.staged_dir``: only an empty folder or one an export wrote is replaced, never
a folder of the user's; a failed export leaves the old one as it was). The tables leave out what makes the
store's trajectories big -- the prompts and replies of the model calls, every observation the
agent saw -- so an export is a small fraction of the expanded JSONL (``FULL``), which is still
there for whoever needs every byte. Parquet needs pyarrow (the ``analysis`` extra); CSV and JSONL
need nothing beyond mcbuild. ``json`` columns are JSON text in Parquet and CSV and nested values
in JSONL.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import orjson

from mcbuild.compiler.core.canonical import naming
from mcbuild.compiler.core.owned import staged_dir
from mcbuild.analysis.schema import ACTIONS, CALLS, Col
from mcbuild.analysis.source import StudySource

__all__ = ["FORMATS", "FULL", "Exported", "export"]

FORMATS = ("parquet", "csv", "jsonl")
#: The expanded JSONL of every episode (record, events, whole trajectory): the export before 0.3.
FULL = "full"
EXTENSIONS = {"parquet": "parquet", "csv": "csv", "jsonl": "jsonl"}
PARQUET_COMPRESSION = "zstd"


@dataclass(frozen=True)
class Exported:
    """What an export wrote: each file with its rows, and the episodes."""

    files: dict[str, tuple[Path, int]]
    episodes: int

    @property
    def bytes(self) -> int:
        return sum(path.stat().st_size for path, _ in self.files.values())


def export(study: str | Path, fmt: str = "jsonl", out: str | Path | None = None) -> Exported:
    """Write the tables of ``study`` in ``fmt`` (``parquet``, ``csv``, ``jsonl`` or ``full``) into
    ``out`` (default ``<study>/export/``; for ``full``, the file, default ``<study>/export.jsonl``)."""
    if fmt == FULL:
        from mcbuild.runtime.study.store.export import export as export_full

        path, n = export_full(study, out)
        return Exported({"full": (path, n)}, n)
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (known: {', '.join((*FORMATS, FULL))})")
    writer = _pyarrow_writer() if fmt == "parquet" else _WRITERS[fmt]
    with StudySource(study) as source:
        folder = Path(out) if out is not None else source.folder / "export"
        episodes = source.episode_columns()
        tables: dict[str, tuple[Sequence[Col], Callable[[], Iterator[list[tuple]]]]] = {
            "episodes": (episodes, lambda: _chunks(source.episode_rows(episodes))),
            "actions": (ACTIONS, source.action_rows),
            "calls": (CALLS, source.call_rows),
        }
        names = {name: f"{name}.{EXTENSIONS[fmt]}" for name in tables}
        files = {}
        with staged_dir(folder, names.values(), tool="export") as staging:
            for name, (columns, batches) in tables.items():
                with naming(folder / names[name], staging / names[name]):
                    rows = writer(staging / names[name], columns, batches())
                files[name] = (folder / names[name], rows)
        return Exported(files, files["episodes"][1])


def _chunks(rows: Iterator[tuple], size: int = 4096) -> Iterator[list[tuple]]:
    chunk: list[tuple] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


Writer = Callable[[Path, Sequence[Col], Iterator[list[tuple]]], int]


def _write_csv(path: Path, columns: Sequence[Col], batches: Iterator[list[tuple]]) -> int:
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        out = csv.writer(fh, lineterminator="\n")
        out.writerow([c.name for c in columns])
        for batch in batches:
            out.writerows(batch)
            n += len(batch)
    return n


def _write_jsonl(path: Path, columns: Sequence[Col], batches: Iterator[list[tuple]]) -> int:
    names = [c.name for c in columns]
    nested = [c.kind == "json" for c in columns]
    n = 0
    with path.open("wb") as fh:
        for batch in batches:
            for row in batch:
                values = {k: orjson.Fragment(v) if j and v is not None else v for k, j, v in zip(names, nested, row)}
                fh.write(orjson.dumps(values) + b"\n")
            n += len(batch)
    return n


_WRITERS: dict[str, Writer] = {"csv": _write_csv, "jsonl": _write_jsonl}


def _pyarrow_writer() -> Writer:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError("--format parquet needs pyarrow: pip install 'mcbuild[analysis]' "
                          "(or export --format csv or jsonl)") from None
    types = {"str": pa.string(), "json": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}

    def write(path: Path, columns: Sequence[Col], batches: Iterator[list[tuple]]) -> int:
        schema = pa.schema([(c.name, types[c.kind]) for c in columns])
        n = 0
        with path.open("wb") as fh:
            with pq.ParquetWriter(fh, schema, compression=PARQUET_COMPRESSION) as pw:
                for batch in batches:
                    pw.write_table(_table(pa, schema, batch))
                    n += len(batch)
                if n == 0:
                    pw.write_table(schema.empty_table())
        return n

    return write


def _table(pa: Any, schema: Any, rows: list[tuple]) -> Any:
    columns = list(zip(*rows))
    return pa.Table.from_arrays([pa.array(list(col), type=f.type) for col, f in zip(columns, schema)], schema=schema)
