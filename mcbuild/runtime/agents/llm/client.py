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
import ssl
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, TypeVar
from urllib.parse import urlencode, urlparse

from mcbuild.compiler.core.memo import LRU
from mcbuild.compiler.core.templates import preview
from mcbuild.llm import profiles
from mcbuild.llm.shape import Adjustment, Asked, Plan, announce, plan, read_refusal, rules_for, says_json

from . import wire
from .schemas import STRUCTURED, Prepared, Schema, prepared
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
    cached_prompt_tokens: int = 0        # of prompt_tokens, read from the provider's cache (billed at a discount)
    reasoning_tokens: int = 0            # of completion_tokens, spent on the provider's own reasoning

    def add(self, other: "Usage") -> "Usage":
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd = round(self.cost_usd + other.cost_usd, 8)
        self.priced = self.priced and other.priced
        self.calls += other.calls
        self.cached_prompt_tokens += other.cached_prompt_tokens
        self.reasoning_tokens += other.reasoning_tokens
        return self

    def copy(self) -> "Usage":
        return Usage(self.prompt_tokens, self.completion_tokens, self.cost_usd, self.priced, self.calls,
                     self.cached_prompt_tokens, self.reasoning_tokens)

    def to_json(self) -> dict[str, Any]:
        """``dataclasses.asdict(self)``, without its generic deep copy (once per action)."""
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "cost_usd": self.cost_usd, "priced": self.priced, "calls": self.calls,
                "cached_prompt_tokens": self.cached_prompt_tokens, "reasoning_tokens": self.reasoning_tokens}


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


def load_prices(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """Model -> {"input": USD per 1M prompt tokens, "output": USD per 1M completion tokens, and
    optionally "cached_input": USD per 1M prompt tokens read from the provider's cache}. The
    package's own table is read once per process (every LLM episode's client asks for it; with
    hundreds of episodes opening at once the reads were 7% of a worker's CPU); a file of one's own
    is read on every call."""
    return _default_prices() if path is None else _prices(Path(path))


def _prices(path: Path) -> dict[str, dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if not k.startswith("_")}


@lru_cache(maxsize=1)
def _default_prices() -> dict[str, dict[str, Any]]:
    return _prices(PRICES_FILE)


def price_entry(prices: dict[str, dict[str, Any]], model: str) -> dict[str, Any] | None:
    """The table's entry for ``model``: its own, else the longest name it starts with; None when unpriced."""
    entry = prices.get(model)
    if entry is None:
        prefixes = sorted((k for k in prices if model.startswith(k)), key=len, reverse=True)
        entry = prices[prefixes[0]] if prefixes else None
    return entry


def cost(prices: dict[str, dict[str, Any]], model: str, prompt: int, completion: int,
         cached: int = 0) -> tuple[float, bool]:
    """USD cost of one call, and whether the model was in the table (longest-prefix match). ``cached``
    of the ``prompt`` tokens are billed at the entry's ``cached_input`` price (its ``input`` price when
    it has none)."""
    entry = price_entry(prices, model)
    if entry is None:
        return 0.0, False
    cached = min(max(cached, 0), prompt)
    usd = (prompt - cached) * entry["input"] + cached * entry.get("cached_input", entry["input"]) \
        + completion * entry["output"]
    return round(usd / 1_000_000, 8), True


def _certificate_failure(exc: BaseException) -> str | None:
    """Why the server's TLS certificate did not verify, when that is what ``exc`` (either path's
    error, or what it was raised from) comes down to; None otherwise."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, wire.WireCertificateError):
            return seen.detail
        if isinstance(seen, ssl.SSLCertVerificationError):
            return seen.verify_message or str(seen)
        seen = seen.__cause__ or seen.__context__
    return None


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


DEFAULT_TIMEOUT = 120.0
OPENAI_CLIENTS = 8       # (process, key, endpoint, timeout) combinations kept
_OPENAI: LRU[Any] = LRU(OPENAI_CLIENTS)


def _shared_openai(key: str, base_url: str | None, timeout: float, headers: tuple[tuple[str, str], ...] = (),
                   query: tuple[tuple[str, str], ...] = ()) -> Any:
    """This process's ``openai.OpenAI`` for (key, endpoint, timeout, headers, query): building one
    costs about 0.25 s (TLS context, connection pool), and one instance serves any number of threads.
    Keyed by process id too: a forked worker must never share its parent's open connections."""
    import openai

    return _OPENAI.get_or_make((os.getpid(), key, base_url, timeout, headers, query), lambda: openai.OpenAI(
        api_key=key, base_url=base_url, max_retries=0, timeout=timeout, default_headers=dict(headers) or None,
        default_query=dict(query) or None))


def _mode(fmt: Prepared | None) -> str:
    """The ``structured`` mode a prepared ``response_format`` stands for (llama.cpp's schema form is
    ``json_schema`` written as a ``json_object`` with a schema)."""
    if fmt is None:
        return "off"
    kind = fmt.body.get("type")
    return "json_schema" if kind == "json_schema" or "schema" in fmt.body else "json_object"


def _error_body(exc: Exception) -> str:
    """The body of an error reply, from either request path."""
    body = getattr(exc, "body", None)
    if isinstance(body, str):
        return body
    response = getattr(exc, "response", None)
    text = getattr(response, "text", None)
    if isinstance(text, str) and text:
        return text
    return json.dumps(body) if body is not None else str(exc)


def _dig(usage: dict[str, Any], paths: tuple[str, ...]) -> int:
    """The first of ``paths`` (dotted, into a reply's usage) that holds a number; 0 when none does."""
    for path in paths:
        node: Any = usage
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, (int, float)) and not isinstance(node, bool):
            return int(node)
    return 0


