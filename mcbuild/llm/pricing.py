"""What a model call costs: the price tables (USD per 1M prompt and completion tokens).

The package's own table is ``prices.json`` beside this file; a model's settings may name a file of
their own (``prices``) or carry a table.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

PRICES_FILE = Path(__file__).with_name("prices.json")


def load_prices(path: Path | None = None) -> dict[str, dict[str, float]]:
    """Model -> {"input": USD per 1M prompt tokens, "output": USD per 1M completion tokens}. The
    package's own table is read once per process (every LLM episode's client asks for it; with
    hundreds of episodes opening at once the reads were 7% of a worker's CPU); a file of one's own
    is read on every call."""
    return _default_prices() if path is None else _prices(Path(path))


def _prices(path: Path) -> dict[str, dict[str, float]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if not k.startswith("_")}


@lru_cache(maxsize=1)
def _default_prices() -> dict[str, dict[str, float]]:
    return _prices(PRICES_FILE)


def cost(prices: dict[str, dict[str, float]], model: str, prompt: int, completion: int) -> tuple[float, bool]:
    """USD cost of one call, and whether the model was in the table (longest-prefix match)."""
    entry = prices.get(model)
    if entry is None:
        prefixes = sorted((k for k in prices if model.startswith(k)), key=len, reverse=True)
        entry = prices[prefixes[0]] if prefixes else None
    if entry is None:
        return 0.0, False
    return round((prompt * entry["input"] + completion * entry["output"]) / 1_000_000, 8), True
