"""Progress of the long commands (world build, report, viewer replay, design rounds) on stderr.

Drawn only when stderr is a terminal and ``--quiet`` is not given, so piped and redirected
output, and every file a command writes, are the same with or without it.
"""
from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Callable, Iterator

import click


def shown(quiet: bool = False) -> bool:
    """Whether progress is drawn: stderr is a terminal and not ``--quiet``."""
    return not quiet and sys.stderr.isatty()


@contextmanager
def bar(total: int, label: str, quiet: bool = False) -> Iterator[Callable[[str], None]]:
    """A bar of ``total`` steps; yields ``step(name)``, called once a step is done (its name shown)."""
    if not shown(quiet) or total <= 0:
        yield lambda name: None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr, show_pos=True, show_eta=True,
                           item_show_func=lambda name: name) as drawn:
        yield lambda name: drawn.update(1, name)


def lines(quiet: bool = False, terminal_only: bool = True) -> Callable[[str], None]:
    """A sink for a stage's progress lines: each on stderr with the seconds since the start (only on
    a terminal unless ``terminal_only`` is false: the design loop's lines are its log)."""
    if quiet or (terminal_only and not shown()):
        return lambda line: None
    start = time.monotonic()
    return lambda line: click.echo(f"[{time.monotonic() - start:6.1f} s] {line}", err=True)
