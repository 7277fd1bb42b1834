"""What differs between providers: the request fields a model's settings become besides the messages.

This is where provider profiles attach: :func:`request_fields` is the one place that turns
:class:`~mcbuild.llm.settings.ModelSettings` into the sampling fields of a chat request (and their
order, which the bytes on the wire follow), and :func:`extra_fields` the one place that adds
provider-specific fields. Today the only provider-specific field is the reasoning switch, chosen
by the endpoint's host.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from .settings import ModelSettings

LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}


def request_fields(settings: ModelSettings, max_tokens: int | None = None) -> dict[str, Any]:
    """The sampling fields of every chat request, after ``model`` and ``messages``: each one sent
    only when set (``max_tokens``: the call's own cap, else the settings')."""
    fields: dict[str, Any] = {}
    if settings.temperature is not None:
        fields["temperature"] = settings.temperature
    if settings.top_p is not None:
        fields["top_p"] = settings.top_p
    cap = max_tokens or settings.max_tokens
    if cap is not None:
        fields["max_tokens"] = cap
    if settings.sampling_seed is not None:
        fields["seed"] = settings.sampling_seed
    return fields


def extra_fields(settings: ModelSettings) -> dict[str, Any]:
    """The top-level fields sent after the sampling fields: ``extra_body`` when given, else the
    provider's reasoning switch when reasoning is off."""
    if settings.extra_body is not None:
        return dict(settings.extra_body)
    return {} if settings.reasoning else reasoning_off_body(settings.base_url)


def reasoning_off_body(base_url: str | None) -> dict[str, Any]:
    """The request field that turns provider-side reasoning off, where the provider has one.

    Only fields the provider is known to accept are sent (strict endpoints reject unknown ones):
    OpenRouter ``reasoning``, Gemini's OpenAI endpoint ``reasoning_effort``, DeepSeek ``thinking``
    and the chat-template switch of local vLLM / SGLang servers (``chat_template_kwargs.enable_thinking``).
    The plain OpenAI API gets nothing: its chat models do not reason unless asked.
    """
    host = (urlparse(base_url).hostname or "") if base_url else ""
    if host.endswith("openrouter.ai"):
        return {"reasoning": {"enabled": False}}
    if host.endswith("generativelanguage.googleapis.com"):
        return {"reasoning_effort": "none"}
    if host.endswith("deepseek.com"):
        return {"thinking": {"type": "disabled"}}
    if host in LOCAL_HOSTS:
        return {"chat_template_kwargs": {"enable_thinking": False}}
    return {}


def is_local(base_url: str | None) -> bool:
    """Whether ``base_url`` is on this machine (such an endpoint may run without a key)."""
    return bool(base_url) and (urlparse(base_url).hostname or "") in LOCAL_HOSTS
