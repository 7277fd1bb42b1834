"""SQLite results store of one study (``build/studies/<name>/results.sqlite``).

* WAL journal; every finished episode is inserted in **one transaction**, keyed
  by its episode id (primary key), so a run killed at any moment -- SIGKILL
  included -- leaves only whole episodes, and no episode can be counted twice.
* ``meta`` pins the study config, the plan digest and the **build fingerprint**
  (content hashes of the packs and saves, unchanged by freezing); opening the store
  against another build (or a changed config) is refused.
* ``meta["cost_stop"]`` (:data:`COST_STOP`) is set when the latest run stopped at
  ``max_cost_usd`` (spent, limit, episodes stored and planned; JSON) and removed by a run that did
  not, so the report can say so.
* A damaged database file is a one-line :class:`StoreError`, never a traceback.
* ``faults`` logs every infrastructure fault (rerun under the same id) and
  every runner error, for the report.
* ``trajectory`` holds the lean, compressed form of ``trajectories.pack``; :meth:`Store.trajectory`
  and :meth:`Store.iter_trajectories` give back the exact JSONL text.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from compiler.core.canonical import compact

from .plan import RECORD_FIELDS
from .trajectories import DamagedTrajectory, pack, unpack

if TYPE_CHECKING:
    from .executor import EpisodeOutcome

__all__ = ["Store", "StoreError", "build_fingerprint", "STORE_NAME", "COST_STOP"]

STORE_NAME = "results.sqlite"
COST_STOP = "cost_stop"         # meta key: the latest run stopped at max_cost_usd
SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (
    episode_id     TEXT PRIMARY KEY,
    world          TEXT NOT NULL,
    biome          TEXT NOT NULL,
    condition      TEXT NOT NULL,
    task           TEXT NOT NULL,
    configuration  TEXT NOT NULL,
    model          TEXT NOT NULL,
    budget         INTEGER NOT NULL,
    disclosure     TEXT NOT NULL,
    repetition     INTEGER NOT NULL,
    seed           INTEGER NOT NULL,
    agent          TEXT NOT NULL,
    score          REAL NOT NULL,
    success        INTEGER NOT NULL,
    actions        INTEGER NOT NULL,
    cost_usd       REAL NOT NULL,
    tokens_in      INTEGER NOT NULL DEFAULT 0,
    tokens_out     INTEGER NOT NULL DEFAULT 0,
    success_action INTEGER,
    score_at       TEXT NOT NULL DEFAULT '{}',
    encounters     TEXT NOT NULL DEFAULT '[]',
    events         TEXT NOT NULL DEFAULT '[]',
    trajectory     TEXT NOT NULL DEFAULT '',
    end_reason     TEXT NOT NULL DEFAULT '',
    attempts       INTEGER NOT NULL DEFAULT 1,
    wall_s         REAL NOT NULL DEFAULT 0,
    finished_at    REAL NOT NULL,
    milestones_met   INTEGER,
    milestones_total INTEGER
);
CREATE TABLE IF NOT EXISTS faults (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    episode_id  TEXT NOT NULL,
    attempt     INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    message     TEXT NOT NULL,
    at          REAL NOT NULL
);
"""

_RECORD_COLUMNS = (
    "episode_id", "world", "biome", "condition", "task", "configuration", "model", "budget",
    "disclosure", "repetition", "seed", "agent", "score", "success", "actions", "cost_usd",
    "tokens_in", "tokens_out", "success_action", "score_at", "encounters", "end_reason", "attempts", "wall_s",
    "milestones_met", "milestones_total",
)

#: Nullable episode columns added after the first stores were written: (name, SQL type). A store
#: that lacks one gets it on open; its old rows read NULL (None) there.
_ADDED_COLUMNS = (("milestones_met", "INTEGER"), ("milestones_total", "INTEGER"))


class StoreError(RuntimeError):
    """The store cannot be used for this run (other build, other config, existing results)."""


