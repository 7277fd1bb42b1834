"""The ``warning:`` lines a command prints when a model's requests differ from its settings: what its
provider profile changes, and each adaptation to an endpoint's refusal (``mcbuild.llm.shape``), once."""
from __future__ import annotations

from typing import Callable, Iterable

import click

from mcbuild.llm.shape import Adjustment, listen


def warn(model: str, adjustments: Iterable[Adjustment]) -> None:
    """Print each of ``adjustments`` of ``model`` as one warning line on stderr."""
    for adj in adjustments:
        click.echo(f"warning: model {model!r}: {adj.line()}", err=True)


_LISTENING: list[Callable[[], None]] = []


def warn_from_now_on() -> None:
    """Print every adaptation this process makes from now on (one listener per process, however many
    commands ask)."""
    if not _LISTENING:
        _LISTENING.append(listen(lambda model, base_url, adj: warn(model, [adj])))
