"""SQLite results store of one study (``build/studies/<name>/results.sqlite``).

* WAL journal; finished episodes (each already encoded where it ran: :func:`episode_row`) are
  inserted a batch at a time, **one transaction** per batch, keyed by episode id (primary key), so
  a run killed at any moment -- SIGKILL included -- leaves only whole episodes and whole batches,
  and no episode can be counted twice.
* ``meta`` pins the study config, the plan digest and the **build fingerprint**
  (content hashes of the packs and saves, unchanged by freezing); opening the store
  against another build (or a changed config) is refused.
* ``meta["cost_stop"]`` (:data:`COST_STOP`) is set when the latest run stopped at
  ``max_cost_usd`` (spent, limit, episodes stored and planned; JSON) and removed by a run that did
  not, so the report can say so.
* A damaged database file is a one-line :class:`StoreError`, never a traceback; so is a store of
  a newer schema (``meta["schema_version"]``, :data:`SCHEMA_VERSION`). An older one is migrated
  on open (the columns added since are added, old rows read their defaults).
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
from contextlib import contextmanager
from pathlib import Path
from itertools import groupby
from typing import Any, Iterable, Iterator, Mapping, Sequence

from mcbuild.compiler.core.canonical import compact
from mcbuild.compiler.worlds.layout import manifest_problem
from mcbuild.runtime.study.run.outcome import EpisodeOutcome, stored_fields
from mcbuild.runtime.study.store.columns import COLUMNS, RECORD_COLUMNS, create_table, decode, encode, missing
from mcbuild.runtime.study.store.trajectories import DamagedTrajectory, unpack

__all__ = ["Store", "StoreError", "build_fingerprint", "connect_read_only", "episode_row", "store_file",
           "stored_trajectory", "STORE_NAME", "COST_STOP"]

STORE_NAME = "results.sqlite"
COST_STOP = "cost_stop"         # meta key: the latest run stopped at max_cost_usd
SCHEMA_VERSION = "1"

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
{create_table()}
CREATE TABLE IF NOT EXISTS faults (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    episode_id  TEXT NOT NULL,
    attempt     INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    message     TEXT NOT NULL,
    at          REAL NOT NULL
);
"""


class StoreError(RuntimeError):
    """The store cannot be used for this run (other build, other config, existing results)."""


def _sha_file(p: Path) -> str:
    """sha256 of a file, always read (not ``mcbuild.runtime.episode.integrity.file_sha256``, which reuses a hash
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
    changed pack or save changes it. A damaged manifest, or one of another mcbuild's worlds format,
    is a :class:`StoreError`.
    """
    build_root = Path(build_root)
    packs = {p.parent.name: _sha_file(p) for p in sorted(build_root.glob("m0*/datapack.zip"))}
    manifest = build_root / "worlds" / "manifest.json"
    saves: dict[str, str] = {}
    if manifest.is_file():
        try:
            data = json.loads(manifest.read_bytes())
            saves = {path: str(digest) for entry in data["worlds"].values() for path, digest in entry["files"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StoreError(f"{manifest}: unreadable worlds manifest ({type(exc).__name__}: {exc})") from None
        problem = manifest_problem(data, manifest)
        if problem is not None:
            raise StoreError(problem)
    listing = {"packs": packs, "saves": dict(sorted(saves.items()))}
    return "content:" + hashlib.sha256(compact(listing).encode()).hexdigest()


def differences(stored: Any, now: Any, path: str = "") -> list[str]:
    """The fields where ``now`` differs from ``stored``, one ``field: stored -> now`` each (nested
    mappings by their dotted path; a field only one side has shows as absent on the other)."""
    if isinstance(stored, dict) and isinstance(now, dict):
        out = []
        for key in sorted(set(stored) | set(now), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in stored or key not in now:
                out.append(f"{where}: {_shown(stored.get(key), key in stored)} in the store, "
                           f"{_shown(now.get(key), key in now)} now")
            else:
                out += differences(stored[key], now[key], where)
        return out
    return [] if stored == now else [f"{path or 'value'}: {_shown(stored)} in the store, {_shown(now)} now"]


def _shown(value: Any, present: bool = True) -> str:
    return "absent" if not present else compact(value) if isinstance(value, (dict, list)) else repr(value)


def _schema_problem(conn: sqlite3.Connection, path: Path) -> str | None:
    """One line when the store is of a schema this code cannot read (a newer mcbuild's, or not a
    number); an older one (or one without a version: the first) is migrated (:func:`_migrate`)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        return None
    if not str(row[0]).isdigit():
        return f"{path}: unknown store schema {row[0]!r}; not a results store of mcbuild"
    if int(row[0]) > int(SCHEMA_VERSION):
        return (f"{path}: written by a newer mcbuild (store schema {row[0]}; this one reads up to {SCHEMA_VERSION}); "
                "upgrade mcbuild (`pip install -U mcbuild`, or `git pull && make setup` in a checkout) to read it")
    return None


def _migrate(conn: sqlite3.Connection) -> None:
    """Add the columns a store written before them lacks (``columns.missing``: each nullable or with a
    default, so old rows read None or the default there)."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(episodes)")}
    for column in missing(have):
        if not column.nullable and column.default is None:
            raise sqlite3.DatabaseError(f"the episodes table lacks the required column {column.name}")
        conn.execute(f"ALTER TABLE episodes ADD COLUMN {column.ddl()}")


def store_file(path: str | Path) -> Path:
    """The store file of a study folder (or the ``.sqlite`` file itself)."""
    path = Path(path)
    return path / STORE_NAME if path.is_dir() or path.suffix != ".sqlite" else path


def connect_read_only(db: Path) -> sqlite3.Connection:
    """A connection that can only read the store file ``db`` (SQLite ``mode=ro``) and creates nothing
    beside it: while no ``-wal`` or ``-shm`` file shows a writer (a writer makes both when it opens the
    store; a killed one leaves them), the file is opened ``immutable`` (no lock, no ``-wal``/``-shm``
    made, which a read-only connection could not remove again); otherwise it reads through the
    writer's WAL, seeing its last committed transaction."""
    live = any(db.with_name(db.name + suffix).exists() for suffix in ("-wal", "-shm"))
    return sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro{'' if live else '&immutable=1'}", uri=True,
                           timeout=30.0, isolation_level=None)


