"""The project's one OpenAI-compatible chat client (LLM agents, Designer and Judge).

* Any chat-completions endpoint: OpenAI, Azure, Gemini, DeepSeek, Anthropic, OpenRouter, vLLM,
  SGLang, llama.cpp, Ollama (``base_url``).
* The client takes one model's :class:`~mcbuild.llm.settings.ModelSettings` whole (endpoint,
  sampling, retries, limits). Its provider profile (``profiles.yaml``, chosen in ``providers.py``)
  shapes every request: the token cap's name, the sampling fields the family accepts, the
  ``response_format`` it honours, its reasoning switch, its key header, where its usage reports
  cached and reasoning tokens. A refusal (400/422, or a 500 that names the request's shape) of a
  field the client chose is adapted to once per endpoint and model and announced (``shape.py``),
  unless the settings say ``adapt: false``.
* The API key comes from the environment variable the settings or the profile name
  (``api_key_env``); a local endpoint, or a server whose profile needs no key, may run without one
  and gets a dummy key.
* A thread holding its process's turn (``turns.py``: a simulator episode of a study) hands it over
  while it waits for the endpoint.
* Chat requests go over a kept-alive HTTP/1.1 connection per thread (``wire.py``: the
  ``openai`` library costs about 4 ms of CPU per call) unless a proxy applies to the endpoint;
  model listings and proxied endpoints use ``openai``. Both paths fail the same ways.
* Endpoint faults only (connection, timeout, 429, 5xx, and a reply with no choices, a null
  content or more than ``max_reply_bytes`` bytes) are retried with exponential backoff,
  full jitter and the server's ``Retry-After`` (``transport.py``); a 4xx reply or an exhausted
  retry budget becomes one ``LLMError`` with a readable message. ``max_in_flight`` caps the
  requests this process has in flight to the endpoint, whatever the number of threads.
* Every call records token usage (cached prompt and reasoning tokens included) and its USD cost
  from a price table (``prices.json`` next to this file, or the settings' own; cached prompt tokens
  at its ``cached_input`` price), so loops can save and sum them.
* ``chat_json`` extracts one JSON object from a reply and validates it; an unparseable or
  invalid reply gets a bounded number of repair turns before ``LLMReplyError``.

:func:`preflight` gives one clear :class:`LLMError` (missing key, unreachable endpoint, rejected
key, unknown model, a refused request field) before any episode starts: it sends one real request
of the study's shape.
"""
from __future__ import annotations

import json
import os
import ssl
import time
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar
from urllib.parse import urlencode

from mcbuild.compiler.core.memo import LRU

from . import turns, wire
from .pricing import cost
from .profiles import Profile
from .providers import asked, is_local, profile_of, resolved
from .replies import extract_json
from .schemas import Prepared, Schema, prepared
from .settings import ModelSettings
from .shape import Adjustment, Plan, announce, plan, read_refusal, rules_for, says_json
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


def environment(settings: ModelSettings) -> tuple[str, ...]:
    """The environment variables a client with ``settings`` reads: its key's, then the endpoint
    settings the ``openai`` library reads too (``OPENAI_BASE_URL``, ...)."""
    return (resolved(settings).api_key_env or "OPENAI_API_KEY", *wire.ENVIRONMENT)


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
    text = getattr(getattr(exc, "response", None), "text", None)
    if isinstance(text, str) and text:
        return text
    return json.dumps(body) if body is not None else str(exc)


def request_body(shape: Plan, model: str, messages: list[dict[str, str]], *, max_tokens: int | None = None,
                 schema: Schema | None = None, id_enum: bool = True) -> tuple[dict[str, Any], Prepared | None]:
    """A chat request's body under ``shape`` (``shape.plan``), and its prepared ``response_format``."""
    body: dict[str, Any] = {"model": model, "messages": messages, **dict(shape.fields)}
    if max_tokens is not None and shape.cap in body:
        body[shape.cap] = max_tokens
    mode = shape.structured if schema is not None else "off"
    if mode == "json_object" and shape.json_word and not says_json(messages):
        mode = "off"                  # the endpoint would refuse json_object without the word json
    fmt = prepared(schema, mode, id_enum, shape.schema_form) if schema is not None and mode != "off" else None
    return body, fmt


