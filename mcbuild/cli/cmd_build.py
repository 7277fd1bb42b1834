"""``mcbuild build``: world saves (``worlds``), their integrity check (``verify``) and ``freeze``."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from mcbuild.cli.progress import Stages
from mcbuild.cli.vocabulary import build_option, old_spelling, quiet_option


def _dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def register(main: click.Group) -> None:
    @main.group()
    def build() -> None:
        """Build, verify and freeze the 70 world saves (10 Vanilla worlds x 7 conditions)."""

    def build_folder(command):
        """``--build`` (saves go to <build>/worlds), and its old spelling ``--out``."""
        command = old_spelling("--out", "--build", "build_dir", click.Path(file_okay=False, path_type=Path))(command)
        return build_option(help="build folder (saves go to <build>/worlds)")(command)

    worlds_option = click.option("--worlds", "worlds_file", type=click.Path(dir_okay=False, path_type=Path),
                                 default=None, help="worlds spec (default specs/worlds.yaml; biome specs beside it)")
    packs_option = click.option("--packs", "packs_dir", type=click.Path(file_okay=False, path_type=Path),
                                default=None, help="folder holding mXX/datapack.zip (default: --build)")

    @build.command()
    @click.option("--only", default=None, metavar="ID", help="build one world, e.g. plains-1")
    @click.option("--workers", type=click.IntRange(min=1), default=None, help="worker processes (default: CPU count)")
    @click.option("--unfreeze", is_flag=True, help="allow replacing a frozen build (removes FROZEN.json)")
    @quiet_option()
    @build_folder
    @worlds_option
    @packs_option
    @old_spelling("--jobs", "--workers", "workers", click.IntRange(min=1))
    def worlds(only, workers, unfreeze, quiet, build_dir, worlds_file, packs_dir) -> None:
        """Generate each Vanilla world once and copy it into its Mirror conditions."""
        from mcbuild.compiler.spec.worlds import WORLDS_FILE
        from mcbuild.compiler.worlds.build import build_worlds

        start = time.perf_counter()
        with Stages(quiet) as stages:
            manifest = build_worlds(worlds_file or WORLDS_FILE, build_dir, only, packs_dir, jobs=workers,
                                    unfreeze=unfreeze, progress=lambda done, total: stages("worlds", done, total))
        built = sorted(w for w in manifest["worlds"] if only in (None, w))
        for world_id in built:
            entry = manifest["worlds"][world_id]
            size = _dir_size(build_dir / "worlds" / world_id) / 1e6
            click.echo(f"{world_id}: {entry['biome']} seed {entry['seed']}, {1 + len(entry['mirror_packs'])} saves, {size:.1f} MB")
        click.echo(f"built {len(built)} world(s) in {time.perf_counter() - start:.1f} s -> {build_dir / 'worlds'}")
        if unfreeze:
            click.echo("the build is no longer frozen; run `mcbuild build freeze` once it is final")

    @build.command()
    @build_folder
    @worlds_option
    @packs_option
    def verify(build_dir, worlds_file, packs_dir) -> None:
        """Re-hash every save; check pair identity, current packs, sources and the freeze."""
        from mcbuild.compiler.spec.worlds import WORLDS_FILE
        from mcbuild.compiler.worlds.integrity import verify_worlds

        problems, checked = verify_worlds(build_dir, worlds_file or WORLDS_FILE, packs_dir)
        for line in problems:
            click.echo(line, err=True)
        if problems:
            click.echo(f"verify failed: {len(problems)} problem(s)", err=True)
            sys.exit(1)
        click.echo(f"ok: {checked} files verified")

    @build.command()
    @build_folder
    @worlds_option
    @packs_option
    def freeze(build_dir, worlds_file, packs_dir) -> None:
        """Verify, then pin all packs, saves and the source fingerprint in <build>/FROZEN.json."""
        from mcbuild.compiler.spec.worlds import WORLDS_FILE
        from mcbuild.compiler.worlds.integrity import freeze_worlds

        click.echo(f"frozen: {freeze_worlds(build_dir, worlds_file or WORLDS_FILE, packs_dir)}")
