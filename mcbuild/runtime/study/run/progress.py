"""The study runner's one-line progress bar on stderr: done/total, rate, ETA, running Score/SR and
the money spent (against the study's cap when it has one; ``unpriced`` when a model has no price,
never a $0.00 that is not known)."""
from __future__ import annotations

import sys
import time
from typing import TextIO

from mcbuild.llm.pricing import spent_text


class Progress:
    """One-line progress bar on stderr: done/total, rate, ETA, running Score/SR, USD spent."""

    def __init__(self, total: int, done: int, score_sum: float, successes: int, stream: TextIO | None, enabled: bool,
                 spent: float = 0.0, cap: float | None = None, unpriced: int = 0):
        self.total, self.done = total, done
        self.start_done = done
        self.score_sum, self.successes = score_sum, successes
        self.spent, self.cap = spent, cap
        self.unpriced = unpriced              # episodes whose cost is unknown (a model without a price)
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.monotonic()
        self.last = 0.0

    def add(self, score: float, success: bool, cost_usd: float = 0.0, priced: bool = True) -> None:
        self.done += 1
        self.score_sum += score
        self.successes += int(success)
        self.spent += cost_usd
        self.unpriced += not priced
        self.draw()

    def text(self) -> str:
        el = max(time.monotonic() - self.t0, 1e-9)
        new = self.done - self.start_done
        rate = new / el
        left = self.total - self.done
        eta = "--:--" if rate <= 0 else _hms(left / rate)
        width = 24
        fill = int(width * self.done / self.total) if self.total else width
        bar = "#" * fill + "." * (width - fill)
        stats = ""
        if self.done:
            stats = f"  Score {self.score_sum / self.done:5.1f}  SR {100.0 * self.successes / self.done:5.1f}%"
        money = f"  {spent_text(self.spent, self.unpriced)}" + ("" if self.cap is None else f" of ${self.cap:.2f}")
        return f"[{bar}] {self.done}/{self.total}  {rate:6.2f} ep/s  ETA {eta}{stats}{money}"

    def draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self.last < (0.2 if self.tty else 5.0) and self.done < self.total:
            return
        self.last = now
        if self.tty:
            self.stream.write("\r" + self.text())
        else:
            self.stream.write(self.text() + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.draw(force=True)
            if self.tty:
                self.stream.write("\n")
            self.stream.flush()


def _hms(s: float) -> str:
    s = int(s)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
