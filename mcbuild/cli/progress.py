"""Progress of the long commands: world build, report and viewer replay on stderr (:class:`Stages`),
the design loop's rounds timed on stdout (:func:`log`).

Drawn only on a terminal (and never with ``--quiet``), so piped and redirected output, and every
file a command writes, are the same with or without it.
"""
from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Callable

import click

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar


def shown(quiet: bool = False) -> bool:
    """Whether progress is drawn: stderr is a terminal and not ``--quiet``."""
    return not quiet and sys.stderr.isatty()


class Stages:
    """A command's stages, called as ``stages(name, done, total)``: a line when a stage without steps
    starts, a bar with its ETA (click's) while a stage with ``total`` steps runs. Close it at the end."""

    def __init__(self, quiet: bool = False):
        self.on = shown(quiet)
        self.stage: str | None = None
        self.bar: ProgressBar[int] | None = None
        self.start = time.monotonic()

    def __call__(self, stage: str, done: int = 0, total: int = 0) -> None:
        if not self.on:
            return
        if stage != self.stage:
            self.close()
            self.stage = stage
            if total:
                self.bar = click.progressbar(length=total, label=stage, file=sys.stderr, show_pos=True, show_eta=True)
                self.bar.__enter__()
            else:
                click.echo(f"[{time.monotonic() - self.start:6.1f} s] {stage}", err=True)
        if self.bar is not None and done > self.bar.pos:
            self.bar.update(done - self.bar.pos)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
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
