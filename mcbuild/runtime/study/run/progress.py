"""What a run reports as it goes: a :class:`Tally` after every stored episode (the command line
draws it; ``mcbuild.cli.progress``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


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

    def add(self, score: float, success: bool, cost_usd: float) -> None:
        self.stored += 1
        self.score_sum += score
        self.successes += int(success)
        self.spent += cost_usd

    def stats(self) -> str:
        """Score, SR and money, as the progress line shows them."""
        out = ""
        if self.stored:
            out = f"Score {self.score_sum / self.stored:.1f}  SR {100.0 * self.successes / self.stored:.1f}%  "
        return out + f"${self.spent:.2f}" + ("" if self.cap is None else f" of ${self.cap:.2f}")


OnProgress = Callable[[Tally], None]
