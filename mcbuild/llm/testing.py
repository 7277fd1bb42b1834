"""A scripted chat-completions endpoint for tests: stdlib HTTP server on 127.0.0.1, random port.

``with ScriptedEndpoint(responder) as ep:`` serves ``POST /v1/chat/completions`` (the reply text
comes from ``responder(messages)``) and ``GET /v1/models``; every request body is kept in
``ep.requests`` (and its bytes in ``ep.raw``). Usage is deterministic: ``PROMPT_TOKENS`` and ``COMPLETION_TOKENS`` per call.
``fail_first=N`` answers the first N completions with ``fail_status`` (503 unless told, with a
``Retry-After`` header when ``retry_after`` is given); with ``latency``, every completion is answered
that many seconds after its request arrived, however long the server took to read it (the
throughput benchmark), and ``in_flight_max`` records the most completions served at once.

Endpoint faults: a responder that returns ``None`` sends a null message content, a dict is sent as
the whole reply (``{"choices": []}``), and ``drip`` sends each reply a byte at a time with that many
seconds between bytes. A subclass answers any request its own way by overriding :meth:`intercept`
(``tests/chaos_endpoint.py`` injects faults at set rates).
"""
from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from .settings import ModelSettings, layered

PROMPT_TOKENS = 100
COMPLETION_TOKENS = 10
MODEL = "scripted"
PRICES = {MODEL: {"input": 1.0, "output": 2.0}}          # USD per 1M tokens
CALL_COST = (PROMPT_TOKENS * 1.0 + COMPLETION_TOKENS * 2.0) / 1_000_000


class ScriptedEndpoint:
    def __init__(self, responder: Callable[[list[dict[str, str]]], Any], *, model: str = MODEL,
                 fail_first: int = 0, models: bool = True, fail_status: int = 503,
                 retry_after: str | None = None, latency: float = 0.0, drip: float = 0.0):
        self.responder = responder
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.raw: list[bytes] = []                # the request bodies as sent
        self.fail_first = fail_first          # answer the first N completions with HTTP 503
        self.models = models                  # serve GET /v1/models (some endpoints do not)
        self.fail_status, self.retry_after, self.latency, self.drip = fail_status, retry_after, latency, drip
        self.in_flight = self.in_flight_max = 0
        self._lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True        # no 40 ms Nagle/delayed-ACK stall per reply
            protocol_version = "HTTP/1.1"         # keep-alive, as real endpoints do

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, code: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
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
                if self.path.rstrip("/").endswith("/models") and endpoint.models:
                    self._send(200, {"object": "list", "data": [{"id": endpoint.model, "object": "model",
                                                                 "created": 0, "owned_by": "test"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                arrived = time.monotonic()        # the latency runs from here, whatever the parsing costs
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                body = json.loads(raw or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                with endpoint._lock:
                    endpoint.requests.append(body)
                    endpoint.raw.append(raw)
                if endpoint.intercept(self, body):
                    return
                with endpoint._lock:
                    failing = endpoint.fail_first > 0
                    if failing:
                        endpoint.fail_first -= 1
                    else:
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
                              "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS},
                })

        class Server(ThreadingHTTPServer):
            request_queue_size = 1024             # many clients connect at once (episodes in flight)
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
                    super().handle_error(request, client_address)     # a client that gave up is no error

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def intercept(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> bool:
        """Answer the completion request ``body`` some other way (a subclass's faults: ``handler`` is the
        request's ``BaseHTTPRequestHandler``); True when it did. The scripted reply follows otherwise."""
        return False

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/v1"

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
