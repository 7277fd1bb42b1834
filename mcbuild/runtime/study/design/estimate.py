"""Cost estimate of a study before it runs (``mcbuild study estimate``), by one of two methods.

* **pilot** (:func:`estimate`): any results store of the same configurations and models (for
  example the study itself run with ``--limit N --out <pilot folder>``). For each configuration
  and model the mean prompt and completion tokens of the pilot's episodes are multiplied by the
  number of episodes the study plans.
* **first prompts** (:func:`estimate_from_prompts`, no pilot, no model call): for each
  configuration and task the first model request of its first planned episode is rendered on the
  simulator (system prompt and first observation; the agent is stopped before anything is sent)
  and measured at :data:`CHARS_PER_TOKEN` characters a token. Each planned episode is then
  counted as its budget's actions times that prompt, and the same number of replies of
  :data:`REPLY_TOKENS` tokens. Prompts grow during an episode (traces, memories, repairs) and
  some configurations make more than one call an action, so this is a floor, not a forecast.

Both price the tokens with each model's price table (its ``prices``, the study's ``endpoint.prices``
or the built-in one). A pair the pilot never ran, or a model without a price, is reported as such,
never as zero; a scripted configuration calls no model and is free (``scripted``).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.design.plan import PlanEntry, build_plan
from mcbuild.runtime.study.store.results import Store

__all__ = ["EstimateRow", "estimate", "estimate_from_prompts", "CHARS_PER_TOKEN", "REPLY_TOKENS"]

CHARS_PER_TOKEN = 4         # English prose and JSON in the usual BPE tokenizers
REPLY_TOKENS = 150          # an action reply: a short thought and one JSON action


@dataclass(frozen=True)
class EstimateRow:
    configuration: str
    model: str
    planned: int
    pilot_episodes: int                      # pilot method: its episodes of this pair
    tokens_in: int | None = None
    tokens_out: int | None = None
    usd: float | None = None
    priced: bool = True
    first_prompt_tokens: int | None = None   # first-prompts method: mean tokens of the rendered first requests
    scripted: bool = False                   # a scripted agent: no model call, free


def _prices(config: StudyConfig) -> dict[str, dict[str, dict[str, float]]]:
    """Each model's price table (its own ``prices`` setting, else the study's, else the built-in one)."""
    return {m: config.llm_settings(m).price_table() for m in config.models}


def _priced(row: dict[str, Any], prices: dict[str, dict[str, dict[str, float]]]) -> EstimateRow:
    from mcbuild.llm.pricing import cost

    usd, priced = cost(prices[row["model"]], row["model"], row["tokens_in"], row["tokens_out"])
    return EstimateRow(**row, usd=usd if priced else None, priced=priced)


def estimate(config: StudyConfig, pilot: str | Path) -> list[EstimateRow]:
    """One row per (configuration, model) of the plan; raises ``StoreError`` without a pilot store."""
    prices, plan = _prices(config), build_plan(config)
    with Store.read_only(pilot) as st:
        measured = st.token_means()
    rows = []
    for (conf, model), entries in sorted(_group(plan).items()):
        n = len(entries)
        if _scripted(entries[0]) or (conf, model) not in measured:
            rows.append(_free(entries, measured.get((conf, model), (0,))[0]) if _scripted(entries[0])
                        else EstimateRow(conf, model, n, 0))
            continue
        k, tin, tout = measured[(conf, model)]
        rows.append(_priced(dict(configuration=conf, model=model, planned=n, pilot_episodes=k,
                                 tokens_in=round(tin * n), tokens_out=round(tout * n)), prices))
    return rows


def estimate_from_prompts(config: StudyConfig, build_root: str | Path) -> list[EstimateRow]:
    """One row per (configuration, model) of the plan, from rendered first prompts (module docstring)."""
    prices, plan = _prices(config), build_plan(config)
    first: dict[tuple[str, str], int] = {}          # (agent, task) -> tokens of its first request
    for e in plan:
        agent = e.agent or e.configuration
        if not _scripted(e) and (agent, e.task) not in first:
            first[agent, e.task] = first_prompt_tokens(e, Path(build_root))
    rows = []
    for (conf, model), entries in sorted(_group(plan).items()):
        agent = entries[0].agent or conf
        if _scripted(entries[0]):
            rows.append(_free(entries, 0))
            continue
        calls = [(first[agent, e.task], e.budget) for e in entries]
        shown = round(sum(t for t, _ in calls) / len(calls))
        rows.append(_priced(dict(configuration=conf, model=model, planned=len(entries), pilot_episodes=0,
                                 tokens_in=sum(t * b for t, b in calls), tokens_out=REPLY_TOKENS * sum(b for _, b in calls),
                                 first_prompt_tokens=shown), prices))
    return rows


def _scripted(entry: PlanEntry) -> bool:
    """Whether the entry's agent is scripted (calls no model)."""
    from mcbuild.runtime.agents.llm import CONFIGURATIONS

    return (entry.agent or entry.configuration) not in CONFIGURATIONS


def _free(entries: list[PlanEntry], pilot_episodes: int) -> EstimateRow:
    """The row of a scripted configuration: no tokens, no cost."""
    e = entries[0]
    return EstimateRow(e.configuration, e.model, len(entries), pilot_episodes, 0, 0, 0.0, scripted=True)


def _group(plan: list[PlanEntry]) -> dict[tuple[str, str], list[PlanEntry]]:
    out: dict[tuple[str, str], list[PlanEntry]] = {}
    for e in plan:
        out.setdefault((e.configuration, e.model), []).append(e)
    return out


class _FirstRequest(Exception):
    """Carries the messages of an agent's first model request (raised instead of sending it)."""

    def __init__(self, messages: list[dict[str, str]]):
        super().__init__("first request captured")
        self.messages = messages


class _Capture:
    """A chat client that stops the agent at its first request."""

    def chat(self, messages: list[dict[str, str]], **_: Any) -> Any:
        raise _FirstRequest(messages)


def first_prompt_tokens(entry: PlanEntry, build: Path) -> int:
    """Tokens (characters / CHARS_PER_TOKEN, rounded up) of the first model request of ``entry``'s
    agent on its world, rendered on the simulator without calling any model."""
    from mcbuild.runtime.agents.registry import create
    from mcbuild.runtime.episode.opening import open_episode
    from mcbuild.runtime.study.run.executor import rule_sheet

    options: dict[str, Any] = {"seed": entry.seed, "model": entry.model, "client": _Capture()}
    if entry.disclosure == "disclosed":
        options["rules"] = rule_sheet(build, entry.condition)
    agent = create(entry.agent or entry.configuration, **options)
    with open_episode(entry.world, entry.condition, entry.task, entry.budget, entry.seed, build=build,
                      backend="sim") as ep:
        agent.reset(entry.seed)
        try:
            agent.act(ep.observe())
        except _FirstRequest as got:
            return -(-sum(len(m["content"]) for m in got.messages) // CHARS_PER_TOKEN)
    raise ValueError(f"agent {entry.configuration!r} chose an action without asking its model")
