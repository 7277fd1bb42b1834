"""The chat client's direct request path (mcbuild/llm/wire.py): the same replies, retries,
Retry-After waits, timeouts and errors as the openai library path it replaces for chat calls."""
from __future__ import annotations

import socket

import pytest

from mcbuild.llm import client as client_mod
from mcbuild.llm import wire
from mcbuild.llm.client import ChatClient, LLMError
from mcbuild.llm.settings import ModelSettings
from mcbuild.llm.testing import PRICES, ScriptedEndpoint

HI = [{"role": "user", "content": "hi"}]


def scripted_client(base_url: str, *, sleep=None, **settings) -> ChatClient:
    s = ModelSettings(model="scripted", base_url=base_url, api_key_env="MCBUILD_TEST_NO_KEY", prices=PRICES, **settings)
    return ChatClient(s) if sleep is None else ChatClient(s, sleep=sleep)


def make(ep: ScriptedEndpoint, **kw) -> ChatClient:
    return scripted_client(ep.base_url, **kw)


def test_both_paths_give_the_same_result(monkeypatch):
    with ScriptedEndpoint(lambda messages: '{"ok": 1}') as ep:
        direct = make(ep)
        assert direct._direct is not None
        a = direct.chat(HI)
        monkeypatch.setattr(client_mod.wire, "direct_ok", lambda base_url: False)
        library = make(ep)
        assert library._direct is None
        b = library.chat(HI)
    assert (a.text, a.usage, a.attempts, a.messages) == (b.text, b.usage, b.attempts, b.messages)
    assert ep.requests[0] == ep.requests[1]


def test_retry_after_is_honoured_and_a_4xx_is_final():
    waits: list[float] = []
    with ScriptedEndpoint(lambda messages: "{}", fail_first=2, fail_status=429, retry_after="7") as ep:
        result = make(ep, sleep=waits.append).chat(HI)
        assert result.attempts == 3 and waits == [7.0, 7.0]
        ep.fail_first, ep.fail_status = 1, 400
        with pytest.raises(LLMError, match=r"HTTP 400: Error code: 400 - .*overloaded"):
            make(ep, sleep=waits.append).chat(HI)
    assert len(waits) == 2 and len(ep.requests) == 4


def test_a_timeout_is_retried_then_reported():
    waits: list[float] = []
    with ScriptedEndpoint(lambda messages: "{}", latency=1.0) as ep:
        with pytest.raises(LLMError, match=r"timed out after 2 attempt\(s\)"):
            make(ep, timeout=0.2, max_retries=1, backoff=0.0, sleep=waits.append).chat(HI)
    assert len(waits) == 1


def test_a_connection_closed_while_idle_is_reopened_once():
    with ScriptedEndpoint(lambda messages: '{"n": 1}') as ep:
        client = make(ep)
        client.chat(HI)
        conn, reused = wire._connection(client._direct, fresh=False)
        assert reused
        conn.sock.shutdown(socket.SHUT_RDWR)
        assert client.chat(HI).attempts == 1
    assert len(ep.requests) == 2


def test_unreachable_endpoint_is_a_readable_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(LLMError, match=r"cannot reach model 'scripted' at .* after 1 attempt\(s\): Connection error"):
        scripted_client(f"http://127.0.0.1:{port}/v1", max_retries=0).chat(HI)


def test_a_proxy_from_the_environment_keeps_the_library_path(monkeypatch):
    for var in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                "NO_PROXY"):
        monkeypatch.delenv(var, raising=False)
    assert wire.direct_ok("https://api.example.com/v1")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example.com:3128")
    assert not wire.direct_ok("https://api.example.com/v1") and wire.direct_ok("http://api.example.com/v1")
    monkeypatch.setenv("NO_PROXY", "api.example.com")
    assert wire.direct_ok("https://api.example.com/v1")


# ---------------------------------------------------------------------------- endpoint faults (issue 25 item 4)
def faulty(replies):
    """A responder giving ``replies`` in turn, then a good reply."""
    it = iter(replies)
    return lambda messages: next(it, '{"ok": 1}')


