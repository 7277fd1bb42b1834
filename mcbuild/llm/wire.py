"""The chat client's direct request path: one JSON POST over a kept-alive HTTP/1.1 connection.

The ``openai`` library costs about 4 ms of CPU per call (request building and validation, httpx,
typed response parsing), most of an LLM episode's per-call CPU when many episodes are in flight.
``ChatClient.chat`` therefore sends chat completions through :func:`post_json` when no proxy
applies to the endpoint (:func:`direct_ok`); everything else (model listing, proxied endpoints)
stays on ``openai``. The failures are the ones ``openai`` distinguishes, so the client's retry
policy is the same on both paths: :class:`WireTimeout` and :class:`WireConnectionError` (and a
:class:`WireStatusError` of 429 or 5xx) are transient, another status is final, a body that is
not JSON raises ``ValueError``.

Each thread keeps one connection per endpoint and process (a forked worker never reuses its
parent's sockets). A kept-alive connection the server closed while idle is reopened once. The
request is the bytes ``json.dumps`` makes of the body, sent in one gathered ``sendmsg`` from
pieces (:func:`body_parts`: a system message's JSON and a prepared ``response_format`` are made
once per process), and the reply is read by :class:`Connection` without ``http.client``: about
60 us of CPU a call instead of 120 (a 9 KB request on loopback; 85 us instead of 180 with a 67 KB
JSON Schema).

``timeout`` bounds the whole request, not each socket read: one watchdog thread per process shuts
the socket of a request still running at its deadline (a server dripping a byte a second cannot
hold a call past it). A reply body larger than ``max_reply`` bytes is not read further: it raises
:class:`ReplyTooLarge` (a ``ValueError``, so retried like any unreadable reply).
"""
from __future__ import annotations

import heapq
import itertools
import json
import os
import socket
import ssl
import threading
import time
import urllib.request
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping
from urllib.parse import urlparse

DEFAULT_BASE_URL = "https://api.openai.com/v1"
ENVIRONMENT = ("OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")    # read besides the key (endpoint())
MAX_HEAD_BYTES = 65536          # a reply's status line and headers, or one chunk-size line (as http.client)
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
    max_reply: int              # bytes of a reply body at most (``max_reply_bytes``)


def endpoint(base_url: str | None, key: str, timeout: float, max_reply: int) -> Endpoint:
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


def post_json(target: Endpoint, route: str, body: Mapping[str, Any], member: bytes = b"", retries: int = 0) -> Any:
    """POST ``body`` as JSON to ``target.path + route`` and return the parsed JSON reply. ``member``
    (``, "key": <JSON>``, prepared once by the caller) is spliced in as the body's last member;
    ``retries`` (the caller's retries of this request so far) is sent as ``X-Stainless-Retry-Count``,
    the header the ``openai`` library sends."""
    parts = body_parts(body, member)
    try:
        return _exchange(target, route, parts, retries, fresh=False)
    except _Stale:              # the server closed the kept-alive connection while it was idle
        return _exchange(target, route, parts, retries, fresh=True)


def body_parts(body: Mapping[str, Any], member: bytes = b"") -> list[bytes]:
    """The bytes of ``json.dumps(body)`` with ``member`` spliced in before its closing brace, as
    pieces sent without joining them; a system message's JSON is made once per process
    (:func:`_message`)."""
    parts = [b"{"]
    for i, (key, value) in enumerate(body.items()):
        if i:
            parts.append(b", ")
        if key == "messages" and type(value) is list:
            parts.append(b'"messages": [')
            for j, message in enumerate(value):
                if j:
                    parts.append(b", ")
                parts.append(_message(message))
            parts.append(b"]")
        elif value is None or type(value) in (str, int, float, bool):
            parts.append(_scalar_member(key, value))
        else:
            parts.append(b"%s: %s" % (json.dumps(key).encode(), json.dumps(value).encode()))
    parts += (member, b"}")                # never joined: a JSON Schema member is about 67 KB
    return parts


@lru_cache(maxsize=256, typed=True)
def _scalar_member(key: str, value: Any) -> bytes:
    """``"key": value`` of a scalar setting (the model, temperature, max_tokens: the same every call)."""
    return b"%s: %s" % (json.dumps(key).encode(), json.dumps(value).encode())


_SYSTEM: dict[tuple[str, str], bytes] = {}
SYSTEM_MESSAGES = 64            # system messages whose JSON is kept per process


