"""What a model's chat requests carry: its settings as its provider profile and the endpoint's refusals
leave them, and a record of every difference.

:class:`Asked` is what the settings ask for (the paper's temperature 0.7, a 2,048-token cap, reasoning
off, a ``structured`` mode). :func:`plan` turns it into the fields each request sends under a
:class:`~mcbuild.llm.profiles.Profile` and the :class:`Rules` learnt from the endpoint, and lists each
:class:`Adjustment`: a sampling value left to the provider's default, a ``response_format`` stepped
down, a reasoning switch the family does not have.

:func:`read_refusal` reads an error reply (any provider's error body: OpenAI's object, Gemini's list,
a FastAPI ``detail``) and names the field the refusal is about, when it is one the client chose (a
renamed token cap, a sampling value, an optional field, the ``response_format``). :class:`Rules`
(one per endpoint and model in a process, shared by every client and thread) remembers each such
adaptation, so it is made once; the client then sends the request again.
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from .profiles import SAMPLING_FIELDS, Profile

STEP_DOWN = {"json_schema": "json_object", "json_object": "off", "off": "off"}
FIXED = ("model", "messages")                # fields a refusal can never be adapted away from


@dataclass(frozen=True)
class Asked:
    """What a model's settings ask every request to carry."""

    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    max_tokens: int | None = None
    structured: str = "off"
    reasoning: bool = False                  # the provider's own reasoning left on (the paper: off)
    extra_body: tuple[tuple[str, Any], ...] = ()   # the user's fields, over the profile's switch (None drops one)


@dataclass(frozen=True)
class Adjustment:
    """One way the requests differ from what the settings asked, and why."""

    field: str                               # temperature, top_p, seed, token_cap, response_format, reasoning, <extra field>
    asked: Any
    sent: Any                                # None: not sent (the provider's default)
    source: str                              # "profile <name>" or "endpoint"
    reason: str                              # the profile's words, or the endpoint's own message

    def line(self) -> str:
        """One clause for a warning, ``study status`` and the report's settings table."""
        if self.field == "token_cap":
            return f"token cap sent as {self.sent} (the endpoint refused {self.asked}: {self.reason})"
        now = "provider default" if self.sent is None else f"{self.sent}"
        why = f"the endpoint refused {_shown(self.asked)}: {self.reason}" if self.source == "endpoint" \
            else f"{self.source}: {self.reason}"
        return f"{self.field}: {now} ({why})"

    def to_json(self) -> dict[str, Any]:
        return {"field": self.field, "asked": self.asked, "sent": self.sent, "source": self.source,
                "reason": self.reason}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Adjustment":
        return cls(d["field"], d.get("asked"), d.get("sent"), d["source"], d.get("reason", ""))


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


@dataclass
class Rules:
    """What one endpoint taught about one model's requests (the adaptations made so far)."""

    cap: str | None = None                   # the token cap's name, once the endpoint renamed it
    dropped: dict[str, Adjustment] = field(default_factory=dict)   # fields no longer sent
    structured: str | None = None            # the highest response_format mode it still takes
    records: list[Adjustment] = field(default_factory=list)
    generation: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def learn(self, refusal: "Refusal", sent: dict[str, Any], structured: str) -> Adjustment | None:
        """Adapt to ``refusal`` of a request that carried ``sent`` under ``structured``; the new
        adjustment, or None when there is nothing left to change for it."""
        with self.lock:
            if refusal.field == "response_format":
                mode = STEP_DOWN[structured]
                if structured == "off" or (self.structured is not None and self.structured == mode):
                    return None
                adj = Adjustment("response_format", structured, mode, "endpoint", refusal.message)
                self.structured = mode
            elif refusal.rename_to is not None:
                if self.cap is not None or refusal.field not in sent:    # renamed once already
                    return None
                adj = Adjustment("token_cap", refusal.field, refusal.rename_to, "endpoint", refusal.message)
                self.cap = refusal.rename_to
            else:
                if refusal.field in self.dropped or refusal.field not in sent or refusal.field in FIXED:
                    return None
                adj = Adjustment(refusal.field, sent[refusal.field], None, "endpoint", refusal.message)
                self.dropped[refusal.field] = adj
            self.records.append(adj)
            self.generation += 1
            return adj


