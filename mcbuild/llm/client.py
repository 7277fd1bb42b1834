"""The project's one OpenAI-compatible chat client (LLM agents, Designer and Judge).

* Any chat-completions endpoint: OpenAI, vLLM, llama.cpp server, Ollama (``base_url``).
* The client takes one model's :class:`~mcbuild.llm.settings.ModelSettings` whole (endpoint,
  sampling, retries, limits); ``providers.py`` turns them into a request's fields.
* The API key comes from the environment variable the settings name (``api_key_env``); a local
  endpoint (localhost / 127.0.0.1 / ::1) may run without one and gets a dummy key.
* Chat requests go over a kept-alive HTTP/1.1 connection per thread (``wire.py``: the
  ``openai`` library costs about 4 ms of CPU per call) unless a proxy applies to the endpoint;
  model listings and proxied endpoints use ``openai``. Both paths fail the same ways.
* Endpoint faults only (connection, timeout, 429, 5xx, and a reply with no choices, a null
  content or more than ``max_reply_bytes`` bytes) are retried with exponential backoff,
  full jitter and the server's ``Retry-After`` (``transport.py``); a 4xx reply or an exhausted
  retry budget becomes one ``LLMError`` with a readable message. ``max_in_flight`` caps the
  requests this process has in flight to the endpoint, whatever the number of threads.
* Every call records token usage and its USD cost from a price table (``prices.json`` next to
  this file, or the settings' own), so loops can save and sum them.
* ``chat_json`` extracts one JSON object from a reply and validates it; an unparseable or
  invalid reply gets a bounded number of repair turns before ``LLMReplyError``.

:func:`preflight` gives one clear :class:`LLMError` (missing key, unreachable endpoint, rejected
key, unknown model) before any episode starts.
"""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from mcbuild.compiler.core.memo import LRU

from . import wire
from .pricing import cost
from .providers import extra_fields, is_local, request_fields
from .schemas import Prepared, Schema, prepared
from .settings import ModelSettings
from .templates import preview
from .transport import gate, response_headers, retry_after, retry_delay

T = TypeVar("T")
DUMMY_KEY = "sk-local-no-key"


def redact(text: str, secret: str) -> str:
    """``text`` with every occurrence of ``secret`` (an API key) replaced by ``***``."""
    return text.replace(secret, "***") if secret else text


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
    #: prompt tokens the provider served from its prompt cache (``usage.prompt_tokens_details.cached_tokens``,
    #: 0 when it does not say); part of ``prompt_tokens``
    cached_prompt_tokens: int = 0

    def add(self, other: "Usage") -> "Usage":
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_prompt_tokens += other.cached_prompt_tokens
        self.cost_usd = round(self.cost_usd + other.cost_usd, 8)
        self.priced = self.priced and other.priced
        self.calls += other.calls
        return self

    def copy(self) -> "Usage":
        return Usage(self.prompt_tokens, self.completion_tokens, self.cost_usd, self.priced, self.calls,
                     self.cached_prompt_tokens)

    def to_json(self) -> dict[str, Any]:
        """``dataclasses.asdict(self)``, without its generic deep copy (once per action); the cached
        tokens only when there are any."""
        out = {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
               "cost_usd": self.cost_usd, "priced": self.priced, "calls": self.calls}
        return out | ({"cached_prompt_tokens": self.cached_prompt_tokens} if self.cached_prompt_tokens else {})


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


