"""Settings and the model client of the LLM agents: a thin layer over ``designer_judge.client``.

The project has one OpenAI-compatible client (:class:`designer_judge.client.ChatClient`: API key
from an env var, transport-only retries with backoff, usage and USD cost from a price table).
This module fixes what every agent request carries — temperature 0.7, at most 2,048 output
tokens, provider-side reasoning switched off where the provider has such a field — and offers
:func:`preflight`: one clear :class:`LLMError` (missing key, unreachable endpoint, rejected key,
unknown model) before any episode starts.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from designer_judge.client import ChatClient, LLMError, LLMReplyError, Usage, load_prices

__all__ = ["LLMSettings", "LLMError", "LLMReplyError", "Usage", "build_client", "preflight", "reasoning_off_body"]

TEMPERATURE = 0.7
MAX_OUTPUT_TOKENS = 2048


@dataclass
class LLMSettings:
    """What the episode CLI / study runner hands to an LLM configuration's factory."""

    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    prices: str | Path | dict[str, dict[str, float]] | None = None   # table, a JSON file, or None = default
    temperature: float = TEMPERATURE
    max_tokens: int = MAX_OUTPUT_TOKENS
    reasoning_off: bool = True
    extra_body: dict[str, Any] | None = None     # overrides the per-provider reasoning switch when given
    max_retries: int = 3
    backoff: float = 1.0
    timeout: float = 120.0

    @classmethod
    def from_mapping(cls, data: Any) -> "LLMSettings":
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            data = {k: getattr(data, k) for k in cls.__dataclass_fields__ if hasattr(data, k)}
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and v is not None}
        if "model" not in known:
            raise LLMError("an LLM agent needs a model name (--model)")
        return cls(**known)

    def price_table(self) -> dict[str, dict[str, float]]:
        if isinstance(self.prices, dict):
            return self.prices
        return load_prices(Path(self.prices) if self.prices else None)


def reasoning_off_body(base_url: str | None) -> dict[str, Any]:
    """The request field that turns provider-side reasoning off, where the provider has one.

    Only fields the provider is known to accept are sent (strict endpoints reject unknown ones):
    OpenRouter ``reasoning``, Gemini's OpenAI endpoint ``reasoning_effort``, and the chat-template
    switch of local vLLM / SGLang servers (``chat_template_kwargs.enable_thinking``).
    The plain OpenAI API gets nothing: its chat models do not reason unless asked.
    """
    host = (urlparse(base_url).hostname or "") if base_url else ""
    if host.endswith("openrouter.ai"):
        return {"reasoning": {"enabled": False}}
    if host.endswith("generativelanguage.googleapis.com"):
        return {"reasoning_effort": "none"}
    if host.endswith("deepseek.com"):
        return {"thinking": {"type": "disabled"}}
    if host in {"localhost", "127.0.0.1", "::1", "0.0.0.0"}:
        return {"chat_template_kwargs": {"enable_thinking": False}}
    return {}


def build_client(settings: LLMSettings | dict) -> ChatClient:
    """The shared client configured for agents; raises ``LLMError`` when the key is missing."""
    s = LLMSettings.from_mapping(settings)
    body = dict(s.extra_body) if s.extra_body is not None else (reasoning_off_body(s.base_url) if s.reasoning_off else {})
    return ChatClient(s.model, s.base_url, s.api_key_env, prices=s.price_table(), max_retries=s.max_retries,
                      backoff=s.backoff, timeout=s.timeout, temperature=s.temperature, max_tokens=s.max_tokens,
                      extra_body=body)


def preflight(settings: LLMSettings | dict) -> None:
    """Check key, endpoint and model before any episode starts; one ``LLMError`` otherwise.

    Lists the endpoint's models; when the endpoint has no model listing, makes one 1-token call
    instead. A listing that does not contain the model is an error only when the listing is
    non-empty (some proxies list nothing).
    """
    s = LLMSettings.from_mapping(settings)
    client = build_client(s)
    listed = client.list_models()
    if listed is None:
        client.chat([{"role": "user", "content": "ping"}], max_tokens=1, retry=False)
        return
    if listed and s.model not in listed:
        shown = ", ".join(sorted(listed)[:8])
        raise LLMError(f"model {s.model!r} at {s.base_url or 'api.openai.com'}: the endpoint does not serve this "
                       f"model (it lists: {shown})")