_RULES: dict[tuple[str, str], Rules] = {}
_RULES_LOCK = threading.Lock()


def rules_for(endpoint: str, model: str) -> Rules:
    """This process's rules for ``model`` at ``endpoint`` (one object, shared by every client)."""
    key = (endpoint, model)
    with _RULES_LOCK:
        rules = _RULES.get(key)
        if rules is None:
            rules = _RULES[key] = Rules()
        return rules


Listener = Callable[[str, "str | None", "Adjustment"], None]
_LISTENERS: list[Listener] = []


def listen(callback: Listener) -> Callable[[], None]:
    """Call ``callback(model, base_url, adjustment)`` for every adaptation this process makes from now
    on (a CLI prints it as one ``warning:`` line); returns the function that stops it."""
    _LISTENERS.append(callback)
    return lambda: _LISTENERS.remove(callback) if callback in _LISTENERS else None


def announce(model: str, base_url: str | None, adjustment: Adjustment) -> None:
    for callback in list(_LISTENERS):
        callback(model, base_url, adjustment)


def seed_rules(endpoint: str, model: str, adjustments: list[Adjustment]) -> None:
    """Start a process (a study's worker) with the adaptations the study already made for ``model``."""
    rules = rules_for(endpoint, model)
    with rules.lock:
        for adj in adjustments:
            if adj.source != "endpoint" or adj in rules.records:
                continue
            if adj.field == "token_cap":
                rules.cap = adj.sent
            elif adj.field == "response_format":
                rules.structured = adj.sent
            else:
                rules.dropped[adj.field] = adj
            rules.records.append(adj)
            rules.generation += 1


@dataclass(frozen=True)
class Plan:
    """The fields every request of one client carries (besides model and messages), in request order."""

    fields: tuple[tuple[str, Any], ...]
    cap: str
    structured: str
    schema_form: str
    json_word: bool
    adjustments: tuple[Adjustment, ...]      # the profile's, then the endpoint's


def plan(profile: Profile, asked: Asked, rules: Rules) -> Plan:
    """``asked`` as ``profile`` and ``rules`` let it be sent (the body's order: sampling, cap, seed, extras)."""
    adjustments: list[Adjustment] = []
    accepted = profile.sampling_fields(asked.reasoning)
    source = f"profile {profile.name}"
    sampling: dict[str, Any] = {}
    for name in SAMPLING_FIELDS:
        value = getattr(asked, name)
        if value is None or name in rules.dropped:
            continue
        if name not in accepted:
            adjustments.append(Adjustment(name, value, None, source, f"{profile.title} accepts only its default"))
            continue
        sampling[name] = value
    cap = rules.cap or profile.token_cap
    fields: list[tuple[str, Any]] = [(k, sampling[k]) for k in ("temperature", "top_p") if k in sampling]
    if asked.max_tokens is not None and "max_tokens" not in rules.dropped and cap not in rules.dropped:
        fields.append((cap, asked.max_tokens))
    if "seed" in sampling:
        fields.append(("seed", sampling["seed"]))
    extras: dict[str, Any] = {}
    if not asked.reasoning:
        extras.update(profile.reasoning_off)
        if not profile.reasoning_switchable:
            adjustments.append(Adjustment("reasoning", "off", _shown(profile.reasoning_off) if profile.reasoning_off
                                          else None, source, profile.reasoning_note))
    for key, value in asked.extra_body:
        if value is None:
            extras.pop(key, None)
        else:
            extras[key] = value
    fields += [(k, v) for k, v in extras.items() if k not in rules.dropped and k not in FIXED]
    structured = asked.structured
    while structured != "off" and structured not in profile.structured:
        structured = STEP_DOWN[structured]
    if structured != asked.structured:
        adjustments.append(Adjustment("response_format", asked.structured, structured, source,
                                      f"{profile.title} honours {', '.join(profile.structured) or 'no response_format'}"))
    if rules.structured is not None and _rank(rules.structured) < _rank(structured):
        structured = rules.structured
    return Plan(tuple(fields), cap, structured, profile.schema_form, profile.json_word,
                tuple(adjustments) + tuple(rules.records))


