"""The one progress display of every long command: the study, the world build, the report and the
viewer's path replays (:class:`Bar`, :class:`Stages`, :class:`StudyBar`), drawn with tqdm; the design
loop's rounds timed on stdout (:func:`log`).

* On a terminal's stderr a bar redraws in place (at most five times a second) and its last state
  stays as the final line, printed once.
* Anywhere else (a file, a pipe, CI) nothing is drawn while it runs; a bar given a summary prints
  that one line when it ends. ``--quiet`` prints nothing at all.
* The rate counts from the first item finished in this run (start-up is not work), and the ETA
  appears only once it means something: :data:`ETA_MIN_ITEMS` items and :data:`ETA_MIN_S` seconds
  after that first one, and at least 5% of the items left.
"""
from __future__ import annotations

import math
import sys
import time
from typing import Callable

import click
from tqdm import tqdm

from mcbuild.runtime.study.run.progress import Tally

ETA_MIN_ITEMS = 3
ETA_MIN_S = 5.0
REFRESH_S = 0.2

tqdm.monitor_interval = 0       # no monitor thread: the study forks its workers while a bar is open


def shown(quiet: bool = False) -> bool:
    """Whether progress is drawn: stderr is a terminal and not ``--quiet``."""
    return not quiet and sys.stderr.isatty()


def _hms(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class Bar:
    """One stage with ``total`` items, ``initial`` of them done before it started. Use as a context
    manager (or :meth:`close` it): leaving it ends the line, however the stage ended."""

    def __init__(self, label: str, total: int, initial: int = 0, *, quiet: bool = False):
        self.label, self.total, self.initial, self.quiet = label, total, initial, quiet
        self.done = initial
        self.extra = ""
        self.start = time.monotonic()
        self.first: tuple[float, int] | None = None        # (time, done) of the first item of this run
        self.closed = False
        self.bar = tqdm(total=total, initial=initial, desc=label, file=sys.stderr, leave=True, dynamic_ncols=True,
                        mininterval=REFRESH_S, bar_format="{desc} {bar} {n_fmt}/{total_fmt}{postfix}",
                        ascii=" #") if shown(quiet) else None

    def update(self, done: int, extra: str = "") -> None:
        """``done`` items of ``total`` are finished; ``extra`` is shown after the rate."""
        now = time.monotonic()
        if self.first is None and done > self.initial:
            self.first = (now, self.initial + 1)
        self.done, self.extra = done, extra
        if self.bar is not None:
            self.bar.set_postfix_str(self.status(now), refresh=False)
            self.bar.update(done - self.bar.n)

    def rate(self, now: float) -> float | None:
        """Items a second since the first one of this run (None until a second one)."""
        if self.first is None or self.done <= self.first[1] or now <= self.first[0]:
            return None
        return (self.done - self.first[1]) / (now - self.first[0])

    def eta(self, now: float) -> float | None:
        """Seconds left, once the rate has seen enough items and time to mean something."""
        rate = self.rate(now)
        if rate is None or self.first is None:
            return None
        seen, left = self.done - self.first[1], self.total - self.done
        if seen < max(ETA_MIN_ITEMS, math.ceil(0.05 * left)) or now - self.first[0] < ETA_MIN_S:
            return None
        return left / rate

    def status(self, now: float | None = None) -> str:
        now = time.monotonic() if now is None else now
        rate, eta = self.rate(now), self.eta(now)
        parts = [f"{rate:.2f}/s" if rate is not None else "", f"ETA {_hms(eta)}" if eta is not None and
                 self.done < self.total else "", self.extra]
        return "  ".join(p for p in parts if p)

    def close(self, summary: str | None = None) -> None:
        """End the line (on a terminal its last state stays); elsewhere print ``summary``, if given, once."""
        if self.closed:
            return
        self.closed = True
        if self.bar is not None:
            self.bar.set_postfix_str(self.status(), refresh=False)
            self.bar.close()
        elif summary and not self.quiet:
            click.echo(summary, err=True)

    def elapsed(self) -> str:
        return _hms(time.monotonic() - self.start)

    def __enter__(self) -> "Bar":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class StudyBar:
    """The study runner's tally (``run_study(progress=...)``) as a bar: stored of planned, rate, ETA,
    running Score/SR and money; elsewhere one summary line when the run ends."""

    def __init__(self, label: str, quiet: bool = False):
        self.label, self.quiet = label, quiet
        self.bar: Bar | None = None
        self.tally: Tally | None = None

    def __call__(self, tally: Tally) -> None:
        if self.bar is None:
            self.bar = Bar(self.label, tally.planned, tally.initial, quiet=self.quiet)
        self.tally = tally
        self.bar.update(tally.stored, tally.stats())

    def close(self) -> None:
        if self.bar is None or self.tally is None:
            return
        t = self.tally
        self.bar.close(f"{self.label}: {t.stored}/{t.planned} episodes stored ({t.stored - t.initial} in this run, "
                       f"{self.bar.elapsed()})  {t.stats()}")

    def __enter__(self) -> "StudyBar":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Stages:
    """A command's stages, called as ``stages(name, done, total)``: a heading line when a stage
    without steps starts, a :class:`Bar` while a stage with ``total`` steps runs (terminal only).
    Close it at the end."""

    def __init__(self, quiet: bool = False):
        self.quiet = quiet
        self.on = shown(quiet)
        self.stage: str | None = None
        self.bar: Bar | None = None
        self.start = time.monotonic()

    def __call__(self, stage: str, done: int = 0, total: int = 0) -> None:
        if not self.on:
            return
        if stage != self.stage:
            self.close()
            self.stage = stage
            if total:
                self.bar = Bar(stage, total, quiet=self.quiet)
            else:
                click.echo(f"[{time.monotonic() - self.start:6.1f} s] {stage}", err=True)
        if self.bar is not None:
            self.bar.update(done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> "Stages":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def log() -> Callable[[str], None]:
    """A command's log lines (the design loop's rounds) on stdout, each led by the seconds since the
    start when stdout is a terminal (piped, the lines are exactly the same run after run)."""
    if not sys.stdout.isatty():
        return click.echo
    start = time.monotonic()
    return lambda line: click.echo(f"[{time.monotonic() - start:6.1f} s] {line}")
