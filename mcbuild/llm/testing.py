"""A scripted chat-completions endpoint for tests: stdlib HTTP server on 127.0.0.1, random port.

``with ScriptedEndpoint(responder) as ep:`` serves ``POST /v1/chat/completions`` (the reply text
comes from ``responder(messages)``) and ``GET /v1/models``; every request body is kept in
``ep.requests`` (and its bytes in ``ep.raw``). Usage is deterministic: ``PROMPT_TOKENS`` and ``COMPLETION_TOKENS`` per call.
``fail_first=N`` answers the first N completions (after ``fail_after`` answered ones: a study's
preflight request) with ``fail_status`` (503 unless told, with a
``Retry-After`` header when ``retry_after`` is given); with ``latency``, every completion is answered
that many seconds after its request arrived, however long the server took to read it (the
throughput benchmark), and ``in_flight_max`` records the most completions served at once.

Endpoint faults: a responder that returns ``None`` sends a null message content, a dict is sent as
the whole reply (``{"choices": []}``), and ``drip`` sends each reply a byte at a time with that many
seconds between bytes. A subclass answers any request its own way by overriding :meth:`intercept`
(``tests/chaos_endpoint.py`` injects faults at set rates).

``tls`` (a server-side ``ssl.SSLContext``, e.g. from a ``trustme`` test CA) serves the same
endpoint over ``https``; a client that refuses the handshake is no server error.

A provider's own behaviour is scripted with ``refuse(request)``: it sees each completion request
(:class:`Request`: path, query, headers, body) and returns ``(status, error body)`` to refuse it the
way that provider does, or None to answer it; ``usage`` adds the provider's own usage fields (cached
tokens) to every reply; ``owned_by`` is the server's name in its model listing.

:class:`ThroughputEndpoint` serves the same protocol for the throughput benchmark, which must not
measure its endpoint: one asyncio loop in one thread instead of a thread per connection, and the
request body handed to the responder as bytes, never parsed, nothing kept (at 2,048 in flight and
67 KB requests, parsing them made the scripted endpoint the bottleneck). It costs about a third of
``ScriptedEndpoint``'s CPU a call.
"""
from __future__ import annotations

import asyncio
import json
import ssl
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Mapping
from urllib.parse import parse_qs, urlsplit

from .settings import ModelSettings, layered

PROMPT_TOKENS = 100
COMPLETION_TOKENS = 10
MODEL = "scripted"
PRICES = {MODEL: {"input": 1.0, "output": 2.0}}          # USD per 1M tokens
CALL_COST = (PROMPT_TOKENS * 1.0 + COMPLETION_TOKENS * 2.0) / 1_000_000


@dataclass(frozen=True)
class Request:
    """One completion request as the endpoint received it (header names in lower case)."""

    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: dict[str, Any]


