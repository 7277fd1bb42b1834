"""A :class:`~mcbuild.runtime.study.run.schedulers.local.Scheduler` on a Ray cluster (``pip install 'mcbuild[ray]'``).

The coordinating process (the study runner) keeps its role: it alone writes the store, calls
``on_result`` for every finished attempt and ``on_lost`` for an episode whose worker, actor or
node was lost (rerun under the same id when it answers True). Three lanes:

* **batch**: scripted episodes on the simulator, ``batch`` (about 50) per Ray task so Ray's
  per-task overhead (about 10 ms) does not dominate. A task streams one message per episode, so
  each episode is stored as soon as it finishes, and a dead worker loses only the episode it was
  running; the rest of its batch is scheduled again without counting an attempt.
* **llm**: LLM episodes, one per task at 1/``LLM_PER_CPU`` of a CPU each (they wait on the model
  endpoint), at most ``llm_in_flight`` in flight over the cluster.
* **actor**: server-backend episodes in actors that need ``resources={"mc_server": 1}``; each
  owns one backend factory (one server) for its life, runs one episode at a time and pre-warms
  the next one's save (:class:`~mcbuild.runtime.study.run.schedulers.ray_tasks.EpisodeActor`).

Before any episode one task on every node that can take the study's work checks that the node
sees the study's build; every task and actor checks it again before running anything (see
``ray_tasks``). The environment variables the study reads (:func:`study_env`) travel with every
task and actor as an object (never in a ``runtime_env``, which Ray logs); settings travel in the
pickled ``attempt``. A private
instance is always a new one, watched by ``ray_watchdog``.
"""
from __future__ import annotations

import math
import os
import sys
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from mcbuild.runtime.errors import BackendUnavailable
from mcbuild.runtime.study.design.plan import PlanEntry
from mcbuild.runtime.study.run.schedulers import ray_tasks
from mcbuild.runtime.study.run.schedulers.local import Attempt, OnLost, OnResult, Scheduler, Task
from mcbuild.runtime.study.store.results import build_fingerprint

if TYPE_CHECKING:
    from mcbuild.runtime.study.run.schedulers.ray_watchdog import Watchdog

__all__ = ["RayScheduler", "BATCH", "LLM_IN_FLIGHT", "LLM_PER_CPU", "default_lane", "study_env"]

BATCH = 50               # simulator episodes per Ray task
LLM_IN_FLIGHT = 32       # LLM episodes in flight over the cluster
LLM_PER_CPU = 8          # LLM episodes per CPU of a node
WAIT_S = 0.5             # longest wait for a result before the lanes are refilled
PROBE_S = 300.0          # longest wait for a node's build check (a new worker imports the project first)
LOOPBACK = ("127.0.0.1", "localhost", "::1")

Lane = Callable[[PlanEntry], str]       # plan entry -> "batch" | "llm" | "actor"


def default_lane(backend: str) -> Lane:
    """Server-backend episodes go to actors, LLM configurations to the llm lane, the rest to batches."""
    from mcbuild.runtime.agents.llm import CONFIGURATIONS

    def lane(entry: PlanEntry) -> str:
        if backend == "server":
            return "actor"
        return "llm" if (entry.agent or entry.configuration) in CONFIGURATIONS else "batch"

    return lane


def study_env(config: Any) -> tuple[str, ...]:
    """The environment variables the episodes of study ``config`` read: every model's key, the
    client's ``OPENAI_*`` settings and the server backend's settings (the CLI's ``--server-jar``,
    ``--accept-eula``, ... are exported as these). The coordinator's values reach every task and
    actor (``ray_tasks.use_env``); a worker node's own values are never used."""
    from mcbuild.compiler.core.vanilla import JAVA_ENV
    from mcbuild.llm.client import environment

    names = [name for m in config.models for name in environment(config.llm_settings(m))]
    if config.backend == "server":
        from mcbuild.runtime.backends.server.config import BRIDGE_ENV, EULA_ENV, JAR_ENV, UNVERIFIED_ENV
        from mcbuild.runtime.backends.server.factory import PRESTART_ENV

        names += [JAR_ENV, EULA_ENV, UNVERIFIED_ENV, PRESTART_ENV, BRIDGE_ENV, JAVA_ENV]
    return tuple(dict.fromkeys(names))


