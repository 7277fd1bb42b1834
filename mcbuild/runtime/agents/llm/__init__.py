"""The LLM agent configurations of the study (paper §4.1, Appendix D, Appendix L).

``create("react", settings)`` builds one from a model's ``mcbuild.llm.settings.ModelSettings``
(or ``create("react", model="...", base_url="...")``: settings fields as keywords, laid over
``settings``); :func:`preflight` checks key, endpoint and model once before any episode starts.
:func:`register_all` puts every configuration into the agent registry (``mcbuild.runtime.agents.registry``).
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from mcbuild.llm.client import LLMError, preflight
from mcbuild.llm.settings import FIELDS, ModelSettings, layered
from mcbuild.runtime.agents.base import Agent

from .adam import AdamAgent
from .base import LLMAgent
from .react import DirectAgent, ReActAgent, ReActRulesAgent
from .reflexion import ReflexionAgent
from .voyager import VoyagerAgent
from .xenon import XenonAgent

__all__ = ["CONFIGURATIONS", "LLMAgent", "LLMError", "create", "factory", "preflight", "register_all", "needs_rules",
           "trajectory_hook"]

CONFIGURATIONS: dict[str, type[LLMAgent]] = {
    cls.name: cls for cls in (DirectAgent, ReActAgent, ReflexionAgent, VoyagerAgent, XenonAgent, AdamAgent,
                              ReActRulesAgent)
}


def needs_rules(name: str) -> bool:
    """Whether the configuration takes the suite's rule sheet (``rules=``; Mirror worlds only)."""
    return name == ReActRulesAgent.name


def create(name: str, settings: ModelSettings | Mapping[str, Any] | None = None, *, client: Any = None,
           **kwargs: Any) -> LLMAgent:
    """One configuration; ``settings`` with the keywords that name settings fields laid over them."""
    if name not in CONFIGURATIONS:
        raise KeyError(f"unknown LLM agent {name!r} (known: {', '.join(CONFIGURATIONS)})")
    given = {k: kwargs.pop(k) for k in list(kwargs) if k in FIELDS}
    if settings is not None or given:
        settings = layered(settings, given)
    if name != ReActRulesAgent.name:
        kwargs.pop("rules", None)
        kwargs.pop("rules_binding", None)
    return CONFIGURATIONS[name](settings, client=client, **kwargs)


def factory(name: str) -> Callable[..., LLMAgent]:
    def make(settings: Any = None, **kwargs: Any) -> LLMAgent:
        return create(name, settings, **kwargs)

    make.__name__ = f"create_{name}"
    return make


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
        register(name, factory(name))
