"""``mcbuild schema``: print the JSON Schema of a spec kind (exported from the pydantic models), or of
the results card (``card``, the versioned schema ``study report`` writes cards by)."""
from __future__ import annotations

import click

from mcbuild.compiler.core.canonical import dumps
from mcbuild.compiler.spec.kinds import KINDS, json_schema

CARD = "card"


def register(main: click.Group) -> None:
    @main.command("schema")
    @click.option("--kind", type=click.Choice(sorted([*KINDS, CARD])), required=True)
    def schema_cmd(kind: str) -> None:
        """Print the JSON Schema that spec files of KIND (or, for card, results cards) must satisfy."""
        if kind == CARD:
            from mcbuild.analysis.card import card_schema

            click.echo(dumps(card_schema()), nl=False)
            return
        click.echo(dumps(json_schema(kind)), nl=False)
