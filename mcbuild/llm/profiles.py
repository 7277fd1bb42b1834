"""Provider profiles: what each family of OpenAI-compatible chat endpoints accepts (``profiles.yaml``).

A profile says, for one family (OpenAI's chat models, its reasoning models, Azure, Gemini, DeepSeek,
Anthropic, OpenRouter, vLLM, SGLang, llama.cpp, Ollama, and any other local or remote server), the name
of the reply-token cap, the sampling fields it accepts, the ``response_format`` modes it honours and how
a schema is written, the request fields that switch its own reasoning off, and where its usage reports
cached and reasoning tokens. Every row cites its sources; the file is the one place these facts live.

:func:`select` picks a model's profile (its ``provider`` setting, else the endpoint's host, path, port and
the model name, else the generic ``local`` or ``openai-compatible`` row); :func:`endpoint_for` gives the
base URL and key variable of a model named without an endpoint (``gemini-*``, ``deepseek-*``, ...).
"""
from __future__ import annotations

import fnmatch
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

PROFILES_FILE = Path(__file__).with_name("profiles.yaml")
DEFAULT_BASE_URL = "https://api.openai.com/v1"
SamplingField = Literal["temperature", "top_p", "seed"]
SAMPLING_FIELDS: tuple[SamplingField, ...] = ("temperature", "top_p", "seed")
StructuredMode = Literal["json_schema", "json_object"]


class ProfileError(ValueError):
    """An unknown profile name, or a profiles file that does not validate (one readable line)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Match(_Strict):
    """Which endpoints and models a row is for (fnmatch globs; an empty list matches anything)."""

    hosts: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()         # the base URL's path (Azure's two URL forms)
    ports: tuple[int, ...] = ()
    models: tuple[str, ...] = ()

    def fits(self, host: str, path: str, port: int | None, model: str) -> bool:
        if not (self.hosts or self.paths or self.ports):
            return False                 # a row that names no endpoint is chosen by its name only
        if self.ports and port not in self.ports:
            return False
        return (_any(self.hosts, host) if self.hosts else True) and \
            (_any(self.paths, path) if self.paths else True) and (_any(self.models, model) if self.models else True)


class UsageFields(_Strict):
    """Dotted paths into a reply's ``usage`` (the first one present counts)."""

    cached: tuple[str, ...] = ()
    reasoning: tuple[str, ...] = ()

    def read(self, usage: dict[str, Any]) -> tuple[int, int]:
        """The cached prompt tokens and reasoning tokens a reply's ``usage`` reports (0 when absent)."""
        return _first_number(usage, self.cached), _first_number(usage, self.reasoning)


def _first_number(usage: dict[str, Any], paths: tuple[str, ...]) -> int:
    """The first of ``paths`` (dotted, into a reply's usage) that holds a number; 0 when none does."""
    for path in paths:
        node: Any = usage
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, (int, float)) and not isinstance(node, bool):
            return int(node)
    return 0


class Profile(_Strict):
    name: str
    title: str
    match: Match
    defaults_for: tuple[str, ...] = ()            # model-name globs that mean this row's base_url and key_env
    base_url: str | None = None
    key_env: str | None = None
    key: Literal["required", "optional"] = "required"
    auth: Literal["bearer", "api-key"] = "bearer"
    query: dict[str, str] = Field(default_factory=dict)
    token_cap: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    sampling: tuple[SamplingField, ...] = SAMPLING_FIELDS
    sampling_with_reasoning: tuple[SamplingField, ...] | None = None   # None: as ``sampling``
    structured: tuple[StructuredMode, ...] = ("json_schema", "json_object")
    schema_form: Literal["json_schema", "json_object_schema"] = "json_schema"
    json_word: bool = False
    reasoning_off: dict[str, Any] = Field(default_factory=dict)
    reasoning_note: str = ""
    extra_fields: tuple[str, ...] = ()
    unknown_fields: Literal["refused", "ignored"] = "refused"
    usage: UsageFields = UsageFields()
    max_in_flight: int | None = Field(None, ge=1)
    timeout: float | None = Field(None, gt=0)
    refusal_5xx: bool = False
    error_body: Literal["object", "list"] = "object"
    tested: str
    sources: tuple[str, ...] = Field(min_length=1)
    notes: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _defaults_need_an_endpoint(self) -> "Profile":
        if self.defaults_for and not self.base_url:
            raise ValueError("defaults_for needs the row's base_url")
        return self

    def sampling_fields(self, reasoning: bool) -> tuple[SamplingField, ...]:
        """The sampling fields it accepts while its own reasoning is on (``reasoning``) or switched off."""
        if reasoning and self.sampling_with_reasoning is not None:
            return self.sampling_with_reasoning
        return self.sampling

    @property
    def reasoning_switchable(self) -> bool:
        """Whether the switch turns reasoning off (a family that cannot is sent its lowest effort)."""
        return not self.reasoning_note.startswith("cannot")


def _any(globs: tuple[str, ...], value: str) -> bool:
    value = value.lower()
    return any(fnmatch.fnmatchcase(value, g.lower()) for g in globs)


@lru_cache(maxsize=1)
def load_profiles() -> tuple[Profile, ...]:
    """Every row of ``profiles.yaml``, validated, in the order they are tried."""
    rows = yaml.safe_load(PROFILES_FILE.read_text(encoding="utf-8"))
    out: list[Profile] = []
    for i, row in enumerate(rows):
        try:
            out.append(Profile.model_validate(row))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            raise ProfileError(f"{PROFILES_FILE}: [{i}] {row.get('name', '?')}: {where}: {err['msg']}") from None
    names = [p.name for p in out]
    if len(set(names)) != len(names):
        raise ProfileError(f"{PROFILES_FILE}: a profile name is used twice")
    return tuple(out)


def names() -> list[str]:
    return [p.name for p in load_profiles()]


def profile(name: str) -> Profile:
    """The row called ``name``."""
    for p in load_profiles():
        if p.name == name:
            return p
    raise ProfileError(f"unknown provider {name!r}; known: {', '.join(names())}")


def endpoint_for(model: str) -> Profile | None:
    """The row whose endpoint a model named without one goes to (``gemini-*``: Google's), if any."""
    return next((p for p in load_profiles() if p.defaults_for and _any(p.defaults_for, model)), None)


def default_base_url(model: str, provider: str | None = None) -> str | None:
    """The endpoint of a model named without one: its ``provider``'s, or the row its name implies
    (``gemini-*``: Google's); None (the OpenAI API, or ``OPENAI_BASE_URL`` when set) otherwise."""
    if provider:
        return profile(provider).base_url
    if os.environ.get("OPENAI_BASE_URL"):
        return None
    row = endpoint_for(model)
    return row.base_url if row is not None and row.base_url != DEFAULT_BASE_URL else None


def select(model: str, base_url: str | None, provider: str | None = None) -> Profile:
    """The profile that shapes ``model``'s requests to ``base_url`` (None: the OpenAI API)."""
    if provider:
        return profile(provider)
    url = urlparse(base_url or DEFAULT_BASE_URL)
    host, path = (url.hostname or "").lower(), url.path.rstrip("/") or "/"
    for p in load_profiles():
        if p.match.fits(host, path, url.port, model):
            return p
    return profile("openai-compatible")
