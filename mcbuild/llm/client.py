"""The project's one OpenAI-compatible chat client (LLM agents, Designer and Judge) and the agents' settings.

* Any chat-completions endpoint: OpenAI, vLLM, llama.cpp server, Ollama (``base_url``).
* The API key comes from an environment variable (``OPENAI_API_KEY`` unless told otherwise); a
  local endpoint (localhost / 127.0.0.1 / ::1) may run without one and gets a dummy key.
* Chat requests go over a kept-alive HTTP/1.1 connection per thread (``wire.py``: the
  ``openai`` library costs about 4 ms of CPU per call) unless a proxy applies to the endpoint;
  model listings and proxied endpoints use ``openai``. Both paths fail the same ways.
* Endpoint faults only (connection, timeout, 429, 5xx, and a reply with no choices, a null
  content or more than ``max_reply_bytes`` bytes) are retried with exponential backoff,
  full jitter and the server's ``Retry-After`` (``transport.py``); a 4xx reply or an exhausted
  retry budget becomes one ``LLMError`` with a readable message. ``max_in_flight`` caps the
  requests this process has in flight to the endpoint, whatever the number of threads.
* Every call records token usage and its USD cost from a price table (``prices.json`` next to
  this file, or a table passed in), so loops can save and sum them.
* ``chat_json`` extracts one JSON object from a reply and validates it; an unparseable or
  invalid reply gets a bounded number of repair turns before ``LLMReplyError``.

:class:`LLMSettings` and :func:`build_client` fix what every agent request carries — temperature
0.7, at most 2,048 output tokens, provider-side reasoning switched off where the provider has
such a field — and :func:`preflight` gives one clear :class:`LLMError` (missing key, unreachable
endpoint, rejected key, unknown model) before any episode starts.
"""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, TypeVar
from urllib.parse import urlparse

from mcbuild.compiler.core.memo import LRU
from . import wire
from .schemas import STRUCTURED, Prepared, Schema, prepared
from .templates import preview
from .transport import MAX_BACKOFF, gate, response_headers, retry_after, retry_delay

T = TypeVar("T")
PRICES_FILE = Path(__file__).with_name("prices.json")
LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}
DUMMY_KEY = "sk-local-no-key"


class LLMError(Exception):
    """A configuration or transport problem the CLI reports as one line (missing key, endpoint down)."""


class MissingKey(LLMError):
    """No API key for an endpoint that needs one (the CLI adds the command's key-free mode)."""


class EmptyReply(ValueError):
    """A reply with no choices or a null message content: the endpoint failed, not the model."""


class LLMReplyError(LLMError):
    """The model kept replying with something that is not the requested JSON object."""

    def __init__(self, message: str, calls: list["ChatResult"]):
        super().__init__(message)
        self.calls = calls


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    priced: bool = True
    calls: int = 0

    def add(self, other: "Usage") -> "Usage":
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd = round(self.cost_usd + other.cost_usd, 8)
        self.priced = self.priced and other.priced
        self.calls += other.calls
        return self

    def copy(self) -> "Usage":
        return Usage(self.prompt_tokens, self.completion_tokens, self.cost_usd, self.priced, self.calls)

    def to_json(self) -> dict[str, Any]:
        """``dataclasses.asdict(self)``, without its generic deep copy (once per action)."""
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "cost_usd": self.cost_usd, "priced": self.priced, "calls": self.calls}


@dataclass
class ChatResult:
    text: str
    usage: Usage
    model: str
    attempts: int = 1
    messages: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "attempts": self.attempts, "usage": self.usage.to_json(),
                "messages": self.messages, "reply": self.text}


def load_prices(path: Path | None = None) -> dict[str, dict[str, float]]:
    """Model -> {"input": USD per 1M prompt tokens, "output": USD per 1M completion tokens}. The
    package's own table is read once per process (every LLM episode's client asks for it; with
    hundreds of episodes opening at once the reads were 7% of a worker's CPU); a file of one's own
    is read on every call."""
    return _default_prices() if path is None else _prices(Path(path))


def _prices(path: Path) -> dict[str, dict[str, float]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if not k.startswith("_")}