def _message(message: Any) -> bytes:
    """``json.dumps(message)``: kept for a system message (the same text in every call of an episode)."""
    if not (type(message) is dict and message.keys() == {"role", "content"} and message["role"] == "system"
            and type(message["content"]) is str):
        return json.dumps(message).encode()
    key = (next(iter(message)), message["content"])        # the key order is part of the bytes
    data = _SYSTEM.get(key)
    if data is None:
        if len(_SYSTEM) >= SYSTEM_MESSAGES:
            _SYSTEM.clear()
        data = _SYSTEM[key] = json.dumps(message).encode()
    return data


class _Stale(Exception):
    """A reused connection turned out to be closed before any reply."""


class _Watchdog:
    """Shuts the socket of every request still running at its deadline (one thread per process)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int]] = []
        self._live: dict[int, Connection] = {}
        self._expired: set[int] = set()
        self._ids = itertools.count()
        self._pid = -1

    def watch(self, deadline: float, conn: "Connection") -> int:
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


class RemoteDisconnected(ConnectionResetError):
    """The server closed the connection before sending any reply."""


_CLOSED = (RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


class _Malformed(Exception):
    """A reply that is not HTTP/1.x."""


class Connection:
    """One kept-alive HTTP/1.1 connection: a request goes out in one gathered send and its reply
    (usually one segment) is read in as few ``recv`` calls as it takes. ``http.client`` costs
    about twice as much CPU a call (a send for the headers and one for the body, a
    buffered reader, an ``email`` header parser) and each extra system call hands the GIL to
    another of the hundreds of episode threads."""

    def __init__(self, target: Endpoint):
        self.target = target
        self.sock: socket.socket | None = None
        self._head = _head(target)

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def _open(self) -> socket.socket:
        t = self.target
        sock = socket.create_connection((t.host, t.port or (443 if t.https else 80)), timeout=t.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if t.https:
            sock = _tls().wrap_socket(sock, server_hostname=t.host)
        self.sock = sock
        return sock

    def request(self, route: str, parts: list[bytes], cap: int, retries: int = 0) -> tuple[int, dict[str, str], bytes]:
        """POST ``parts`` (the body) to ``route``, the ``retries``-th retry of it; the reply's status,
        headers (lower-case names) and body. Raises :class:`RemoteDisconnected` when the server closed
        the connection before replying."""
        sock = self.sock or self._open()
        head = b"POST %s%s HTTP/1.1\r\n%sX-Stainless-Retry-Count: %d\r\nContent-Length: %d\r\n\r\n" % (
            self.target.path.encode(), route.encode(), self._head, retries, sum(map(len, parts)))
        _send(sock, [head, *parts])
        status, headers, body = self._reply(sock, cap)
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, headers, body

    def _reply(self, sock: socket.socket, cap: int) -> tuple[int, dict[str, str], bytes]:
        buf = b""
        while True:                                  # the status line and headers (1xx replies skipped)
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > MAX_HEAD_BYTES:
                    raise _Malformed(f"the reply's headers run past {MAX_HEAD_BYTES} bytes")
                chunk = sock.recv(65536)
                if not chunk:
                    raise RemoteDisconnected() if not buf else _Malformed("the reply ended in its headers")
                buf += chunk
                continue
            status, headers = _parse_head(buf[:end])
            buf = buf[end + 4:]
            if not 100 <= status < 200:
                break
        length = headers.get("content-length")
        if status in (204, 304):
            return status, headers, b""
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return status, headers, _chunked(sock, buf, cap)
        if length is not None and length.isdigit():
            if int(length) > cap:
                raise ReplyTooLarge(cap)
            return status, headers, _exactly(sock, buf, int(length))
        self.sock = None                               # the body runs to the end of the connection
        try:
            return status, headers, _to_end(sock, buf, cap)
        finally:
            sock.close()


def _head(target: Endpoint) -> bytes:
    """The headers every request to ``target`` carries (``http.client``'s Host and Accept-Encoding first)."""
    host = f"[{target.host}]" if ":" in target.host else target.host
    if target.port is not None and target.port != (443 if target.https else 80):
        host = f"{host}:{target.port}"
    lines = [("Host", host), ("Accept-Encoding", "identity"), *target.headers]
    return "".join(f"{k}: {v}\r\n" for k, v in lines).encode("latin-1")


@lru_cache(maxsize=1)
def _tls() -> ssl.SSLContext:
    return ssl.create_default_context()


def _send(sock: socket.socket, parts: list[bytes]) -> None:
    """Send every byte of ``parts``: one gathered ``sendmsg`` when the kernel takes it all."""
    if isinstance(sock, ssl.SSLSocket):                # no sendmsg over TLS
        sock.sendall(b"".join(parts))
        return
    views = [memoryview(p) for p in parts if p]
    while views:
        sent = sock.sendmsg(views)
        while views and sent >= len(views[0]):
            sent -= len(views[0])
            views.pop(0)
        if views and sent:
            views[0] = views[0][sent:]


def _parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    code = rest[:3]
    if not version.startswith("HTTP/1.") or not code.isdigit():
        raise _Malformed(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            name, value = name.strip().lower(), value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
    if version == "HTTP/1.0" and headers.get("connection", "").lower() != "keep-alive":
        headers["connection"] = "close"
    return int(code), headers


def _recv(sock: socket.socket) -> bytes:
    chunk = sock.recv(65536)
    if not chunk:
        raise _Malformed("the reply ended early")
    return chunk


def _more(sock: socket.socket, buf: bytes) -> bytes:
    """``buf`` and the next bytes of a chunk-size line or the trailers, which stay under
    ``MAX_HEAD_BYTES``."""
    if len(buf) > MAX_HEAD_BYTES:
        raise _Malformed(f"a chunk-size line or the trailers run past {MAX_HEAD_BYTES} bytes")
    return buf + _recv(sock)


def _exactly(sock: socket.socket, buf: bytes, n: int) -> bytes:
    parts, have = [buf], len(buf)
    while have < n:
        chunk = _recv(sock)
        parts.append(chunk)
        have += len(chunk)
    data = b"".join(parts) if len(parts) > 1 else buf
    return data[:n]


def _to_end(sock: socket.socket, buf: bytes, cap: int) -> bytes:
    parts, have = [buf], len(buf)
    while have <= cap:
        chunk = sock.recv(65536)
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        have += len(chunk)
    raise ReplyTooLarge(cap)


def _chunked(sock: socket.socket, buf: bytes, cap: int) -> bytes:
    """A chunked body of at most ``cap`` bytes (trailers skipped)."""
    out: list[bytes] = []
    have = 0
    while True:
        while b"\r\n" not in buf:
            buf = _more(sock, buf)
        line, _, buf = buf.partition(b"\r\n")
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            size = -1
        if size < 0:
            raise _Malformed(f"a bad chunk size {line[:40]!r}")
        if size == 0:
            while not (buf.startswith(b"\r\n") or b"\r\n\r\n" in buf):
                buf = _more(sock, buf)
            return b"".join(out)
        have += size
        if have > cap:
            raise ReplyTooLarge(cap)
        while len(buf) < size + 2:
            buf += _recv(sock)
        out.append(buf[:size])
        buf = buf[size + 2:]


def _exchange(target: Endpoint, route: str, parts: list[bytes], retries: int, *, fresh: bool) -> Any:
    conn, reused = _connection(target, fresh)
    token = _WATCHDOG.watch(time.monotonic() + target.timeout, conn)
    try:
        status, headers, data = conn.request(route, parts, target.max_reply, retries)
    except ReplyTooLarge:
        _WATCHDOG.done(token)
        conn.close()
        raise
    except Exception as exc:
        expired = _WATCHDOG.done(token)      # the deadline shut the socket: whatever broke, it timed out
        if expired or isinstance(exc, (OSError, _Malformed)):
            raise _failure(conn, reused, exc, expired) from None
        raise
    if _WATCHDOG.done(token):
        conn.close()
        raise WireTimeout()
    if status >= 400:
        raise WireStatusError(status, headers, data.decode("utf-8", "replace"))
    return json.loads(data)


def _failure(conn: Connection, reused: bool, exc: Exception, expired: bool) -> Exception:
    """What a failed request means for the client (``exc``: an ``OSError`` or a malformed reply, or
    anything once the deadline had passed); the connection is closed."""
    conn.close()
    if expired or isinstance(exc, TimeoutError):
        return WireTimeout()
    if isinstance(exc, _CLOSED):
        return _Stale() if reused else WireConnectionError(type(exc).__name__)
    return WireConnectionError(str(exc) or type(exc).__name__)


def _connection(target: Endpoint, fresh: bool) -> tuple[Connection, bool]:
    """This thread's connection to ``target`` (a new one when ``fresh``), and whether it was used before."""
    pool: dict[tuple, Connection] = _LOCAL.__dict__.setdefault("pool", {})
    key = (os.getpid(), target)
    conn = pool.get(key)
    if conn is not None and not fresh and conn.sock is not None:
        return conn, True
    if conn is not None:
        conn.close()
    conn = pool[key] = Connection(target)
    return conn, False
