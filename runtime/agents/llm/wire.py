"""The chat client's direct request path: one JSON POST over a kept-alive ``http.client`` connection.

The ``openai`` library costs about 4 ms of CPU per call (request building and validation, httpx,
typed response parsing), most of an LLM episode's per-call CPU when many episodes are in flight.
``ChatClient.chat`` therefore sends chat completions through :func:`post_json` when no proxy
applies to the endpoint (:func:`direct_ok`); everything else (model listing, proxied endpoints)
stays on ``openai``. The failures are the ones ``openai`` distinguishes, so the client's retry
policy is the same on both paths: :class:`WireTimeout` and :class:`WireConnectionError` (and a
:class:`WireStatusError` of 429 or 5xx) are transient, another status is final, a body that is
not JSON raises ``ValueError``.

Each thread keeps one connection per endpoint and process (a forked worker never reuses its
parent's sockets). A kept-alive connection the server closed while idle is reopened once.

``timeout`` bounds the whole request, not each socket read: one watchdog thread per process shuts
the socket of a request still running at its deadline (a server dripping a byte a second cannot
hold a call past it). A reply body larger than ``max_reply`` bytes is not read further: it raises
:class:`ReplyTooLarge` (a ``ValueError``, so retried like any unreadable reply).
"""
from __future__ import annotations

import heapq
import http.client
import itertools
import json
import os
import socket
import threading
import time
import urllib.request
from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import urlparse

DEFAULT_BASE_URL = "https://api.openai.com/v1"
ENVIRONMENT = ("OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")    # read besides the key (endpoint())
MAX_REPLY_BYTES = 65536
_CLOSED = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)
_LOCAL = threading.local()


class WireError(Exception):
    """A failure of the direct request path."""


class WireConnectionError(WireError):
    def __init__(self, detail: str = ""):
        super().__init__("Connection error." + (f" ({detail})" if detail else ""))


class WireTimeout(WireConnectionError):
    def __init__(self) -> None:
        WireError.__init__(self, "Request timed out.")


class ReplyTooLarge(ValueError):
    def __init__(self, cap: int):
        super().__init__(f"the reply is larger than {cap} bytes (max_reply_bytes)")


class WireStatusError(WireError):
    """A reply with an error status; ``message`` reads like ``openai``'s (``Error code: N - body``)."""

    def __init__(self, status: int, headers: Mapping[str, str], body: str):
        self.status_code, self.headers = status, headers
        self.message = f"Error code: {status} - {body}"
        super().__init__(self.message)

    @property
    def transient(self) -> bool:
        return self.status_code == 429 or self.status_code >= 500


@dataclass(frozen=True)
class Endpoint:
    """Where requests go and the headers every request carries."""

    https: bool
    host: str
    port: int | None
    path: str                   # the base path, e.g. "/v1"
    headers: tuple[tuple[str, str], ...]
    timeout: float              # seconds for a whole request
    max_reply: int = MAX_REPLY_BYTES


