"""``mcbuild server check``: built saves verified on a real Minecraft 1.19.0 server."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from mcbuild.compiler.core.paths import BUILD
from mcbuild.cli.server_options import apply_server_options, server_options


def register(main: click.Group) -> None:
    @main.group("server")
    def server() -> None:
        """The Java server backend (needs a user-supplied server.jar)."""

    @server.command("check")
    @click.option("--world", default=None, help="only this world (default: every built world)")
    @click.option("--condition", default=None, help="only this condition (vanilla or m01 ... m06)")
    @click.option("--build", "build_dir", type=click.Path(file_okay=False, path_type=Path), default=BUILD,
                  show_default=True, help="build folder holding worlds/")
    @server_options
    def check(world, condition, build_dir, server_jar, accept_eula, allow_unverified_jar, prestart) -> None:
        """Version, datapacks, task advancements, spawn, placed blocks and the suite's rules of
        every built save, on a fresh server each; exit 1 if any check fails."""
        from mcbuild.runtime.episode.server_check import check_save, saves
        from mcbuild.runtime.errors import InfrastructureFault

        chosen = saves(build_dir, world, condition)
        if not chosen:
            click.echo(f"error: no built save matches under {build_dir / 'worlds'} (run `mcbuild build worlds`)", err=True)
            sys.exit(2)
        apply_server_options(server_jar, accept_eula, allow_unverified_jar, prestart)
        failed = 0
        for w, c in chosen:
            try:
                for finding in check_save(w, c, build_dir):
                    click.echo(finding.line())
                    failed += not finding.ok
            except InfrastructureFault as exc:
                click.echo(f"FAIL {w}/{c} server: {exc}")
                failed += 1
        click.echo(f"{len(chosen)} save(s) checked, {failed} failure(s)")
        if failed:
            sys.exit(1)
