"""What runs on Ray workers for :class:`mcbuild.runtime.study.run.schedulers.ray.RayScheduler` (plain Python:
``ray.remote`` is applied by the scheduler, so this module imports without Ray).

Every unit of work first checks that the worker sees the study's build (``build_fingerprint``) at
the study's build path, and refuses to run anything on another build: it answers with a ``FATAL``
:class:`~mcbuild.runtime.study.run.attempt.AttemptResult`, which stops the study in the coordinator.
Every answer is such a result; the coordinator alone writes the store.
"""
from __future__ import annotations

import gc
import os
import socket
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from mcbuild.runtime.study.design.plan import PlanEntry
from mcbuild.runtime.study.run.attempt import AttemptResult, Status
from mcbuild.runtime.study.run.schedulers.local import WORKER_GC_THRESHOLD, Attempt, Task
from mcbuild.runtime.study.store.results import build_fingerprint


def use_env(env: Mapping[str, str]) -> None:
    """Give this worker the coordinator's values of the study's environment variables (``study_env``;
    "" unsets one): a worker node's own values are never used."""
    for name, value in env.items():
        if value:
            os.environ[name] = value
        else:
            os.environ.pop(name, None)


def build_problem(build_root: str, expected: str) -> str | None:
    """Why this process must not run episodes of a study on build ``expected`` (None: it may)."""
    seen = build_fingerprint(Path(build_root))
    if seen == expected:
        return None
    return (f"ray worker on {socket.gethostname()} sees build {seen} at {build_root}, not the study's {expected}: "
            f"every node needs the same build/ at that path (see docs/distributed.md)")


def node_problem(build_root: str, expected: str, backend: str, env: Mapping[str, str]) -> str | None:
    """Why this node must not run the study's episodes: another build (``build_problem``) or, for the
    server backend, a server set-up that cannot start here (jar, EULA, Java; from the study's
    environment variables ``env``, which the scheduler ships). None: it may."""
    use_env(env)
    problem = build_problem(build_root, expected)
    if problem is None and backend == "server":
        from mcbuild.runtime.backends.server.config import ServerConfig
        from mcbuild.runtime.errors import BackendUnavailable

        try:
            ServerConfig.resolve()
        except BackendUnavailable as exc:
            return f"the server backend cannot start on {socket.gethostname()}: {exc}"
    return problem


def refusal(item: Task, problem: str) -> AttemptResult:
    """The ``FATAL`` result that stops the study on a build mismatch."""
    entry, done = item
    return AttemptResult(Status.FATAL, entry.episode_id, done, message=problem)


def run_items(attempt: Attempt, items: Sequence[Task], build_root: str, fingerprint: str,
              env: Mapping[str, str]) -> Iterator[AttemptResult]:
    """A Ray streaming task: one attempt result per item, in order, as each finishes (so the
    coordinator stores finished episodes at once and knows which one was in flight if the worker
    dies). Each result costs the coordinator a ``ray.wait`` and a ``ray.get`` (docs/distributed.md
    measures it); yielding a few finished episodes at a time would cost less, at the price of
    rerunning finished-but-unreported ones when a worker dies. ``env``: the study's environment (``use_env``)."""
    use_env(env)
    problem = build_problem(build_root, fingerprint)
    if problem is not None:
        yield refusal(items[0], problem)
        return
    gc.set_threshold(WORKER_GC_THRESHOLD)
    for entry, done in items:
        yield attempt(entry, done)


class EpisodeActor:
    """Owns one backend factory (for the server backend: one server) and runs one episode at a time.

    The factory is the process's (``mcbuild.runtime.backends.registry.factory``), made once when the
    actor starts and reused by every episode the actor runs: each episode opens a backend reset to
    its seed. After an episode the actor pre-warms the save of the next one in a background thread
    when the factory offers ``prewarm(save)``; the next episode waits for it, so the factory is
    never used by two threads at once.
    """

    def __init__(self, backend: str, build_root: str, fingerprint: str, env: Mapping[str, str]):
        from mcbuild.runtime.backends.registry import factory

        use_env(env)
        self.build_root, self.fingerprint = build_root, fingerprint
        self.problem = build_problem(build_root, fingerprint)
        self.factory = None if self.problem else factory(backend)
        self.warming: threading.Thread | None = None
        self.episodes = 0
        gc.set_threshold(WORKER_GC_THRESHOLD)

    def run(self, attempt: Attempt, item: Task, next_entry: PlanEntry | None) -> AttemptResult:
        """The attempt result of ``item``; then pre-warm ``next_entry``'s save."""
        if self.warming is not None:
            self.warming.join()
            self.warming = None
        problem = self.problem or build_problem(self.build_root, self.fingerprint)
        if problem is not None:
            return refusal(item, problem)
        result = attempt(*item)
        self.episodes += 1
        warm = getattr(self.factory, "prewarm", None)
        if next_entry is not None and callable(warm):
            self.warming = threading.Thread(target=_prewarm, args=(warm, self.build_root, next_entry), daemon=True)
            self.warming.start()
        return result

    def stats(self) -> dict[str, Any]:
        """Episodes run and the identity of the factory (tests: one factory per actor)."""
        return {"episodes": self.episodes, "factory": id(self.factory)}


def _prewarm(warm: Callable[[Path], None], build_root: str, entry: PlanEntry) -> None:
    from mcbuild.compiler.worlds.layout import world_dir

    try:
        warm(world_dir(entry.world, entry.condition, Path(build_root)))
    except Exception:  # noqa: BLE001 - a failed pre-warm only costs the next episode its head start
        pass
