"""The throughput benchmark's scripted endpoint (``ThroughputEndpoint``): the chat-completions protocol
of ``ScriptedEndpoint``, its replies from the request's bytes, unparsed, after a latency counted from
the request's arrival, on kept-alive connections."""
from __future__ import annotations

import socket
import threading
import time
import zlib

from mcbuild.llm import wire
from mcbuild.llm.testing import COMPLETION_TOKENS, PROMPT_TOKENS, ThroughputEndpoint

BODY = {"model": "scripted", "messages": [{"role": "user", "content": "hello"}]}


def test_it_answers_chat_models_and_not_found() -> None:
    seen: list[bytes] = []
    with ThroughputEndpoint(lambda body: (seen.append(body), f"crc {zlib.crc32(body)}")[1]) as ep:
        target = wire.endpoint(ep.base_url, "k", 10.0, 65536)
        reply = wire.post_json(target, "/chat/completions", BODY)
        assert seen == [b"".join(wire.body_parts(BODY))]
        assert reply["choices"][0]["message"]["content"] == f"crc {zlib.crc32(seen[0])}"
        assert reply["usage"] == {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS,
                                  "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS}
        assert reply["model"] == "scripted"
        with socket.create_connection(("127.0.0.1", int(ep.base_url.split(":")[2].split("/")[0])), timeout=10) as s:
            s.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/nothing HTTP/1.1\r\nHost: x\r\n\r\n")
            got = b""
            while got.count(b"HTTP/1.1 ") < 2 or not got.endswith(b"}}"):
                got += s.recv(65536)
        assert got.startswith(b"HTTP/1.1 200 OK") and b'"id": "scripted"' in got
        assert b"HTTP/1.1 404 Not Found" in got


def test_the_request_reaches_the_responder_as_sent_in_pieces() -> None:
    seen: list[bytes] = []
    with ThroughputEndpoint(lambda body: (seen.append(body), "ok")[1]) as ep:
        port = int(ep.base_url.split(":")[2].split("/")[0])
        body = b'{"messages": [{"role": "user", "content": "' + b"x" * 200_000 + b'"}]}'
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)
            s.sendall(head[:20])
            time.sleep(0.05)
            s.sendall(head[20:] + body[:1000])
            time.sleep(0.05)
            s.sendall(body[1000:])
            got = b""
            while not got.endswith(b"}}"):
                got += s.recv(65536)
        assert seen == [body] and b'"content": "ok"' in got


def test_latency_counts_from_arrival_for_every_connection_at_once() -> None:
    with ThroughputEndpoint(lambda body: "ok", latency=0.5) as ep:
        target = wire.endpoint(ep.base_url, "k", 10.0, 65536)
        took: list[float] = []

        def call() -> None:
            start = time.monotonic()
            wire.post_json(target, "/chat/completions", BODY)
            took.append(time.monotonic() - start)

        threads = [threading.Thread(target=call) for _ in range(50)]
        start = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(took) == 50 and min(took) >= 0.5
        assert time.monotonic() - start < 5.0, "50 requests in flight at once wait 0.5 s together, not in turn"
