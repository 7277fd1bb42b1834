"""One model's settings: the only definition of what a model is called with, and of every default.

:class:`ModelSettings` is read by everything that calls a model:

* a study's ``endpoint:`` (every model) and each mapping entry of its ``models:`` validate into it
  (``runtime/study/design/config.py``);
* the command line generates one option per field (name, help, default) for ``study run``,
  ``episode run`` and ``design`` (``mcbuild/cli/model_options.py``);
* the client takes it whole (``ChatClient(settings)``), and so does every LLM agent.

Settings come in layers (the study's ``endpoint:``, a model's own entry, the command line, a
role's own defaults such as the Designer's): :func:`layered` lays them over each other, a later
layer winning for the fields it gives, and nothing else merges settings. A layer is a
``ModelSettings`` whose unset fields keep the defaults below (pydantic's ``model_fields_set``
tells given from default), or a mapping of field names. ``model`` is None only in a layer that
applies to several models.

Provider profiles (which token-cap name, sampling fields, ``response_format`` modes and extra
fields a provider accepts) attach in ``providers.py``: it turns these settings into the fields of a
request besides the messages.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .pricing import load_prices

#: Spellings that settings had before this model, refused with the one that replaced them.
OLD_SPELLINGS = {
    "seed": "sampling_seed (the provider's sampling seed; an episode's seed is the study's)",
    "reasoning_off": "reasoning, its opposite (reasoning_off: true is reasoning: false)",
}


class ModelSettings(BaseModel):
    """A model and how it is called: its endpoint, its sampling, its transport limits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = Field(None, description="the model name the endpoint serves")
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama, ...); "
                                 "none: the OpenAI API")
    api_key_env: str = Field("OPENAI_API_KEY", description="environment variable holding the API key "
                             "(a local endpoint needs none)")
    prices: str | dict[str, dict[str, float]] | None = Field(
        None, description="price table: a JSON file of USD per 1M tokens (none: the built-in mcbuild/llm/prices.json)")
    temperature: float | None = Field(0.7, ge=0, le=2, description="sampling temperature, sent when set")
    top_p: float | None = Field(None, gt=0, le=1, description="nucleus sampling mass, sent when set")
    max_tokens: int | None = Field(2048, ge=1, description="cap on each reply's tokens, sent when set")
    sampling_seed: int | None = Field(None, description="the provider's sampling seed, sent when set "
                                      "(not an episode's seed)")
    reasoning: bool = Field(False, description="provider-side reasoning; off sends the provider's switch-off field")
    extra_body: dict[str, Any] | None = Field(None, description="request fields sent as they are, in place of "
                                              "the reasoning switch")
    structured: Literal["off", "json_object", "json_schema"] = Field(
        "off", description="response_format of JSON replies (off: the paper's free text)")
    id_enum: bool = Field(True, description="json_schema: item/block/entity ids as registry enums")
    max_retries: int = Field(3, ge=0, description="retries of an endpoint fault (connection, timeout, 429, 5xx) "
                             "per call")
    backoff: float = Field(1.0, ge=0, description="seconds of the first retry's backoff ceiling "
                           "(doubled each retry, full jitter)")
    timeout: float = Field(120.0, gt=0, description="seconds for a whole request before it is retried")
    max_in_flight: int | None = Field(None, ge=1, description="requests in flight to the endpoint "
                                      "(a study's cap is shared out between its workers)")
    max_reply_bytes: int = Field(65536, ge=1, description="a larger reply is an endpoint fault, retried, never stored")

    @model_validator(mode="before")
    @classmethod
    def _old_spellings(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            for old, new in OLD_SPELLINGS.items():
                if old in data:
                    raise ValueError(f"{old!r} is not a model setting; write {new}")
        return data

    def given(self) -> dict[str, Any]:
        """The fields this layer gives (not those left at their defaults)."""
        return {k: getattr(self, k) for k in self.model_fields_set}

    def sampling(self) -> dict[str, Any]:
        """How this model samples, every default filled in: what a study's store records and
        ``--resume`` compares (transport settings such as timeouts and retries left out)."""
        return {k: getattr(self, k) for k in SAMPLING}

    def price_table(self) -> dict[str, dict[str, float]]:
        """Model -> USD per 1M prompt and completion tokens: ``prices`` as a table, or read from its file."""
        if isinstance(self.prices, dict):
            return self.prices
        return load_prices(Path(self.prices) if self.prices else None)


#: The fields that change what a model returns (``ModelSettings.sampling``).
SAMPLING = ("base_url", "temperature", "top_p", "max_tokens", "sampling_seed", "reasoning", "extra_body", "structured",
            "id_enum")

FIELDS = tuple(ModelSettings.model_fields)

Layer = ModelSettings | Mapping[str, Any] | None


def layered(*layers: Layer) -> ModelSettings:
    """The settings of ``layers`` laid over each other in order: each field comes from the last layer
    that gives it, else from :class:`ModelSettings`' default. ``None`` layers are skipped. Raises
    pydantic's ``ValidationError`` for a bad value or an unknown field."""
    given: dict[str, Any] = {}
    for layer in layers:
        if layer is not None:
            given.update(layer.given() if isinstance(layer, ModelSettings) else layer)
    return ModelSettings.model_validate(given)
