"""Study runner: plan -> executor (in worker processes) -> results store.

``run_study(config, execute=...)`` runs every planned episode that is not yet
stored.  Guarantees:

* Only the parent process writes the store, keyed by episode id. Each worker
  hands back its episode already encoded as the store's row (``episode_row``),
  and the parent commits them a batch per transaction (``store/batch.py``): a
  run killed at any moment (SIGKILL of the parent or of a worker) loses at most
  the episodes in flight and those waiting for their batch's commit, which
  simply rerun on ``--resume``; nothing is counted twice.
* :class:`~mcbuild.runtime.errors.InfrastructureFault` (and a worker process
  dying under an episode) reruns the episode under the **same id and seed**, up
  to ``max_attempts`` attempts in total; every fault is logged in the store.
  Deaths, exhausted budgets and policy errors are outcomes reported by the
  executor and stay in the denominator.
* Without ``resume`` a store that already holds results is refused; a store
  made from another build (fingerprint) or another plan is always refused.
* One run writes a store at a time (``store/lock.py``); the summary counts what the
  store holds at the end, whoever stored it.
* Any other exception from the executor is a runner error: the episode is
  left unfinished (reported, rerun on resume) and the run goes on.
"""
from __future__ import annotations

import collections
import functools
import json
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from mcbuild.compiler.core.canonical import compact
from mcbuild.compiler.core.cpus import auto_workers, oversubscribed
from mcbuild.compiler.core.paths import BUILD
from mcbuild.llm.settings import ModelSettings
from mcbuild.runtime.errors import BackendUnavailable
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.design.plan import PlanEntry, build_plan, plan_digest
from mcbuild.runtime.study.run.executor import execute as execute_episode
from mcbuild.runtime.study.run.executor import check_parts, first_request, preflight_models, sampling, warm
from mcbuild.runtime.study.run.attempt import AttemptResult, Executor, Status, attempt
from mcbuild.runtime.study.run.live import LIVE_DIR, LIVE_KEEP_S, discard
from mcbuild.runtime.study.run.live import clear as clear_live
from mcbuild.runtime.study.run.interrupt import Interrupted, StopOnSignals
from mcbuild.runtime.study.run.progress import OnProgress, Tally
from mcbuild.runtime.study.run.schedulers.inflight import InflightScheduler, fit
from mcbuild.runtime.study.run.schedulers.local import Scheduler
from mcbuild.runtime.study.store.lock import StoreLock
from mcbuild.runtime.study.store.replay import replay_store
from mcbuild.runtime.study.store.adaptations import Adaptations
from mcbuild.runtime.study.store.batch import Batch
from mcbuild.runtime.study.store.results import COST_STOP, STORE_NAME, Store, StoreError, build_fingerprint

__all__ = ["RunSummary", "run_study", "study_dir", "MAX_ATTEMPTS", "StoreError"]

#: Attempts per episode (first run + reruns after infrastructure faults).
MAX_ATTEMPTS = 3


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
    agent_errors: dict[str, list] = field(default_factory=dict)   # configuration -> [message, episodes not run]
    elapsed_s: float = 0.0
    store_path: Path | None = None
    cost_usd: float = 0.0                 # USD of every stored episode of the study
    cost_limit: float | None = None       # the config's max_cost_usd
    stopped_by_cost: bool = False
    scheduler: str = ""                 # what the scheduler reports (a Ray cluster's size)
    stored: int = 0                     # planned episodes the store holds at the end of the run
    interrupted: Interrupted | None = None  # the signal that stopped the run

    @property
    def complete(self) -> bool:
        return self.stored == self.planned

    def lines(self) -> list[str]:
        out = [
            f"study store: {self.store_path}",
            f"episodes: {self.stored}/{self.planned} stored "
            f"({self.finished} new, {self.already_done} from earlier runs) in {self.elapsed_s:.1f}s",
        ]
        if self.interrupted is not None:
            out.append(f"interrupted by {self.interrupted.name}: episodes in flight were dropped, not stored")
        if self.stopped_by_cost:
            out.append(f"stopped at the cost limit: ${self.cost_usd:.4f} stored of max_cost_usd ${self.cost_limit:g} "
                       f"(episodes in flight were dropped, not stored); raise max_cost_usd and pass --resume to continue")
        if self.scheduler:
            out.append(self.scheduler)
        if self.infrastructure_faults:
            out.append(f"infrastructure faults rerun under the same id: {self.infrastructure_faults}")
        if self.gave_up:
            out.append(f"episodes still failing after {MAX_ATTEMPTS} attempts (rerun with --resume): {len(self.gave_up)}")
        if self.errors:
            out.append(f"episodes with runner errors (not stored; rerun with --resume): {len(self.errors)}")
            for eid, msg in list(self.errors.items())[:5]:
                out.append(f"  {eid}: {msg.strip().splitlines()[-1] if msg.strip() else msg}")
        return out

    def agent_problems(self) -> list[str]:
        """One line per configuration whose agent could not be built (for stderr: a rerun cannot help)."""
        return [f"configuration {c!r}: {message}; its {n} episode(s) were not run (fix the agent, then run the "
                "study again)" for c, (message, n) in sorted(self.agent_errors.items())]


