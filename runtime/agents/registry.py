"""Agent registry: configuration name -> factory.

``create(name, **options)`` builds an agent, passing each factory only the options its signature
accepts (the study runner offers ``model``, ``seed``, ``rules``... to every configuration). The
scripted planners (``mcbuild.runtime.agents.scripted``) and the LLM configurations (``mcbuild.runtime.agents.llm``)
are registered when this module is imported.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

from . import llm
from .base import Agent
from .scripted.planners import AdaptivePlanner, VanillaPlanner

AGENTS: dict[str, Callable[..., Agent]] = {}


def register(name: str, factory: Callable[..., Agent]) -> None:
    if name in AGENTS:
        raise ValueError(f"agent {name!r} is already registered")
    AGENTS[name] = factory


def create(name: str, **options: Any) -> Agent:
    if name not in AGENTS:
        raise KeyError(f"unknown agent {name!r} (known: {', '.join(sorted(AGENTS))})")
    factory = AGENTS[name]
    params = inspect.signature(factory).parameters.values()
    if not any(p.kind is p.VAR_KEYWORD for p in params):
        accepted = {p.name for p in params}
        options = {k: v for k, v in options.items() if k in accepted}
    return factory(**options)


register(VanillaPlanner.name, VanillaPlanner)
register(AdaptivePlanner.name, AdaptivePlanner)
llm.register_all(register)
