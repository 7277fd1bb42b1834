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
"""
from __future__ import annotations

import http.client
import json
import os
import threading
import urllib.request
from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import urlparse

DEFAULT_BASE_URL = "https://api.openai.com/v1"
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
    timeout: float


def endpoint(base_url: str | None, key: str, timeout: float) -> Endpoint:
    """The endpoint ``openai.OpenAI(base_url=..., api_key=key)`` would call (``OPENAI_BASE_URL``,
    ``OPENAI_ORG_ID`` and ``OPENAI_PROJECT_ID`` read as the library reads them)."""
    url = urlparse(base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
    headers = [("Authorization", f"Bearer {key}"), ("Content-Type", "application/json"),
               ("Accept", "application/json"), ("User-Agent", "mcbuild")]
    for env, header in (("OPENAI_ORG_ID", "OpenAI-Organization"), ("OPENAI_PROJECT_ID", "OpenAI-Project")):
        if os.environ.get(env):
            headers.append((header, os.environ[env]))
    return Endpoint(url.scheme == "https", url.hostname or "", url.port, url.path.rstrip("/"), tuple(headers),
                    timeout)


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


def _exchange(target: Endpoint, route: str, payload: bytes, *, fresh: bool) -> Any:
    conn, reused = _connection(target, fresh)
    try:
        conn.request("POST", target.path + route, payload, dict(target.headers))
        resp = conn.getresponse()
        data = resp.read()
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
    if resp.status >= 400:
        raise WireStatusError(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data.decode("utf-8", "replace"))
    return json.loads(data)


def _connection(target: Endpoint, fresh: bool) -> tuple[http.client.HTTPConnection, bool]:
    """This thread's connection to ``target`` (a new one when ``fresh``), and whether it was used before."""
    pool: dict[tuple, http.client.HTTPConnection] = _LOCAL.__dict__.setdefault("pool", {})
    key = (os.getpid(), target)
    conn = pool.get(key)
    if conn is not None and not fresh:
        return conn, True
    if conn is not None:
        conn.close()
    kind = http.client.HTTPSConnection if target.https else http.client.HTTPConnection
    conn = pool[key] = kind(target.host, target.port, timeout=target.timeout)
    return conn, False