def environment(settings: ModelSettings) -> tuple[str, ...]:
    """The environment variables a client with ``settings`` reads: its key's, then the endpoint
    settings the ``openai`` library reads too (``OPENAI_BASE_URL``, ...)."""
    return (settings.api_key_env, *wire.ENVIRONMENT)


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
    """One model's client; ``sleep`` waits between retries (tests pass their own)."""

    def __init__(self, settings: ModelSettings, *, sleep: Callable[[float], None] = time.sleep):
        import openai

        if not settings.model:
            raise LLMError("a model call needs a model name (--model)")
        key = os.environ.get(settings.api_key_env, "").strip()
        if not key:
            if not is_local(settings.base_url):
                where = settings.base_url or "the OpenAI API"
                raise MissingKey(f"no API key: set ${settings.api_key_env} (or pass --api-key-env VAR) to call "
                                 f"{where}; a local endpoint (--base-url http://127.0.0.1:PORT/v1) needs none")
            key = DUMMY_KEY
        self._key = key
        self.settings = settings
        self.model: str = settings.model
        self.base_url = settings.base_url
        self.prices = settings.price_table()
        self.extra_body = extra_fields(settings)
        self.sleep = sleep
        self.usage = Usage(calls=0)
        self._openai = openai
        self._client = _shared_openai(key, settings.base_url, settings.timeout)
        self._direct = (wire.endpoint(settings.base_url, key, settings.timeout, settings.max_reply_bytes)
                        if wire.direct_ok(settings.base_url) else None)

    # ------------------------------------------------------------------ one call
    def chat(self, messages: list[dict[str, str]], *, max_tokens: int | None = None,
             retry: bool = True, schema: Schema | None = None) -> ChatResult:
        """One completion; retries endpoint faults only; raises ``LLMError`` on failure.

        ``schema`` is the reply's JSON Schema: sent as ``response_format`` when ``structured`` is on."""
        s = self.settings
        body = {"model": self.model, "messages": messages, **request_fields(s, max_tokens),
                **self.extra_body}          # provider fields go top-level, as the SDK's extra_body does
        fmt = prepared(schema, s.structured, s.id_enum) if schema and s.structured != "off" else None
        attempt = 0
        while True:
            attempt += 1
            try:
                with gate(self.base_url, s.max_in_flight):
                    reply = self._post(body, fmt, attempt - 1)
                text = self._content(reply)
                break
            except Exception as exc:  # noqa: BLE001 - sorted by _transient / _final below
                final = self._final(exc, attempt)
                if final is not None:
                    raise final from None
                if not retry or attempt > s.max_retries:
                    raise self._error(self._exhausted(exc, attempt)) from None
                wait = retry_after(response_headers(exc))
                self.sleep(retry_delay(attempt, s.backoff, server_wait=wait))
        u = reply.get("usage") if isinstance(reply, dict) else None
        u = u if isinstance(u, dict) else {}
        prompt = int(u.get("prompt_tokens") or 0)
        completion = int(u.get("completion_tokens") or 0)
        details = u.get("prompt_tokens_details")
        cached = int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0
        usd, priced = cost(self.prices, self.model, prompt, completion)
        usage = Usage(prompt, completion, usd, priced, calls=1, cached_prompt_tokens=cached)
        self.usage.add(usage)
        return ChatResult(text, usage, self.model, attempt, list(messages))

    def _post(self, body: dict[str, Any], fmt: Prepared | None, retries: int) -> Any:
        """The reply JSON of one chat request, the ``retries``-th retry of it (sent as the ``openai``
        library's ``X-Stainless-Retry-Count``): the direct path (``wire.py``) unless a proxy applies."""
        if self._direct is not None:
            return wire.post_json(self._direct, "/chat/completions", body, fmt.member if fmt else b"", retries)
        from openai.types.chat import ChatCompletion

        if fmt is not None:
            body = {**body, "response_format": fmt.body}
        return self._client.post("/chat/completions", body=body, cast_to=ChatCompletion,
                                 options={"headers": {"X-Stainless-Retry-Count": str(retries)}}).model_dump()

    def _content(self, reply: Any) -> str:
        """The message text of a reply; :class:`EmptyReply` or ``ReplyTooLarge`` when the endpoint failed."""
        try:
            text = reply["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise EmptyReply("the reply has no choices") from None
        if text is None:
            raise EmptyReply("the reply's message content is null")
        cap = self.settings.max_reply_bytes
        if len(text) > cap and len(text.encode()) > cap:   # the library path
            raise wire.ReplyTooLarge(cap)
        return text

    def _final(self, exc: Exception, attempt: int) -> LLMError | None:
        """The error a failed request ends with, or None when it is transient (connection, timeout,
        429, 5xx, a reply that is not JSON) and may be retried. Anything else propagates."""
        oa = self._openai
        if isinstance(exc, (wire.WireConnectionError, oa.APIConnectionError, oa.RateLimitError,
                            oa.InternalServerError, ValueError)):
            return None
        if isinstance(exc, wire.WireStatusError):
            return None if exc.transient else self._error(self._describe(exc, attempt))
        if isinstance(exc, oa.APIStatusError):
            return self._error(self._describe(exc, attempt))
        if isinstance(exc, oa.OpenAIError):
            return self._error(f"{self._where()}: {exc}")
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
            raise self._error(f"cannot reach {self._where()}: {exc}") from None
        except oa.APIStatusError as exc:
            if exc.status_code in (404, 405, 501):
                return None
            raise LLMError(f"{self._where()}: HTTP {exc.status_code} while listing models") from None

    def _error(self, text: str) -> LLMError:
        """An ``LLMError`` of ``text`` with the API key masked: an endpoint may echo the request's
        Authorization header in its error body, and the message goes to stderr and the fault log."""
        return LLMError(redact(text, self._key))

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
            except Exception as exc:  # noqa: BLE001 - whatever `validate` refuses is "repair this"
                problem = preview(str(exc), 1500)
            if turn == repairs:
                break
            note = repair_prompt(problem) if repair_prompt else (
                f"Your reply could not be used: {problem}\nReply again with only the corrected JSON object.")
            convo = convo + [{"role": "assistant", "content": result.text}, {"role": "user", "content": note}]
        raise LLMReplyError(f"{self._where()}: no valid JSON reply after {repairs} repair attempt(s): {problem}",
                            calls)


def preflight(settings: ModelSettings) -> None:
    """Check key, endpoint and model before any episode starts; one ``LLMError`` otherwise.

    Lists the endpoint's models; when the endpoint has no model listing, makes one 1-token call
    instead. A listing that does not contain the model is an error only when the listing is
    non-empty (some proxies list nothing).
    """
    client = ChatClient(settings)
    listed = client.list_models()
    if listed is None:
        client.chat([{"role": "user", "content": "ping"}], max_tokens=1, retry=False)
        return
    if listed and client.model not in listed:
        shown = ", ".join(sorted(listed)[:8])
        raise LLMError(f"model {client.model!r} at {client.base_url or 'api.openai.com'}: the endpoint does not serve this "
                       f"model (it lists: {shown})")