@pytest.mark.parametrize("bad, problem", [
    (None, "the reply's message content is null"),
    ({"choices": []}, "the reply has no choices"),
    ({"object": "chat.completion"}, "the reply has no choices"),
    ("x" * 2000, "the reply is larger than 1000 bytes"),
])
def test_an_unusable_reply_is_retried_then_an_endpoint_fault(bad, problem):
    with ScriptedEndpoint(faulty([bad])) as ep:
        assert make(ep, max_retries=1, backoff=0, max_reply_bytes=1000).chat(HI).text == '{"ok": 1}'
    with ScriptedEndpoint(faulty([bad] * 3)) as ep:
        with pytest.raises(LLMError, match=f"unusable reply after 2 attempt.*{problem}"):
            make(ep, max_retries=1, backoff=0, max_reply_bytes=1000).chat(HI)
    assert len(ep.requests) == 2


def test_the_library_path_caps_a_reply_too(monkeypatch):
    monkeypatch.setattr(client_mod.wire, "direct_ok", lambda base_url: False)
    with ScriptedEndpoint(faulty(["x" * 2000, None] * 2)) as ep:
        with pytest.raises(LLMError, match="larger than 1000 bytes"):
            make(ep, max_retries=0, max_reply_bytes=1000).chat(HI)
        with pytest.raises(LLMError, match="content is null"):
            make(ep, max_retries=0, max_reply_bytes=1000).chat(HI)


def test_the_timeout_bounds_the_whole_request():
    import time

    with ScriptedEndpoint(lambda messages: '{"ok": 1}', drip=1.0) as ep:     # about 280 s for the whole reply
        start = time.monotonic()
        with pytest.raises(LLMError, match="timed out after 2 attempt"):
            make(ep, timeout=0.4, max_retries=1, backoff=0).chat(HI)
        assert time.monotonic() - start < 120    # two attempts of 0.4 s, however loaded the machine


# ---------------------------------------------------------------------------- the request bytes and reply framing
@pytest.mark.parametrize("body", [
    {"model": "m", "messages": [{"role": "system", "content": "S\u00e9 \"q\"\n"}, {"role": "user", "content": "u"}],
     "temperature": 0.7, "max_tokens": 2048, "top_p": 1, "seed": None, "stream": False,
     "chat_template_kwargs": {"enable_thinking": False}},
    {"messages": [{"content": "s", "role": "system"}, {"role": "assistant", "content": "a", "name": "x"}]},
    {}, {"a": 1.0}, {"a": 1}, {"a": True},
])
def test_the_body_is_the_bytes_json_dumps_makes(body):
    import json

    member = b', "response_format": {"type": "json_object"}'
    assert b"".join(wire.body_parts(body)) == json.dumps(body).encode()
    assert b"".join(wire.body_parts(body, member)) == json.dumps(body).encode()[:-1] + member + b"}"


def serve_raw(replies: list[bytes]):
    """A one-connection server answering each request with the next raw reply (then closing)."""
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)

    def run() -> None:
        for reply in replies:
            conn, _ = srv.accept()
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, rest = data.partition(b"\r\n\r\n")
                length = int(next(v for k, _, v in (h.partition(b": ") for h in head.split(b"\r\n"))
                                  if k.lower() == b"content-length"))
                while len(rest) < length:
                    rest += conn.recv(65536)
                conn.sendall(reply)
        srv.close()

    threading.Thread(target=run, daemon=True).start()
    return f"http://127.0.0.1:{srv.getsockname()[1]}/v1"


def completion(text: str) -> bytes:
    import json

    return json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1}}).encode()


def test_chunked_and_close_delimited_replies_are_read_whole():
    body = completion('{"ok": 1}')
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
               + b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 7]), body[i:i + 7]) for i in range(0, len(body), 7))
               + b"0\r\n\r\n")
    to_end = b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + body
    base = serve_raw([chunked, to_end])
    client = scripted_client(base, max_retries=0)
    assert client.chat(HI).text == '{"ok": 1}'
    assert client.chat(HI).text == '{"ok": 1}'


def test_a_chunked_reply_past_the_cap_is_an_endpoint_fault():
    body = completion("x" * 3000)
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    base = serve_raw([chunked])
    with pytest.raises(LLMError, match="larger than 1000 bytes"):
        scripted_client(base, max_retries=0, max_reply_bytes=1000).chat(HI)


@pytest.mark.parametrize("reply, problem", [
    (b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * 70000, "headers run past"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n", "bad chunk size"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"1" * 70000, "chunk-size line"),
    (b"SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP/1.x status line"),
])
def test_a_damaged_reply_head_is_one_readable_endpoint_fault(reply, problem):
    base = serve_raw([reply])
    with pytest.raises(LLMError, match=problem):
        scripted_client(base, max_retries=0).chat(HI)
