"""Direct LLM, ReAct and ReAct w/rules (Appendix D; prompts L.1, L.2, L.4, L.11)."""
from __future__ import annotations

from collections import deque
from typing import Any, Mapping

from mcbuild.compiler.core.canonical import compact

from . import rendering as P
from .base import LLMAgent, SeenOutcome

TRACE_STEPS = 16            # ReAct: thought/action/observation steps kept


class DirectAgent(LLMAgent):
    """Current observation and the bounded verified effects only; no memory module."""

    name = "direct"

    def choose(self, obs: Mapping[str, Any]) -> dict[str, Any]:
        system = P.render("direct_system.j2")
        user = P.render("direct_user.j2", obs_text=self.observation_text(obs))
        return self.ask_action("actor", system, user)


class Trace:
    """The most recent ``limit`` thought/action/observation steps (oldest dropped first).

    A step's view (its arguments and result as JSON text, and its line of the prompt) is made once
    and kept until the step changes, so a prompt does not render the whole trace again on every call."""

    def __init__(self, limit: int = TRACE_STEPS):
        self.steps: deque[dict[str, Any]] = deque(maxlen=limit)
        self._views: deque[P.View | None] = deque(maxlen=limit)

    def add(self, step: int, action: Mapping[str, Any]) -> None:
        self.steps.append({"step": step, "thought": action.get("thought", ""), "skill": action["skill"],
                           "args": action.get("args", {}), "result": "pending"})
        self._views.append(None)

    def complete(self, outcome: SeenOutcome) -> None:
        if self.steps and self.steps[-1]["step"] == outcome.step:
            self.steps[-1]["result"] = outcome.summary()
            self._views[-1] = None

    def view(self) -> list[dict[str, Any]]:
        for i, s in enumerate(self.steps):
            if self._views[i] is None:
                view = P.View(s, args=P.Shown(compact(s["args"])), result=P.Shown(compact(s["result"])))
                view["line"] = P.step_line(view)
                self._views[i] = view
        return [v for v in self._views if v is not None]

    def __repr__(self) -> str:
        return f"Trace(limit={self.steps.maxlen}, steps={list(self.steps)!r})"


class ReActAgent(LLMAgent):
    """ReAct: a trace of the 16 most recent steps, and a thought with every action."""

    name = "react"
    action_extras = ("thought",)
    system_template = "react_system.j2"
    user_template = "react_user.j2"

    def reset_memory(self) -> None:
        self.trace = Trace(TRACE_STEPS)

    def on_outcome(self, outcome: SeenOutcome, obs: Mapping[str, Any]) -> None:
        self.trace.complete(outcome)

    def system_prompt(self) -> str:
        return P.render(self.system_template)

    def user_context(self, obs: Mapping[str, Any]) -> dict[str, Any]:
        return {"steps": self.trace.view(), "obs_text": self.observation_text(obs, feedback=False)}

    def choose(self, obs: Mapping[str, Any]) -> dict[str, Any]:
        action = self.ask_action("actor", self.system_prompt(), P.render(self.user_template, **self.user_context(obs)))
        self.trace.add(self.step, action)
        return action


class ReActRulesAgent(ReActAgent):
    """ReAct plus the suite's compiled rule sheet (``build/<suite>/rules.md``) in every call.

    Mirror worlds only: the runner passes the sheet text in (``rules=``, or ``reset(seed,
    rules=...)``); the agent never reads ``build/`` itself.
    """

    name = "react_rules"

    def __init__(self, settings: Any = None, *, client: Any = None, rules: str | None = None,
                 rules_binding: str | None = None, **kw: Any):
        self.rules = rules
        self.rules_binding = rules_binding
        super().__init__(settings, client=client, **kw)

    def reset(self, seed: int | None = None, *, rules: str | None = None, rules_binding: str | None = None,
              **kw: Any) -> None:
        if rules is not None:
            self.rules = rules
        if rules_binding is not None:
            self.rules_binding = rules_binding
        super().reset(seed, **kw)

    def system_prompt(self) -> str:
        if not self.rules or not self.rules.strip():
            raise ValueError("react_rules needs the suite's rule sheet (rules.md text); it runs on Mirror worlds only")
        return P.render("react_rules_system.j2", rule_sheet=self.rules.strip(),
                        rule_binding=self.rules_binding or "the rule suite of this world")
