"""The LLM agent configurations of the study (paper §4.1, Appendix D, Appendix L).

``create("react", settings)`` builds one from a model's ``mcbuild.llm.settings.ModelSettings``
(or ``create("react", model="...", base_url="...")``: settings fields as keywords, laid over
``settings``); any other option than ``client`` (and ``rules``, ``rules_binding`` for ``react_rules``)
is refused. :func:`preflight` checks key, endpoint and model once before any episode starts.
:func:`register_all` puts every configuration into the agent registry (``mcbuild.runtime.agents.registry``).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping

from mcbuild.llm.client import LLMError, preflight
from mcbuild.llm.settings import FIELDS, ModelSettings, layered
from mcbuild.runtime.agents.base import Agent, check_options

from .adam import AdamAgent
from .base import LLMAgent
from .react import DirectAgent, ReActAgent, ReActRulesAgent
from .reflexion import ReflexionAgent
from .voyager import VoyagerAgent
from .xenon import XenonAgent

__all__ = ["CONFIGURATIONS", "Factory", "LLMAgent", "LLMError", "create", "options", "preflight", "register_all",
           "needs_rules", "trajectory_hook"]

CONFIGURATIONS: dict[str, type[LLMAgent]] = {
    cls.name: cls for cls in (DirectAgent, ReActAgent, ReflexionAgent, VoyagerAgent, XenonAgent, AdamAgent,
                              ReActRulesAgent)
}


#: The options of the rule-sheet configuration besides the settings fields and ``client``.
RULES_OPTIONS = ("rules", "rules_binding")


def needs_rules(name: str) -> bool:
    """Whether the configuration takes the suite's rule sheet (``rules=``; Mirror worlds only)."""
    return name == ReActRulesAgent.name


def options(name: str) -> tuple[str, ...]:
    """The keyword options configuration ``name`` takes besides ``settings``: ``client``, every
    settings field and, for the rule-sheet configuration, :data:`RULES_OPTIONS`."""
    return ("client", *FIELDS, *(RULES_OPTIONS if needs_rules(name) else ()))


def create(name: str, settings: ModelSettings | Mapping[str, Any] | None = None, *, client: Any = None,
           **kwargs: Any) -> LLMAgent:
    """One configuration; ``settings`` with the keywords that name settings fields laid over them."""
    if name not in CONFIGURATIONS:
        raise KeyError(f"unknown LLM agent {name!r} (known: {', '.join(CONFIGURATIONS)})")
    check_options(name, kwargs, options(name))
    given = {k: kwargs.pop(k) for k in list(kwargs) if k in FIELDS}
    if settings is not None or given:
        settings = layered(settings, given)
    return CONFIGURATIONS[name](settings, client=client, **kwargs)


class Factory:
    """The registry's factory of one configuration: ``create(name, ...)``, with a signature that names
    every option it takes (``options``), so the registry refuses any other."""

    def __init__(self, name: str):
        self.name = name
        keyword = inspect.Parameter.KEYWORD_ONLY
        self.__signature__ = inspect.Signature(
            [inspect.Parameter("settings", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)]
            + [inspect.Parameter(option, keyword, default=None) for option in options(name)])

    def __call__(self, settings: Any = None, **kwargs: Any) -> LLMAgent:
        return create(self.name, settings, **kwargs)


def trajectory_hook(episode: Any, agent: Agent) -> Callable[[int, Any, Any], None]:
    """An ``on_step`` callback for ``mcbuild.runtime.episode.episode.run`` that stores the model calls made for each
    action in that action's trajectory step (``llm_calls``) and the running usage (``llm_usage``)."""
    def on_step(index: int, action: Any, result: Any) -> None:
        use = agent.model_use()
        if episode.trajectory and use.usage is not None:
            episode.trajectory[-1]["llm_calls"] = list(use.calls)
            episode.trajectory[-1]["llm_usage"] = use.usage.to_json()

    return on_step


def register_all(register: Callable[[str, Callable[..., Any]], None]) -> None:
    for name in CONFIGURATIONS:
        register(name, Factory(name))
