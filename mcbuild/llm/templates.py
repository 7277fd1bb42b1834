"""The jinja2 environment of the project's prompt templates (agents, Designer and Judge)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2


def template_environment(folder: Path, *, keep_trailing_newline: bool, **filters: Any) -> jinja2.Environment:
    """A strict jinja2 environment for the project's prompt templates: an undefined name is an error."""
    e = jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)), undefined=jinja2.StrictUndefined,
                           trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=keep_trailing_newline,
                           autoescape=False)
    e.filters.update(filters)
    return e


def preview(text: str, limit: int = 240) -> str:
    """``text`` on one line, cut to ``limit`` characters (an ellipsis marks a cut)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
