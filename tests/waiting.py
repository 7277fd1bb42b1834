"""Waiting in tests: poll a condition against a deadline sized for a loaded machine, never sleep a
fixed time (``make test`` runs on whatever the developer's machine is doing; two CPU burners
beside it must not fail it). A test that waits on a process, a bot or a server uses :func:`until`
or passes :data:`DEADLINE_S` as its timeout."""
from __future__ import annotations

import time
from typing import Callable

#: Seconds a process, bot or server may take to do what a test waits for on a loaded machine (2
#: cores, a load of 50 measured here: a flying-squid login took 50 s after "listening").
DEADLINE_S = 300.0


def until(done: Callable[[], object], what: str, deadline_s: float = DEADLINE_S, every: float = 0.05) -> None:
    """Poll ``done()`` every ``every`` seconds until it is true; fail naming ``what`` after ``deadline_s``."""
    end = time.monotonic() + deadline_s
    while not done():
        assert time.monotonic() < end, f"not within {deadline_s:g} s: {what}"
        time.sleep(every)