def _current_sampling(stored: str) -> str:
    """A stored sampling record in today's field names: a store written before ModelSettings recorded provider-side
    reasoning as ``reasoning_off``, the opposite of today's ``reasoning`` (``mcbuild.llm.settings``)."""
    try:
        data = json.loads(stored)
    except ValueError:
        return stored
    if not isinstance(data, dict) or not any(isinstance(s, dict) and "reasoning_off" in s for s in data.values()):
        return stored
    for s in data.values():
        if isinstance(s, dict) and "reasoning_off" in s:
            s["reasoning"] = not s.pop("reasoning_off")
    return compact(data)


def _current_config(config: dict[str, Any]) -> dict[str, Any]:
    """A stored study config in today's form: a store written before ModelSettings recorded each model-settings
    layer (``endpoint``, ``model_settings``) with every key, None where not given, and the provider's
    sampling seed as ``seed``; today a layer holds only what was given (``mcbuild.llm.settings``)."""
    layers = [config.get("endpoint"), *(config.get("model_settings") or {}).values()]
    for layer in layers:
        if isinstance(layer, dict) and "seed" in layer:
            seed = layer.pop("seed")
            for key in [k for k, v in layer.items() if v is None]:
                del layer[key]
            if seed is not None:
                layer["sampling_seed"] = seed
    return config


def stored_trajectory(db: Path, episode_id: str) -> str | None:
    """The trajectory JSONL of one episode of the store file ``db`` (None: not stored), read on a
    read-only connection (replay reads one per episode; the runner has opened and checked the whole
    store once). A damaged store or trajectory is one :class:`StoreError` naming both."""
    try:
        conn = connect_read_only(db)
        try:
            row = conn.execute("SELECT trajectory FROM episodes WHERE episode_id = ?", (episode_id,)).fetchone()
        finally:
            conn.close()
        return None if row is None else unpack(row[0])
    except (sqlite3.DatabaseError, DamagedTrajectory) as exc:
        raise StoreError(f"{db}: episode {episode_id}: {exc}") from None


def episode_row(entry: Mapping[str, Any], outcome: EpisodeOutcome, *, attempts: int = 1,
                wall_s: float = 0.0) -> dict[str, Any]:
    """One finished episode as the ``episodes`` table holds it: ``stored_fields`` of its plan entry and
    outcome, the events as JSON, the trajectory packed. Built where the episode ran, so the store's
    single writer receives a few scalars and two strings instead of the whole trajectory."""
    values = {**stored_fields(entry, outcome), "events": outcome.events, "trajectory": outcome.trajectory,
              "attempts": int(attempts), "wall_s": float(wall_s), "finished_at": time.time()}
    return {name: encode(name, value) for name, value in values.items()}


def _quick_check(conn: sqlite3.Connection) -> None:
    """``PRAGMA quick_check``: a damaged file is a DatabaseError naming the first problem."""
    problems = [r[0] for r in conn.execute("PRAGMA quick_check")]
    if problems != ["ok"]:
        raise sqlite3.DatabaseError(problems[0])


def _default(name: str) -> str:
    """The SQL default of the record column ``name`` (NULL when it has none)."""
    column = next(c for c in COLUMNS if c.name == name)
    return "NULL" if column.default is None else column.default