def planned_request(settings: ModelSettings, messages: list[dict[str, str]],
                    schema: Schema | None = None) -> tuple[Profile, str, dict[str, Any], tuple[Adjustment, ...]]:
    """What a client with ``settings`` would send first, without a key or a connection (a study's dry
    run): its profile, the URL, the exact body (``response_format`` included) and how it differs from
    the settings as far as the profile and this process's adaptations know."""
    settings = resolved(settings)
    profile = profile_of(settings)
    model = settings.model or ""
    shape = plan(profile, asked(settings), rules_for(settings.base_url or wire.DEFAULT_BASE_URL, model))
    body, fmt = request_body(shape, model, messages, schema=schema, id_enum=settings.id_enum)
    if fmt is not None:
        body["response_format"] = fmt.body
    query = f"?{urlencode(tuple(profile.query.items()))}" if profile.query else ""
    url = (settings.base_url or wire.DEFAULT_BASE_URL).rstrip("/") + "/chat/completions" + query
    return profile, url, body, shape.adjustments


class ChatClient:
    """One model's client, its requests shaped by its provider profile and by what the endpoint refused;
    ``sleep`` waits between retries (tests pass their own)."""

    def __init__(self, settings: ModelSettings, *, sleep: Callable[[float], None] = time.sleep):
        import openai

        if not settings.model:
            raise LLMError("a model call needs a model name (--model)")
        settings = resolved(settings)
        self.profile = profile_of(settings)
        key_env = settings.api_key_env or "OPENAI_API_KEY"
        key = os.environ.get(key_env, "").strip()
        if not key:
            if self.profile.key == "required" and not is_local(settings.base_url):
                where = settings.base_url or "the OpenAI API"
                raise MissingKey(f"no API key: set ${key_env} (or pass --api-key-env VAR) to call "
                                 f"{where}; a local endpoint (--base-url http://127.0.0.1:PORT/v1) needs none")
            key = DUMMY_KEY
        self._key = key
        self.settings = settings
        self.model: str = settings.model or ""
        self.base_url = settings.base_url
        self.prices = settings.price_table()
        self.asked = asked(settings)
        self.sleep = sleep
        self.usage = Usage(calls=0)
        self._openai = openai
        timeout = settings.timeout or 120.0
        auth = (("api-key", key),) if self.profile.auth == "api-key" else ()
        query = tuple(self.profile.query.items())
        self._route = "/chat/completions" + (f"?{urlencode(query)}" if query else "")
        self._client = _shared_openai(key, settings.base_url, timeout, auth, query)
        self._direct = (wire.endpoint(settings.base_url, key, timeout, settings.max_reply_bytes,
                                      auth_header=self.profile.auth) if wire.direct_ok(settings.base_url) else None)
        self.rules = rules_for(settings.base_url or wire.DEFAULT_BASE_URL, self.model)
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
        """Every way its requests differ from what the settings asked (the profile's, then the endpoint's)."""
        return self.plan.adjustments

    def request(self, messages: list[dict[str, str]], *, max_tokens: int | None = None,
                schema: Schema | None = None) -> tuple[dict[str, Any], Prepared | None]:
        """The body of the request ``chat`` would send now, and its prepared ``response_format``."""
        return request_body(self.plan, self.model, messages, max_tokens=max_tokens, schema=schema,
                            id_enum=self.settings.id_enum)

    # ------------------------------------------------------------------ one call
    def chat(self, messages: list[dict[str, str]], *, max_tokens: int | None = None,
             retry: bool = True, schema: Schema | None = None, accepted_only: bool = False) -> ChatResult:
        """One completion; retries endpoint faults only, adapts once to a refusal of a field the client
        chose (unless ``adapt`` is off); raises ``LLMError`` on failure.

        ``schema`` is the reply's JSON Schema: sent as ``response_format`` when ``structured`` is on.
        ``accepted_only`` (the preflight): a reply the endpoint sent with status 200 is enough, whatever
        its content (an unusable content is the study's to log as a fault, not the preflight's)."""
        s = self.settings
        body, fmt = self.request(messages, max_tokens=max_tokens, schema=schema)
        attempt = 0
        while True:
            attempt += 1
            try:
                with turns.away(), gate(self.base_url, s.max_in_flight):     # another episode runs meanwhile
                    reply = self._post(body, fmt, attempt - 1)
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
                if not retry or attempt > s.max_retries:
                    raise self._error(self._exhausted(exc, attempt)) from None
                wait = retry_after(response_headers(exc))
                with turns.away():
                    self.sleep(retry_delay(attempt, s.backoff, server_wait=wait))
        u = reply.get("usage") if isinstance(reply, dict) else None
        u = u if isinstance(u, dict) else {}
        prompt = int(u.get("prompt_tokens") or 0)
        completion = int(u.get("completion_tokens") or 0)
        cached, reasoning = self.profile.usage.read(u)
        usd, priced = cost(self.prices, self.model, prompt, completion, cached)
        usage = Usage(prompt, completion, usd, priced, 1, cached, reasoning)
        self.usage.add(usage)
        return ChatResult(text, usage, self.model, attempt, list(messages))

    def _post(self, body: dict[str, Any], fmt: Prepared | None, retries: int) -> Any:
        """The reply JSON of one chat request, the ``retries``-th retry of it (sent as the ``openai``
        library's ``X-Stainless-Retry-Count``): the direct path (``wire.py``) unless a proxy applies."""
        if self._direct is not None:
            return wire.post_json(self._direct, self._route, body, fmt.member if fmt else b"", retries)
        from openai.types.chat import ChatCompletion

        if fmt is not None:
            body = {**body, "response_format": fmt.body}
        return self._client.post("/chat/completions", body=body, cast_to=ChatCompletion,
                                 options={"headers": {"X-Stainless-Retry-Count": str(retries)}}).model_dump()

    def _refused(self, exc: Exception, body: dict[str, Any], fmt: Prepared | None) -> bool:
        """Whether ``exc`` refused a field the client chose and the client adapted to it (the request is
        then sent again). Raises ``LLMError`` for such a refusal when ``adapt`` is off or nothing is
        left to change."""
        status = getattr(exc, "status_code", None)
        if not isinstance(exc, (wire.WireStatusError, self._openai.APIStatusError)) or status is None:
            return False
        if status not in (400, 422) and not (status == 500 and self.profile.refusal_5xx):
            return False                 # a 500 refuses the request's shape only where the profile says so
        sent = dict(body)
        if fmt is not None:
            sent["response_format"] = fmt.body
        refusal = read_refusal(_error_body(exc), sent)
        if refusal is None:
            return False
        if not self.settings.adapt:
            raise LLMError(f"{self._where()}: the endpoint refused {refusal.field} (HTTP {status}: "
                           f"{refusal.message}); adapt is off, so the study stops here") from None
        adjustment = self.rules.learn(refusal, sent, _mode(fmt))
        if adjustment is None:
            if status >= 500:
                return False             # a 5xx naming a field already adapted to: a fault after all
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
        cap = self.settings.max_reply_bytes
        if len(text) > cap and len(text.encode()) > cap:   # the library path
            raise wire.ReplyTooLarge(cap)
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


