"""Options every command that can run the server backend takes, passed on as environment variables
(so study worker processes see them too), and the one-line refusal when it cannot start."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import click


def server_options(command):
    """Add --server-jar, --accept-eula, --allow-unverified-jar and --prestart to ``command``."""
    for option in reversed([
        click.option("--server-jar", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="server backend: the Minecraft 1.19.0 server.jar (or MCBUILD_SERVER_JAR)"),
        click.option("--accept-eula", is_flag=True, help="server backend: accept the Minecraft EULA (or MCBUILD_ACCEPT_EULA=1)"),
        click.option("--allow-unverified-jar", is_flag=True, help="server backend: run a jar whose SHA-1 is not 1.19.0's"),
        click.option("--prestart", is_flag=True, help="server backend: start the next episode's server in advance"),
    ]):
        command = option(command)
    return command


def apply_server_options(server_jar: Path | None, accept_eula: bool, allow_unverified_jar: bool, prestart: bool) -> None:
    """Export the options and check that the server backend can start: one line and exit 2 if not."""
    from mcbuild.runtime.backends.registry import factory
    from mcbuild.runtime.errors import BackendUnavailable

    if server_jar is not None:
        os.environ["MCBUILD_SERVER_JAR"] = str(server_jar.resolve())
    if accept_eula:
        os.environ["MCBUILD_ACCEPT_EULA"] = "1"
    if allow_unverified_jar:
        os.environ["MCBUILD_ALLOW_UNVERIFIED_JAR"] = "1"
    if prestart:
        os.environ["MCBUILD_SERVER_PRESTART"] = "1"
    try:
        factory("server")
    except BackendUnavailable as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
