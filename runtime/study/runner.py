"""Study runner: plan -> executor (in worker processes) -> results store.

``run_study(config, execute=...)`` runs every planned episode that is not yet
stored.  Guarantees:

* Only the parent process writes the store, one transaction per finished
  episode, keyed by episode id: a run killed at any moment (SIGKILL of the
  parent or of a worker) loses at most the episodes in flight, which simply
  rerun on ``--resume``; nothing is counted twice.
* :class:`~runtime.study.executor.InfrastructureFault` (and a worker process
  dying under an episode) reruns the episode under the **same id and seed**, up
  to ``max_attempts`` attempts in total; every fault is logged in the store.
  Deaths, exhausted budgets and policy errors are outcomes reported by the
  executor and stay in the denominator.
* Without ``resume`` a store that already holds results is refused; a store
  made from another build (fingerprint) or another plan is always refused.
* Any other exception from the executor is a runner error: the episode is
  left unfinished (reported, rerun on resume) and the run goes on.
"""
from __future__ import annotations

import functools
import gc
import multiprocessing as mp
import os
import signal
import sys
import time
import traceback
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import wait as mp_wait
from pathlib import Path
from typing import Any, Callable, TextIO

from compiler.core.paths import BUILD
from runtime.records import EpisodeRecord

from .config import StudyConfig
from .executor import BackendUnavailable, execute_sim, is_infrastructure_fault, preflight
from .plan import RECORD_FIELDS, PlanEntry, build_plan, plan_digest
from .store import Store, StoreError, build_fingerprint

__all__ = ["RunSummary", "run_study", "study_dir", "MAX_ATTEMPTS", "StoreError"]

#: Attempts per episode (first run + reruns after infrastructure faults).
MAX_ATTEMPTS = 3
#: Allocations between a worker's young-generation collections (Python's default is 700): an
#: episode allocates many short-lived observation dicts and few cycles.
WORKER_GC_THRESHOLD = 20_000

Executor = Callable[[PlanEntry], dict]


def study_dir(config: StudyConfig, root: Path | None = None) -> Path:
    """``build/studies/<name>``."""
    return Path(root if root is not None else BUILD) / "studies" / config.name


@dataclass
class RunSummary:
    planned: int
    already_done: int = 0
    scheduled: int = 0
    finished: int = 0
    infrastructure_faults: int = 0
    gave_up: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    elapsed_s: float = 0.0
    store_path: Path | None = None

    @property
    def complete(self) -> bool:
        return self.already_done + self.finished == self.planned

    def lines(self) -> list[str]:
        out = [
            f"study store: {self.store_path}",
            f"episodes: {self.already_done + self.finished}/{self.planned} stored "
            f"({self.finished} new, {self.already_done} from earlier runs) in {self.elapsed_s:.1f}s",
        ]
        if self.infrastructure_faults:
            out.append(f"infrastructure faults rerun under the same id: {self.infrastructure_faults}")
        if self.gave_up:
            out.append(f"episodes still failing after {MAX_ATTEMPTS} attempts (rerun with --resume): {len(self.gave_up)}")
        if self.errors:
            out.append(f"episodes with runner errors (not stored; rerun with --resume): {len(self.errors)}")
            for eid, msg in list(self.errors.items())[:5]:
                out.append(f"  {eid}: {msg.strip().splitlines()[-1] if msg.strip() else msg}")
        return out


# ----------------------------------------------------------------- attempts


def _attempt(execute: Executor, entry: dict, done_attempts: int, max_attempts: int) -> dict:
    """Run one episode, rerunning infrastructure faults.  Returns a message dict."""
    faults: list[tuple[int, str, str]] = []
    attempt = done_attempts
    t0 = time.monotonic()
    while True:
        attempt += 1
        try:
            outcome = execute(PlanEntry.from_dict(entry))
            if not isinstance(outcome, dict) or "score" not in outcome:
                raise TypeError(f"executor returned {type(outcome).__name__} without 'score'")
            return {"status": "ok", "id": entry["episode_id"], "outcome": outcome, "attempts": attempt,
                    "wall": time.monotonic() - t0, "faults": faults}
        except (KeyboardInterrupt, SystemExit):
            raise
        except BackendUnavailable as exc:
            return {"status": "fatal", "id": entry["episode_id"], "attempts": attempt, "faults": faults,
                    "message": str(exc)}
        except BaseException as exc:  # noqa: BLE001 - classified below
            if is_infrastructure_fault(exc):
                faults.append((attempt, "infrastructure", f"{type(exc).__name__}: {exc}"))
                if attempt >= max_attempts:
                    return {"status": "fault", "id": entry["episode_id"], "attempts": attempt, "faults": faults}
                continue
            return {"status": "error", "id": entry["episode_id"], "attempts": attempt, "faults": faults,
                    "message": "".join(traceback.format_exception(exc))}