# ------------------------------------------------------------------- runner


class _CostLimit(Exception):
    """Raised by the result handler once the stored episodes reach ``max_cost_usd``."""


def for_config(config: StudyConfig, workers: int, build_root: Path, concurrency: int = 1) -> Scheduler:
    """The scheduler a study config names: this machine's ``workers`` processes with ``concurrency``
    episodes in flight each, or a ``RayScheduler`` (the optional Ray extra, imported only then)."""
    if config.scheduler == "local":
        return InflightScheduler(workers, concurrency)
    from mcbuild.runtime.study.run.schedulers.ray import RayScheduler, study_env

    return RayScheduler(build_root, backend=config.backend, address=config.ray_address, batch=config.ray_batch,
                        llm_in_flight=config.ray_llm_in_flight, local_servers=workers, env=study_env(config))


def worker_count(config: StudyConfig, workers: int | str | None) -> tuple[int, str | None]:
    """The local worker processes of a run, from ``workers`` (the command line's) or the config's, and
    the line to print about them: ``auto`` fits the machine (``mcbuild.compiler.core.cpus``) and says
    why; a count above the usable CPUs gets one warning line; otherwise None."""
    asked = workers if workers is not None else config.workers
    if asked == "auto":
        choice = auto_workers()
        return choice.workers, choice.line()
    n = max(1, int(asked))
    return n, oversubscribed(n, "--workers" if workers is not None else f"study {config.name!r}")


def _note_cost_stop(store: Store, summary: RunSummary) -> None:
    """Keep in the store whether this run stopped at the cost limit (the report shows it)."""
    if not summary.stopped_by_cost:
        store.unset_meta(COST_STOP)
        return
    store.set_meta({COST_STOP: compact({
        "spent_usd": round(summary.cost_usd, 8), "limit_usd": summary.cost_limit,
        "stored": store.count(), "planned": summary.planned})})


