"""Record and replay of model exchanges: re-run a study offline from the replies a store holds.

Every model call of an episode is stored in its trajectory (``llm_calls`` of each step: the
request's messages, the model, the reply, tokens, cost and attempts). Here each one is keyed by its
request, :func:`request_key` (sha256 of the canonical JSON of model and messages), in call order;
the same request asked twice in one episode gets its stored replies in the order they came.

``run_study(config, replay=FROM_STORE)`` gives every LLM agent a :class:`ReplayClient` instead of
an endpoint client: no network, no cost, and, with the same code, records identical to the
stored ones (usage, cost and attempts are replayed too). After a metrics change that is a
re-score. A request the store does not hold (the prompts changed, or the episode was never run)
raises :class:`ReplayMiss`, which stops the study with one line.
"""
from __future__ import annotations

import hashlib
import json
from collections import deque
from pathlib import Path
from typing import Any, Iterable

from mcbuild.compiler.core.canonical import compact
from mcbuild.runtime.errors import BackendUnavailable, InfrastructureFault
from mcbuild.runtime.study.store.results import STORE_NAME, StoreError, stored_trajectory

__all__ = ["ReplayMiss", "ReplayClient", "request_key", "replay_store", "exchanges"]

class ReplayMiss(BackendUnavailable, InfrastructureFault):
    """A request the replay store does not hold: the study cannot be replayed (it stops)."""


def request_key(model: str, messages: list[dict[str, str]]) -> str:
    """The key of one model request: sha256 of the canonical JSON of its model and messages."""
    return hashlib.sha256(compact({"model": model, "messages": messages}).encode()).hexdigest()


def replay_store(path: str | Path) -> Path:
    """The results store named by ``path`` (a study folder or its ``results.sqlite``); one clear
    error when there is none."""
    p = Path(path)
    db = p / STORE_NAME if p.is_dir() else p
    if not db.is_file():
        raise BackendUnavailable(f"replay store {db} not found (pass a study folder or its {STORE_NAME})")
    return db


def exchanges(trajectory_lines: Iterable[str]) -> list[dict[str, Any]]:
    """Every model call of a stored trajectory, in the order they were made."""
    calls: list[dict[str, Any]] = []
    for line in trajectory_lines:
        if line.strip():
            calls.extend(json.loads(line).get("llm_calls") or ())
    return calls


class ReplayClient:
    """Answers an episode's model requests from a store, in place of ``ChatClient``."""

    def __init__(self, store: str | Path, episode_id: str, model: str):
        from mcbuild.llm.client import Usage

        self.db = replay_store(store)
        self.episode_id, self.model = episode_id, model
        self.usage = Usage(calls=0)
        try:
            text = stored_trajectory(self.db, episode_id)
        except StoreError as exc:
            raise BackendUnavailable(f"replay store {exc}") from None
        if text is None:
            raise ReplayMiss(f"replay: episode {episode_id} is not in {self.db}; replay only episodes that store ran")
        self._replies: dict[str, deque[dict[str, Any]]] = {}
        try:
            for call in exchanges(text.splitlines()):
                key = request_key(call.get("model", model), call["messages"])
                self._replies.setdefault(key, deque()).append(call)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BackendUnavailable(f"replay store {self.db}: episode {episode_id}: damaged model calls "
                                     f"({type(exc).__name__}: {exc})"[:300]) from None

    def chat(self, messages: list[dict[str, str]], **_: Any) -> Any:
        """The stored reply to this request (its usage, cost and attempts as recorded)."""
        from mcbuild.llm.client import ChatResult, Usage

        key = request_key(self.model, messages)
        queue = self._replies.get(key)
        if not queue:
            raise ReplayMiss(f"replay: request {key[:16]} of episode {self.episode_id} (model {self.model!r}) is not "
                             f"in {self.db}: the prompts or the episode changed since it was recorded")
        call = queue.popleft()
        try:
            usage = Usage(int(call.get("prompt_tokens", 0)), int(call.get("completion_tokens", 0)),
                          float(call.get("cost_usd", 0.0)), bool(call.get("priced", True)), calls=1,
                          cached_prompt_tokens=int(call.get("cached_prompt_tokens", 0)))
            result = ChatResult(call["reply"], usage, call.get("model", self.model), int(call.get("attempts", 1)),
                                list(messages))
        except (ValueError, KeyError, TypeError) as exc:
            raise BackendUnavailable(f"replay store {self.db}: episode {self.episode_id}: damaged model call "
                                     f"({type(exc).__name__}: {exc})"[:300]) from None
        self.usage.add(usage)
        return result
