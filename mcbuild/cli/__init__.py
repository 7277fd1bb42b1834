"""Entry point of the ``mcbuild`` command. Each command group lives in its own ``cmd_*`` module.

Every error ends as one line on stderr and an exit code, never a traceback: bad input
(``SpecError``, an agent that does not load or build) exits 2, a failed check (``CompileError``, a damaged save or store, an
infrastructure fault) exits 1, and so does an unexpected error. ``mcbuild --debug ...`` (or
``MCBUILD_DEBUG=1``) shows the traceback instead. ``-h`` is ``--help`` on every command;
``mcbuild --version`` prints the package version. The flag names are one vocabulary
(``vocabulary.py``).
"""
from __future__ import annotations

import importlib
import os
import sys
import traceback
from typing import Any, Sequence

import click

from mcbuild import __version__
from mcbuild.compiler.core.errors import CompileError, SpecError
from mcbuild.compiler.core.paths import ROOT
from mcbuild.runtime.study.run.interrupt import Interrupted

COMMAND_MODULES = ["cmd_compile", "cmd_schema", "cmd_audit", "cmd_build", "cmd_design", "cmd_episode", "cmd_task", "cmd_study", "cmd_server", "cmd_demo", "cmd_vanilla"]


def one_line(exc: BaseException) -> str:
    """The error as one line: our errors' messages as they are, an ``OSError`` as the file it names
    and the reason, anything else with its type and the place in the code that raised it."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, (SpecError, CompileError)):
        return text
    if isinstance(exc, OSError) and exc.filename is not None:
        target = f"{exc.filename} -> {exc.filename2}" if exc.filename2 is not None else str(exc.filename)
        return f"{target}: {exc.strerror or text}"
    from mcbuild.runtime.errors import AgentError, BackendUnavailable, InfrastructureFault
    from mcbuild.runtime.study.store.results import StoreError

    if isinstance(exc, (InfrastructureFault, BackendUnavailable, StoreError, AgentError)):
        return text
    return f"{type(exc).__name__}: {text} (raised at {_origin(exc)}; rerun with --debug for the traceback)"


def _origin(exc: BaseException) -> str:
    """``file:line`` of the innermost frame of the project that the error passed through."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if f.filename.startswith(str(ROOT)) and "site-packages" not in f.filename] or frames
    if not ours:
        return "an unknown place"
    return f"{os.path.relpath(ours[-1].filename, ROOT)}:{ours[-1].lineno}"


def exit_code(exc: BaseException) -> int:
    from mcbuild.runtime.errors import AgentError

    return 2 if isinstance(exc, (SpecError, AgentError)) else 1


class Group(click.Group):
    """Turns every error into one readable line and an exit code (``--debug``: the traceback)."""

    argv: list[str] = []

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        """click's ``main``, with usage errors as one line (``error: ...``, exit 2) instead of a usage block.
        The arguments are kept in :attr:`argv` (a command that stops early prints how to resume it)."""
        self.argv = list(sys.argv[1:] if args is None else args)
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.ClickException as exc:
            click.echo(f"error: {' '.join(exc.format_message().split())}", err=True)
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("aborted", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Abort, click.exceptions.Exit):
            raise
        except BrokenPipeError:     # the reader of stdout went away (`| head`): click's main ends quietly
            raise
        except KeyboardInterrupt as exc:        # the line is ended first (a bar may be on it)
            click.echo(f"\ninterrupted{f' by {exc.name}' if isinstance(exc, Interrupted) else ''}", err=True)
            sys.exit(exc.exit_code if isinstance(exc, Interrupted) else 130)
        except Exception as exc:  # every error becomes one line
            if ctx.params.get("debug") or os.environ.get("MCBUILD_DEBUG") == "1":
                raise
            click.echo(f"error: {one_line(exc)}", err=True)
            sys.exit(exit_code(exc))


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="mcbuild", message="%(prog)s %(version)s")
@click.option("--debug", is_flag=True, help="Show the traceback of an error instead of one line.")
def main(debug: bool) -> None:
    """MirrorCraft toolkit: compile rule suites and worlds, run paired hidden-rule studies."""


for _name in COMMAND_MODULES:
    importlib.import_module(f"mcbuild.cli.{_name}").register(main)
