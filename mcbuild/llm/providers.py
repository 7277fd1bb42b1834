"""Where provider profiles attach to a model's settings: which profile shapes its requests, the endpoint
and key a model named without one goes to, and what its settings ask each request to carry.

* :func:`profile_of` is the settings' ``provider``, else the row of ``profiles.yaml`` the endpoint's host
  (and path, port) and the model name choose;
* :func:`resolved` fills the settings left unset from that profile: the base URL of a model named
  without one (``gemini-*`` goes to Google's OpenAI-compatible endpoint), its key variable, and the
  timeout and in-flight cap that fit a one-request server;
* :func:`asked` is what the settings ask of every request, before the profile and the endpoint's
  refusals shape it (``shape.py``).
"""
from __future__ import annotations

from urllib.parse import urlparse

from . import profiles
from .profiles import Profile
from .settings import ModelSettings
from .shape import Asked

LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}
DEFAULT_TIMEOUT = 120.0


def profile_of(settings: ModelSettings) -> Profile:
    """The profile that shapes this model's requests."""
    return profiles.select(settings.model or "", settings.base_url, settings.provider)


def resolved(settings: ModelSettings) -> ModelSettings:
    """``settings`` with what they leave unset taken from the model's profile (its endpoint, key
    variable, timeout and in-flight cap); every given field stays as it was."""
    fill: dict[str, object] = {}
    base_url = settings.base_url
    if base_url is None:
        base_url = profiles.default_base_url(settings.model or "", settings.provider)
        if base_url is not None:
            fill["base_url"] = base_url
    profile = profiles.select(settings.model or "", base_url, settings.provider)
    if settings.api_key_env is None:
        fill["api_key_env"] = profile.key_env or "OPENAI_API_KEY"
    if settings.timeout is None:
        fill["timeout"] = profile.timeout or DEFAULT_TIMEOUT
    if settings.max_in_flight is None and profile.max_in_flight is not None:
        fill["max_in_flight"] = profile.max_in_flight
    if not fill:
        return settings
    return settings.model_copy(update=fill)


def asked(settings: ModelSettings) -> Asked:
    """What the settings ask every request to carry (``shape.plan`` turns it into the fields sent)."""
    return Asked(settings.temperature, settings.top_p, settings.sampling_seed, settings.max_tokens,
                 settings.structured, settings.reasoning, tuple((settings.extra_body or {}).items()))


def is_local(base_url: str | None) -> bool:
    """Whether ``base_url`` is on this machine (such an endpoint may run without a key)."""
    return bool(base_url) and (urlparse(base_url).hostname or "") in LOCAL_HOSTS
