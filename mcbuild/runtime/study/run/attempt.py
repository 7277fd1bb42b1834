"""One episode's attempts and what they hand back to the runner: an :class:`AttemptResult`.

:func:`attempt` runs one planned episode where a scheduler put it (this process, a forked worker, a
Ray task or actor), rerunning :class:`~mcbuild.runtime.errors.InfrastructureFault` under the same id
and seed, and returns one frozen, picklable :class:`AttemptResult`: every scheduler hands it to the
runner's ``on_result`` as it is. A finished episode's result carries its store row
(``episode_row``), built where the episode ran.
"""
from __future__ import annotations

import enum
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Mapping, NamedTuple

from mcbuild.runtime.errors import AgentError, BackendUnavailable, InfrastructureFault
from mcbuild.runtime.records import EpisodeRecord
from mcbuild.runtime.study.design.plan import PlanEntry
from mcbuild.runtime.study.outcome import EpisodeOutcome, stored_fields
from mcbuild.runtime.study.store.results import episode_row

__all__ = ["AttemptResult", "Fault", "Status", "attempt"]

Executor = Callable[[PlanEntry], EpisodeOutcome]


class Status(enum.Enum):
    """How an episode's attempts ended."""

    OK = "ok"               # finished: ``row`` is its store row
    ERROR = "error"         # the executor raised something else, or its outcome makes no valid record: not stored
    FATAL = "fatal"         # the backend (or the node's build) cannot run episodes: the study stops
    FAULT = "fault"         # infrastructure faults in every allowed attempt: rerun on --resume
    AGENT = "agent"         # the configuration's agent cannot be built: the same for all its episodes


class Fault(NamedTuple):
    """One attempt lost to the machinery, as the store's ``faults`` table logs it."""

    attempt: int
    kind: str
    message: str


@dataclass(frozen=True)
class AttemptResult:
    """What a scheduler hands the runner for one episode (it crosses processes pickled)."""

    status: Status
    episode_id: str
    attempts: int                             # attempts made, the earlier runs' included
    faults: tuple[Fault, ...] = ()            # infrastructure faults met on the way
    row: Mapping[str, Any] | None = None      # OK: the episode as the store's row
    message: str = ""                         # ERROR, FATAL, AGENT: what went wrong
    configuration: str = ""                   # AGENT: whose agent


def attempt(execute: Executor, entry: PlanEntry, done_attempts: int, *, max_attempts: int) -> AttemptResult:
    """Run ``entry`` after ``done_attempts`` earlier attempts, rerunning infrastructure faults up to
    ``max_attempts`` in all. A finished episode's outcome must make a valid record."""
    faults: list[Fault] = []
    n = done_attempts
    t0 = time.monotonic()

    def result(status: Status, **kw: Any) -> AttemptResult:
        return AttemptResult(status, entry.episode_id, n, tuple(faults), **kw)

    while True:
        n += 1
        try:
            outcome = execute(entry)
            if not isinstance(outcome, EpisodeOutcome):
                raise TypeError(f"executor returned {type(outcome).__name__}, not an EpisodeOutcome")
            try:
                planned = entry.to_dict()       # the row is the plan's fields and the outcome's
                EpisodeRecord.from_dict(stored_fields(planned, outcome))
                row = episode_row(planned, outcome, attempts=n, wall_s=time.monotonic() - t0)
            except (KeyError, TypeError, ValueError) as exc:
                return result(Status.ERROR, message=f"malformed outcome: {type(exc).__name__}: {exc}")
            return result(Status.OK, row=row)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BackendUnavailable as exc:
            return result(Status.FATAL, message=str(exc))
        except AgentError as exc:       # the same for every episode of its configuration: never rerun
            return result(Status.AGENT, configuration=entry.configuration, message=str(exc))
        except BaseException as exc:  # noqa: BLE001 - classified below
            if isinstance(exc, InfrastructureFault):
                faults.append(Fault(n, "infrastructure", f"{type(exc).__name__}: {exc}"))
                if n >= max_attempts:
                    return result(Status.FAULT)
                continue
            return result(Status.ERROR, message="".join(traceback.format_exception(exc)))