def endpoint(base_url: str | None, key: str, timeout: float, max_reply: int = MAX_REPLY_BYTES) -> Endpoint:
    """The endpoint ``openai.OpenAI(base_url=..., api_key=key)`` would call (``OPENAI_BASE_URL``,
    ``OPENAI_ORG_ID`` and ``OPENAI_PROJECT_ID`` read as the library reads them)."""
    url = urlparse(base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
    headers = [("Authorization", f"Bearer {key}"), ("Content-Type", "application/json"),
               ("Accept", "application/json"), ("User-Agent", "mcbuild")]
    for env, header in (("OPENAI_ORG_ID", "OpenAI-Organization"), ("OPENAI_PROJECT_ID", "OpenAI-Project")):
        if os.environ.get(env):
            headers.append((header, os.environ[env]))
    return Endpoint(url.scheme == "https", url.hostname or "", url.port, url.path.rstrip("/"), tuple(headers),
                    timeout, max_reply)


def direct_ok(base_url: str | None) -> bool:
    """Whether the direct path may serve ``base_url``: no proxy from the environment applies to it
    (the ``openai`` client, through httpx, would honour one)."""
    url = urlparse(base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
    proxies = urllib.request.getproxies()
    if url.scheme not in proxies and "all" not in proxies:
        return True
    return bool(urllib.request.proxy_bypass(url.hostname or ""))


def post_json(target: Endpoint, route: str, body: Mapping[str, Any], member: bytes = b"") -> Any:
    """POST ``body`` as JSON to ``target.path + route`` and return the parsed JSON reply. ``member``
    (``, "key": <JSON>``, prepared once by the caller) is spliced in as the body's last member."""
    payload = json.dumps(body).encode()
    if member:
        payload = payload[:-1] + member + b"}"
    try:
        return _exchange(target, route, payload, fresh=False)
    except _Stale:              # the server closed the kept-alive connection while it was idle
        return _exchange(target, route, payload, fresh=True)


class _Stale(Exception):
    """A reused connection turned out to be closed before any reply."""


class _Watchdog:
    """Shuts the socket of every request still running at its deadline (one thread per process)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int]] = []
        self._live: dict[int, http.client.HTTPConnection] = {}
        self._expired: set[int] = set()
        self._ids = itertools.count()
        self._pid = -1

    def watch(self, deadline: float, conn: http.client.HTTPConnection) -> int:
        with self._cond:
            if self._pid != os.getpid():          # first use in this process (or a forked child)
                self._pid, self._heap, self._live, self._expired = os.getpid(), [], {}, set()
                threading.Thread(target=self._run, name="llm-deadlines", daemon=True).start()
            token = next(self._ids)
            self._live[token] = conn
            heapq.heappush(self._heap, (deadline, token))
            if self._heap[0][1] == token:
                self._cond.notify()
            return token

    def done(self, token: int) -> bool:
        """Stop watching; whether the deadline had passed."""
        with self._cond:
            self._live.pop(token, None)
            if token in self._expired:
                self._expired.discard(token)
                return True
            return False

    def _run(self) -> None:
        with self._cond:
            while True:
                while self._heap and self._heap[0][1] not in self._live:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cond.wait()
                    continue
                deadline, token = self._heap[0]
                wait = deadline - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                heapq.heappop(self._heap)
                self._expired.add(token)
                sock = self._live.pop(token).sock
                if sock is not None:
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass


_WATCHDOG = _Watchdog()


def _read(resp: http.client.HTTPResponse, cap: int) -> bytes:
    """The reply body; :class:`ReplyTooLarge` past ``cap`` bytes (the rest is never read)."""
    length = resp.getheader("content-length")
    if length is not None and length.isdigit() and int(length) > cap:
        raise ReplyTooLarge(cap)
    data = resp.read(cap + 1)
    if len(data) > cap:
        raise ReplyTooLarge(cap)
    return data


def _exchange(target: Endpoint, route: str, payload: bytes, *, fresh: bool) -> Any:
    conn, reused = _connection(target, fresh)
    token = _WATCHDOG.watch(time.monotonic() + target.timeout, conn)
    try:
        conn.request("POST", target.path + route, payload, dict(target.headers))
        resp = conn.getresponse()
        data = _read(resp, target.max_reply)
    except ReplyTooLarge:
        _WATCHDOG.done(token)
        conn.close()
        raise
    except Exception:
        if _WATCHDOG.done(token):            # the deadline shut the socket: whatever broke, it timed out
            conn.close()
            raise WireTimeout() from None
        return _failed(conn, reused)
    if _WATCHDOG.done(token):
        conn.close()
        raise WireTimeout()
    if resp.status >= 400:
        raise WireStatusError(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data.decode("utf-8", "replace"))
    return json.loads(data)


def _failed(conn: http.client.HTTPConnection, reused: bool) -> Any:
    """Raise what the exception being handled means for the client (the connection is closed)."""
    try:
        raise
    except TimeoutError:
        conn.close()
        raise WireTimeout() from None
    except _CLOSED as exc:
        conn.close()
        if reused:
            raise _Stale() from None
        raise WireConnectionError(type(exc).__name__) from None
    except (OSError, http.client.HTTPException) as exc:
        conn.close()
        raise WireConnectionError(str(exc) or type(exc).__name__) from None


def _connection(target: Endpoint, fresh: bool) -> tuple[http.client.HTTPConnection, bool]:
    """This thread's connection to ``target`` (a new one when ``fresh``), and whether it was used before."""
    pool: dict[tuple, http.client.HTTPConnection] = _LOCAL.__dict__.setdefault("pool", {})
    key = (os.getpid(), target)
    conn = pool.get(key)
    if conn is not None and not fresh:
        return conn, True
    if conn is not None:
        conn.close()
    kind = _HTTPSConnection if target.https else _HTTPConnection
    conn = pool[key] = kind(target.host, target.port, timeout=target.timeout)
    return conn, False


class _NoDelay:
    """A connection that sends each segment at once: ``http.client`` writes the headers and the
    body in two sends, and Nagle's algorithm would hold the body back until the headers are acknowledged."""

    def connect(self) -> None:
        super().connect()           # type: ignore[misc]
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)      # type: ignore[attr-defined]


class _HTTPConnection(_NoDelay, http.client.HTTPConnection):
    pass


class _HTTPSConnection(_NoDelay, http.client.HTTPSConnection):
    pass