class ChatClient:
    """One model at one endpoint: its requests shaped by the model's provider profile
    (``mcbuild/llm/profiles.yaml``) and by what the endpoint refused (``mcbuild/llm/shape.py``)."""

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str | None = None, *,
                 prices: dict[str, dict[str, Any]] | None = None, max_retries: int = 3, backoff: float = 1.0,
                 timeout: float | None = None, temperature: float | None = None, max_tokens: int | None = None,
                 extra_body: dict[str, Any] | None = None, sleep: Callable[[float], None] = time.sleep,
                 max_in_flight: int | None = None, max_backoff: float = MAX_BACKOFF, top_p: float | None = None,
                 seed: int | None = None, structured: str = "off", id_enum: bool = True,
                 max_reply_bytes: int = wire.MAX_REPLY_BYTES, reasoning: bool = False,
                 provider: str | None = None, adapt: bool = True):
        import openai

        if structured not in STRUCTURED:
            raise LLMError(f"structured must be one of {', '.join(STRUCTURED)}, got {structured!r}")
        base_url = base_url or profiles.default_base_url(model, provider)
        self.profile = profiles.select(model, base_url, provider)
        api_key_env = api_key_env or self.profile.key_env or "OPENAI_API_KEY"
        key = os.environ.get(api_key_env, "").strip()
        if not key:
            if self.profile.key == "required" and not is_local(base_url):
                where = base_url or "the OpenAI API"
                raise MissingKey(f"no API key: set ${api_key_env} (or pass --api-key-env VAR) to call {where}; "
                                 "a local endpoint (--base-url http://127.0.0.1:PORT/v1) needs none")
            key = DUMMY_KEY
        self.model = model
        self.base_url = base_url
        self.prices = load_prices() if prices is None else prices
        self.max_retries = max_retries
        self.backoff = backoff
        self.asked = Asked(temperature, top_p, seed, max_tokens, structured, reasoning,
                           tuple((extra_body or {}).items()))
        self.structured, self.id_enum, self.adapt = structured, id_enum, adapt
        self.sleep = sleep
        timeout = timeout if timeout is not None else (self.profile.timeout or DEFAULT_TIMEOUT)
        self.max_in_flight = max_in_flight if max_in_flight is not None else self.profile.max_in_flight
        self.max_backoff = max_backoff
        self.max_reply_bytes = max_reply_bytes
        self.usage = Usage(calls=0)
        self._openai = openai
        auth = (("api-key", key),) if self.profile.auth == "api-key" else ()
        query = tuple(self.profile.query.items())
        self._route = "/chat/completions" + (f"?{urlencode(query)}" if query else "")
        self._client = _shared_openai(key, base_url, timeout, auth, query)
        self._direct = wire.endpoint(base_url, key, timeout, max_reply_bytes, auth_header=self.profile.auth) \
            if wire.direct_ok(base_url) else None
        self.rules = rules_for(base_url or wire.DEFAULT_BASE_URL, model)
        self._plan: Plan | None = None
        self._generation = -1

    @property
    def plan(self) -> Plan:
        """The fields this client's requests carry now (rebuilt after the endpoint taught a new rule)."""
        if self._generation != self.rules.generation or self._plan is None:
            self._generation = self.rules.generation
            self._plan = plan(self.profile, self.asked, self.rules)
        return self._plan

    @property
    def adjustments(self) -> tuple[Adjustment, ...]:
        """Every way its requests differ from what the settings asked (profile first, then endpoint)."""
        return self.plan.adjustments

    def request(self, messages: list[dict[str, str]], *, max_tokens: int | None = None,
                schema: Schema | None = None) -> tuple[dict[str, Any], Prepared | None]:
        """The body of the request ``chat`` would send now, and its prepared ``response_format``."""
        shape = self.plan
        body: dict[str, Any] = {"model": self.model, "messages": messages, **dict(shape.fields)}
        if max_tokens is not None and shape.cap in body:
            body[shape.cap] = max_tokens
        mode = shape.structured if schema is not None else "off"
        if mode == "json_object" and shape.json_word and not says_json(messages):
            mode = "off"              # the endpoint would refuse json_object without the word json
        fmt = prepared(schema, mode, self.id_enum, shape.schema_form) if schema is not None and mode != "off" else None
        return body, fmt

    # ------------------------------------------------------------------ one call
    def chat(self, messages: list[dict[str, str]], *, max_tokens: int | None = None,
             retry: bool = True, schema: Schema | None = None, accepted_only: bool = False) -> ChatResult:
        """One completion; retries endpoint faults only, adapts once to a refusal of a field the client
        chose (unless ``adapt`` is off); raises ``LLMError`` on failure.

        ``schema`` is the reply's JSON Schema: sent as ``response_format`` when ``structured`` is on.
        ``accepted_only`` (the preflight): a reply the endpoint sent with status 200 is enough, whatever
        its content (an unusable content is the study's to log as a fault, not the preflight's)."""
        attempt = 0
        body, fmt = self.request(messages, max_tokens=max_tokens, schema=schema)
        while True:
            attempt += 1
            try:
                with gate(self.base_url, self.max_in_flight):
                    reply = self._post(body, fmt)
                text = self._content(reply)
                break
            except Exception as exc:  # noqa: BLE001 - sorted by _refused / _final below
                if accepted_only and isinstance(exc, ValueError):
                    reply, text = {}, ""                 # a reply came: the request's shape was accepted
                    break
                if self._refused(exc, body, fmt):
                    body, fmt = self.request(messages, max_tokens=max_tokens, schema=schema)
                    continue
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
        cached, reasoning = _dig(u, self.profile.usage.cached), _dig(u, self.profile.usage.reasoning)
        usd, priced = cost(self.prices, self.model, prompt, completion, cached)
        usage = Usage(prompt, completion, usd, priced, 1, cached, reasoning)
        self.usage.add(usage)
        return ChatResult(text, usage, self.model, attempt, list(messages))

    def _post(self, body: dict[str, Any], fmt: Prepared | None) -> Any:
        """The reply JSON of one chat request: the direct path (``wire.py``) unless a proxy applies."""
        if self._direct is not None:
            return wire.post_json(self._direct, self._route, body, fmt.member if fmt else b"")
        from openai.types.chat import ChatCompletion

        if fmt is not None:
            body = {**body, "response_format": fmt.body}
        return self._client.post("/chat/completions", body=body, cast_to=ChatCompletion).model_dump()

    def _refused(self, exc: Exception, body: dict[str, Any], fmt: Prepared | None) -> bool:
        """Whether ``exc`` refused a field the client chose and the client adapted to it (the request is
        then sent again). Raises ``LLMError`` for such a refusal when ``adapt`` is off or nothing is
        left to change."""
        status = getattr(exc, "status_code", None)
        if not isinstance(exc, (wire.WireStatusError, self._openai.APIStatusError)) or status is None:
            return False
        if status not in (400, 422, 500):         # a 500 may refuse the request's shape (llama-cpp-python)
            return False
        sent = dict(body)
        if fmt is not None:
            sent["response_format"] = fmt.body
        refusal = read_refusal(_error_body(exc), sent)
        if refusal is None:
            return False
        if not self.adapt:
            raise LLMError(f"{self._where()}: the endpoint refused {refusal.field} (HTTP {status}: "
                           f"{refusal.message}); adapt is off, so the study stops here") from None
        adjustment = self.rules.learn(refusal, sent, _mode(fmt))
        if adjustment is None:
            if status >= 500:
                return False             # a 5xx that names a field already adapted: a fault after all
            raise LLMError(f"{self._where()}: HTTP {status}: {refusal.message}") from None
        announce(self.model, self.base_url, adjustment)
        return True

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
        certificate = _certificate_failure(exc)
        if certificate is not None:
            return LLMError(f"{self._where()}: the server's TLS certificate did not verify ({certificate}); "
                            "point SSL_CERT_FILE at the CA bundle that signed it")
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
PROBE = Schema("preflight", lambda ids: {"type": "object", "properties": {"ok": {"type": "boolean"}},
                                          "required": ["ok"], "additionalProperties": False})
