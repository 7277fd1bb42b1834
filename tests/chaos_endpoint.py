"""A chat-completions endpoint that injects faults at set rates: the scripted endpoint of
``mcbuild.llm.testing`` whose :meth:`~ChaosEndpoint.intercept` answers a share of the requests with
a fault instead of the scripted reply.

Each completion request draws one fault kind (or none) from a seeded random source, by the
``rates`` given (a share of the requests each):

* ``rate_limit``: HTTP 429 with ``Retry-After: 1``;
* ``server_error``: HTTP 500, 502 or 503;
* ``reset``: the connection reset (RST) without a reply;
* ``drip``: a 200 whose body comes one byte a second, past the client's timeout;
* ``truncated``: a 200 that announces its whole body, sends half of it and closes;
* ``oversize``: a 200 whose body is larger than ``max_reply_bytes``.

The client sends its retry count (``X-Stainless-Retry-Count``), so the endpoint knows which
requests were retries and which faults ended a call: a fault on the last retry (``max_retries``)
exhausts the call, and the client raises it (the study's fault log must then hold one line for
it). A reset on a kept-alive connection is re-sent once by the client's transport without counting
as a retry (``mcbuild.llm.wire``): :meth:`tally` subtracts those re-sends. Every request is kept in
:attr:`log` as ``(time, retries, kind, reused)``; the preflight ping is never faulted.
"""
from __future__ import annotations

import json
import random
import socket
import struct
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable

from mcbuild.llm.testing import ScriptedEndpoint

KINDS = ("rate_limit", "server_error", "reset", "drip", "truncated", "oversize")
PING = [{"role": "user", "content": "ping"}]


@dataclass(frozen=True)
class Request:
    at: float               # time.time() when it arrived
    retries: int            # the client's X-Stainless-Retry-Count
    kind: str | None        # the fault injected, None for the scripted reply
    reused: bool            # on a connection that had served a request before


class ChaosEndpoint(ScriptedEndpoint):
    def __init__(self, responder: Callable[[list[dict[str, str]]], Any], rates: dict[str, float], *,
                 seed: int = 0, max_retries: int = 2, timeout: float = 30.0, max_reply_bytes: int = 65536,
                 latency: float = 0.0, model: str = "chaos"):
        assert set(rates) <= set(KINDS) and sum(rates.values()) < 1, rates
        super().__init__(responder, model=model, latency=latency)
        self.rates, self.max_retries, self.timeout, self.cap = dict(rates), max_retries, timeout, max_reply_bytes
        self.log: list[Request] = []
        self._random = random.Random(seed)
        self._statuses = iter(lambda: self._random.choice((500, 502, 503)), None)
        self._server.handle_error = lambda request, address: None      # a client that left mid-fault is no error

    def settings(self, **over: Any):
        return super().settings(max_retries=self.max_retries, timeout=self.timeout, backoff=0.2,
                                max_reply_bytes=self.cap, **over)

    # ------------------------------------------------------------------ faults
    def _draw(self) -> str | None:
        x, edge = self._random.random(), 0.0
        for kind in KINDS:
            edge += self.rates.get(kind, 0.0)
            if x < edge:
                return kind
        return None

    def intercept(self, handler: Any, body: dict[str, Any]) -> bool:
        reused = getattr(handler, "chaos_served", 0) > 0
        handler.chaos_served = getattr(handler, "chaos_served", 0) + 1
        retries = int(handler.headers.get("X-Stainless-Retry-Count", "0"))
        with self._lock:
            kind = None if body.get("messages") == PING else self._draw()
            status = next(self._statuses) if kind == "server_error" else 0
            self.log.append(Request(time.time(), retries, kind, reused))
        if kind is None:
            return False
        getattr(self, f"_{kind}")(handler, status)
        return True

    @staticmethod
    def _status(handler: Any, code: int, headers: dict[str, str] | None = None) -> None:
        data = json.dumps({"error": {"message": f"injected {code}", "type": "chaos"}}).encode()
        handler.send_response(code)
        for k, v in {**(headers or {}), "Content-Type": "application/json", "Content-Length": str(len(data))}.items():
            handler.send_header(k, v)
        handler.end_headers()
        handler.wfile.write(data)

    def _rate_limit(self, handler: Any, _status: int) -> None:
        self._status(handler, 429, {"Retry-After": "1"})

    def _server_error(self, handler: Any, status: int) -> None:
        self._status(handler, status)

    @staticmethod
    def _reset(handler: Any, _status: int) -> None:
        handler.close_connection = True
        sock: socket.socket = handler.connection
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))      # close sends RST
        sock.close()

    def _reply_head(self, handler: Any, length: int) -> None:
        handler.close_connection = True
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(length))
        handler.end_headers()

    def _drip(self, handler: Any, _status: int) -> None:
        data = self._reply(handler, "drip")
        self._reply_head(handler, len(data))
        end = time.monotonic() + self.timeout + 10
        for i in range(len(data)):
            if time.monotonic() > end:
                break
            try:
                handler.wfile.write(data[i:i + 1])
                handler.wfile.flush()
            except OSError:
                break                       # the client gave up at its timeout
            time.sleep(1.0)

    def _truncated(self, handler: Any, _status: int) -> None:
        data = self._reply(handler, "truncated")
        self._reply_head(handler, len(data))
        handler.wfile.write(data[:len(data) // 2])

    def _oversize(self, handler: Any, _status: int) -> None:
        data = self._reply(handler, "x" * (self.cap + 1024))
        self._reply_head(handler, len(data))
        try:
            handler.wfile.write(data)
        except OSError:
            pass                            # the client stopped reading at the cap

    @staticmethod
    def _reply(handler: Any, text: str) -> bytes:
        return json.dumps({"id": "chaos", "object": "chat.completion", "created": 0, "model": "chaos",
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": text}}]}).encode()

    # ------------------------------------------------------------------ accounting
    def tally(self, before: float | None = None) -> dict[str, Any]:
        """What happened (over the requests that arrived before ``before``, a ``time.time()``): requests,
        faults injected by kind, the client's retries, the calls whose last retry failed (exhausted)
        and the most requests served at once."""
        with self._lock:
            log = [r for r in self.log if before is None or r.at < before]
        resent = Counter(r.retries for r in log if r.kind == "reset" and r.reused)     # the transport's re-sends
        attempts = Counter(r.retries for r in log)
        # a call is exhausted by a fault on its last retry; a reset on a kept-alive connection is re-sent
        # (the re-send, logged too, decides the attempt)
        last = sorted(r.at for r in log if r.kind and r.retries == self.max_retries and not (r.kind == "reset" and r.reused))
        return {"requests": len(log), "injected": dict(Counter(r.kind for r in log if r.kind)),
                "retried": sum(n - resent[k] for k, n in attempts.items() if k > 0),
                "exhausted": len(last), "exhausted_at": last, "in_flight_max": self.in_flight_max}

