"""A results store opened for reading only: SQLite ``mode=ro``, never written, never migrated.

Readers (``mcbuild.analysis``, its exports, cards and comparisons) open a store here. The
connection cannot write, so a reader never changes a byte of the file, never takes the writer's
lock and never disturbs a run in progress (WAL: it sees the last committed batch). A store at rest
(no ``-wal`` or ``-shm`` file beside it, no live writer in its lock) is opened ``immutable``: SQLite
then makes no ``-wal``/``-shm`` files, which a read-only connection could not remove again, and a
store in a folder the reader may not write opens too. A store of an
older schema is read as it is: :func:`present_columns` says which columns it has, and a reader
gives the others their defaults. A missing, empty, damaged or newer store is one
:class:`~mcbuild.runtime.study.store.results.StoreError` naming the file.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

from mcbuild.runtime.study.store.lock import holder
from mcbuild.runtime.study.store.results import STORE_NAME, Store, StoreError, _schema_problem

__all__ = ["open_readonly", "present_columns", "store_file"]


def store_file(path: str | Path) -> Path:
    """The ``results.sqlite`` of a study folder (a path ending in ``.sqlite`` is the file itself)."""
    path = Path(path)
    return path if path.suffix == ".sqlite" and not path.is_dir() else path / STORE_NAME


def open_readonly(path: str | Path) -> Store:
    """The store of ``path`` (a study folder or its ``results.sqlite``) on a read-only connection."""
    file = store_file(path)
    if not file.is_file():
        raise StoreError(f"no results store at {file}")
    if file.stat().st_size == 0:
        raise StoreError(f"{file}: an empty file, not a results store")
    mode = "mode=ro&immutable=1" if _at_rest(file) else "mode=ro"
    try:
        conn = sqlite3.connect(f"{file.resolve().as_uri()}?{mode}", uri=True, timeout=30.0)
    except sqlite3.Error as exc:
        raise StoreError(f"{file}: cannot read the results store ({exc})") from None
    try:
        problems = [r[0] for r in conn.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            raise sqlite3.DatabaseError(problems[0])
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"meta", "episodes"} <= tables:
            raise StoreError(f"{file}: not a results store of mcbuild (no meta and episodes tables)")
        problem = _schema_problem(conn, file)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StoreError(f"{file}: damaged results store ({exc})") from None
    except StoreError:
        conn.close()
        raise
    if problem is not None:
        conn.close()
        raise StoreError(problem)
    return Store(file, conn)


def _at_rest(file: Path) -> bool:
    """No WAL files beside the store and no live writer named in its lock (on this host)."""
    if any(file.with_name(file.name + suffix).exists() for suffix in ("-wal", "-shm")):
        return False
    writer = holder(file)
    return writer is None or (writer.here() and not writer.alive())


def present_columns(store: Store) -> list[str]:
    """The columns of the store's ``episodes`` table, in table order."""
    return [row[1] for row in store.conn.execute("PRAGMA table_info(episodes)")]
