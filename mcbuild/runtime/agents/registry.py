"""Agent registry: configuration name -> factory.

``create(name, **options)`` builds an agent with exactly the options given: one its factory's
signature does not take is refused (:class:`~mcbuild.runtime.agents.base.UnknownOption`), never
dropped. What a study gives each agent of what it knows (the episode's ``seed``, ``model`` and, for
disclosed runs, ``rules``) is :func:`offered`: each one the factory names. The
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

from mcbuild.runtime.errors import AgentError
from . import llm
from .base import Agent, check_options
from .scripted.planners import AdaptivePlanner, VanillaPlanner

ENTRY_POINT_GROUP = "mcbuild.agents"

AGENTS: dict[str, Callable[..., Agent]] = {}


class UnknownAgent(AgentError, KeyError):
    """A configuration name that no registered agent, ``module:factory`` or entry point provides,
    or one whose module or entry point fails to load (whatever it raised)."""


class AgentNotBuilt(AgentError):
    """A factory that raised, or returned something that is not an agent."""


#: What :func:`create` checks that a factory returned (``base.Agent``).
AGENT_METHODS = ("reset", "act", "model_use")


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
        except Exception as exc:  # noqa: BLE001 - a module's own code may raise anything while it loads
            raise _unknown(f"cannot import {module!r} for agent {name!r} ({_cause(exc)})") from None
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
    except Exception as exc:  # noqa: BLE001 - as above
        raise _unknown(f"agent {name!r}: its entry point in {ENTRY_POINT_GROUP} does not load ({_cause(exc)})") from None
    if not callable(factory):
        raise _unknown(f"agent {name!r}: the entry point {ENTRY_POINT_GROUP} names a non-callable")
    return factory


def resolve(name: str) -> Callable[..., Agent]:
    """The factory behind ``name``; ``UnknownAgent`` (one line, with the known names) when none is."""
    return AGENTS[name] if name in AGENTS else _external(name)


def offered(name: str, **context: Any) -> dict[str, Any]:
    """Of what a study knows of an episode (``seed``, ``model``, ``rules``), what agent ``name`` takes:
    each one its factory's signature names (all for a factory taking ``**kwargs``). docs/agents.md."""
    takes = _accepted(resolve(name))
    return {k: v for k, v in context.items() if takes is None or k in takes}


def create(name: str, **options: Any) -> Agent:
    """The agent ``name`` built with ``options``; :class:`~mcbuild.runtime.agents.base.UnknownOption`
    for an option its factory does not take, :class:`AgentNotBuilt` when the factory raises or returns
    no agent (each one line naming the agent and the cause)."""
    factory = resolve(name)
    accepted = _accepted(factory)
    if accepted is not None:
        check_options(name, options, accepted)
    try:
        agent = factory(**options)
    except Exception as exc:  # an agent's own code may raise anything
        raise AgentNotBuilt(f"agent {name!r} could not be built ({_cause(exc)})") from exc
    lacking = [m for m in AGENT_METHODS if not callable(getattr(agent, m, None))]
    if lacking:
        raise AgentNotBuilt(f"agent {name!r}: its factory returned {type(agent).__name__}, not an agent "
                            f"(no {', '.join(lacking)})")
    return agent


def _cause(exc: BaseException) -> str:
    """An exception as one line: its type and message (a SyntaxError's file and line)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@lru_cache(maxsize=256)
def _accepted(factory: Callable[..., Agent]) -> frozenset[str] | None:
    """The keyword options a factory takes (None: any, ``**kwargs``), read from its signature once."""
    params = inspect.signature(factory).parameters.values()
    return None if any(p.kind is p.VAR_KEYWORD for p in params) else frozenset(p.name for p in params)


register(VanillaPlanner.name, VanillaPlanner)
register(AdaptivePlanner.name, AdaptivePlanner)
llm.register_all(register)
