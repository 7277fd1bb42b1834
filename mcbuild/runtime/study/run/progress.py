"""What a run reports as it goes: a :class:`Tally` after every stored episode (the command line
draws it; ``mcbuild.cli.progress``). Money reads ``unpriced`` where a model has no price, never a
$0.00 that is not known."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from mcbuild.llm.pricing import spent_text


@dataclass
class Tally:
    """The planned episodes, those stored (``initial`` of them before this run), their running Score
    and successes, and the money spent against the study's cap."""

    planned: int
    stored: int
    initial: int
    score_sum: float
    successes: int
    spent: float = 0.0
    cap: float | None = None
    unpriced: int = 0                     # stored episodes whose cost is unknown (a model without a price)

    def add(self, score: float, success: bool, cost_usd: float, priced: bool = True) -> None:
        self.stored += 1
        self.score_sum += score
        self.successes += int(success)
        self.spent += cost_usd
        self.unpriced += not priced

    def stats(self) -> str:
        """Score, SR and money, as the progress line shows them."""
        out = ""
        if self.stored:
            out = f"Score {self.score_sum / self.stored:.1f}  SR {100.0 * self.successes / self.stored:.1f}%  "
        return out + spent_text(self.spent, self.unpriced) + ("" if self.cap is None else f" of ${self.cap:.2f}")


OnProgress = Callable[[Tally], None]
