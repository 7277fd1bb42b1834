"""Ends the processes of a private Ray instance when the coordinator that started it is gone.

Ray ties its GCS and raylet to the process that started them (Linux's parent-death signal), but
the raylet's agents (``ray::DashboardAgent``, ``ray::RuntimeEnvAgent``) outlive a SIGKILLed
coordinator by a minute or more while they try to report to the dead GCS. The coordinator
starts this file as its own process (own session, so Ctrl-C does not reach it) with the pids and
start times of the processes ``ray.init`` made, and keeps its stdin open. Every second the watchdog
notes their new descendants (workers, agents); when stdin closes (the coordinator exited, however
it ended) it kills whichever of them still run. It reads ``/proc`` (Linux, where Ray runs private instances) and imports
only the standard library, so it starts in a few milliseconds.
"""
from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["Watchdog", "descendants"]

POLL_S = 1.0                        # how often the watchdog notes the processes the instance started since
Processes = dict[int, str]          # pid -> its start time (clock ticks after boot, from /proc/PID/stat)


def _started(pid: int) -> str | None:
    """The start time of a live (not zombie) process, None if there is none."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return None if len(fields) < 20 or fields[0] in ("Z", "X") else fields[19]


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            out += [int(x) for x in (task / "children").read_text().split()]
    except OSError:
        pass
    return out


def descendants(pid: int | None = None) -> Processes:
    """Every live descendant of ``pid`` (default: this process) with its start time."""
    found: Processes = {}
    todo = _children(os.getpid() if pid is None else pid)
    while todo:
        child = todo.pop()
        started = _started(child)
        if started is not None and child not in found:
            found[child] = started
            todo += _children(child)
    return found


class Watchdog:
    """The watchdog process of a private instance; ``close()`` once the instance is shut down."""

    def __init__(self, processes: Processes):
        args = [f"{pid}:{t}" for pid, t in sorted(processes.items())]
        self.proc = subprocess.Popen([sys.executable, "-I", __file__, *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def close(self) -> None:
        """Let the watchdog end what ``ray.shutdown()`` left, and wait for it."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _note_children(known: Processes) -> None:
    """Add the descendants of every process in ``known`` that still runs (as the same process: a
    reused pid has another start time)."""
    for pid, started in list(known.items()):
        if _started(pid) == started:
            known.update(descendants(pid))


def main(argv: list[str]) -> None:
    known: Processes = {int(pid): t for pid, t in (a.split(":", 1) for a in argv)}
    while not select.select([sys.stdin], [], [], POLL_S)[0] or os.read(sys.stdin.fileno(), 4096):
        _note_children(known)                        # workers and agents the raylet started since
    _note_children(known)                            # stdin closed: the coordinator exited or died
    for pid, started in known.items():
        if _started(pid) == started:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_started(p) == t for p, t in known.items()):
        time.sleep(0.1)


if __name__ == "__main__":
    main(sys.argv[1:])
