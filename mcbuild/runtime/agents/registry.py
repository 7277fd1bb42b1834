"""Agent registry: configuration name -> factory.

``create(name, **options)`` builds an agent, passing each factory only the options its signature
accepts (the study runner offers ``model``, ``seed``, ``rules``... to every configuration). The
scripted planners (``mcbuild.runtime.agents.scripted``) and the LLM configurations (``mcbuild.runtime.agents.llm``)
are registered when this module is imported.

An agent from outside the package is named either as ``package.module:factory`` (any importable
callable) or by the name of an entry point in the group ``mcbuild.agents`` of an installed
distribution (docs/agents.md). Registered names come first, then ``module:factory``, then entry points.
"""
from __future__ import annotations

import importlib
import inspect
from functools import lru_cache
from importlib.metadata import entry_points
from typing import Any, Callable

from . import llm
from .base import Agent
from .scripted.planners import AdaptivePlanner, VanillaPlanner

ENTRY_POINT_GROUP = "mcbuild.agents"

AGENTS: dict[str, Callable[..., Agent]] = {}


class UnknownAgent(KeyError):
    """A configuration name that no registered agent, ``module:factory`` or entry point provides."""

    def __str__(self) -> str:
        return str(self.args[0])


def register(name: str, factory: Callable[..., Agent]) -> None:
    if name in AGENTS:
        raise ValueError(f"agent {name!r} is already registered")
    AGENTS[name] = factory


def known() -> list[str]:
    """The registered names and the installed entry points of ``mcbuild.agents``."""
    return sorted({*AGENTS, *(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))})


def _unknown(message: str) -> UnknownAgent:
    return UnknownAgent(f"{message}; known: {', '.join(known())}, or package.module:factory")


@lru_cache(maxsize=None)
def _external(name: str) -> Callable[..., Agent]:
    if ":" in name:
        module, _, attr = name.partition(":")
        try:
            target: Any = importlib.import_module(module)
        except ImportError as exc:
            raise _unknown(f"cannot import {module!r} for agent {name!r} ({exc})") from None
        for part in attr.split("."):
            target = getattr(target, part, None)
        if not callable(target):
            raise _unknown(f"agent {name!r}: module {module!r} has no callable {attr!r}")
        return target
    found = entry_points(group=ENTRY_POINT_GROUP, name=name)
    if not found:
        raise _unknown(f"unknown agent {name!r}")
    try:
        factory = next(iter(found)).load()
    except (ImportError, AttributeError) as exc:
        raise _unknown(f"agent {name!r}: its entry point in {ENTRY_POINT_GROUP} does not load ({exc})") from None
    if not callable(factory):
        raise _unknown(f"agent {name!r}: the entry point {ENTRY_POINT_GROUP} names a non-callable")
    return factory


def resolve(name: str) -> Callable[..., Agent]:
    """The factory behind ``name``; ``UnknownAgent`` (one line, with the known names) when none is."""
    return AGENTS[name] if name in AGENTS else _external(name)


def create(name: str, **options: Any) -> Agent:
    factory = resolve(name)
    accepted = _accepted(factory)
    if accepted is not None:
        options = {k: v for k, v in options.items() if k in accepted}
    return factory(**options)


@lru_cache(maxsize=256)
def _accepted(factory: Callable[..., Agent]) -> frozenset[str] | None:
    """The keyword options a factory takes (None: any), read from its signature once."""
    params = inspect.signature(factory).parameters.values()
    return None if any(p.kind is p.VAR_KEYWORD for p in params) else frozenset(p.name for p in params)


register(VanillaPlanner.name, VanillaPlanner)
register(AdaptivePlanner.name, AdaptivePlanner)
llm.register_all(register)
