"""A study's store read for analysis: read-only, in batches, without pandas.

:class:`StudySource` is what the DataFrames (``mcbuild.analysis.frames``), the exports, the
results card and the comparison read. It opens the store the way every reader does
(``Store.read_only``, SQLite ``mode=ro``): it never writes a byte, takes no lock and leaves a run in
progress alone.
The ``episodes`` rows come from the table's columns (never from the trajectories); the
``actions`` and ``calls`` rows are made from the trajectories a batch of episodes at a time, so
a long study never holds every trajectory at once.
"""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from mcbuild.compiler.core.canonical import compact
from mcbuild.compiler.spec.task import tasks
from mcbuild.analysis.rows import action_rows, call_rows, parse_steps
from mcbuild.analysis.schema import EPISODES, Col
from mcbuild.runtime.study.store.columns import RECORD_COLUMNS
from mcbuild.runtime.study.store.results import Store, StoreError
from mcbuild.runtime.study.store.trajectories import DamagedTrajectory, unpack

__all__ = ["StudySource", "BATCH"]

#: Episodes whose trajectories are decoded at a time.
BATCH = 256
_IDS_PER_QUERY = 500            # bound parameters per ``IN (...)``


class StudySource:
    """The read-only store of one study (a study folder or its ``results.sqlite``)."""

    def __init__(self, path: str | Path):
        self.store = Store.read_only(path)
        self.file = self.store.path
        try:
            self.meta = self.store.meta()
            # the store's own columns, in table order (an older store lacks the newer ones)
            self.present = [row[1] for row in self.store.conn.execute("PRAGMA table_info(episodes)")]
            self.settings: dict[str, Any] = json.loads(self.meta.get("sampling") or "{}")
        except (sqlite3.DatabaseError, ValueError) as exc:
            self.close()
            raise StoreError(f"{self.file}: unreadable study metadata ({type(exc).__name__}: {exc})"[:300]) from None

    @property
    def folder(self) -> Path:
        return self.file.parent

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "StudySource":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ study
    def config(self) -> dict[str, Any]:
        """The study config the store was made with (an error when it has none)."""
        config = self.store.config_json()
        if config is None:
            raise StoreError(f"{self.file} has no study config; was it written by `mcbuild study run`?")
        return config

    def count(self) -> int:
        return self._query(lambda c: int(c.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]))

    def episode_ids(self) -> list[str]:
        return self._query(lambda c: [r[0] for r in c.execute("SELECT episode_id FROM episodes ORDER BY episode_id")])

    # ------------------------------------------------------------------ rows
    def episode_columns(self, columns: Sequence[str] | None = None) -> list[Col]:
        """The ``episodes`` columns asked for (all by default; ``episode_id`` always first)."""
        known = {c.name: c for c in EPISODES}
        if columns is None:
            return list(EPISODES)
        unknown = [c for c in columns if c not in known]
        if unknown:
            raise ValueError(f"unknown episodes column(s) {unknown}; known: {list(known)}")
        return [known["episode_id"]] + [known[c] for c in dict.fromkeys(columns) if c != "episode_id"]

    def episode_rows(self, columns: Sequence[Col], ids: Iterable[str] | None = None) -> Iterator[tuple]:
        """The ``episodes`` rows (episode-id order) with ``columns``; a column the store predates is None."""
        stored = [c.name for c in columns if c.name in self.present]
        settings = "model_settings" in {c.name for c in columns}
        fetch = list(dict.fromkeys(stored + (["model"] if settings and "model" in self.present else [])))
        for batch in self._batches(f"SELECT {', '.join(fetch)} FROM episodes", ids):
            for raw in batch:
                values = dict(zip(fetch, raw))
                yield tuple(self._value(c, values) for c in columns)

    def _value(self, col: Col, values: dict[str, Any]) -> Any:
        if col.name == "model_settings":
            model = values.get("model")
            own = None if model is None else self.settings.get(model)
            return None if own is None else compact(own)
        value = values.get(col.name)
        if col.kind == "bool" and value is not None:
            return bool(value)
        return value

    def records(self) -> list[dict[str, Any]]:
        """Every stored episode as a record dict (``EpisodeRecord.from_dict`` input), in id order."""
        cols = [c for c in self.episode_columns() if c.name in RECORD_COLUMNS]
        out = []
        for row in self.episode_rows(cols):
            record = dict(zip((c.name for c in cols), row))
            try:
                for c in cols:
                    if c.kind == "json" and record[c.name] is not None:
                        record[c.name] = json.loads(record[c.name])
            except ValueError as exc:
                raise StoreError(f"{self.file}: episode {record['episode_id']}: damaged record "
                                 f"({type(exc).__name__}: {exc})"[:300]) from None
            out.append({k: v for k, v in record.items() if v is not None})
        return out

    def steps(self, episode_id: str) -> list[dict[str, Any]]:
        """One episode's whole trajectory (every step, model calls with their prompts and replies)."""
        for _, steps, _, _ in self._trajectories([episode_id]):
            return steps
        raise KeyError(f"no episode {episode_id!r} in {self.file}")

    def action_rows(self, ids: Iterable[str] | None = None) -> Iterator[list[tuple]]:
        """The ``actions`` rows, a batch of episodes at a time."""
        batch: list[tuple] = []
        known = tasks()
        for n, (eid, steps, encounters, task) in enumerate(self._trajectories(ids), 1):
            batch += action_rows(eid, steps, encounters, known.get(task))
            if n % BATCH == 0 and batch:
                yield batch
                batch = []
        if batch:
            yield batch

    def call_rows(self, ids: Iterable[str] | None = None) -> Iterator[list[tuple]]:
        """The ``calls`` rows, a batch of episodes at a time."""
        batch: list[tuple] = []
        for n, (eid, steps, _, _) in enumerate(self._trajectories(ids), 1):
            batch += call_rows(eid, steps)
            if n % BATCH == 0 and batch:
                yield batch
                batch = []
        if batch:
            yield batch

    def _trajectories(self, ids: Iterable[str] | None) -> Iterator[tuple[str, list[dict[str, Any]], list[dict], str]]:
        """(episode id, steps, encounters, task) of each episode, decoded one at a time."""
        encounters = "encounters" if "encounters" in self.present else "'[]'"
        for batch in self._batches(f"SELECT episode_id, trajectory, {encounters}, task FROM episodes", ids):
            for eid, value, found, task in batch:
                try:
                    yield eid, parse_steps(unpack(value)), json.loads(found or "[]"), task
                except (DamagedTrajectory, ValueError) as exc:
                    raise StoreError(f"{self.file}: episode {eid}: damaged stored trajectory "
                                     f"({type(exc).__name__}: {exc})"[:300]) from None

    def _batches(self, select: str, ids: Iterable[str] | None) -> Iterator[list[tuple]]:
        """The rows of ``select`` in episode-id order (of the episodes ``ids`` only, when given), a
        batch at a time."""
        try:
            if ids is None:
                cur = self.store.conn.execute(f"{select} ORDER BY episode_id")
                while rows := cur.fetchmany(BATCH):
                    yield rows
                return
            wanted = sorted(set(ids))
            for i in range(0, len(wanted), _IDS_PER_QUERY):
                chunk = wanted[i:i + _IDS_PER_QUERY]
                yield self.store.conn.execute(f"{select} WHERE episode_id IN ({', '.join('?' * len(chunk))}) "
                                              "ORDER BY episode_id", chunk).fetchall()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.file}: cannot read the results store ({exc})") from None

    def _query(self, ask: Any) -> Any:
        try:
            return ask(self.store.conn)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.file}: cannot read the results store ({exc})") from None
