"""Scripted endpoints that refuse as each provider family documents or its users report: the status, the
shape of the error body and its message (sources: mcbuild/llm/profiles.yaml, the row of the same name).

``family(name, responder)`` is a :class:`ScriptedEndpoint` (mcbuild/llm/testing.py) with
that family's ``refuse`` rule, its usage fields and its model-listing name. Only what the profiles rely
on is scripted: the token cap's name, the sampling fields, ``response_format`` and its json-word rule,
the reasoning switch, unknown fields, usage, and (Azure) the key header and api-version.
"""
from __future__ import annotations

import fnmatch
from typing import Any, Callable

from mcbuild.llm.client import DUMMY_KEY
from mcbuild.llm.testing import ScriptedEndpoint

Refusal = "tuple[int, Any] | None"
OPENAI_FIELDS = {"model", "messages", "temperature", "top_p", "max_tokens", "max_completion_tokens", "seed",
                 "response_format", "stop", "n", "user", "stream", "tools", "tool_choice"}


def openai_error(message: str, param: str | None = None, code: str | None = None,
                 kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def says_json(body: dict[str, Any]) -> bool:
    return any("json" in str(m.get("content", "")).lower() for m in body.get("messages", []))


def unrecognized(body: dict[str, Any], known: set[str]) -> Refusal:
    """OpenAI's answer to a field it does not know (param and code null)."""
    extra = [k for k in body if k not in known]
    if extra:
        return 400, openai_error(f"Unrecognized request argument supplied: {extra[0]}")
    return None


def json_word(body: dict[str, Any]) -> Refusal:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_object" and not says_json(body):
        return 400, openai_error("'messages' must contain the word 'json' in some form, to use 'response_format' "
                                 "of type 'json_object'.", "messages")
    return None


# ---------------------------------------------------------------------------- OpenAI
def openai_chat(request) -> Refusal:
    """gpt-4.1 and kin: any unknown field refused; json_object needs the word json."""
    return unrecognized(request.body, OPENAI_FIELDS) or json_word(request.body)


REASONING_EFFORTS = {"o*": ("low", "medium", "high"), "gpt-5": ("minimal", "low", "medium", "high"),
                     "gpt-5-*": ("minimal", "low", "medium", "high"),
                     "gpt-5.*": ("none", "low", "medium", "high", "xhigh")}


def openai_reasoning(request) -> Refusal:
    """o-series and GPT-5.x: max_tokens refused; a temperature or top_p other than 1 refused (GPT-5.1 and
    later take them while reasoning_effort is none, its default); each model's own effort values."""
    body = request.body
    found = unrecognized(body, OPENAI_FIELDS | {"reasoning_effort"})
    if found:
        return found
    if "max_tokens" in body:
        return 400, openai_error("Unsupported parameter: 'max_tokens' is not supported with this model. "
                                 "Use 'max_completion_tokens' instead.", "max_tokens", "unsupported_parameter")
    model = body["model"]
    efforts = next(v for k, v in REASONING_EFFORTS.items() if fnmatch.fnmatch(model, k))
    effort = body.get("reasoning_effort")
    if effort is not None and effort not in efforts:
        return 400, openai_error(f"Unsupported value: 'reasoning_effort' does not support '{effort}' with this "
                                 f"model. Supported values are: {', '.join(repr(e) for e in efforts)}.",
                                 "reasoning_effort", "unsupported_value")
    sampling_free = fnmatch.fnmatch(model, "gpt-5.*") and effort in (None, "none")
    for name in ("temperature", "top_p"):
        if name in body and body[name] != 1 and not sampling_free:
            return 400, openai_error(f"Unsupported value: '{name}' does not support {body[name]} with this model. "
                                     "Only the default (1) value is supported.", name, "unsupported_value")
    return json_word(body)


# ---------------------------------------------------------------------------- Azure
def azure(key: str, serves: str = "gpt-4.1") -> Callable[[Any], Refusal]:
    """Azure OpenAI: the key in an api-key header, api-version on deployment URLs; the deployment (named
    as its owner likes) then answers as the OpenAI model it ``serves``."""
    def refuse(request) -> Refusal:
        if request.headers.get("api-key") != key:
            return 401, {"error": {"code": "401", "message": "Access denied due to invalid subscription key or "
                                   "wrong API endpoint."}}
        if "/deployments/" in request.path and "api-version" not in request.query:
            return 404, {"error": {"code": "404", "message": "Resource not found"}}
        served = type(request)(request.path, request.query, request.headers, {**request.body, "model": serves})
        return (openai_chat if serves.startswith("gpt-4") else openai_reasoning)(served)
    return refuse


# ---------------------------------------------------------------------------- Google
GEMINI_FIELDS = OPENAI_FIELDS | {"reasoning_effort", "extra_body"}


def gemini_error(message: str) -> dict[str, Any]:
    return [{"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}]  # type: ignore[return-value]


def gemini(request) -> Refusal:
    """Errors as a one-element JSON list; an unknown field is "Unknown name ... Cannot find field"; the
    reasoning efforts the endpoint takes (not minimal, whatever the docs say)."""
    body = request.body
    extra = [k for k in body if k not in GEMINI_FIELDS]
    if extra:
        return 400, gemini_error(f'Invalid JSON payload received. Unknown name "{extra[0]}": Cannot find field.')
    effort = body.get("reasoning_effort")
    if effort is not None and effort not in ("high", "low", "medium", "none"):
        return 400, gemini_error(f"Invalid reasoning_effort: {effort}. Valid values are: high, low, medium, none")
    return None


def gemini_usage(body: dict[str, Any]) -> dict[str, Any]:
    return {"prompt_tokens_details": {"cached_tokens": 60}, "completion_tokens_details": {"reasoning_tokens": 0}}


# ---------------------------------------------------------------------------- DeepSeek
def deepseek(request) -> Refusal:
    """json_schema refused in DeepSeek's words; json_object needs the word json (DeepSeek documents the
    rule, not its message: OpenAI's wording stands in); other fields are ignored."""
    fmt = request.body.get("response_format") or {}
    if fmt.get("type") not in (None, "text", "json_object"):
        return 400, {"error": {"message": "This response_format type is unavailable now",
                               "type": "invalid_request_error", "param": None, "code": "invalid_request_error"}}
    return json_word(request.body)


def deepseek_usage(body: dict[str, Any]) -> dict[str, Any]:
    return {"prompt_cache_hit_tokens": 60, "prompt_cache_miss_tokens": 40}


# ---------------------------------------------------------------------------- the rest
def accepting(request) -> Refusal:
    """Anthropic's compatibility layer, OpenRouter, vLLM, SGLang, Ollama: fields they do not use are ignored."""
    return None


def llamacpp(request) -> Refusal:
    """llama-cpp-python's server (0.3.36): its request model takes response_format types text and
    json_object only, and its error handler answers the failed validation with HTTP 500 (not 422)."""
    fmt = request.body.get("response_format") or {}
    if fmt.get("type") not in (None, "text", "json_object"):
        detail = ("[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be "
                  f"'text' or 'json_object'\", 'input': '{fmt.get('type')}'}}]")
        return 500, openai_error(detail, kind="internal_server_error")
    return None


def strict_proxy(request) -> Refusal:
    """A LiteLLM proxy or an SSH tunnel to a hosted API on 127.0.0.1: OpenAI's fields only."""
    return unrecognized(request.body, OPENAI_FIELDS)


def cached_usage(body: dict[str, Any]) -> dict[str, Any]:
    return {"prompt_tokens_details": {"cached_tokens": 60}}


FAMILIES: dict[str, tuple[Callable[[Any], Refusal], Callable[[dict], dict] | None, str, str]] = {
    # profile: (refuse, usage, model, owned_by)
    "openai-chat": (openai_chat, cached_usage, "gpt-4.1-mini", "system"),
    "openai-reasoning": (openai_reasoning, cached_usage, "o4-mini", "system"),
    "openai-gpt5x": (openai_reasoning, cached_usage, "gpt-5.6-sol", "system"),
    "azure-openai": (azure(DUMMY_KEY), cached_usage, "team-gpt-41", "system"),     # a deployment serving gpt-4.1
    "gemini": (gemini, gemini_usage, "gemini-3.1-flash-lite", "google"),
    "deepseek": (deepseek, deepseek_usage, "deepseek-v4-flash", "deepseek"),
    "anthropic": (accepting, cached_usage, "claude-sonnet-4-5", "anthropic"),
    "openrouter": (accepting, cached_usage, "qwen/qwen3-32b", "openrouter"),
    "vllm": (accepting, cached_usage, "Qwen/Qwen3-8B", "vllm"),
    "sglang": (accepting, cached_usage, "Qwen/Qwen3-8B", "sglang"),
    "llamacpp": (llamacpp, None, "smollm2-135m", "llamacpp"),
    "ollama": (accepting, None, "qwen3:8b", "library"),
    "local": (strict_proxy, None, "gpt-4.1-mini", "litellm"),
}


def family(name: str, responder: Callable[[list[dict[str, str]]], Any], **kw: Any) -> ScriptedEndpoint:
    """A scripted endpoint answering as the ``name`` family does (a profile name of FAMILIES)."""
    refuse, usage, model, owned_by = FAMILIES[name]
    return ScriptedEndpoint(responder, model=model, refuse=kw.pop("refuse", refuse), usage=usage,
                            owned_by=owned_by, **kw)