def _stderr_line(line: str) -> None:
    """Print a ``warning:`` line on stderr, on a line of its own."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _probes(plan: list[PlanEntry], models: list[str], build_root: Path) -> dict[str, tuple[list, Any]]:
    """Each model's first request in the study (its first planned LLM episode's), for the preflight
    to send; a model whose first request cannot be rendered is probed with a short request instead."""
    from mcbuild.runtime.agents.llm import CONFIGURATIONS

    out: dict[str, tuple[list, Any]] = {}
    tried: set[str] = set()
    for entry in plan:
        if entry.model in models and entry.model not in tried and (entry.agent or entry.configuration) in CONFIGURATIONS:
            tried.add(entry.model)
            try:
                out[entry.model] = first_request(entry, build_root)
            except Exception:  # noqa: BLE001 - the episode itself reports what is wrong with it
                pass
    return out


def _decoded(value: Any) -> list[dict[str, Any]]:
    """A row's adaptations (the store's JSON text, or the list itself)."""
    return json.loads(value) if isinstance(value, str) else list(value)


def shared_out(settings: ModelSettings, workers: int) -> ModelSettings:
    """``settings`` with a study's ``max_in_flight`` cap shared out between its ``workers`` (rounded up)."""
    if settings.max_in_flight is None:
        return settings
    return settings.model_copy(update={"max_in_flight": -(-settings.max_in_flight // workers)})


def run_study(
    config: StudyConfig,
    execute: Executor | None = None,
    *,
    out_dir: str | Path | None = None,
    build_root: str | Path | None = None,
    workers: int | str | None = None,
    resume: bool = False,
    limit: int | None = None,
    max_attempts: int = MAX_ATTEMPTS,
    progress: OnProgress | None = None,
    scheduler: Scheduler | None = None,
    concurrency: int | None = None,
    replay: str | Path | None = None,
    break_lock: bool = False,
    live: bool = True,
    warn: Callable[[str], None] = _stderr_line,
) -> RunSummary:
    """Run (or continue) a study; see the module docstring for the guarantees. ``replay`` names a
    results store whose stored model replies answer every LLM request (``replay.py``);
    ``break_lock`` replaces a lock held from another host (``store/lock.py``); ``warn`` prints each
    adaptation of a model's requests the study meets for the first time (``store/adaptations.py``); ``progress`` hears
    of the tally before the first episode and after each one stored. The first SIGINT or SIGTERM
    stops the run cleanly (``interrupt.py``): what finished is stored and the summary says so. With
    ``live``, the episodes in flight keep their live logs in ``<study>/live/`` (``live.py``) for
    ``mcbuild study watch``."""
    with StopOnSignals() as stop:
        return _run(config, execute, stop, out_dir=out_dir, build_root=build_root, workers=workers, resume=resume,
                    limit=limit, max_attempts=max_attempts, progress=progress, scheduler=scheduler,
                    concurrency=concurrency, replay=replay, break_lock=break_lock, live=live, warn=warn)


def _run(config: StudyConfig, execute: Executor | None, stop: StopOnSignals, *, out_dir: str | Path | None,
         build_root: str | Path | None, workers: int | str | None, resume: bool, limit: int | None, max_attempts: int,
         progress: OnProgress | None, scheduler: Scheduler | None, concurrency: int | None,
         replay: str | Path | None, break_lock: bool, live: bool, warn: Callable[[str], None]) -> RunSummary:
    """The run in its stages: prepare, open the store, bind it to this run, schedule, finish."""
    run = _prepare(config, execute, out_dir=out_dir, build_root=build_root, workers=workers, concurrency=concurrency,
                   replay=replay, live=live, local=scheduler is None and config.scheduler == "local")
    t_start = time.monotonic()
    lock = StoreLock.acquire(run.out / STORE_NAME, break_lock=break_lock)
    try:
        store = Store.open(run.out)
    except BaseException:
        lock.release()
        raise
    try:
        adaptations = _bind(store, run, resume, warn)
        results = _Results.start(store, run, adaptations, limit, max_attempts, progress or (lambda t: None))
        for note in (run.workers_note, run.shape) if run.local and results.todo else ():
            if note:
                print(note, file=sys.stderr, flush=True)
        results.report(results.tally)
        chosen = scheduler if scheduler is not None else for_config(config, run.workers, run.build_root, run.inflight)
        _schedule(run, chosen, results, stop, max_attempts)
        return _finish(store, run, chosen, results, stop, t_start)
    finally:
        store.close()
        lock.release()


@dataclass
class _Run:
    """What a run is made of, settled before its store opens (:func:`_prepare`)."""

    config: StudyConfig
    build_root: Path
    out: Path                               # the study folder
    plan: list[PlanEntry]
    fingerprint: str
    models: dict[str, ModelSettings]        # each model's settings, its in-flight cap shared out
    agents: list[str]
    execute: Executor
    prepare: Callable[[list[PlanEntry]], None] | None   # fills the caches forked workers inherit
    checked: bool                           # a caller's executor: it checks its own endpoints
    live_dir: Path | None
    replay: Path | None
    local: bool                             # this machine's processes, shaped to fit it
    workers: int
    inflight: int
    shape: str
    workers_note: str | None


def _prepare(config: StudyConfig, execute: Executor | None, *, out_dir: str | Path | None,
             build_root: str | Path | None, workers: int | str | None, concurrency: int | None,
             replay: str | Path | None, live: bool, local: bool) -> _Run:
    """Stage 1: the workers' shape, the models' settings, the study folder, the executor and the plan; a
    replay of the store this run writes, an unknown agent or backend, or a build the config is not
    pinned to is refused before any store is touched."""
    root = Path(build_root) if build_root is not None else BUILD
    n_workers, workers_note = worker_count(config, workers)
    n_inflight = max(1, int(concurrency if concurrency is not None else config.concurrency))
    n_workers, n_inflight, shape = fit(n_workers, n_inflight) if local else (n_workers, n_inflight, "")
    models = {m: shared_out(config.llm_settings(m), n_workers) for m in config.models}
    out = Path(out_dir) if out_dir is not None else study_dir(config, root)
    replayed = None
    if replay is not None:
        replayed = replay_store(replay)
        if replayed.resolve() == (out / STORE_NAME).resolve():
            raise StoreError(f"--replay {replayed} is the store this run writes; write the replay to another --out")
    agents = sorted({config.agents.get(c, c) for c in config.all_configurations()})
    prepare: Callable[[list[PlanEntry]], None] | None = None
    checked = execute is not None
    live_dir = out / LIVE_DIR if live and execute is None else None
    if execute is None:
        check_parts(agents, config.backend)
        execute = functools.partial(execute_episode, build_root=root, backend=config.backend, models=models,
                                    replay=replayed, live=None if live_dir is None else live_dir.resolve())
        prepare = functools.partial(warm, build_root=root, backend=config.backend)
    plan = build_plan(config)
    fingerprint = build_fingerprint(root)
    if config.build_fingerprint and config.build_fingerprint != fingerprint:
        raise StoreError(
            f"study config {config.name!r} is pinned to build {config.build_fingerprint}, "
            f"but the current build is {fingerprint}; rebuild that build or update the pin"
        )
    return _Run(config, root, out, plan, fingerprint, models, agents, execute, prepare, checked, live_dir, replayed,
                local, n_workers, n_inflight, shape, workers_note)


def _bind(store: Store, run: _Run, resume: bool, warn: Callable[[str], None]) -> Adaptations:
    """Stage 2: the store bound to this study, build, plan and sampling (a store with results needs
    ``resume``), then each model's preflight, whose adaptations the store keeps."""
    have = store.count()
    if have and not resume:
        raise StoreError(
            f"{store.path} already holds {have} finished episodes; pass --resume to continue this study "
            f"or remove {run.out} to start over"
        )
    if have == 0:
        store.clear_meta()  # an empty store may be re-bound to this build and plan
    config = run.config
    store.bind(study=config.name, config_json=config.to_json(), plan_digest=plan_digest(run.plan),
               fingerprint=run.fingerprint, sampling=sampling(run.agents, run.models))
    adaptations = Adaptations(store.meta(), store.set_meta, warn)
    if not run.checked:       # after the store accepted the settings: no request goes out with refused ones
        probed = [] if run.replay is not None else config.models
        for model, adjusted in preflight_models(run.agents, probed, run.models,
                                                _probes(run.plan, probed, run.build_root)).items():
            adaptations.note(model, adjusted)
    return adaptations


@dataclass
class _Results:
    """Stage 3's other half: what the scheduler hands back, stored a batch at a time in the calling
    process (the store's only writer), with the tally, the summary and the live logs kept up."""

    summary: RunSummary
    tally: Tally
    todo: list[PlanEntry]
    batch: Batch
    stored: set[str]                        # ids in the store or in the batch: a second report is ignored
    adaptations: Adaptations
    report: OnProgress
    live_dir: Path | None
    max_attempts: int
    waiting: list[str] = field(default_factory=list)      # stored episodes whose batch is not committed yet
    committed: collections.deque[tuple[float, str]] = field(default_factory=collections.deque)  # logs to remove

    @classmethod
    def start(cls, store: Store, run: _Run, adaptations: Adaptations, limit: int | None, max_attempts: int,
              report: OnProgress) -> "_Results":
        """The episodes still to run (at most ``limit``) and the tally of what the store holds."""
        done_ids = store.finished_ids()
        todo = [e for e in run.plan if e.episode_id not in done_ids]
        if limit is not None:
            todo = todo[: max(0, int(limit))]
        summary = RunSummary(planned=len(run.plan), already_done=len(done_ids & {e.episode_id for e in run.plan}),
                             scheduled=len(todo), store_path=store.path)
        ssum, nsucc, summary.cost_usd = store.totals()
        summary.cost_limit = run.config.max_cost_usd
        tally = Tally(len(run.plan), summary.already_done, summary.already_done, ssum, nsucc, summary.cost_usd,
                      summary.cost_limit, store.unpriced())
        if run.live_dir is not None:
            clear_live(run.live_dir)
        return cls(summary, tally, todo, Batch(store), done_ids, adaptations, report, run.live_dir, max_attempts)

    def handle(self, result: AttemptResult) -> None:
        """One episode's attempts: a finished one stored (the cost limit checked), the rest noted."""
        summary, batch, eid = self.summary, self.batch, result.episode_id
        for fault in result.faults:
            batch.fault(eid, *fault)
            summary.infrastructure_faults += 1
        if result.status is Status.OK and result.row is not None:
            if eid in self.stored:
                return
            self.stored.add(eid)
            row = result.row
            if row.get("adaptations"):
                self.adaptations.note(row["model"], _decoded(row["adaptations"]))
            batch.episode(row)
            if self.live_dir is not None:
                self.retire(self.live_dir, eid)
            summary.cost_usd += float(row["cost_usd"] or 0.0)
            self.tally.add(float(row["score"]), bool(row["success"]), float(row["cost_usd"] or 0.0),
                           bool(row.get("priced", 1)))
            self.report(self.tally)
            if summary.cost_limit is not None and summary.cost_usd >= summary.cost_limit:
                raise _CostLimit()
        elif result.status is Status.FATAL:
            raise BackendUnavailable(result.message)
        elif result.status is Status.FAULT:
            summary.gave_up.append(eid)
        elif result.status is Status.AGENT:
            known = summary.agent_errors.setdefault(result.configuration, [result.message, 0])
            known[1] += 1
            if known[1] == 1:
                batch.fault(eid, result.attempts, "agent", result.message)
        else:
            summary.errors[eid] = result.message or "error"
            batch.fault(eid, result.attempts, "error", summary.errors[eid])

    def lost(self, eid: str, attempt: int, reason: str) -> bool:
        """A worker lost mid-episode: a fault; run it again unless that was its last attempt."""
        self.batch.fault(eid, attempt, "infrastructure", reason)
        self.summary.infrastructure_faults += 1
        if attempt >= self.max_attempts:
            self.summary.gave_up.append(eid)
            return False
        return True

    def retire(self, folder: Path, eid: str) -> None:
        """An episode's live log goes :data:`LIVE_KEEP_S` after its batch is committed (a page that
        follows it reads its last actions and path from it meanwhile)."""
        self.waiting.append(eid)
        now = time.monotonic()
        if not self.batch.rows:
            self.committed.extend((now, e) for e in self.waiting)
            self.waiting.clear()
        old = []
        while self.committed and now - self.committed[0][0] > LIVE_KEEP_S:
            old.append(self.committed.popleft()[1])
        discard(folder, old)


def _schedule(run: _Run, chosen: Scheduler, results: _Results, stop: StopOnSignals, max_attempts: int) -> None:
    """Stage 3: the episodes still to run, on ``chosen``; the cost limit and a signal end it cleanly
    (whole episodes only: the rest runs on ``--resume``), noted in the summary."""

    def guarded(f: Callable) -> Callable:
        """``f`` run whole: a signal arriving meanwhile is raised when it returns."""
        def call(*args: object) -> object:
            stop.check()
            with stop.critical():
                return f(*args)
        return call

    summary, todo = results.summary, results.todo
    try:
        if summary.cost_limit is not None and summary.cost_usd >= summary.cost_limit and todo:
            raise _CostLimit()
        if run.prepare is not None and chosen.forks and len(todo) > 1:
            run.prepare(todo)           # the forked workers inherit what it made
        chosen.run(todo, functools.partial(attempt, run.execute, max_attempts=max_attempts), guarded(results.handle),
                   guarded(results.lost))
    except _CostLimit:
        summary.stopped_by_cost = True
    except Interrupted as exc:
        summary.interrupted = exc


def _finish(store: Store, run: _Run, chosen: Scheduler, results: _Results, stop: StopOnSignals,
            t_start: float) -> RunSummary:
    """Stage 4: however the run stopped, what finished is stored; the summary counts the store."""
    summary = results.summary
    with stop.critical(raise_after=False):      # a signal from here on only marks the run interrupted
        results.batch.flush()
        if run.live_dir is not None:
            shutil.rmtree(run.live_dir, ignore_errors=True)
        summary.finished = results.batch.inserted
        _, _, summary.cost_usd = store.totals()
        _note_cost_stop(store, summary)
        summary.scheduler = chosen.info or run.shape
        summary.stored = len(store.finished_ids() & {e.episode_id for e in run.plan})
        summary.elapsed_s = time.monotonic() - t_start
    if summary.interrupted is None and stop.signum is not None:
        summary.interrupted = Interrupted(stop.signum)
    return summary