PROBE_MESSAGES = [{"role": "user", "content": 'Reply with the JSON object {"ok": true} and nothing else.'}]


@dataclass
class LLMSettings:
    """What the episode CLI / study runner hands to an LLM configuration's factory."""

    model: str
    base_url: str | None = None                  # None: the profile's endpoint for the model name, or OpenAI's
    api_key_env: str | None = None               # None: the profile's key variable (OPENAI_API_KEY, GEMINI_API_KEY, ...)
    prices: str | Path | dict[str, dict[str, Any]] | None = None   # table, a JSON file, or None = default
    temperature: float = TEMPERATURE
    max_tokens: int = MAX_OUTPUT_TOKENS
    reasoning_off: bool = True
    extra_body: dict[str, Any] | None = None     # fields merged over the profile's reasoning switch (null drops one)
    max_retries: int = 3
    backoff: float = 1.0
    timeout: float | None = None                 # None: the profile's (600 s for one-request servers) or 120 s
    max_in_flight: int | None = None             # requests in flight to the endpoint, per process (None: the profile's)
    top_p: float | None = None
    sampling_seed: int | None = None             # the provider's ``seed`` (not the episode's)
    structured: str = "off"                      # off | json_object | json_schema (schemas.py)
    id_enum: bool = True                         # json_schema: item/block/entity ids as registry enums
    max_reply_bytes: int = wire.MAX_REPLY_BYTES  # a larger reply is an endpoint fault
    provider: str | None = None                  # a profile of mcbuild/llm/profiles.yaml (None: chosen by endpoint)
    adapt: bool = True                           # adapt to a refusal of a field the client chose (on the record)

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

    def price_table(self) -> dict[str, dict[str, Any]]:
        if isinstance(self.prices, dict):
            return self.prices
        return load_prices(Path(self.prices) if self.prices else None)


