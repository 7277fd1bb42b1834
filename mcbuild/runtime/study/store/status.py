"""``mcbuild study status DIR``: a live or finished store read on a read-only connection (``Store.read_only``).

The reader never takes the store's lock and never writes, so a running writer goes on
undisturbed (WAL: a reader sees the last committed episode).
"""
from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.design.plan import build_plan
from mcbuild.runtime.study.store.lock import Holder, holder
from mcbuild.runtime.study.store.results import COST_STOP, Store, StoreError

__all__ = ["StudyStatus", "read_status", "store_digest"]


@dataclass
class StudyStatus:
    """What a store holds now, and who writes it."""

    path: Path
    study: str
    stored: int
    planned: int | None                   # None: the stored config no longer expands to a plan
    faults: dict[str, int]                # fault kind -> entries in the fault log
    by_condition: list[tuple[str, int, float, float]] = field(default_factory=list)  # condition, n, Score, SR %
    spent_usd: float = 0.0
    cap_usd: float | None = None
    stopped_by_cost: bool = False
    writer: Holder | None = None

    def lines(self) -> list[str]:
        planned = "?" if self.planned is None else str(self.planned)
        faults = ", ".join(f"{n} {kind}" for kind, n in sorted(self.faults.items())) or "none"
        out = [f"study {self.study}: {self.path}",
               f"episodes: {self.stored}/{planned} stored; faults logged: {faults}"]
        if self.by_condition:
            out.append(f"{'condition':<10}{'stored':>8}{'Score':>8}{'SR':>8}")
            out += [f"{c:<10}{n:>8}{score:>8.1f}{sr:>7.1f}%" for c, n, score, sr in self.by_condition]
        cap = " (no max_cost_usd)" if self.cap_usd is None else f" of max_cost_usd ${self.cap_usd:g}"
        out.append(f"spent: ${self.spent_usd:.4f}{cap}" + ("; the last run stopped there" if self.stopped_by_cost else ""))
        out.append(f"writer: {_writer(self.writer)}")
        return out


def _writer(h: Holder | None) -> str:
    if h is None or (h.here() and not h.alive()):
        return "no live run"
    return h.describe() + ("" if h.here() else ", which cannot be checked from this host")


def read_status(study: str | Path) -> StudyStatus:
    """The status of the store of ``study`` (a study folder or its ``results.sqlite``)."""
    store = Store.read_only(study)
    try:
        return _read(store)
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{store.path}: cannot read the results store ({exc})") from None
    finally:
        store.close()


def store_digest(study: str | Path) -> str:
    """A digest of what the store holds (episodes, faults, meta): equal digests, equal contents."""
    store = Store.read_only(study)
    try:
        h = hashlib.sha256()
        for query in ("SELECT episode_id, finished_at, attempts FROM episodes ORDER BY episode_id",
                      "SELECT id, episode_id, attempt, kind FROM faults ORDER BY id",
                      "SELECT key, value FROM meta ORDER BY key"):
            for row in store.conn.execute(query):
                h.update(repr(row).encode())
        return h.hexdigest()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{store.path}: cannot read the results store ({exc})") from None
    finally:
        store.close()


def _read(store: Store) -> StudyStatus:
    meta, config_json = store.meta(), store.config_json() or {}
    try:
        planned: int | None = len(build_plan(StudyConfig.model_validate(config_json)))
    except ValueError:
        planned = None
    faults = dict(store.conn.execute("SELECT kind, COUNT(*) FROM faults GROUP BY kind").fetchall())
    rows = store.conn.execute("SELECT condition, COUNT(*), AVG(score), 100.0 * AVG(success) FROM episodes "
                              "GROUP BY condition").fetchall()
    order = {c: i for i, c in enumerate(config_json.get("conditions", []))}
    rows.sort(key=lambda r: (order.get(r[0], len(order)), r[0]))
    _, _, spent = store.totals()
    return StudyStatus(path=store.path, study=meta.get("study", "?"), stored=store.count(), planned=planned,
                       faults=faults, by_condition=[(c, int(n), float(s), float(sr)) for c, n, s, sr in rows],
                       spent_usd=spent, cap_usd=config_json.get("max_cost_usd"),
                       stopped_by_cost=COST_STOP in meta, writer=holder(store.path))
