"""``mcbuild task check``, the runtime part: no checked milestone may already hold at the start of
an episode in any Vanilla world (checked on a backend, the simulator by default, exactly as an
episode checks it: the start state counts as action 0). :func:`task_check` is the whole check,
the compile-side part (``mcbuild.compiler.worlds.taskcheck``) included; the CLI and the task Designer
both call it."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from mcbuild.compiler.core.errors import SpecError
from mcbuild.compiler.rules.tasks import Task
from mcbuild.compiler.worlds.layout import VANILLA, world_biomes
from mcbuild.compiler.worlds.taskcheck import TaskCheck, check_task, conditions_of
from mcbuild.runtime.episode.opening import open_episode


def met_at_start(task: Task, build: Path, backend: str = "sim",
                 worlds: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """``(world, milestone code)`` for every milestone that holds before the first action."""
    out = []
    for world in worlds or sorted(world_biomes()):
        with open_episode(world, VANILLA, task, build=build, backend=backend) as ep:
            out += [(world, code) for code in ep.milestones_met]
    return out


def task_check(path: Path, build: Path, backend: str = "sim", worlds: Sequence[str] | None = None) -> TaskCheck:
    """Check the task spec at ``path`` on the saves of ``worlds`` (default: every world) under
    Vanilla and every suite the build holds; raises a one-line ``SpecError`` naming file and field."""
    worlds = list(worlds or sorted(world_biomes()))
    found = check_task(path, build, conditions_of(build, worlds), worlds)
    codes = [m.code for m in found.task.milestones]
    for world, code in met_at_start(found.task, build, backend, worlds):
        raise SpecError(str(path), f"milestones[{codes.index(code)}]",
                        f"milestone {code!r} already holds at the start in {world}")
    return found