def build_client(settings: LLMSettings | dict) -> ChatClient:
    """The shared client configured for agents; raises ``LLMError`` when the key is missing."""
    s = LLMSettings.from_mapping(settings)
    return ChatClient(s.model, s.base_url, s.api_key_env, prices=s.price_table(), max_retries=s.max_retries,
                      backoff=s.backoff, timeout=s.timeout, temperature=s.temperature, max_tokens=s.max_tokens,
                      extra_body=s.extra_body, max_in_flight=s.max_in_flight, top_p=s.top_p, seed=s.sampling_seed,
                      structured=s.structured, id_enum=s.id_enum, max_reply_bytes=s.max_reply_bytes,
                      reasoning=not s.reasoning_off, provider=s.provider, adapt=s.adapt)


def preflight(settings: LLMSettings | dict, probe: tuple[list[dict[str, str]], Schema | None] | None = None) \
        -> tuple[Adjustment, ...]:
    """Check key, endpoint, model and the request's shape before any episode starts; one ``LLMError``
    (the provider's own message, on one line) otherwise.

    Lists the endpoint's models (a listing that does not contain the model is an error only when it is
    non-empty: some proxies list nothing), then sends one real request with the exact fields every call
    will carry: ``probe`` (the study's first messages and reply schema), or a short request for a JSON
    object under the same settings. A refusal of a field the client chose is adapted to, as in any call.
    Returns every adjustment in force (the profile's and the endpoint's)."""
    s = LLMSettings.from_mapping(settings)
    client = build_client(s)
    listed = client.list_models()
    if listed and s.model not in listed:
        shown = ", ".join(sorted(listed)[:8])
        raise LLMError(f"model {s.model!r} at {client.base_url or 'api.openai.com'}: the endpoint does not serve "
                       f"this model (it lists: {shown})")
    messages, schema = probe if probe is not None else (PROBE_MESSAGES, PROBE)
    client.chat(messages, schema=schema, accepted_only=True)
    return client.adjustments
