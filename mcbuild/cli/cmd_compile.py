"""``mcbuild compile``: specs -> build/<id>/ (datapack.zip, report.json, spec.json[, rules.md])."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from mcbuild.cli.vocabulary import build_option, old_spelling
from mcbuild.compiler.build import compile_path, differences, writable, write
from mcbuild.compiler.core.errors import SpecError
from mcbuild.compiler.core.paths import SPECS
from mcbuild.compiler.spec.base import read_yaml

ALL_KINDS = ("mirror", "biome")
OTHER_KINDS = ("worlds",)       # specs/ files that `mcbuild build worlds` reads


def spec_paths(paths: tuple[str, ...], all_: bool) -> list[Path]:
    if all_ and paths:
        raise click.UsageError(f"--all compiles every spec of {SPECS}, so the path {paths[0]} would be ignored; "
                               "give --all or paths")
    if all_:
        found = []
        for p in sorted(SPECS.glob("*.yaml")):
            data = read_yaml(p)
            kind = data.get("kind") if isinstance(data, dict) else None
            if kind in ALL_KINDS:
                found.append(p)
            elif kind not in OTHER_KINDS:
                raise SpecError(str(p), "kind", f"must be one of {', '.join(ALL_KINDS + OTHER_KINDS)}, got {kind!r}")
        return found
    if not paths:
        raise click.UsageError("give spec paths or --all")
    return [Path(p) for p in paths]


def summary(artifact) -> list[str]:
    rep = artifact.report
    if artifact.kind != "mirror":
        return [f"{artifact.id}: biome pack, {len(rep.get('files', rep.get('pack_files', {})))} files"]
    lines = [f"{artifact.id}: {len(rep['changes'])} changes"]
    for tid, t in rep["tracer"]["tasks"].items():
        lines.append(f"  {tid:<12} route V {t['vanilla']['route_length']:>3}  M {t['suite']['route_length']:>3}")
    for ch in rep["tracer"]["changes"]:
        lines.append(f"  - {ch['id']:<28} {ch['observed_by']:<10} on {','.join(ch['on_routes'])}")
    return lines


def register(main: click.Group) -> None:
    @main.command("compile")
    @click.argument("paths", nargs=-1)
    @click.option("--all", "all_", is_flag=True, help="Compile every mirror and biome spec in specs/.")
    @build_option(help="build folder the artifacts go to (<build>/<id>/)")
    @click.option("--check", is_flag=True, help="Rebuild in memory; exit 1 if the build folder differs.")
    @old_spelling("--out", "--build", "build_dir", click.Path(file_okay=False, path_type=Path))
    def compile_cmd(paths: tuple[str, ...], all_: bool, build_dir: Path, check: bool) -> None:
        """Compile specs into deterministic Minecraft 1.19.0 datapacks."""
        artifacts = [compile_path(p) for p in spec_paths(paths, all_)]  # validate all before writing any
        if not check:
            for art in artifacts:       # and refuse a folder of the user's before replacing any
                writable(art, build_dir)
        problems = []
        for art in artifacts:
            if check:
                problems += differences(art, build_dir)
                continue
            target = write(art, build_dir)
            click.echo("\n".join(summary(art)) + f"\n  -> {target}")
        if problems:
            click.echo("\n".join(problems), err=True)
            sys.exit(1)
        if check:
            click.echo(f"{len(artifacts)} artifact(s) identical to a fresh compile")