@lru_cache(maxsize=1)
def _default_prices() -> dict[str, dict[str, float]]:
    return _prices(PRICES_FILE)


def cost(prices: dict[str, dict[str, float]], model: str, prompt: int, completion: int) -> tuple[float, bool]:
    """USD cost of one call, and whether the model was in the table (longest-prefix match)."""
    entry = prices.get(model)
    if entry is None:
        prefixes = sorted((k for k in prices if model.startswith(k)), key=len, reverse=True)
        entry = prices[prefixes[0]] if prefixes else None
    if entry is None:
        return 0.0, False
    return round((prompt * entry["input"] + completion * entry["output"]) / 1_000_000, 8), True


def is_local(base_url: str | None) -> bool:
    return bool(base_url) and (urlparse(base_url).hostname or "") in LOCAL_HOSTS


def extract_json(text: str) -> Any:
    """The one JSON object in a reply, tolerating Markdown fences or prose around it, and raw control
    characters (a newline) inside strings: llama.cpp's grammar for a length-bounded string lets them
    through."""
    stripped = text.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", stripped, re.S)
    if fence:
        stripped = fence.group(1).strip()
    try:
        return json.loads(stripped, strict=False)
    except json.JSONDecodeError:
        start, end = stripped.find("{"), stripped.rfind("}")
        if start == -1 or end <= start:
            raise
        return json.loads(stripped[start:end + 1], strict=False)


def environment(api_key_env: str) -> tuple[str, ...]:
    """The environment variables a client reads for a model whose key is in ``api_key_env``: the key,
    then the endpoint settings the ``openai`` library reads too (``OPENAI_BASE_URL``, ...)."""
    return (api_key_env, *wire.ENVIRONMENT)


OPENAI_CLIENTS = 8       # (process, key, endpoint, timeout) combinations kept
_OPENAI: LRU[Any] = LRU(OPENAI_CLIENTS)


def _shared_openai(key: str, base_url: str | None, timeout: float) -> Any:
    """This process's ``openai.OpenAI`` for (key, endpoint, timeout): building one costs about
    0.25 s (TLS context, connection pool), and one instance serves any number of threads. Keyed
    by process id too: a forked worker must never share its parent's open connections."""
    import openai

    return _OPENAI.get_or_make((os.getpid(), key, base_url, timeout), lambda: openai.OpenAI(
        api_key=key, base_url=base_url, max_retries=0, timeout=timeout))


