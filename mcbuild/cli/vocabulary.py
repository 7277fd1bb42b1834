"""The command line's one vocabulary: one flag name per meaning, shared by every subcommand.

| meaning | flag |
|---|---|
| the build folder (packs, saves, caches) | ``--build DIR`` |
| where this command writes its own result (study folder, report folder, export file, accepted spec) | ``--out PATH`` |
| worker processes | ``--workers N`` |
| the backend that runs episodes (choices from ``runtime/backends/registry.py``) | ``--backend NAME`` |
| no progress on stderr | ``--quiet`` |

Renamed flags keep their old spelling for one release as a hidden alias (:func:`old_spelling`)
that prints one deprecation line on stderr. :func:`key_free` names the mode a command can run in
without an API key, for every "no API key" error.
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable

import click
from click.core import ParameterSource

from mcbuild.compiler.core.paths import BUILD

#: The release that drops the old spellings.
REMOVED_IN = "0.3.0"

#: The mode each command group can run in without an API key.
KEY_FREE = {
    "design": "`mcbuild design --static-only` needs no key",
    "episode": "the scripted agents (--agent vanilla-planner or adaptive-planner) need no key",
    "study": "studies of scripted agents (studies/quick.yaml, `mcbuild demo`) and `study run --replay STORE` need no key",
}


def old_spelling(old: str, new: str, dest: str, type: Any = None) -> Callable:
    """Accept ``old`` as a hidden alias of the option ``new`` (parameter ``dest``) until
    :data:`REMOVED_IN`, with one warning line on stderr; giving both is a usage error.
    Place it below the command decorator."""
    hidden = "old_" + old.lstrip("-").replace("-", "_")

    def decorate(f: Callable) -> Callable:
        @functools.wraps(f)
        def command(*args: Any, **kwargs: Any) -> Any:
            value = kwargs.pop(hidden)
            if value is not None:
                if click.get_current_context().get_parameter_source(dest) is ParameterSource.COMMANDLINE:
                    raise click.UsageError(f"{old} is the old spelling of {new}; give only {new}")
                click.echo(f"warning: {old} is deprecated, use {new} ({old} goes in {REMOVED_IN})", err=True)
                kwargs[dest] = value
            return f(*args, **kwargs)

        return click.option(old, hidden, type=type, default=None, hidden=True)(command)

    return decorate


def build_option(dest: str = "build_dir", help: str = "build folder (packs, worlds/, caches)", default: Path | None = BUILD):
    """``--build DIR``, the build folder, in every command that reads or writes one."""
    return click.option("--build", dest, type=click.Path(file_okay=False, path_type=Path), default=default,
                        show_default=default is not None, help=help)


def quiet_option():
    """``--quiet``: no progress on stderr (``mcbuild.cli.progress``), in every command that shows some."""
    return click.option("--quiet", is_flag=True,
                        help="No progress on stderr (a bar on a terminal, a summary line elsewhere).")


def backend_option(default: str | None = "sim", help: str = "backend that runs the episodes"):
    """``--backend NAME``, its choices from the backend registry."""
    from mcbuild.runtime.backends.registry import names

    return click.option("--backend", type=click.Choice(names()), default=default, show_default=default is not None,
                        help=help)


def key_free(exc: BaseException, group: str) -> str:
    """``exc``'s one line, followed by ``group``'s key-free mode when a missing API key caused it."""
    from mcbuild.llm.client import MissingKey

    text = " ".join(str(exc).split())
    seen: BaseException | None = exc
    while seen is not None and not isinstance(seen, MissingKey):
        seen = seen.__cause__ or seen.__context__
    return f"{text}; {KEY_FREE[group]}" if seen is not None else text
