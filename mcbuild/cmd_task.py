"""``mcbuild task check PATH``: validate a task spec against the built worlds and suites."""
from __future__ import annotations

from pathlib import Path

import click

from compiler.core.paths import BUILD


def register(main: click.Group) -> None:
    @main.group()
    def task() -> None:
        """Task specs (``kind: task``, specs/tasks/)."""

    @task.command("check")
    @click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
    @click.option("--build", "build_dir", type=click.Path(file_okay=False, path_type=Path), default=BUILD,
                  show_default=True, help="build folder holding worlds/")
    @click.option("--backend", default="sim", show_default=True, help="backend that checks the start states")
    def check(path: Path, build_dir: Path, backend: str) -> None:
        """Check the DAG, the checkers, the start states and a route everywhere; print d(τ) per condition."""
        from compiler.core.errors import SpecError
        from compiler.worlds.taskcheck import check_task, conditions_of
        from runtime.episode.taskcheck import met_at_start

        found = check_task(path, build_dir, conditions_of(build_dir))
        codes = [m.code for m in found.task.milestones]
        for world, code in met_at_start(found.task, build_dir, backend):
            raise SpecError(str(path), f"milestones[{codes.index(code)}]",
                            f"milestone {code!r} already holds at the start in {world}")
        click.echo(f"ok {found.task.id}: {len(codes)} milestones, a route to each in {found.saves} saves")
        click.echo("difficulty d(τ): " + ", ".join(f"{c} {d:.4f}" for c, d in found.difficulty.items()))