def _sha_file(p: Path) -> str:
    """sha256 of a file, always read (not ``runtime.episode.integrity.file_sha256``, which reuses a hash
    while size and mtime are unchanged: a pack rewritten within one timestamp tick would keep its old one)."""
    h = hashlib.sha256()
    with p.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def build_fingerprint(build_root: Path) -> str:
    """Identity of the build a study runs against, from content hashes only.

    ``content:<sha256>`` over the sha256 of every ``build/m0*/datapack.zip`` and the sha256 of
    every save file that ``build/worlds/manifest.json`` lists. Freezing (which only pins those
    same hashes in ``FROZEN.json``) or rewriting an unchanged manifest leaves it unchanged; a
    changed pack or save changes it. A damaged manifest is a :class:`StoreError`.
    """
    build_root = Path(build_root)
    packs = {p.parent.name: _sha_file(p) for p in sorted(build_root.glob("m0*/datapack.zip"))}
    manifest = build_root / "worlds" / "manifest.json"
    saves: dict[str, str] = {}
    if manifest.is_file():
        try:
            worlds = json.loads(manifest.read_bytes())["worlds"]
            saves = {path: str(digest) for entry in worlds.values() for path, digest in entry["files"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StoreError(f"{manifest}: unreadable worlds manifest ({type(exc).__name__}: {exc})") from None
    listing = {"packs": packs, "saves": dict(sorted(saves.items()))}
    return "content:" + hashlib.sha256(compact(listing).encode()).hexdigest()


def _tokens(tokens: Any) -> tuple[int, int]:
    if tokens is None:
        return 0, 0
    if isinstance(tokens, (int, float)):
        return int(tokens), 0
    if isinstance(tokens, dict):
        tin = tokens.get("input", tokens.get("prompt", tokens.get("prompt_tokens", 0)))
        tout = tokens.get("output", tokens.get("completion", tokens.get("completion_tokens", 0)))
        return int(tin or 0), int(tout or 0)
    a, b = tokens
    return int(a), int(b)


def _migrate(conn: sqlite3.Connection) -> None:
    """Add the :data:`_ADDED_COLUMNS` a store written before them lacks (nullable, so old rows read None)."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(episodes)")}
    for name, sql_type in _ADDED_COLUMNS:
        if name not in have:
            conn.execute(f"ALTER TABLE episodes ADD COLUMN {name} {sql_type}")


class Store:
    """One study's results database.  Use :meth:`open`."""

    def __init__(self, path: Path, conn: sqlite3.Connection):
        self.path = path
        self.conn = conn

    # ------------------------------------------------------------- lifecycle
    @classmethod
    def open(cls, path: str | Path, *, create: bool = True) -> "Store":
        path = Path(path)
        if path.is_dir() or path.suffix != ".sqlite":
            path = path / STORE_NAME
        if not path.exists() and not create:
            raise StoreError(f"no results store at {path}")
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), timeout=30.0, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            problems = [r[0] for r in conn.execute("PRAGMA quick_check")]
            if problems != ["ok"]:
                raise sqlite3.DatabaseError(problems[0])
            conn.executescript(_SCHEMA)
            _migrate(conn)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(f"{path}: damaged results store ({exc}); restore it or remove the study folder "
                             "to start over") from None
        return cls(path, conn)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ meta
    def meta(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT key, value FROM meta").fetchall())

    def set_meta(self, values: dict[str, str]) -> None:
        with self._tx():
            self.conn.executemany(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", [(k, str(v)) for k, v in values.items()]
            )

    def unset_meta(self, key: str) -> None:
        with self._tx():
            self.conn.execute("DELETE FROM meta WHERE key = ?", (key,))

    def clear_meta(self) -> None:
        """Forget the pinned study/build (only sensible while no episode is stored)."""
        with self._tx():
            self.conn.execute("DELETE FROM meta")

    def bind(self, *, study: str, config_json: dict, plan_digest: str, fingerprint: str) -> None:
        """Pin this store to a study config and build, or check that it already is.

        Raises :class:`StoreError` when the stored fingerprint or plan differ.
        """
        meta = self.meta()
        if "fingerprint" not in meta:
            self.set_meta(
                {
                    "schema_version": SCHEMA_VERSION,
                    "study": study,
                    "config": compact(config_json),
                    "plan_digest": plan_digest,
                    "fingerprint": fingerprint,
                    "created": f"{time.time():.3f}",
                }
            )
            return
        if meta["fingerprint"] != fingerprint:
            raise StoreError(
                f"{self.path} was produced by a different build (store: {meta['fingerprint']}, "
                f"current build: {fingerprint}). Results of different builds cannot be mixed: "
                f"start a new study folder or rebuild the frozen build it was made with."
            )
        if meta.get("plan_digest") != plan_digest:
            raise StoreError(
                f"{self.path} belongs to a different study plan (config changed since the store was created). "
                f"Use a new study name or remove the folder to start over."
            )

    def config_json(self) -> dict | None:
        raw = self.meta().get("config")
        return None if raw is None else json.loads(raw)

    # -------------------------------------------------------------- episodes
    def _tx(self):
        conn = self.conn

        class _Tx:
            def __enter__(self_inner):
                conn.execute("BEGIN IMMEDIATE")

            def __exit__(self_inner, et, ev, tb):
                conn.execute("COMMIT" if et is None else "ROLLBACK")
                return False

        return _Tx()

    def finished_ids(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT episode_id FROM episodes")}

    def count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM episodes").fetchone()[0])

    def insert_episode(self, entry: dict, outcome: "EpisodeOutcome", *, attempts: int = 1, wall_s: float = 0.0) -> bool:
        """Insert one finished episode in one transaction.  Returns False (and
        changes nothing) if the id is already stored."""
        tin, tout = _tokens(outcome.tokens)
        traj_text = pack(outcome.trajectory)           # lean and compressed (trajectories.py)
        reported = outcome.to_dict()

        def pick(name: str) -> Any:
            # The backend's report of what it actually ran wins over the plan
            # (so a mismatch is caught by check_records before aggregation).
            v = reported.get(name)
            return entry[name] if v is None else v

        score = float(outcome.score)
        success = outcome.succeeded
        row = {
            "episode_id": entry["episode_id"],
            **{k: pick(k) for k in RECORD_FIELDS if k != "episode_id"},
            "seed": int(entry["seed"]),
            "agent": entry.get("agent", entry["configuration"]),
            "score": score,
            "success": int(success),
            "actions": int(outcome.actions),
            "cost_usd": float(outcome.cost_usd or 0.0),
            "tokens_in": tin,
            "tokens_out": tout,
            "success_action": outcome.success_action,
            "score_at": compact({str(k): v for k, v in outcome.score_at.items()}),
            "encounters": compact(list(outcome.encounters)),
            "events": compact(list(outcome.events)),
            "trajectory": traj_text,
            "end_reason": str(outcome.end_reason),
            "attempts": int(attempts),
            "wall_s": float(wall_s),
            "finished_at": time.time(),
            "milestones_met": outcome.milestones_met,
            "milestones_total": outcome.milestones_total,
        }
        cols = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        try:
            with self._tx():
                self.conn.execute(f"INSERT INTO episodes ({cols}) VALUES ({marks})", list(row.values()))
        except sqlite3.IntegrityError:
            return False
        return True

    def log_fault(self, episode_id: str, attempt: int, kind: str, message: str) -> None:
        with self._tx():
            self.conn.execute(
                "INSERT INTO faults(episode_id, attempt, kind, message, at) VALUES (?, ?, ?, ?, ?)",
                (episode_id, attempt, kind, message[:2000], time.time()),
            )

    def faults(self) -> list[dict]:
        cur = self.conn.execute("SELECT episode_id, attempt, kind, message, at FROM faults ORDER BY id")
        return [dict(zip(("episode_id", "attempt", "kind", "message", "at"), r)) for r in cur]

    def records(self) -> list[dict]:
        """Every stored episode as a record dict (``metrics.EpisodeRecord.from_dict`` input)."""
        cur = self.conn.execute(f"SELECT {', '.join(_RECORD_COLUMNS)} FROM episodes ORDER BY episode_id")
        out = []
        for row in cur:
            d = dict(zip(_RECORD_COLUMNS, row))
            d["success"] = bool(d["success"])
            try:
                d["score_at"] = {int(k): v for k, v in json.loads(d["score_at"]).items()}
                d["encounters"] = json.loads(d["encounters"])
            except (TypeError, ValueError, AttributeError) as exc:
                raise StoreError(f"{self.path}: episode {d['episode_id']}: damaged record "
                                 f"({type(exc).__name__}: {exc})"[:300]) from None
            out.append(d)
        return out

    def trajectory(self, episode_id: str) -> str:
        row = self.conn.execute("SELECT trajectory FROM episodes WHERE episode_id = ?", (episode_id,)).fetchone()
        return "" if row is None else self._unpack(episode_id, row[0])

    def _unpack(self, episode_id: str, value: Any) -> str:
        try:
            return unpack(value)
        except DamagedTrajectory as exc:
            raise StoreError(f"{self.path}: episode {episode_id}: {exc}") from None

    def iter_trajectories(self) -> Iterable[tuple[str, str, str]]:
        """(episode_id, trajectory JSONL, evaluator events JSON) for every episode."""
        for eid, traj, events in self.conn.execute("SELECT episode_id, trajectory, events FROM episodes "
                                                   "ORDER BY episode_id"):
            yield eid, self._unpack(eid, traj), events
