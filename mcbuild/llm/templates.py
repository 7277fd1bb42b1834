"""The jinja2 environment of the project's prompt templates (agents, Designer and Judge).

The templates are package files, fixed while a process runs, so each is compiled once per process
and held in a plain dict that every thread reads without a lock (:class:`HeldTemplates`). jinja2's own
template cache is an ``LRUCache`` whose mutex ``get_template`` takes on every call, an ``{% include %}``
too: with a thousand episode threads rendering prompts, its hand-offs took 9% of a worker's GIL time.
A template's globals are a plain dict (:meth:`HeldTemplates.make_globals`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, MutableMapping

import jinja2


class HeldTemplates(jinja2.Environment):
    """An environment that compiles each template once and keeps it, read without a lock: no
    ``LRUCache`` (``cache_size=0``), no reload check (``auto_reload=False``)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(cache_size=0, auto_reload=False, **options)
        self._held: dict[str, jinja2.Template] = {}

    def make_globals(self, d: MutableMapping[str, Any] | None) -> MutableMapping[str, Any]:
        """A template's globals as a plain dict, not jinja2's ``ChainMap`` over the environment's:
        every render copies them and lists their names (about 11 us a render with a ``ChainMap``,
        2.5 us with a dict). The environment's globals are set before any template loads."""
        return {**self.globals, **(d or {})}

    def _load_template(self, name: str, globals: MutableMapping[str, Any] | None) -> jinja2.Template:
        template = self._held.get(name)
        if template is None:                           # two threads may both compile it: one copy is kept
            template = self._held.setdefault(name, super()._load_template(name, globals))
        elif globals:
            template.globals.update(globals)
        return template


def template_environment(folder: Path, *, keep_trailing_newline: bool, **filters: Any) -> jinja2.Environment:
    """A strict jinja2 environment for the project's prompt templates: an undefined name is an error."""
    e = HeldTemplates(loader=jinja2.FileSystemLoader(str(folder)), undefined=jinja2.StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=keep_trailing_newline,
                      autoescape=False)
    e.filters.update(filters)
    return e


def preview(text: str, limit: int = 240) -> str:
    """``text`` on one line, cut to ``limit`` characters (an ellipsis marks a cut)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