def _worker_main(conn, execute: Executor, max_attempts: int, parent_pid: int) -> None:
    """Worker loop: receive (entry, attempts so far), send the attempt result.
    Exits when told to, when the pipe closes or when the parent is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    gc.freeze()                         # what the worker inherited is never collected (nor copied) again
    gc.set_threshold(WORKER_GC_THRESHOLD)
    while True:
        try:
            if not conn.poll(0.5):
                if os.getppid() != parent_pid:
                    return
                continue
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        entry, done = msg
        result = _attempt(execute, entry, done, max_attempts)
        if os.getppid() != parent_pid:
            return
        try:
            conn.send(result)
        except (BrokenPipeError, OSError):
            return


# ----------------------------------------------------------------- progress


class Progress:
    """One-line progress bar on stderr: done/total, rate, ETA, running Score/SR."""

    def __init__(self, total: int, done: int, score_sum: float, successes: int, stream: TextIO | None, enabled: bool):
        self.total, self.done = total, done
        self.start_done = done
        self.score_sum, self.successes = score_sum, successes
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.monotonic()
        self.last = 0.0

    def add(self, score: float, success: bool) -> None:
        self.done += 1
        self.score_sum += score
        self.successes += int(success)
        self.draw()

    def text(self) -> str:
        el = max(time.monotonic() - self.t0, 1e-9)
        new = self.done - self.start_done
        rate = new / el
        left = self.total - self.done
        eta = "--:--" if rate <= 0 else _hms(left / rate)
        width = 24
        fill = int(width * self.done / self.total) if self.total else width
        bar = "#" * fill + "." * (width - fill)
        stats = ""
        if self.done:
            stats = f"  Score {self.score_sum / self.done:5.1f}  SR {100.0 * self.successes / self.done:5.1f}%"
        return f"[{bar}] {self.done}/{self.total}  {rate:6.2f} ep/s  ETA {eta}{stats}"

    def draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self.last < (0.2 if self.tty else 5.0) and self.done < self.total:
            return
        self.last = now
        if self.tty:
            self.stream.write("\r" + self.text())
        else:
            self.stream.write(self.text() + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.draw(force=True)
            if self.tty:
                self.stream.write("\n")
            self.stream.flush()


def _hms(s: float) -> str:
    s = int(s)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


# ------------------------------------------------------------------- runner


def _record_dict(entry: dict, outcome: dict) -> dict:
    d = {k: entry[k] for k in RECORD_FIELDS}
    d.update({k: v for k, v in outcome.items() if k in d and v is not None and k != "episode_id"})
    for k in ("score", "success", "actions", "cost_usd", "success_action", "score_at", "encounters"):
        if k in outcome:
            d[k] = outcome[k]
    return d


def run_study(
    config: StudyConfig,
    execute: Executor | None = None,
    *,
    out_dir: str | Path | None = None,
    build_root: str | Path | None = None,
    workers: int | None = None,
    resume: bool = False,
    limit: int | None = None,
    max_attempts: int = MAX_ATTEMPTS,
    progress: bool = True,
    stream: TextIO | None = None,
) -> RunSummary:
    """Run (or continue) a study; see the module docstring for the guarantees."""
    build_root = Path(build_root) if build_root is not None else BUILD
    endpoint = config.endpoint.model_dump() if config.endpoint else None
    if execute is None:
        agents = sorted({config.agents.get(c, c) for c in config.all_configurations()})
        preflight(agents, config.models, config.backend, endpoint)
        execute = functools.partial(execute_sim, build_root=build_root, endpoint=endpoint)
    out = Path(out_dir) if out_dir is not None else study_dir(config, build_root)
    n_workers = max(1, int(workers if workers is not None else config.workers))
    plan = build_plan(config)
    fingerprint = build_fingerprint(build_root)
    if config.build_fingerprint and config.build_fingerprint != fingerprint:
        raise StoreError(
            f"study config {config.name!r} is pinned to build {config.build_fingerprint}, "
            f"but the current build is {fingerprint}; rebuild that build or update the pin"
        )
    t_start = time.monotonic()
    store = Store.open(out)
    try:
        have = store.count()
        if have and not resume:
            raise StoreError(
                f"{store.path} already holds {have} finished episodes; pass --resume to continue this study "
                f"or remove {out} to start over"
            )
        if have == 0:
            store.clear_meta()  # an empty store may be re-bound to this build and plan
        store.bind(study=config.name, config_json=config.to_json(), plan_digest=plan_digest(plan), fingerprint=fingerprint)
        done_ids = store.finished_ids()
        todo = [e for e in plan if e.episode_id not in done_ids]
        if limit is not None:
            todo = todo[: max(0, int(limit))]
        summary = RunSummary(planned=len(plan), already_done=len(done_ids & {e.episode_id for e in plan}),
                             scheduled=len(todo), store_path=store.path)
        ssum, nsucc = store.conn.execute("SELECT COALESCE(SUM(score),0), COALESCE(SUM(success),0) FROM episodes").fetchone()
        bar = Progress(len(plan), summary.already_done, float(ssum), int(nsucc), stream, progress)
        by_id = {e.episode_id: e.to_dict() for e in todo}

        def handle(msg: dict) -> None:
            eid = msg["id"]
            for attempt, kind, text in msg.get("faults", ()):
                store.log_fault(eid, attempt, kind, text)
                summary.infrastructure_faults += 1
            if msg["status"] == "ok":
                outcome = msg["outcome"]
                try:
                    EpisodeRecord.from_dict(_record_dict(by_id[eid], outcome))
                except (KeyError, TypeError, ValueError) as exc:
                    summary.errors[eid] = f"malformed outcome: {type(exc).__name__}: {exc}"
                    store.log_fault(eid, msg["attempts"], "error", summary.errors[eid])
                    return
                if store.insert_episode(by_id[eid], outcome, attempts=msg["attempts"], wall_s=msg.get("wall", 0.0)):
                    summary.finished += 1
                    bar.add(float(outcome["score"]), bool(outcome.get("success", float(outcome["score"]) == 100.0)))
            elif msg["status"] == "fatal":
                raise BackendUnavailable(msg["message"])
            elif msg["status"] == "fault":
                summary.gave_up.append(eid)
            else:
                summary.errors[eid] = msg.get("message", "error")
                store.log_fault(eid, msg["attempts"], "error", summary.errors[eid])

        bar.draw(force=True)
        if n_workers == 1 or len(todo) <= 1:
            for e in todo:
                handle(_attempt(execute, by_id[e.episode_id], 0, max_attempts))
        else:
            _run_parallel(todo, by_id, execute, n_workers, max_attempts, handle, store, summary)
        bar.close()
        summary.elapsed_s = time.monotonic() - t_start
        return summary
    finally:
        store.close()


def _run_parallel(todo, by_id, execute, n_workers, max_attempts, handle, store, summary) -> None:
    try:
        ctx = mp.get_context("fork")
    except ValueError:  # pragma: no cover - platforms without fork
        ctx = mp.get_context()
    parent = os.getpid()
    queue: deque[tuple[str, int]] = deque((e.episode_id, 0) for e in todo)
    slots: dict[Any, dict] = {}  # parent conn -> {"proc", "task": (eid, attempts) | None}

    def spawn() -> None:
        a, b = ctx.Pipe(duplex=True)
        p = ctx.Process(target=_worker_main, args=(b, execute, max_attempts, parent), daemon=True)
        p.start()
        b.close()
        slots[a] = {"proc": p, "task": None}

    for _ in range(min(n_workers, len(queue))):
        spawn()
    try:
        while queue or any(s["task"] is not None for s in slots.values()):
            for conn, s in list(slots.items()):
                if s["task"] is None and queue:
                    eid, done = queue.popleft()
                    try:
                        conn.send((by_id[eid], done))
                        s["task"] = (eid, done)
                    except (BrokenPipeError, OSError):
                        queue.appendleft((eid, done))
            if not slots:  # every worker died before taking work
                spawn()
                continue
            for conn in mp_wait(list(slots), timeout=0.5):
                s = slots[conn]
                try:
                    msg = conn.recv()
                except (EOFError, OSError):
                    _worker_died(conn, s, slots, queue, store, summary, max_attempts)
                    if queue:
                        spawn()
                    continue
                s["task"] = None
                handle(msg)
            for conn, s in list(slots.items()):  # a worker killed while idle or silently
                if not s["proc"].is_alive() and conn in slots:
                    _worker_died(conn, s, slots, queue, store, summary, max_attempts)
                    if queue:
                        spawn()
    finally:
        for conn, s in slots.items():
            try:
                conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        deadline = time.monotonic() + 5.0
        for conn, s in slots.items():
            s["proc"].join(timeout=max(0.0, deadline - time.monotonic()))
            if s["proc"].is_alive():
                s["proc"].kill()
                s["proc"].join(timeout=1.0)
            conn.close()


def _worker_died(conn, s, slots, queue, store, summary, max_attempts) -> None:
    p = s["proc"]
    p.join(timeout=1.0)
    slots.pop(conn, None)
    try:
        conn.close()
    except OSError:
        pass
    task = s["task"]
    if task is None:
        return
    eid, done = task
    attempt = done + 1
    store.log_fault(eid, attempt, "infrastructure", f"worker process {p.pid} died (exit code {p.exitcode})")
    summary.infrastructure_faults += 1
    if attempt >= max_attempts:
        summary.gave_up.append(eid)
    else:
        queue.appendleft((eid, attempt))
