"""The model options ``study run`` and ``episode run`` share: a model's endpoint and sampling settings,
named as the keys of a study's ``models:`` entries (``runtime/study/design/config.py`` Endpoint)."""
from __future__ import annotations

from typing import Any

import click

#: option -> Endpoint key, for every option but --model
KEYS = {"base_url": "base_url", "api_key_env": "api_key_env", "temperature": "temperature", "top_p": "top_p",
        "max_tokens": "max_tokens", "sampling_seed": "seed", "timeout": "timeout", "max_in_flight": "max_in_flight",
        "reasoning": "reasoning", "structured": "structured", "id_enum": "id_enum", "max_reply_bytes": "max_reply_bytes"}


def model_options(command):
    """Add --model and the settings of one model to ``command`` (each None unless given)."""
    for option in reversed([
        click.option("--model", default=None, help="LLM agents: the model name"),
        click.option("--base-url", default=None, help="LLM agents: OpenAI-compatible endpoint (vLLM, llama.cpp, ...)"),
        click.option("--api-key-env", default=None, help="LLM agents: environment variable holding the API key"),
        click.option("--temperature", type=click.FloatRange(0, 2), default=None, help="sampling temperature (default 0.7)"),
        click.option("--top-p", type=click.FloatRange(0, 1, min_open=True), default=None, help="nucleus sampling mass"),
        click.option("--max-tokens", type=click.IntRange(min=1), default=None, help="cap on each reply's tokens (default 2048)"),
        click.option("--sampling-seed", type=int, default=None, help="the provider's sampling seed (default: none sent)"),
        click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
                     help="seconds for a whole request before it is retried (default 120)"),
        click.option("--max-in-flight", type=click.IntRange(min=1), default=None, help="requests in flight to the endpoint"),
        click.option("--reasoning/--no-reasoning", default=None, help="provider-side reasoning (default: off, as the paper)"),
        click.option("--structured", type=click.Choice(["off", "json_object", "json_schema"]), default=None,
                     help="response_format of JSON replies (default off)"),
        click.option("--id-enum/--no-id-enum", default=None, help="json_schema: item/block ids as registry enums (default on)"),
        click.option("--max-reply-bytes", type=click.IntRange(min=1), default=None,
                     help="replies larger than this are endpoint faults (default 65536)"),
    ]):
        command = option(command)
    return command


def given_settings(options: dict[str, Any]) -> dict[str, Any]:
    """The model settings given on the command line, as ``models:`` entry keys (``--model`` excluded)."""
    return {KEYS[k]: v for k, v in options.items() if k in KEYS and v is not None}
