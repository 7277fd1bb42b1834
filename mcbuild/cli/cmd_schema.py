"""``mcbuild schema``: print the JSON Schema of a spec kind (exported from the pydantic models)."""
from __future__ import annotations

import click

from mcbuild.compiler.core.canonical import dumps
from mcbuild.compiler.spec.kinds import KINDS, json_schema


def register(main: click.Group) -> None:
    @main.command("schema")
    @click.option("--kind", type=click.Choice(sorted(KINDS)), required=True)
    def schema_cmd(kind: str) -> None:
        """Print the JSON Schema that spec files of KIND must satisfy."""
        click.echo(dumps(json_schema(kind)), nl=False)
