"""Cost estimate of a study before it runs, from a short pilot (``mcbuild study estimate``).

The pilot is any results store of the same configurations and models (for example the study
itself run with ``--limit N --out <pilot folder>``). For each configuration and model the mean
prompt and completion tokens of the pilot's episodes are multiplied by the number of episodes the
study plans, and priced with the study's price table (``endpoint.prices`` or the built-in one).
A pair the pilot never ran, or a model without a price, is reported as such, never as zero.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .config import StudyConfig
from .plan import build_plan, count_by
from .store import Store

__all__ = ["EstimateRow", "estimate"]


@dataclass(frozen=True)
class EstimateRow:
    configuration: str
    model: str
    planned: int
    pilot_episodes: int
    tokens_in: int | None = None
    tokens_out: int | None = None
    usd: float | None = None
    priced: bool = True


def estimate(config: StudyConfig, pilot: str | Path) -> list[EstimateRow]:
    """One row per (configuration, model) of the plan; raises ``StoreError`` without a pilot store."""
    from runtime.agents.llm.client import LLMSettings, cost

    prices = LLMSettings(model="-", prices=config.endpoint.prices if config.endpoint else None).price_table()
    planned = count_by(build_plan(config), ("configuration", "model"))
    with Store.open(pilot, create=False) as st:
        measured = {(c, m): (n, tin, tout) for c, m, n, tin, tout in st.conn.execute(
            "SELECT configuration, model, COUNT(*), AVG(tokens_in), AVG(tokens_out) FROM episodes "
            "GROUP BY configuration, model")}
    rows = []
    for (conf, model), n in sorted(planned.items()):
        if (conf, model) not in measured:
            rows.append(EstimateRow(conf, model, n, 0))
            continue
        k, tin, tout = measured[(conf, model)]
        total_in, total_out = round(tin * n), round(tout * n)
        usd, priced = cost(prices, model, total_in, total_out)
        rows.append(EstimateRow(conf, model, n, k, total_in, total_out, usd if priced else None, priced))
    return rows
