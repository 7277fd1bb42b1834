"""``mcbuild demo``: the main job end to end on the embedded simulator, no key needed.

Compiles every spec, builds and verifies the 70 world saves, runs ``studies/quick.yaml`` with
the scripted agents and prints the per-suite table and the path of the HTML report. Each stage
prints its heading before it starts and skips what is already built and unchanged, so a second run
only finishes what is missing: the report and its viewer are rebuilt only when the store, the build
or the toolkit changed (``runtime/study/report/stamp.py``). The worlds and the study run on
``--workers`` processes, or on what fits the machine (the CPUs this process may use, less the busy
ones; printed with its reason).
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from mcbuild.cli.progress import Stages, StudyBar
from mcbuild.cli.vocabulary import build_option, quiet_option
from mcbuild.compiler.core.cpus import auto_workers

STAGES = 4


def heading(n: int, text: str) -> None:
    click.echo(f"[{n}/{STAGES}] {text}")


def _compile(build: Path) -> None:
    from mcbuild.pipeline.build import compile_path, differences, write
    from mcbuild.cli.cmd_compile import spec_paths

    heading(1, "compile")
    artifacts = [compile_path(p) for p in spec_paths((), True)]
    changed = [a for a in artifacts if differences(a, build)]
    for art in changed:
        write(art, build)
    click.echo(f"      {len(artifacts)} specs, {len(changed)} rebuilt")


def _worlds(build: Path, quiet: bool, workers: int) -> None:
    from mcbuild.compiler.spec.worlds import WORLDS_FILE
    from mcbuild.pipeline.worlds import build_worlds
    from mcbuild.compiler.worlds.integrity import verify_worlds

    heading(2, "worlds")
    problems, _ = verify_worlds(build, WORLDS_FILE, None)
    if not problems:
        click.echo("      up to date and verified")
        return
    with Stages(quiet) as stages:
        build_worlds(WORLDS_FILE, build, None, None, jobs=workers, progress=lambda done, total: stages("worlds", done, total))
    problems, checked = verify_worlds(build, WORLDS_FILE, None)
    if problems:
        click.echo("\n".join(problems), err=True)
        sys.exit(1)
    click.echo(f"      built and verified ({checked} files)")


def _study(build: Path, workers: int, quiet: bool) -> Path:
    from mcbuild.cli.cmd_study import resume_command, stopped
    from mcbuild.runtime.errors import BackendUnavailable
    from mcbuild.runtime.study.design.config import load_config
    from mcbuild.runtime.study.run.runner import run_study
    from mcbuild.runtime.study.store.results import StoreError

    cfg = load_config("studies/quick.yaml")
    heading(3, f"study {cfg.name}: scripted agents on {len(cfg.worlds)} worlds x {len(cfg.conditions)} conditions")
    try:
        with StudyBar(f"study {cfg.name}", quiet) as bar:
            summary = run_study(cfg, workers=workers, resume=True, build_root=build, progress=bar)
    except (StoreError, BackendUnavailable) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    if summary.interrupted is not None:
        stopped(summary, resume_command())
    if summary.errors or summary.gave_up:
        click.echo("\n".join(summary.lines()), err=True)
        sys.exit(1)
    click.echo(f"      {summary.stored}/{summary.planned} episodes stored ({summary.finished} new)")
    assert summary.store_path is not None          # run_study opened the store
    return summary.store_path.parent


def _report(study: Path, build: Path, quiet: bool) -> None:
    from mcbuild.analysis.card import CARD_NAME
    from mcbuild.cli.cmd_study import card_beside_report
    from mcbuild.runtime.study.report import write_report
    from mcbuild.runtime.study.report.stamp import inputs_digest, is_current
    from mcbuild.runtime.study.report.writers import report_options
    from mcbuild.runtime.study.viewer import write_viewer

    out = study / "report"
    heading(4, "report")
    if is_current(out, inputs_digest(study, build, report_options())):
        click.echo("      up to date (the store, the build and the toolkit are unchanged)\n")
        click.echo((out / "tables" / "table3_suite.md").read_text(encoding="utf-8"))
        html = out / "report.html"
        fresh = False
    else:
        with Stages(quiet) as stages:
            res = write_report(study, build=build, viewer=write_viewer, progress=stages)
        click.echo()
        click.echo(res.table("table3_suite").markdown())
        html, fresh = res.html, True
    click.echo(f"\nHTML report: {html}")
    if fresh or not (out / CARD_NAME).is_file():
        card_beside_report(study, out, build)


def register(main: click.Group) -> None:
    @main.command("demo")
    @click.option("--workers", type=click.IntRange(min=1), default=None,
                  help="Worker processes for the worlds and the study (default: what fits the machine, printed).")
    @build_option("build")
    @quiet_option()
    def demo_cmd(workers: int | None, build: Path, quiet: bool) -> None:
        """Compile, build worlds, run the quick paired study, print the suite table."""
        if workers is None:
            choice = auto_workers()
            click.echo(choice.line())
            workers = choice.workers
        _compile(build)
        _worlds(build, quiet, workers)
        _report(_study(build, workers, quiet), build, quiet)
