"""The chat path over https, against a loopback TLS server signed by a test certificate authority
(``trustme``): a reply arrives on both request paths, and a certificate that does not verify is one
final error line, never retried and never waived."""
from __future__ import annotations

import ssl

import pytest

trustme = pytest.importorskip("trustme")

from mcbuild.llm import client as client_mod
from mcbuild.llm.client import ChatClient, LLMError
from mcbuild.llm.testing import ScriptedEndpoint

HI = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def authority():
    return trustme.CA()


def _context(ca, host: str):
    """A server-side TLS context with a certificate ``ca`` issued for ``host``."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(host).configure_cert(ctx)
    return ctx


def trust(monkeypatch, tmp_path, ca) -> None:
    """Point SSL_CERT_FILE (read by both request paths) at ``ca``'s certificate."""
    pem = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(pem))
    monkeypatch.setenv("SSL_CERT_FILE", str(pem))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


def make(ep: ScriptedEndpoint, sleep=None, **kw) -> ChatClient:
    return ChatClient(ep.settings(**kw), **({"sleep": sleep} if sleep else {}))


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "library"])
def test_a_reply_arrives_over_https(monkeypatch, tmp_path, authority, direct):
    trust(monkeypatch, tmp_path, authority)
    if not direct:
        monkeypatch.setattr(client_mod.wire, "direct_ok", lambda base_url: False)
    with ScriptedEndpoint(lambda messages: '{"ok": 1}', tls=_context(authority, "127.0.0.1")) as ep:
        assert ep.base_url.startswith("https://")
        client = make(ep)
        assert (client._direct is not None) == direct
        first, second = client.chat(HI), client.chat(HI)         # the second reuses the kept-alive TLS connection
    assert first.text == second.text == '{"ok": 1}' and first.attempts == second.attempts == 1
    assert len(ep.requests) == 2


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "library"])
@pytest.mark.parametrize("case", ["unknown authority", "wrong host"])
def test_a_certificate_that_does_not_verify_is_one_final_line(monkeypatch, tmp_path, authority, direct, case):
    if case == "unknown authority":                   # signed by a CA the client was never told about
        trust(monkeypatch, tmp_path, trustme.CA())
        ctx = _context(authority, "127.0.0.1")
    else:                                             # a trusted CA, but issued for another host name
        trust(monkeypatch, tmp_path, authority)
        ctx = _context(authority, "api.example.org")
    if not direct:
        monkeypatch.setattr(client_mod.wire, "direct_ok", lambda base_url: False)
    waits: list[float] = []
    with ScriptedEndpoint(lambda messages: '{"ok": 1}', tls=ctx) as ep:
        with pytest.raises(LLMError) as err:
            make(ep, max_retries=3, sleep=waits.append).chat(HI)
    message = str(err.value)
    assert "\n" not in message and "TLS certificate did not verify" in message and "SSL_CERT_FILE" in message
    assert waits == [] and ep.requests == []          # not retried, and nothing was sent unverified
