"""How many worker processes fit this machine: the CPUs this process may use, less the ones other work
keeps busy.

``usable()`` counts the CPUs of this process's affinity mask, capped by its cgroup's CPU quota (v2
``cpu.max``, v1 ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``, the tightest of the cgroup and its
ancestors; a quota of 1.5 CPUs allows 1). ``auto_workers()`` starts from that and leaves out the CPUs the
1-minute load average says are busy at the start (the load is machine-wide, so it is scaled to this
process's share of the online CPUs), never fewer than 1; its ``Choice`` says how many and why. On a
2-core machine with one core taken, 2 workers were slower than 1 (issue 40).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class Choice:
    """A worker count and the reason it was chosen."""

    workers: int
    reason: str

    def line(self) -> str:
        return f"workers: {self.workers} ({self.reason})"


def affinity() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _quota_at(folder: Path) -> float | None:
    """The CPU quota (in CPUs) set on one cgroup folder, or None when it sets none."""
    try:
        if (folder / "cpu.max").is_file():                              # cgroup v2: "max 100000" or "150000 100000"
            limit, period = (folder / "cpu.max").read_text().split()[:2]
            return None if limit == "max" else int(limit) / int(period)
        if (folder / "cpu.cfs_quota_us").is_file():                     # cgroup v1
            micros = int((folder / "cpu.cfs_quota_us").read_text())
            return None if micros <= 0 else micros / int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return None


def quota(proc_cgroup: Path = Path("/proc/self/cgroup"), root: Path = CGROUP_ROOT) -> float | None:
    """The tightest CPU quota (in CPUs) of this process's cgroup and its ancestors, or None."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return None
    found: list[float] = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        names = controllers.split(",")
        mount: Path | None = None
        if controllers == "":
            mount = root                                                # the v2 hierarchy
        elif "cpu" in names:
            mount = next((m for m in (root / controllers, root / "cpu", root / "cpu,cpuacct") if m.is_dir()), None)
        if mount is None:
            continue
        folder = mount / path.lstrip("/")
        while True:
            q = _quota_at(folder)
            if q is not None:
                found.append(q)
            if folder == mount or mount not in folder.parents:
                break
            folder = folder.parent
    return min(found) if found else None


def usable() -> tuple[int, str]:
    """(CPUs this process may use, how that was found)."""
    cpus, q = affinity(), quota()
    if q is None:
        return cpus, f"{cpus} CPUs usable, no cgroup quota"
    allowed = max(1, min(cpus, math.floor(q + 1e-9)))
    return allowed, f"{allowed} CPUs usable: affinity {cpus}, cgroup quota {q:g}"


def auto_workers(limit: int | None = None) -> Choice:
    """The worker count for this machine now: the usable CPUs, less the busy ones, at least 1 (and at
    most ``limit``, e.g. the number of episodes)."""
    cpus, how = usable()
    load = os.getloadavg()[0]
    busy = load * cpus / max(os.cpu_count() or cpus, cpus)
    free = min(cpus, math.floor(cpus - busy + 0.5))
    idle = max(1, free)
    reason = f"{how}; load {load:.1f} " + (f"leaves {free} idle" if free > 0 else "keeps them busy, so the least")
    if limit is not None and limit < idle:
        return Choice(max(1, limit), f"{reason}; only {limit} to run")
    return Choice(idle, reason)


def oversubscribed(workers: int, source: str) -> str | None:
    """One warning line when ``workers`` (asked for by ``source``) exceeds the usable CPUs, else None."""
    cpus, how = usable()
    if workers <= cpus:
        return None
    return f"warning: {source} asks for {workers} workers on {how} (`workers: auto` fits the machine)"