def _rank(mode: str) -> int:
    return ("off", "json_object", "json_schema").index(mode)


def says_json(messages: list[dict[str, Any]]) -> bool:
    """Whether the messages contain the word json (what json_object mode needs on OpenAI and DeepSeek)."""
    return any(isinstance(m.get("content"), str) and "json" in m["content"].lower() for m in messages)


# ---------------------------------------------------------------------------- reading a refusal
@dataclass(frozen=True)
class Refusal:
    """An error reply that names a field the client chose."""

    field: str                               # a top-level request field, or "response_format"
    message: str                             # the provider's own message, one line
    rename_to: str | None = None             # the name the endpoint wants instead (a token cap)


_QUOTED = re.compile(r"""['"`\u2018\u2019]([A-Za-z_][A-Za-z0-9_.]*)['"`\u2018\u2019]""")
_UNRECOGNIZED = re.compile(r"unrecognized request arguments? supplied:\s*([A-Za-z0-9_, ]+)", re.I)
_UNKNOWN_NAME = re.compile(r'unknown name\s+\\?"([A-Za-z0-9_]+)\\?"', re.I)
_INSTEAD = re.compile(r"""use ['"`]?([A-Za-z_]+)['"`]? instead""", re.I)
_UNSUPPORTED = re.compile(r"unsupported parameter|not supported|unrecognized|unknown name|extra (inputs|fields) "
                          r"are not permitted|cannot find field", re.I)


def error_message(body: str) -> tuple[str, str | None]:
    """The message and the ``param`` of an error body (OpenAI's object, Gemini's list, FastAPI's
    ``detail``, or plain text), the message on one line."""
    try:
        data: Any = json.loads(body)
    except (ValueError, TypeError):
        return _one_line(body), None
    if isinstance(data, list) and data and isinstance(data[0], dict):
        data = data[0]
    param: str | None = None
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            param = err.get("param") if isinstance(err.get("param"), str) else None
            message = err.get("message") or err.get("msg") or err.get("detail") or json.dumps(err)
        else:
            message = err
        detail = data.get("detail")
        if isinstance(detail, list) and detail and isinstance(detail[0], dict):   # FastAPI / pydantic
            loc = [str(p) for p in detail[0].get("loc", [])]
            param = loc[1] if len(loc) > 1 and loc[0] == "body" else param
            message = "; ".join(f"{'.'.join(str(p) for p in d.get('loc', []))}: {d.get('msg', '')}" for d in detail[:3])
        return _one_line(message if isinstance(message, str) else json.dumps(message)), param
    return _one_line(str(data)), None


def _one_line(text: str) -> str:
    return " ".join(str(text).split())[:500]


def read_refusal(body: str, sent: dict[str, Any]) -> Refusal | None:
    """The field an error reply refuses, when it names one the client chose (``sent``: the request's
    top-level fields, ``response_format`` included when one was sent); None otherwise."""
    message, param = error_message(body)
    low = message.lower()
    chosen = [k for k in sent if k not in FIXED]
    if "response_format" in sent and ("response_format" in low or "json_schema" in low or param == "response_format"
                                      or "word 'json'" in low or 'word "json"' in low):
        return Refusal("response_format", message)
    found = _UNRECOGNIZED.search(message)
    if found:
        for name in (n.strip() for n in found.group(1).split(",")):
            if name in chosen:
                return Refusal(name, message)
    found = _UNKNOWN_NAME.search(message)
    if found and found.group(1) in chosen:
        return Refusal(found.group(1), message)
    named = [param] if param in chosen else []
    named += [n for n in _QUOTED.findall(message) if n in chosen and n not in named]
    named += [n for n in chosen if n not in named and re.search(rf"\b{re.escape(n)}\b", message)]
    if not named:
        return None
    first = named[0]
    if first in ("max_tokens", "max_completion_tokens"):
        if not _UNSUPPORTED.search(message):
            return None                      # its value refused (too large for the model): the user's to change
        instead = _INSTEAD.search(message)
        other = "max_completion_tokens" if first == "max_tokens" else "max_tokens"
        return Refusal(first, message, rename_to=instead.group(1) if instead and instead.group(1) != first else other)
    return Refusal(first, message)
