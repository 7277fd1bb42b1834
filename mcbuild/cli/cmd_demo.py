"""``mcbuild demo``: the main job end to end on the embedded simulator, no key needed.

Compiles every spec, builds and verifies the 70 world saves, runs ``studies/quick.yaml`` with
the scripted agents and prints the per-suite table and the path of the HTML report. Each stage
skips what is already built and unchanged, so a second run only finishes what is missing. The
worlds and the study run on ``--workers`` processes, or on what fits the machine (the CPUs this
process may use, less the busy ones; printed with its reason).
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from mcbuild.cli.progress import Stages
from mcbuild.compiler.core.cpus import auto_workers
from mcbuild.compiler.core.paths import BUILD


def _compile() -> None:
    from mcbuild.compiler.build import compile_path, differences, write
    from mcbuild.cli.cmd_compile import spec_paths

    artifacts = [compile_path(p) for p in spec_paths((), True)]
    changed = [a for a in artifacts if differences(a, BUILD)]
    for art in changed:
        write(art, BUILD)
    click.echo(f"[1/4] compile: {len(artifacts)} specs, {len(changed)} rebuilt")


def _worlds(quiet: bool, workers: int) -> None:
    from mcbuild.compiler.spec.worlds import WORLDS_FILE
    from mcbuild.compiler.worlds.build import build_worlds
    from mcbuild.compiler.worlds.integrity import verify_worlds

    problems, _ = verify_worlds(BUILD, WORLDS_FILE, None)
    if problems:
        with Stages(quiet) as stages:
            build_worlds(WORLDS_FILE, BUILD, None, None, jobs=workers,
                         progress=lambda done, total: stages("[2/4] worlds", done, total))
        problems, checked = verify_worlds(BUILD, WORLDS_FILE, None)
        if problems:
            click.echo("\n".join(problems), err=True)
            sys.exit(1)
        click.echo(f"[2/4] worlds: built and verified ({checked} files)")
    else:
        click.echo("[2/4] worlds: up to date and verified")


def _study(workers: int, quiet: bool) -> Path:
    from mcbuild.runtime.errors import BackendUnavailable
    from mcbuild.runtime.study.design.config import load_config
    from mcbuild.runtime.study.run.runner import run_study
    from mcbuild.runtime.study.store.results import StoreError

    cfg = load_config("studies/quick.yaml")
    click.echo(f"[3/4] study {cfg.name}: scripted agents on {len(cfg.worlds)} worlds x {len(cfg.conditions)} conditions")
    try:
        summary = run_study(cfg, workers=workers, resume=True, build_root=BUILD, progress=not quiet)
    except (StoreError, BackendUnavailable) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    if summary.errors or summary.gave_up:
        click.echo("\n".join(summary.lines()), err=True)
        sys.exit(1)
    return summary.store_path.parent


def register(main: click.Group) -> None:
    @main.command("demo")
    @click.option("--workers", type=click.IntRange(min=1), default=None,
                  help="Worker processes for the worlds and the study (default: what fits the machine, printed).")
    @click.option("--quiet", is_flag=True, help="No progress on stderr.")
    def demo_cmd(workers: int | None, quiet: bool) -> None:
        """Compile, build worlds, run the quick paired study, print the suite table."""
        from mcbuild.runtime.study.report import write_report

        if workers is None:
            choice = auto_workers()
            click.echo(choice.line())
            workers = choice.workers
        _compile()
        _worlds(quiet, workers)
        study = _study(workers, quiet)
        with Stages(quiet) as stages:
            res = write_report(study, progress=stages)
        click.echo("[4/4] report\n")
        click.echo(res.table("table3_suite").markdown())
        click.echo(f"\nHTML report: {res.html}")
