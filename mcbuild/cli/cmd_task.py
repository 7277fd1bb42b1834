"""``mcbuild task check PATH``: validate a task spec against the built worlds and suites."""
from __future__ import annotations

from pathlib import Path

import click

from mcbuild.compiler.core.paths import BUILD


def register(main: click.Group) -> None:
    @main.group()
    def task() -> None:
        """Task specs (``kind: task``, specs/tasks/)."""

    @task.command("check")
    @click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
    @click.option("--build", "build_dir", type=click.Path(file_okay=False, path_type=Path), default=BUILD,
                  show_default=True, help="build folder holding worlds/")
    @click.option("--backend", default="sim", show_default=True, help="backend that checks the start states")
    @click.option("--world", "worlds", multiple=True, help="check only this world (repeatable; default: every world)")
    def check(path: Path, build_dir: Path, backend: str, worlds: tuple[str, ...]) -> None:
        """Check the DAG, the checkers, the start states and a route everywhere; print d(τ) per condition."""
        from mcbuild.runtime.episode.taskcheck import task_check

        found = task_check(path, build_dir, backend, worlds)
        click.echo(f"ok {found.task.id}: {len(found.task.milestones)} milestones, a route to each in {found.saves} saves")
        if found.unplanned:
            click.echo(f"positions: {', '.join(found.unplanned)} need the body somewhere; no skill walks to a "
                       "chosen position, so their routes are not plans (the scripted planners reach one only by "
                       "returning to a station they placed there)")
        click.echo("difficulty d(τ): " + ", ".join(f"{c} {d:.4f}" for c, d in found.difficulty.items()))
