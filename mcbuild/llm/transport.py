"""Transport policy of the chat client: how long to wait before a retry, and how many requests
may be in flight to one endpoint.

* :func:`retry_delay`: exponential backoff (``backoff * 2**(attempt-1)``, at most ``max_backoff``)
  with full jitter, or the server's ``Retry-After`` when it sent one (seconds or an HTTP date),
  also capped at ``max_backoff``. The jitter comes from a private random source: it never touches
  the global ``random`` state the agents or the simulator might read.
* :func:`gate`: one bounded semaphore per (endpoint, cap) in this process, shared by every client
  of every thread, so a worker with many episodes in flight sends at most ``cap`` requests at once.
"""
from __future__ import annotations

import random
import threading
import time
from contextlib import nullcontext
from email.utils import parsedate_to_datetime
from typing import Any, ContextManager, Mapping

MAX_BACKOFF = 60.0

_JITTER = random.Random()
_GATES: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_GATES_LOCK = threading.Lock()


def retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait (``Retry-After``: delta seconds or an HTTP date), or None."""
    if not headers:
        return None
    value = headers.get("retry-after") or headers.get("Retry-After")
    if value is None:
        return None
    value = str(value).strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def retry_delay(attempt: int, backoff: float, *, server_wait: float | None = None,
                max_backoff: float = MAX_BACKOFF) -> float:
    """The wait before retry number ``attempt`` (1-based)."""
    if server_wait is not None:
        return min(max_backoff, server_wait)
    ceiling = min(max_backoff, backoff * 2 ** (attempt - 1))
    return _JITTER.uniform(0.0, ceiling) if ceiling > 0 else 0.0


def response_headers(exc: Exception) -> Mapping[str, Any] | None:
    """The HTTP headers of a status error: the direct path's (``wire.WireStatusError.headers``) or
    an ``openai`` error's response's, when it carries one."""
    headers = getattr(exc, "headers", None)
    if headers is not None:
        return headers
    return getattr(getattr(exc, "response", None), "headers", None)


def gate(endpoint: str | None, cap: int | None) -> ContextManager[Any]:
    """A context that holds one of ``cap`` request slots of ``endpoint`` (no limit when cap is None)."""
    if not cap:
        return nullcontext()
    key = (endpoint or "api.openai.com", int(cap))
    with _GATES_LOCK:
        sem = _GATES.get(key)
        if sem is None:
            sem = _GATES[key] = threading.BoundedSemaphore(int(cap))
    return sem
