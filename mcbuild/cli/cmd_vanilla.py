"""``mcbuild vanilla``: the game's own 1.19.0 data (``import``, ``verify``; ``manifest`` for maintainers)."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from mcbuild.compiler.core import vanilla as data
from mcbuild.compiler.core.paths import VANILLA_DATA


#: Files named under a summary; the rest are counted.
SHOWN = 20


def _fail(summary: str, problems: list[str]) -> None:
    """The summary line, then at most :data:`SHOWN` problem lines and how many more (exit 1)."""
    click.echo(summary, err=True)
    for line in problems[:SHOWN]:
        click.echo(line, err=True)
    if len(problems) > SHOWN:
        click.echo(f"… and {len(problems) - SHOWN} more", err=True)
    sys.exit(1)


def register(main: click.Group) -> None:
    @main.group("vanilla")
    def vanilla() -> None:
        """Import and verify the game's 1.19.0 data (never part of the repository)."""

    @vanilla.command("import")
    @click.argument("src", type=click.Path(exists=True, path_type=Path))
    def import_cmd(src: Path) -> None:
        """Copy the game's data from SRC, the data generator's output folder or the official 1.19.0
        server jar, after checking every file against catalogs/vanilla-1.19.manifest.tsv."""
        try:
            count = data.import_data(src)
        except data.DataDamaged as exc:
            _fail(f"nothing imported: {src}: {data.tally(exc.problems)}", exc.problems)
        click.echo(f"imported {count} files of the game's 1.19.0 data into {VANILLA_DATA}")

    @vanilla.command("verify")
    def verify_cmd() -> None:
        """Re-hash the imported copy: every changed, missing or extra file is one line (exit 1)."""
        problems = data.verify(VANILLA_DATA)
        if problems:
            _fail(f"{VANILLA_DATA}: {data.tally(problems)}; {data.HOW_TO_IMPORT}", problems)
        click.echo(f"ok: {VANILLA_DATA} holds the game's 1.19.0 data as the manifest lists it")

    @vanilla.command("manifest", hidden=True)
    @click.argument("src", type=click.Path(exists=True, file_okay=False, path_type=Path))
    @click.option("--blobs", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
                  help="BLOBS.tsv: each file's upstream git blob SHA-1, checked while writing")
    def manifest_cmd(src: Path, blobs: Path | None) -> None:
        """(Maintainers) Write catalogs/vanilla-1.19.manifest.tsv from the generator output SRC."""
        try:
            count = data.write_manifest(src, blobs)
        except data.DataDamaged as exc:
            _fail(f"{src}: {len(exc.problems)} file(s) differ from {blobs}", exc.problems)
        click.echo(f"{data.MANIFEST}: {count} files")
