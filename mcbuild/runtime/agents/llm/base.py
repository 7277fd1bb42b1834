"""The one base of the LLM agent configurations (paper §4.1, Appendix D and L).

:class:`LLMAgent` owns everything the configurations share: the model client, the reply
contracts (``contracts.py``) and the bounded output repair of L.12, per-call records (prompt hash,
messages, reply, tokens, cost) and usage totals, the outcome of the previous action (read from
the next observation), and ``reset``. A configuration only adds its memory / review / retrieval /
probe module by overriding :meth:`LLMAgent.reset_memory`, :meth:`LLMAgent.on_outcome` and
:meth:`LLMAgent.choose`.

Agent protocol (``mcbuild.runtime.episode.episode.run``): ``reset(seed)``, ``act(observation) -> {"skill", "args"}``
or ``None`` when no executable action can be produced (the episode then ends with ``no_action``).
Model calls made while choosing an action are available from :meth:`LLMAgent.model_use` (the
runner stores them in the step of the trajectory) and all of them from :attr:`LLMAgent.calls`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping

from mcbuild.compiler.core.canonical import compact
from mcbuild.llm.client import ChatClient, LLMError, Usage
from mcbuild.llm.schemas import Schema
from mcbuild.llm.settings import ModelSettings
from mcbuild.llm.templates import preview
from mcbuild.runtime.agents.base import ModelUse
from mcbuild.runtime.contract.backend import inventory_change
from mcbuild.runtime.errors import InfrastructureFault

from . import rendering as P
from . import reply_schemas
from .contracts import EXTRA_CHARS, ContractError, action_only, parse_action, reply_json

OUTPUT_REPAIRS = 2          # L.12 repair exchanges after a malformed action reply
JSON_REPAIRS = 2            # repair turns of the structured (non-action) calls
EFFECTS_SHOWN = 16          # bound on VERIFIED_ACTION_EFFECTS shown to the model (Direct LLM's memory)


class EndpointError(LLMError, InfrastructureFault):
    """The endpoint failed a call after the client's retries (unreachable, 5xx, 429, rejected key):
    an infrastructure fault, so the study runner reruns the episode instead of scoring a policy error.
    """


# ---------------------------------------------------------------------------- actions
def signature(action: Mapping[str, Any]) -> str:
    """Canonical text of an action (ids namespaced, defaults filled) where it validates."""
    from mcbuild.compiler.rules.catalog import load
    from mcbuild.runtime.contract.skills import ActionError, validate

    try:
        return compact(validate(action_only(action), load()).as_dict())
    except (ActionError, KeyError, TypeError):
        return compact(action_only(action))


# ---------------------------------------------------------------------------- observation helpers
def inventory(obs: Mapping[str, Any] | None) -> dict[str, int]:
    inv = (obs or {}).get("inventory") or {}
    return {str(k): int(v) for k, v in inv.items() if isinstance(v, (int, float))}


def progress_score(obs: Mapping[str, Any] | None) -> float:
    return float(P.progress_parts((obs or {}).get("progress"))[0] or 0)


def remaining_actions(obs: Mapping[str, Any]) -> int | None:
    b = obs.get("budget")
    if isinstance(b, (int, float)):
        return int(b)
    if isinstance(b, Mapping):
        if "remaining" in b:
            return int(b["remaining"])
        total = b.get("total", b.get("limit"))
        if total is not None:
            return int(total) - int(b.get("used", 0))
    return None


def _short_id(item: str) -> str:
    return item.split(":", 1)[1] if ":" in item else item


def same_id(a: Any, b: Any) -> bool:
    return isinstance(a, str) and isinstance(b, str) and _short_id(a.strip().lower()) == _short_id(b.strip().lower())


KEPT_FIELDS = ("equipped", "inventory", "position")       # what a settled outcome keeps of its observations


def _kept(obs: Mapping[str, Any]) -> dict[str, Any]:
    return {k: obs[k] for k in KEPT_FIELDS if k in obs}


@dataclass
class SeenOutcome:
    """What the previous action did, as the agent can see it in the next observation."""

    step: int
    action: dict[str, Any]                # the agent's reply (skill, args and its extra fields)
    ok: bool
    reason: str | None
    message: str
    gained: dict[str, int]
    lost: dict[str, int]
    progress_before: float
    progress_after: float
    before: Mapping[str, Any]
    after: Mapping[str, Any]
    result: dict[str, Any] = field(default_factory=dict)

    @property
    def progressed(self) -> bool:
        return self.progress_after > self.progress_before

    @property
    def changed(self) -> bool:
        return bool(self.gained or self.lost or self.progressed
                    or self.before.get("position") != self.after.get("position")
                    or self.before.get("equipped") != self.after.get("equipped"))

    def settled(self) -> "SeenOutcome":
        """This outcome as the history keeps it: of the two observations only the fields
        :attr:`changed` and the inventory read, so an episode does not hold every observation."""
        return replace(self, before=_kept(self.before), after=_kept(self.after))

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok}
        if self.reason:
            out["reason"] = self.reason
        if self.message:
            out["message"] = self.message
        if self.gained:
            out["gained"] = self.gained
        if self.lost:
            out["lost"] = self.lost
        if self.progressed:
            out["progress"] = self.progress_after
        return out


# ---------------------------------------------------------------------------- the base agent
class LLMAgent:
    """Shared machinery; subclasses are the configurations (see module docstring)."""

    name = "llm"
    action_extras: tuple[str, ...] = ()        # extra fields of this configuration's action contract

    def __init__(self, settings: ModelSettings | Mapping[str, Any] | None = None, *, client: Any = None):
        self.settings = ModelSettings.model_validate(settings) if settings is not None else None
        if client is None:
            if self.settings is None:
                raise LLMError(f"agent {self.name!r} needs model settings (--model, --base-url)")
            client = ChatClient(self.settings)
        self.client = client
        self.reset(None)

    # ------------------------------------------------------------------ protocol
    def reset(self, seed: int | None = None, **_: Any) -> None:
        """Clear every piece of episode state (memory, graphs, library, usage, records)."""
        self.seed = seed
        self.step = 0                      # index of the action being chosen (1-based)
        self.calls: list[dict[str, Any]] = []
        self._popped = 0
        self.usage = Usage(calls=0)
        self.prev_obs: Mapping[str, Any] | None = None
        self.last_action: dict[str, Any] | None = None
        self.outcomes: list[SeenOutcome] = []
        self.gave_up: str | None = None
        self._texts: P.Memo = {}
        self.reset_memory()

    def act(self, observation: Mapping[str, Any]) -> dict[str, Any] | None:
        self.step += 1
        if self.last_action is not None and self.prev_obs is not None:
            outcome = self._outcome(self.prev_obs, observation)
            self.outcomes.append(outcome)
            self.on_outcome(outcome, observation)
            self.outcomes[-1] = outcome.settled()
        try:
            action = self.choose(observation)
        except ContractError as exc:
            self.gave_up = str(exc)
            action = None
        self.prev_obs = observation
        self.last_action = action
        return None if action is None else action_only(action)

    def model_use(self) -> ModelUse:
        """The call records made since the previous ``model_use`` (for the trajectory step) and the
        usage so far."""
        new = self.calls[self._popped:]
        self._popped = len(self.calls)
        adjusted = tuple(a.to_json() for a in getattr(self.client, "adjustments", ()))
        return ModelUse(tuple(new), self.usage.copy(), adjusted)

    # ------------------------------------------------------------------ configuration hooks
    def reset_memory(self) -> None:
        pass

    def on_outcome(self, outcome: SeenOutcome, observation: Mapping[str, Any]) -> None:
        pass

    def choose(self, observation: Mapping[str, Any]) -> dict[str, Any] | None:
        raise NotImplementedError

    # ------------------------------------------------------------------ outcomes
    def _outcome(self, before: Mapping[str, Any], after: Mapping[str, Any]) -> SeenOutcome:
        res = after.get("latest_result") or {}
        res = dict(res) if isinstance(res, Mapping) else {"message": str(res)}
        inv_gained, inv_lost = inventory_change(inventory(before), inventory(after))
        gained = res.get("gained") if isinstance(res.get("gained"), Mapping) else inv_gained
        lost = res.get("lost") if isinstance(res.get("lost"), Mapping) else inv_lost
        ok = res.get("ok", res.get("success"))
        if ok is None:
            ok = not res.get("reason")
        return SeenOutcome(self.step - 1, dict(self.last_action or {}), bool(ok), res.get("reason"),
                       str(res.get("message") or ""), dict(gained or {}), dict(lost or {}),
                       progress_score(before), progress_score(after), before, after, res)

    # ------------------------------------------------------------------ rendering
    def observation_text(self, obs: Mapping[str, Any], *, feedback: bool = True) -> str:
        shown = self.bounded(obs)
        for key in P.JSON_BLOCKS:
            if obs.get(key) is not None:
                shown[key] = self._json_text(key, obs[key], shown[key])
        return P.observation_text(shown, feedback=feedback, memo=self._texts)

    def _json_text(self, key: str, source: Any, value: Any) -> P.Shown:
        """``compact(value)`` of the block ``key`` (``value``: ``source`` as shown), made again only when
        ``source`` is not the very object the previous observation had (``rendering.kept``)."""
        return P.kept(self._texts, key, source, lambda: P.Shown(compact(value)))

    def bounded(self, obs: Mapping[str, Any]) -> dict[str, Any]:
        """The observation with VERIFIED_ACTION_EFFECTS bounded to the most recent entries."""
        out = dict(obs)
        effects = out.get("verified_action_effects")
        if isinstance(effects, list):
            out["verified_action_effects"] = effects[-EFFECTS_SHOWN:]
        return out

    # ------------------------------------------------------------------ model calls
    def call(self, role: str, messages: list[dict[str, str]], *, repair: int = 0, schema: Schema | None = None) -> str:
        """One model call, recorded with its prompt hash, tokens, cost and wall time (``seconds``, retries
        included; a measurement, never part of a request) (``schema``: the reply's)."""
        start = time.perf_counter()
        try:
            result = self.client.chat(messages, schema=schema)
        except EndpointError:
            raise
        except LLMError as exc:
            raise EndpointError(str(exc)) from None
        self.usage.add(result.usage)
        self.calls.append({
            "step": self.step, "role": role, "repair": repair, "prompt_hash": P.prompt_hash(messages),
            "messages": messages, "reply": result.text, "model": result.model, "attempts": result.attempts,
            "prompt_tokens": result.usage.prompt_tokens, "completion_tokens": result.usage.completion_tokens,
            "cost_usd": result.usage.cost_usd, "priced": result.usage.priced,
            "seconds": round(time.perf_counter() - start, 6),
            "cached_prompt_tokens": result.usage.cached_prompt_tokens, "reasoning_tokens": result.usage.reasoning_tokens,
        })
        return result.text

    def ask_action(self, role: str, system: str, user: str, *, extras: Iterable[str] | None = None,
                   required_extras: Iterable[str] = ()) -> dict[str, Any]:
        """An action reply; a malformed one gets up to OUTPUT_REPAIRS repair exchanges (L.12).

        Raises :class:`ContractError` when every repair failed (the agent then has no action).
        """
        extras = tuple(self.action_extras if extras is None else extras)
        schema = reply_schemas.action(extras, tuple(required_extras), EXTRA_CHARS)
        text = self.call(role, [{"role": "system", "content": system}, {"role": "user", "content": user}],
                         schema=schema)
        try:
            return parse_action(reply_json(text), extras, required_extras=required_extras)
        except ContractError as exc:
            problem = str(exc)
        repair_system = P.render("repair_system.j2", original_system=system.strip())
        for attempt in range(1, OUTPUT_REPAIRS + 1):
            repair_user = P.render("repair_user.j2", original_user=user.strip(), previous=text, problem=problem)
            text = self.call(role, [{"role": "system", "content": repair_system},
                                    {"role": "user", "content": repair_user}], repair=attempt, schema=schema)
            try:
                return parse_action(reply_json(text), extras)
            except ContractError as exc:
                problem = str(exc)
        raise ContractError(f"no usable action after {OUTPUT_REPAIRS} repair exchange(s): {problem}")

    def ask_json(self, role: str, system: str, user: Callable[[bool, str], str],
                 validate: Callable[[Any], Any], schema: Schema, *, repairs: int = JSON_REPAIRS) -> Any:
        """A structured reply; ``user(repair, previous_reply)`` renders the (repair) user turn, and
        ``schema`` is the reply's JSON Schema (sent when the model's ``structured`` setting is on).

        Returns the validated value, or ``None`` when every repair failed.
        """
        previous = ""
        for attempt in range(repairs + 1):
            text = self.call(role, [{"role": "system", "content": system},
                                    {"role": "user", "content": user(attempt > 0, previous)}], repair=attempt,
                             schema=schema)
            try:
                return validate(reply_json(text))
            except (ContractError, ValueError, TypeError, KeyError) as exc:
                previous = f"{preview(text, 160)} (problem: {preview(str(exc), 80)})"
        return None