def import_ray(address: str | None) -> Any:
    """Ray, or a :class:`BackendUnavailable` saying how to install it. A private instance (no
    address) or a loopback address binds Ray to 127.0.0.1 (else Ray picks a routable address)."""
    host = (address or "").rpartition(":")[0] or address
    if "ray" not in sys.modules and (address is None or host in LOOPBACK):
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError:
        raise BackendUnavailable("the ray scheduler needs Ray: pip install 'mcbuild[ray]'") from None
    return ray


def _one_line(exc: BaseException) -> str:
    lines = [x.strip() for x in str(exc).strip().splitlines() if x.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"


@dataclass
class _Task:
    lane: str
    items: deque[Task]                       # not yet reported, in the order the task runs them
    actor: Any = None
    reserved: Task | None = None             # an actor's next episode (pre-warmed)


@dataclass
class RayScheduler(Scheduler):
    """Episodes on the Ray cluster at ``address`` (None: a private instance on this machine with
    ``num_cpus`` CPUs and ``local_servers`` ``mc_server`` slots). ``build_root`` must hold the same
    build on every node; ``lane`` overrides which lane an entry takes. The variables named in ``env``
    (:func:`study_env`) are set on every worker to this process's values ("" when unset here)."""

    build_root: str | Path
    backend: str = "sim"
    address: str | None = None
    batch: int = BATCH
    llm_in_flight: int = LLM_IN_FLIGHT
    num_cpus: int | None = None
    local_servers: int = 1
    lane: Lane | None = None
    env: Sequence[str] = ()
    info: str = field(default="", init=False)

    def __post_init__(self) -> None:
        if self.batch < 1 or self.llm_in_flight < 1:
            raise ValueError("batch and llm_in_flight must be at least 1")
        self.fingerprint = build_fingerprint(Path(self.build_root))

    @property
    def forks(self) -> bool:
        """Ray starts its own workers: none inherits this process's caches."""
        return False

    def run(self, entries: Sequence[PlanEntry], attempt: Attempt, on_result: OnResult, on_lost: OnLost) -> None:
        if not entries:
            return
        ray = import_ray(self.address)
        owned = not ray.is_initialized()
        watchdog = self._connect(ray) if owned else None
        try:
            _Run(ray, self, attempt, on_result, on_lost).run(entries)
        finally:
            if owned:
                ray.shutdown()
            if watchdog is not None:
                watchdog.close()

    def _connect(self, ray: Any) -> Watchdog | None:
        """Join the cluster at ``address``, or start a private instance (always a new one: never a
        cluster that ``RAY_ADDRESS`` or Ray's ``ray_current_cluster`` file names) watched by a
        :class:`Watchdog` that ends its processes if this process dies without shutting it down."""
        from mcbuild.runtime.study.run.schedulers.ray_watchdog import Watchdog, descendants

        quiet = dict(log_to_driver=False, logging_level="warning")
        try:
            if self.address:
                ray.init(address=self.address, **quiet)
                return None
            before = descendants()
            ray.init(address="local", num_cpus=self.num_cpus, include_dashboard=False,
                     resources={"mc_server": self.local_servers}, **quiet)
        except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception when a node does not start in time
            where = f"the ray cluster at {self.address}" if self.address else "a local ray instance"
            raise BackendUnavailable(f"cannot start or reach {where}: {_one_line(exc)}") from None
        return Watchdog({p: t for p, t in descendants().items() if before.get(p) != t})


class _Run:
    """One ``run`` call: the lanes' queues, the tasks in flight and the idle actors."""

    def __init__(self, ray: Any, s: RayScheduler, attempt: Attempt, on_result: OnResult, on_lost: OnLost):
        self.ray, self.s, self.on_result, self.on_lost = ray, s, on_result, on_lost
        self.attempt = ray.put(attempt)
        self.root = str(s.build_root)
        self.queues: dict[str, deque[Task]] = {"batch": deque(), "llm": deque(), "actor": deque()}
        self.tasks: dict[Any, _Task] = {}       # ObjectRefGenerator (batch, llm) or ObjectRef (actor) -> task
        self.idle: list[tuple[Any, Task | None]] = []     # (actor, its reserved next episode)
        self.actors: list[Any] = []
        res = ray.cluster_resources()
        self.cpus = max(1, int(res.get("CPU", 1)))
        self.servers = int(res.get("mc_server", 0))
        # the study's environment travels with every task as an object, never in a runtime_env: Ray's
        # runtime-env agent writes a runtime_env's variables, API keys included, into its log
        self.env = ray.put({name: os.environ.get(name, "") for name in s.env})
        self.batch_fn = ray.remote(num_cpus=1, max_retries=0)(ray_tasks.run_items)
        self.llm_fn = ray.remote(num_cpus=1 / LLM_PER_CPU, max_retries=0)(ray_tasks.run_items)
        self.actor_cls = ray.remote(ray_tasks.EpisodeActor).options(
            num_cpus=0, resources={"mc_server": 1}, max_restarts=0, max_task_retries=0)
        self.probe_fn = ray.remote(num_cpus=0, max_retries=0)(ray_tasks.node_problem)

    # ------------------------------------------------------------- main loop
    def run(self, entries: Sequence[PlanEntry]) -> None:
        lane = self.s.lane or default_lane(self.s.backend)
        for e in entries:
            self.queues[lane(e)].append((e, 0))
        n = {k: len(q) for k, q in self.queues.items()}
        if n["actor"] and not self.servers:
            raise BackendUnavailable("the ray cluster offers no mc_server resource for server-backend episodes; "
                                     "start its nodes with --resources='{\"mc_server\": N}'")
        self.size = min(self.s.batch, max(1, math.ceil(n["batch"] / (2 * self.cpus))))
        nodes = sum(1 for x in self.ray.nodes() if x.get("Alive"))
        self.s.info = (f"ray cluster: {nodes} node{'s' * (nodes != 1)}, {self.cpus} CPUs, {self.servers} mc_server; "
                       f"{n['batch']} batched ({self.size} per task), {n['llm']} llm, {n['actor']} in actors")
        self.check_nodes([r for r, k in (("CPU", n["batch"] + n["llm"]), ("mc_server", n["actor"])) if k])
        for _ in range(min(n["actor"], self.servers)):
            self.spawn_actor()
        try:
            while self.tasks or any(self.queues.values()) or any(r for _, r in self.idle):
                self.fill()
                handles = list(self.tasks)
                ready, _ = self.ray.wait(handles, num_returns=1, timeout=WAIT_S)
                if ready and len(handles) > 1:      # everything else that is ready too, without waiting
                    ready, _ = self.ray.wait(handles, num_returns=len(handles), timeout=0)
                for handle in ready:
                    self.collect(handle)
        finally:
            self.stop()

    def check_nodes(self, needs: Sequence[str]) -> None:
        """Before any episode: every node offering a resource in ``needs`` sees the study's build at
        its path, runs the project's code and, for server-backend episodes, can start a server; else
        one line naming the first node that cannot (``ray_tasks.node_problem``)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = [x for x in self.ray.nodes() if x.get("Alive") and any(x.get("Resources", {}).get(r) for r in needs)]
        probes = [(x, self.probe_fn.options(scheduling_strategy=NodeAffinitySchedulingStrategy(x["NodeID"], soft=False))
                   .remote(self.root, self.s.fingerprint, self.s.backend if "mc_server" in needs else "", self.env))
                  for x in nodes]
        for x, ref in probes:
            where = f"ray node {x.get('NodeManagerAddress')} (node id {x['NodeID'][:12]})"
            try:
                problem = self.ray.get(ref, timeout=PROBE_S)
            except self.ray.exceptions.RayTaskError as exc:
                raise BackendUnavailable(f"{where} cannot run the study's code: {_one_line(exc.cause or exc)}") from None
            except self.ray.exceptions.GetTimeoutError:
                raise BackendUnavailable(f"{where} did not check the build within {PROBE_S:g} s") from None
            except self.ray.exceptions.RayError as exc:
                raise BackendUnavailable(f"{where} was lost while checking the build: {_one_line(exc)}") from None
            if problem is not None:
                raise BackendUnavailable(f"{where}: {problem}")

    def fill(self) -> None:
        q = self.queues
        lanes = [t.lane for t in self.tasks.values()]
        for _ in range(2 * self.cpus - lanes.count("batch")):
            if not q["batch"]:
                break
            chunk = [q["batch"].popleft() for _ in range(min(self.size, len(q["batch"])))]
            self.submit(self.batch_fn, "batch", chunk)
        for _ in range(self.s.llm_in_flight - lanes.count("llm")):
            if not q["llm"]:
                break
            self.submit(self.llm_fn, "llm", [q["llm"].popleft()])
        waiting: list[tuple[Any, Task | None]] = []
        for actor, item in self.idle:
            item = item or (q["actor"].popleft() if q["actor"] else None)
            if item is None:
                waiting.append((actor, None))
                continue
            nxt = q["actor"].popleft() if q["actor"] else None
            ref = actor.run.remote(self.attempt, item, nxt[0] if nxt else None)
            self.tasks[ref] = _Task("actor", deque([item]), actor, nxt)
        self.idle = waiting

    def submit(self, fn: Any, lane: str, items: list[Task]) -> None:
        self.tasks[fn.remote(self.attempt, items, self.root, self.s.fingerprint, self.env)] = _Task(lane, deque(items))

    def spawn_actor(self) -> None:
        actor = self.actor_cls.remote(self.s.backend, self.root, self.s.fingerprint, self.env)
        self.actors.append(actor)
        self.idle.append((actor, None))

    # -------------------------------------------------------------- results
    def collect(self, handle: Any) -> None:
        task = self.tasks[handle]
        if task.lane == "actor":
            ref = handle
        else:
            try:
                ref = next(handle)
            except StopIteration:
                del self.tasks[handle]
                self.requeue(task.lane, task.items)
                return
        try:
            result = self.ray.get(ref)
        except self.ray.exceptions.RayTaskError as exc:
            raise BackendUnavailable(f"a ray task failed on the cluster: {_one_line(exc.cause or exc)}") from None
        except self.ray.exceptions.RayError as exc:
            del self.tasks[handle]
            self.lost(task, f"ray {'actor' if task.actor else 'worker'} lost mid-episode ({_one_line(exc)})")
            return
        item = task.items.popleft()
        if result.episode_id != item[0].episode_id:
            raise BackendUnavailable(f"ray worker answered for episode {result.episode_id} instead of {item[0].episode_id}")
        if task.actor is not None:
            del self.tasks[handle]
            self.idle.append((task.actor, task.reserved))
        self.on_result(result)

    def lost(self, task: _Task, reason: str) -> None:
        """The task's first unreported episode was running: a fault; the others never started."""
        if task.reserved is not None:
            task.items.append(task.reserved)
        if not task.items:
            return
        (entry, done), rest = task.items[0], list(task.items)[1:]
        self.requeue("actor" if task.actor else task.lane, rest)
        if self.on_lost(entry.episode_id, done + 1, reason):
            self.queues["actor" if task.actor else task.lane].appendleft((entry, done + 1))
        if task.actor is not None:
            self.actors.remove(task.actor)
            if self.queues["actor"]:
                self.spawn_actor()

    def requeue(self, lane: str, items: Sequence[Task]) -> None:
        for item in reversed(list(items)):
            self.queues[lane].appendleft(item)

    def stop(self) -> None:
        for handle, task in self.tasks.items():
            if task.actor is None:
                try:
                    self.ray.cancel(handle, force=True)
                except Exception:  # noqa: BLE001 - already finished or gone
                    pass
        for actor in self.actors:
            try:
                self.ray.kill(actor)
            except Exception:  # noqa: BLE001
                pass