PROBE = Schema("preflight", lambda ids: {"type": "object", "properties": {"ok": {"type": "boolean"}},
                                          "required": ["ok"], "additionalProperties": False})
PROBE_MESSAGES = [{"role": "user", "content": 'Reply with the JSON object {"ok": true} and nothing else.'}]


def preflight(settings: ModelSettings, probe: tuple[list[dict[str, str]], Schema | None] | None = None) \
        -> tuple[Adjustment, ...]:
    """Check key, endpoint, model and the request's shape before any episode starts; one ``LLMError``
    (the provider's own message, on one line) otherwise.

    Lists the endpoint's models (a listing that does not contain the model is an error only when it is
    non-empty: some proxies list nothing), then sends one real request with the exact fields every call
    will carry: ``probe`` (the study's first messages and reply schema), or a short request for a JSON
    object under the same settings. A refusal of a field the client chose is adapted to, as in any
    call. Returns every adjustment in force (the profile's and the endpoint's)."""
    client = ChatClient(settings)
    listed = client.list_models()
    if listed and client.model not in listed:
        shown = ", ".join(sorted(listed)[:8])
        raise LLMError(f"model {client.model!r} at {client.base_url or 'api.openai.com'}: the endpoint does not serve this "
                       f"model (it lists: {shown})")
    messages, schema = probe if probe is not None else (PROBE_MESSAGES, PROBE)
    client.chat(messages, schema=schema, accepted_only=True)
    return client.adjustments