class ChatClient:
    def __init__(self, model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY", *,
                 prices: dict[str, dict[str, float]] | None = None, max_retries: int = 3, backoff: float = 1.0,
                 timeout: float = 120.0, temperature: float | None = None, max_tokens: int | None = None,
                 extra_body: dict[str, Any] | None = None, sleep: Callable[[float], None] = time.sleep,
                 max_in_flight: int | None = None, max_backoff: float = MAX_BACKOFF, top_p: float | None = None,
                 seed: int | None = None, structured: str = "off", id_enum: bool = True,
                 max_reply_bytes: int = wire.MAX_REPLY_BYTES):
        import openai

        key = os.environ.get(api_key_env, "").strip()
        if not key:
            if not is_local(base_url):
                where = base_url or "the OpenAI API"
                raise MissingKey(f"no API key: set ${api_key_env} (or pass --api-key-env VAR) to call {where}; "
                                 "a local endpoint (--base-url http://127.0.0.1:PORT/v1) needs none")
            key = DUMMY_KEY
        self.model = model
        self.base_url = base_url
        self.prices = load_prices() if prices is None else prices
        self.max_retries = max_retries
        self.backoff = backoff
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.top_p, self.seed = top_p, seed
        if structured not in STRUCTURED:
            raise LLMError(f"structured must be one of {', '.join(STRUCTURED)}, got {structured!r}")
        self.structured, self.id_enum = structured, id_enum
        self.extra_body = extra_body or {}
        self.sleep = sleep
        self.max_in_flight = max_in_flight
        self.max_backoff = max_backoff
        self.max_reply_bytes = max_reply_bytes
        self.usage = Usage(calls=0)
        self._openai = openai
        self._client = _shared_openai(key, base_url, timeout)
        self._direct = wire.endpoint(base_url, key, timeout, max_reply_bytes) if wire.direct_ok(base_url) else None

    # ------------------------------------------------------------------ one call
    def chat(self, messages: list[dict[str, str]], *, max_tokens: int | None = None,
             retry: bool = True, schema: Schema | None = None) -> ChatResult:
        """One completion; retries endpoint faults only; raises ``LLMError`` on failure.

        ``schema`` is the reply's JSON Schema: sent as ``response_format`` when ``structured`` is on."""
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if self.top_p is not None:
            kwargs["top_p"] = self.top_p
        if (max_tokens or self.max_tokens) is not None:
            kwargs["max_tokens"] = max_tokens or self.max_tokens
        if self.seed is not None:
            kwargs["seed"] = self.seed
        body = {**kwargs, **self.extra_body}      # provider fields go top-level, as the SDK's extra_body does
        fmt = prepared(schema, self.structured, self.id_enum) if schema and self.structured != "off" else None
        attempt = 0
        while True:
            attempt += 1
            try:
                with gate(self.base_url, self.max_in_flight):
                    reply = self._post(body, fmt)
                text = self._content(reply)
                break
            except Exception as exc:  # noqa: BLE001 - sorted by _transient / _final below
                final = self._final(exc, attempt)
                if final is not None:
                    raise final from None
                if not retry or attempt > self.max_retries:
                    raise LLMError(self._exhausted(exc, attempt)) from None
                wait = retry_after(response_headers(exc))
                self.sleep(retry_delay(attempt, self.backoff, server_wait=wait, max_backoff=self.max_backoff))
        u = reply.get("usage") if isinstance(reply, dict) else None
        u = u if isinstance(u, dict) else {}
        prompt = int(u.get("prompt_tokens") or 0)
        completion = int(u.get("completion_tokens") or 0)
        usd, priced = cost(self.prices, self.model, prompt, completion)
        usage = Usage(prompt, completion, usd, priced, calls=1)
        self.usage.add(usage)
        return ChatResult(text, usage, self.model, attempt, list(messages))

    def _post(self, body: dict[str, Any], fmt: Prepared | None) -> Any:
        """The reply JSON of one chat request: the direct path (``wire.py``) unless a proxy applies."""
        if self._direct is not None:
            return wire.post_json(self._direct, "/chat/completions", body, fmt.member if fmt else b"")
        from openai.types.chat import ChatCompletion

        if fmt is not None:
            body = {**body, "response_format": fmt.body}
        return self._client.post("/chat/completions", body=body, cast_to=ChatCompletion).model_dump()

    def _content(self, reply: Any) -> str:
        """The message text of a reply; :class:`EmptyReply` or ``ReplyTooLarge`` when the endpoint failed."""
        try:
            text = reply["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise EmptyReply("the reply has no choices") from None
        if text is None:
            raise EmptyReply("the reply's message content is null")
        if len(text) > self.max_reply_bytes and len(text.encode()) > self.max_reply_bytes:   # the library path
            raise wire.ReplyTooLarge(self.max_reply_bytes)
        return text

    def _final(self, exc: Exception, attempt: int) -> LLMError | None:
        """The error a failed request ends with, or None when it is transient (connection, timeout,
        429, 5xx, a reply that is not JSON) and may be retried. Anything else propagates."""
        oa = self._openai
        if isinstance(exc, (wire.WireConnectionError, oa.APIConnectionError, oa.RateLimitError,
                            oa.InternalServerError, ValueError)):
            return None
        if isinstance(exc, wire.WireStatusError):
            return None if exc.transient else LLMError(self._describe(exc, attempt))
        if isinstance(exc, oa.APIStatusError):
            return LLMError(self._describe(exc, attempt))
        if isinstance(exc, oa.OpenAIError):
            return LLMError(f"{self._where()}: {exc}")
        raise exc

    def _exhausted(self, exc: Exception, attempt: int) -> str:
        if isinstance(exc, ValueError):      # no usable reply (not JSON, empty, too large): the endpoint misbehaved
            return f"{self._where()}: unusable reply after {attempt} attempt(s): {exc}"
        return self._describe(exc, attempt)

    def list_models(self) -> list[str] | None:
        """Model ids the endpoint lists; None when it has no listing. Raises ``LLMError`` on
        a rejected key or an unreachable endpoint."""
        oa = self._openai
        try:
            return [m.id for m in self._client.models.list()]
        except oa.AuthenticationError:
            raise LLMError(f"{self._where()}: the API key was rejected (HTTP 401)") from None
        except oa.APIConnectionError as exc:
            raise LLMError(f"cannot reach {self._where()}: {exc}") from None
        except oa.APIStatusError as exc:
            if exc.status_code in (404, 405, 501):
                return None
            raise LLMError(f"{self._where()}: HTTP {exc.status_code} while listing models") from None

    def _where(self) -> str:
        return f"model {self.model!r} at {self.base_url or 'api.openai.com'}"

    def _describe(self, exc: Exception, attempts: int) -> str:
        oa = self._openai
        if isinstance(exc, (wire.WireTimeout, oa.APITimeoutError)):
            return f"{self._where()}: timed out after {attempts} attempt(s)"
        if isinstance(exc, (wire.WireConnectionError, oa.APIConnectionError)):
            return f"cannot reach {self._where()} after {attempts} attempt(s): {exc}"
        status = getattr(exc, "status_code", None)
        if status == 401:
            return f"{self._where()}: the API key was rejected (HTTP 401)"
        if isinstance(exc, (wire.WireStatusError, oa.APIStatusError)):
            return f"{self._where()}: HTTP {status}: {preview(exc.message, 300)}"
        return f"{self._where()}: {exc}"

    # ------------------------------------------------------------------ JSON replies
    def chat_json(self, messages: list[dict[str, str]], validate: Callable[[Any], T], *, repairs: int = 2,
                  repair_prompt: Callable[[str], str] | None = None,
                  schema: Schema | None = None) -> tuple[T, list[ChatResult]]:
        """Ask for one JSON object; an unparseable or invalid reply gets up to ``repairs`` repair turns.

        ``validate`` receives the parsed JSON and returns the typed value or raises (its message
        goes back to the model). Returns the value and every call made (for transcripts).
        """
        convo = list(messages)
        calls: list[ChatResult] = []
        for turn in range(repairs + 1):
            result = self.chat(convo, schema=schema)
            calls.append(result)
            try:
                return validate(extract_json(result.text)), calls
            except Exception as exc:  # json or pydantic: both are "repair this"
                problem = preview(str(exc), 1500)
            if turn == repairs:
                break
            note = repair_prompt(problem) if repair_prompt else (
                f"Your reply could not be used: {problem}\nReply again with only the corrected JSON object.")
            convo = convo + [{"role": "assistant", "content": result.text}, {"role": "user", "content": note}]
        raise LLMReplyError(f"{self._where()}: no valid JSON reply after {repairs} repair attempt(s): {problem}",
                            calls)


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
    max_in_flight: int | None = None             # requests in flight to the endpoint, per process
    top_p: float | None = None
    sampling_seed: int | None = None             # the provider's ``seed`` (not the episode's)
    structured: str = "off"                      # off | json_object | json_schema (schemas.py)
    id_enum: bool = True                         # json_schema: item/block/entity ids as registry enums
    max_reply_bytes: int = wire.MAX_REPLY_BYTES  # a larger reply is an endpoint fault

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
    if host in LOCAL_HOSTS:
        return {"chat_template_kwargs": {"enable_thinking": False}}
    return {}


def build_client(settings: LLMSettings | dict) -> ChatClient:
    """The shared client configured for agents; raises ``LLMError`` when the key is missing."""
    s = LLMSettings.from_mapping(settings)
    body = dict(s.extra_body) if s.extra_body is not None else (reasoning_off_body(s.base_url) if s.reasoning_off else {})
    return ChatClient(s.model, s.base_url, s.api_key_env, prices=s.price_table(), max_retries=s.max_retries,
                      backoff=s.backoff, timeout=s.timeout, temperature=s.temperature, max_tokens=s.max_tokens,
                      extra_body=body, max_in_flight=s.max_in_flight, top_p=s.top_p, seed=s.sampling_seed,
                      structured=s.structured, id_enum=s.id_enum, max_reply_bytes=s.max_reply_bytes)


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