class ScriptedEndpoint:
    def __init__(self, responder: Callable[[list[dict[str, str]]], Any], *, model: str = MODEL,
                 fail_first: int = 0, models: bool = True, fail_status: int = 503, fail_after: int = 0,
                 retry_after: str | None = None, latency: float = 0.0, drip: float = 0.0,
                 tls: ssl.SSLContext | None = None,
                 refuse: Callable[[Request], tuple[int, Any] | None] | None = None,
                 usage: Callable[[dict[str, Any]], dict[str, Any]] | None = None, owned_by: str = "test"):
        self.responder = responder
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.raw: list[bytes] = []                # the request bodies as sent
        self.fail_first = fail_first          # answer the first N completions with HTTP 503
        self.fail_after = fail_after          # ... once this many were answered
        self.models = models                  # serve GET /v1/models (some endpoints do not)
        self.fail_status, self.retry_after, self.latency, self.drip = fail_status, retry_after, latency, drip
        self.refuse, self.usage, self.owned_by = refuse, usage, owned_by
        self.refused: list[tuple[int, Any]] = []  # every refusal sent (status, body)
        self.in_flight = self.in_flight_max = 0
        self._lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True        # no 40 ms Nagle/delayed-ACK stall per reply
            protocol_version = "HTTP/1.1"         # keep-alive, as real endpoints do

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, code: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if not endpoint.drip:
                    self.wfile.write(data)
                    return
                for i in range(len(data)):
                    self.wfile.write(data[i:i + 1])
                    self.wfile.flush()
                    time.sleep(endpoint.drip)

            def do_GET(self) -> None:
                if urlsplit(self.path).path.rstrip("/").endswith("/models") and endpoint.models:
                    self._send(200, {"object": "list", "data": [{"id": endpoint.model, "object": "model",
                                                                 "created": 0, "owned_by": endpoint.owned_by}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                arrived = time.monotonic()        # the latency runs from here, whatever the parsing costs
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                body = json.loads(raw or b"{}")
                url = urlsplit(self.path)
                if not url.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                if endpoint.refuse is not None:
                    query = {k: v[-1] for k, v in parse_qs(url.query).items()}
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    refusal = endpoint.refuse(Request(url.path, query, headers, body))
                    if refusal is not None:
                        with endpoint._lock:
                            endpoint.requests.append(body)
                            endpoint.raw.append(raw)
                            endpoint.refused.append(refusal)
                        self._send(*refusal)
                        return
                with endpoint._lock:
                    endpoint.requests.append(body)
                    endpoint.raw.append(raw)
                if endpoint.intercept(self, body):
                    return
                with endpoint._lock:
                    failing = endpoint.fail_first > 0 and endpoint.fail_after == 0
                    if failing:
                        endpoint.fail_first -= 1
                    else:
                        endpoint.fail_after = max(0, endpoint.fail_after - 1)
                        text = endpoint.responder(body["messages"])
                        endpoint.in_flight += 1
                        endpoint.in_flight_max = max(endpoint.in_flight_max, endpoint.in_flight)
                if failing:
                    wait = {"Retry-After": endpoint.retry_after} if endpoint.retry_after is not None else {}
                    self._send(endpoint.fail_status, {"error": {"message": "overloaded"}}, wait)
                    return
                if endpoint.latency:
                    time.sleep(max(0.0, arrived + endpoint.latency - time.monotonic()))
                with endpoint._lock:
                    endpoint.in_flight -= 1
                if isinstance(text, dict):
                    self._send(200, text)
                    return
                self._send(200, {
                    "id": f"chatcmpl-{len(endpoint.requests)}", "object": "chat.completion", "created": 0,
                    "model": body.get("model", endpoint.model),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS,
                              "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
                              **(endpoint.usage(body) if endpoint.usage else {})},
                })

        class Server(ThreadingHTTPServer):
            request_queue_size = 1024             # many clients connect at once (episodes in flight)
            daemon_threads = True

            def get_request(self) -> tuple[Any, Any]:
                sock, address = super().get_request()
                if tls is not None:               # the handshake happens in the handler's thread
                    sock = tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
                return sock, address

            def handle_error(self, request: Any, client_address: Any) -> None:
                if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError, ssl.SSLError)):
                    super().handle_error(request, client_address)     # a client that gave up is no error

        self.tls = tls
        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def intercept(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> bool:
        """Answer the completion request ``body`` some other way (a subclass's faults: ``handler`` is the
        request's ``BaseHTTPRequestHandler``); True when it did. The scripted reply follows otherwise."""
        return False

    @property
    def root(self) -> str:
        """``scheme://host:port``, for a base URL of another shape (Azure's deployment URLs)."""
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self._server.server_port}"

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    def settings(self, **over: Any) -> ModelSettings:
        """Settings of a model served here (no key, a short timeout, retries without waiting), ``over`` laid on them."""
        return layered({"model": self.model, "base_url": self.base_url, "api_key_env": "MCBUILD_TEST_NO_KEY",
                        "prices": PRICES, "max_retries": 2, "backoff": 0.0, "timeout": 10.0}, over)

    def __enter__(self) -> "ScriptedEndpoint":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()


class ThroughputEndpoint:
    """``POST /v1/chat/completions`` answered with ``responder(body bytes)`` as the reply text,
    ``latency`` seconds after the request arrived, and ``GET /v1/models``; HTTP/1.1 kept alive."""

    def __init__(self, responder: Callable[[bytes], str], *, latency: float = 0.0, model: str = MODEL):
        self.responder, self.latency, self.model = responder, latency, model
        self._loop = asyncio.new_event_loop()
        self._server = self._loop.run_until_complete(
            self._loop.create_server(lambda: _Exchange(self), "127.0.0.1", 0, backlog=4096))
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}/v1"

    def reply(self, head: bytes, body: bytes) -> bytes:
        """The whole HTTP reply to one request (its request line and headers, its body)."""
        line = head.split(b"\r\n", 1)[0]
        if line.startswith(b"POST ") and b"/chat/completions" in line:
            data: dict[str, Any] = {
                "id": "chatcmpl-0", "object": "chat.completion", "created": 0, "model": self.model,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": self.responder(body)}}],
                "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS,
                          "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS}}
            status = b"200 OK"
        elif line.startswith(b"GET ") and b"/models" in line:
            data, status = {"object": "list", "data": [{"id": self.model, "object": "model", "created": 0,
                                                        "owned_by": "test"}]}, b"200 OK"
        else:
            data, status = {"error": {"message": "not found"}}, b"404 Not Found"
        out = json.dumps(data).encode()
        return b"HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (status, len(out), out)

    def __enter__(self) -> "ThroughputEndpoint":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._server.close()
        self._loop.close()


class _Exchange(asyncio.Protocol):
    """One connection of a :class:`ThroughputEndpoint`: requests are cut from the stream by their
    ``Content-Length`` and each reply is written ``latency`` seconds after its request arrived."""

    def __init__(self, endpoint: ThroughputEndpoint):
        self.endpoint, self.buf = endpoint, b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while (end := self.buf.find(b"\r\n\r\n")) >= 0:
            head = self.buf[:end]
            at = head.lower().find(b"\r\ncontent-length:")
            length = int(head[at + 17:].split(b"\r\n", 1)[0]) if at >= 0 else 0
            if len(self.buf) < end + 4 + length:
                return                                  # the body is still coming
            body, self.buf = self.buf[end + 4:end + 4 + length], self.buf[end + 4 + length:]
            reply = self.endpoint.reply(head, body)
            loop = asyncio.get_running_loop()
            loop.call_at(loop.time() + self.endpoint.latency, self._send, reply)

    def _send(self, reply: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
