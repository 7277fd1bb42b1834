"""Entry point of the ``mcbuild`` command. Each command group lives in its own ``cmd_*`` module."""
from __future__ import annotations

import importlib
import sys

import click

from compiler.core.errors import CompileError, SpecError

COMMAND_MODULES = ["cmd_compile", "cmd_schema", "cmd_audit", "cmd_build", "cmd_design", "cmd_episode", "cmd_task", "cmd_study", "cmd_demo"]


class Group(click.Group):
    """Turns the project's known errors into one readable line and an exit code."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except SpecError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except CompileError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)


@click.group(cls=Group)
def main() -> None:
    """MirrorCraft toolkit: compile rule suites and worlds, run paired hidden-rule studies."""


for _name in COMMAND_MODULES:
    importlib.import_module(f"mcbuild.{_name}").register(main)
