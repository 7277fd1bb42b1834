"""Which process owns something, and whether it still runs: the process id, its start time (which
tells a reused pid apart) and the host. Store locks (``runtime/study/store/lock.py``) and
temporary files (``scratch.py``) name their owner this way."""
from __future__ import annotations

import os
import socket
from pathlib import Path

__all__ = ["proc_start", "running", "host"]


def host() -> str:
    return socket.gethostname()


def proc_start(pid: int) -> str:
    """Field 22 of ``/proc/<pid>/stat`` (start time in clock ticks since boot); "" where unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rpartition(")")[2].split()[19]


def running(pid: int, started: str = "") -> bool:
    """Whether process ``pid`` of this host runs, and (``started`` given and known) is the one that
    started then rather than a later process under the reused pid."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass                    # someone else's live process
    return not started or proc_start(pid) in ("", started)