FAULT_SQL = "INSERT INTO faults(episode_id, attempt, kind, message, at) VALUES (?, ?, ?, ?, ?)"


def fault_row(episode_id: str, attempt: int, kind: str, message: str) -> tuple:
    """One line of the ``faults`` log, stamped now."""
    return (episode_id, int(attempt), kind, message[:2000], time.time())


class Store:
    """One study's results database.  Use :meth:`open`."""

    def __init__(self, path: Path, conn: sqlite3.Connection, columns: set[str] | None = None):
        self.path = path
        self.conn = conn
        # the record columns to select: a column an older store lacks (read only, so not migrated) reads its default
        self._record_sql = ", ".join(name if columns is None or name in columns else f"{_default(name)} AS {name}"
                                     for name in RECORD_COLUMNS)

    # ------------------------------------------------------------- lifecycle
    @classmethod
    def open(cls, path: str | Path, *, create: bool = True) -> "Store":
        """The store of the run that writes it (created unless ``create`` is false; migrated when older).
        Readers use :meth:`read_only`."""
        path = store_file(path)
        if not path.exists() and not create:
            raise StoreError(f"no results store at {path}")
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), timeout=30.0, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            _quick_check(conn)
            conn.executescript(_SCHEMA)
            problem = _schema_problem(conn, path)
            if problem is None:
                _migrate(conn)
        except sqlite3.OperationalError as exc:
            conn.close()
            raise StoreError(f"{path}: cannot open the results store ({exc})") from None
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(f"{path}: damaged results store ({exc}); restore it or remove the study folder "
                             "to start over") from None
        if problem is not None:
            conn.close()
            raise StoreError(problem)
        return cls(path, conn)

    @classmethod
    def read_only(cls, path: str | Path) -> "Store":
        """The store of a study, opened by a reader (``study status``, ``report``, ``export``, ``estimate``,
        and every later reader): :func:`connect_read_only`, so no byte of the store (or of a live
        writer's journal) changes and no file is made; nothing is created or migrated (columns that an
        older store lacks read their defaults). Missing, empty, damaged, not a results store, or of a
        newer schema: one :class:`StoreError`."""
        path = store_file(path)
        if not path.is_file():
            raise StoreError(f"no results store at {path}")
        if path.stat().st_size == 0:
            raise StoreError(f"{path}: an empty file, not a results store of mcbuild")
        try:
            conn = connect_read_only(path)
        except sqlite3.Error as exc:
            raise StoreError(f"{path}: cannot read the results store ({exc})") from None
        try:
            _quick_check(conn)
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not {"meta", "episodes", "faults"} <= tables:
                raise StoreError(f"{path}: not a results store of mcbuild (no {', '.join(sorted({'meta', 'episodes', 'faults'} - tables))} table)")
            problem = _schema_problem(conn, path)
            if problem is not None:
                raise StoreError(problem)
            have = {row[1] for row in conn.execute("PRAGMA table_info(episodes)")}
        except sqlite3.OperationalError as exc:
            conn.close()
            raise StoreError(f"{path}: cannot read the results store ({exc})") from None
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(f"{path}: damaged results store ({exc}); restore it") from None
        except StoreError:
            conn.close()
            raise
        return cls(path, conn, have)

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

    def bind(self, *, study: str, config_json: dict, plan_digest: str, fingerprint: str,
             sampling: dict | None = None) -> None:
        """Pin this store to a study config, build and the models' sampling settings (``sampling``), or
        check that it already is.

        Raises :class:`StoreError` when the stored fingerprint, plan or sampling settings differ.
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
                    "sampling": compact(sampling or {}),
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
            changed = differences(self.config_json() or {}, config_json)
            raise StoreError(
                f"{self.path} belongs to a different study plan: the config changed since the store was created "
                f"({'; '.join(changed) or 'the plan it expands to differs'}). Use a new study name or remove the "
                f"folder to start over."
            )
        if "sampling" in meta and _current_sampling(meta["sampling"]) != compact(sampling or {}):
            changed = differences(json.loads(_current_sampling(meta["sampling"])), json.loads(compact(sampling or {})))
            raise StoreError(
                f"{self.path} was sampled with other model settings ({'; '.join(changed)}). Episodes sampled "
                "differently cannot be mixed: use another --out."
            )

    def config_json(self) -> dict | None:
        raw = self.meta().get("config")
        try:
            config = None if raw is None else json.loads(raw)
        except ValueError as exc:
            raise StoreError(f"{self.path}: damaged study config in meta ({type(exc).__name__}: {exc})"[:300]) from None
        if config is not None and not isinstance(config, dict):
            raise StoreError(f"{self.path}: damaged study config in meta (a JSON {type(config).__name__}, not an object)")
        return _current_config(config) if config is not None else None

    # -------------------------------------------------------------- episodes
    @contextmanager
    def _tx(self) -> Iterator[None]:
        """One write transaction; a write the disk refuses (full, I/O error) is one
        :class:`StoreError` naming the store."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield
                self.conn.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as exc:
            raise StoreError(f"{self.path}: cannot write the results store ({exc})") from None

    def finished_ids(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT episode_id FROM episodes")}

    def count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM episodes").fetchone()[0])

    def insert_episode(self, entry: dict, outcome: EpisodeOutcome, *, attempts: int = 1, wall_s: float = 0.0) -> bool:
        """Insert one finished episode in its own transaction. Returns False (and changes nothing) if
        the id is already stored."""
        return self.insert_rows([episode_row(entry, outcome, attempts=attempts, wall_s=wall_s)]) == 1

    def insert_rows(self, rows: Sequence[Mapping[str, Any]], faults: Sequence[tuple] = ()) -> int:
        """Insert finished episodes (:func:`episode_row`) and fault lines (:func:`fault_row`) in **one**
        transaction: all of them or, when it is interrupted (or a row is refused), none. An episode
        whose id is already stored is skipped. Returns the number of episodes inserted."""
        with self._tx():
            before = self.conn.total_changes
            for cols, group in groupby(rows, key=tuple):      # rows of one shape share one statement
                sql = (f"INSERT INTO episodes ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))}) "
                       "ON CONFLICT(episode_id) DO NOTHING")
                self.conn.executemany(sql, [tuple(r.values()) for r in group])
            inserted = self.conn.total_changes - before
            self.conn.executemany(FAULT_SQL, faults)
        return inserted

    def faults(self) -> list[dict]:
        cur = self.conn.execute("SELECT episode_id, attempt, kind, message, at FROM faults ORDER BY id")
        return [dict(zip(("episode_id", "attempt", "kind", "message", "at"), r)) for r in cur]

    def records(self) -> list[dict]:
        """Every stored episode as a record dict (``EpisodeRecord.from_dict`` input), in id order."""
        cur = self.conn.execute(f"SELECT {self._record_sql} FROM episodes ORDER BY episode_id")
        out = []
        for row in cur:
            try:
                out.append({name: decode(name, value) for name, value in zip(RECORD_COLUMNS, row)})
            except (TypeError, ValueError, AttributeError) as exc:
                raise StoreError(f"{self.path}: episode {row[0]}: damaged record "
                                 f"({type(exc).__name__}: {exc})"[:300]) from None
        return out

    def totals(self) -> tuple[float, int, float]:
        """(sum of scores, successes, USD) over every stored episode."""
        ssum, nsucc, spent = self.conn.execute(
            "SELECT COALESCE(SUM(score),0), COALESCE(SUM(success),0), COALESCE(SUM(cost_usd),0) FROM episodes").fetchone()
        return float(ssum), int(nsucc), float(spent)

    def sizes(self) -> dict[str, int]:
        """Episodes, prompt tokens, actions and stored trajectory bytes summed over the store."""
        row = self.conn.execute("SELECT COUNT(*), COALESCE(SUM(tokens_in),0), COALESCE(SUM(actions),0), "
                                "COALESCE(SUM(length(trajectory)),0) FROM episodes").fetchone()
        return dict(zip(("episodes", "tokens_in", "actions", "trajectory_bytes"), map(int, row)))

    def token_means(self) -> dict[tuple[str, str], tuple[int, float, float]]:
        """(configuration, model) -> (episodes, mean prompt tokens, mean completion tokens)."""
        return {(c, m): (n, tin, tout) for c, m, n, tin, tout in self.conn.execute(
            "SELECT configuration, model, COUNT(*), AVG(tokens_in), AVG(tokens_out) FROM episodes "
            "GROUP BY configuration, model")}

    def trajectory(self, episode_id: str) -> str:
        row = self.conn.execute("SELECT trajectory FROM episodes WHERE episode_id = ?", (episode_id,)).fetchone()
        return "" if row is None else self._unpack(episode_id, row[0])

    def _unpack(self, episode_id: str, value: Any) -> str:
        try:
            return unpack(value)
        except DamagedTrajectory as exc:
            raise StoreError(f"{self.path}: episode {episode_id}: {exc}") from None

    def iter_trajectories(self) -> Iterable[tuple[str, str, str]]:
        """(episode_id, trajectory JSONL, evaluator events JSON) for every episode; damaged events
        JSON is a :class:`StoreError` naming the episode."""
        for eid, traj, events in self.conn.execute("SELECT episode_id, trajectory, events FROM episodes "
                                                   "ORDER BY episode_id"):
            try:
                json.loads(events or "[]")
            except (ValueError, TypeError) as exc:
                raise StoreError(f"{self.path}: episode {eid}: damaged events ({type(exc).__name__}: {exc})"[:300]) from None
            yield eid, self._unpack(eid, traj), events
