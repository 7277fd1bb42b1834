"""What a model call costs: the price tables (USD per 1M prompt, cached prompt and completion tokens).

The package's own table is ``prices.json`` beside this file (each entry dated and sourced); a model's
settings may name a file of their own (``prices``) or carry a table. A model that is in no table is
*unpriced*: its cost is unknown, never zero.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

PRICES_FILE = Path(__file__).with_name("prices.json")


def load_prices(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """Model -> {"input": USD per 1M prompt tokens, "output": USD per 1M completion tokens, and
    optionally "cached_input": USD per 1M prompt tokens read from the provider's cache}. The
    package's own table is read once per process (every LLM episode's client asks for it; with
    hundreds of episodes opening at once the reads were 7% of a worker's CPU); a file of one's own
    is read on every call."""
    return _default_prices() if path is None else _prices(Path(path))


def _prices(path: Path) -> dict[str, dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if not k.startswith("_")}


@lru_cache(maxsize=1)
def _default_prices() -> dict[str, dict[str, Any]]:
    return _prices(PRICES_FILE)


def price_entry(prices: dict[str, dict[str, Any]], model: str) -> dict[str, Any] | None:
    """The table's entry for ``model``: its own, else the longest name it starts with; None when unpriced."""
    entry = prices.get(model)
    if entry is None:
        prefixes = sorted((k for k in prices if model.startswith(k)), key=len, reverse=True)
        entry = prices[prefixes[0]] if prefixes else None
    return entry


def cost(prices: dict[str, dict[str, Any]], model: str, prompt: int, completion: int,
         cached: int = 0) -> tuple[float, bool]:
    """USD cost of one call, and whether the model was in the table (longest-prefix match). ``cached``
    of the ``prompt`` tokens are billed at the entry's ``cached_input`` price (its ``input`` price when
    it has none)."""
    entry = price_entry(prices, model)
    if entry is None:
        return 0.0, False
    cached = min(max(cached, 0), prompt)
    usd = (prompt - cached) * entry["input"] + cached * entry.get("cached_input", entry["input"]) \
        + completion * entry["output"]
    return round(usd / 1_000_000, 8), True


def spent_text(spent: float, unpriced: int, digits: int = 2) -> str:
    """Money spent as it is known: ``$1.23``, ``$1.23 + unpriced`` when some episodes' models have no
    price, ``unpriced`` when none of the cost is known."""
    if unpriced and not spent:
        return "unpriced"
    return f"${spent:.{digits}f}" + (" + unpriced" if unpriced else "")
