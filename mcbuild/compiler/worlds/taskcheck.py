"""``mcbuild task check``, the compile-side part: a task spec's prerequisite DAG and checkers
(validated by ``mcbuild.compiler.spec.task``), no milestone true by construction at the start, and a route
to every milestone in every Vanilla world and under every suite (the tracer's planner on the
rules of each built save). Every problem is a one-line ``SpecError`` naming the file and field; a
save whose rules cannot be read is a ``CompileError`` naming it.
"""
from __future__ import annotations

import math
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from mcbuild.compiler.core.errors import CompileError, SpecError
from mcbuild.compiler.planning.difficulty import task_difficulty
from mcbuild.compiler.planning.goals import route
from mcbuild.compiler.planning.tracer import suite_model
from mcbuild.compiler.rules.tasks import POSITIONS, Milestone, Task
from mcbuild.compiler.spec.task import load_task_spec, to_task
from mcbuild.compiler.worlds.layout import VANILLA, rules_of, world_biomes, world_dir

ORIGIN = (0, 0, 0)


@dataclass
class TaskCheck:
    """What a passing check found: d(τ) per condition (the same rules give the same value in
    every world of that condition, so the highest over worlds is kept) and the saves it routed."""

    task: Task
    difficulty: dict[str, float] = field(default_factory=dict)
    saves: int = 0

    @property
    def unplanned(self) -> list[str]:
        """The milestones that need the body at a position: their route's move is no skill (none
        walks to a chosen position), so only these fall outside what a planner can plan."""
        return [m.code for m in self.task.milestones if any(c.type in POSITIONS for c in m.checkers)]


def always_true(m: Milestone) -> str | None:
    """Why ``m`` holds at the start of every episode whatever the world, or None (what holds in
    some worlds only is found by opening them: ``mcbuild.runtime.episode.taskcheck``)."""
    if m.advancement is not None or not m.checkers:
        return None
    reasons = []
    for c in m.checkers:
        if c.type == "position_inside_box" and c.box and c.box.contains(ORIGIN):
            reasons.append("the start position lies inside its box")
        else:
            return None
    return "; ".join(reasons)


def check_task(path: Path, build: Path, conditions: list[str], worlds: list[str] | None = None) -> TaskCheck:
    """Validate the task spec at ``path`` against the built saves in ``build`` of ``worlds``
    (default: every world of ``specs/worlds.yaml``) under ``conditions`` (raises SpecError)."""
    spec = load_task_spec(path)
    task = to_task(spec)
    for i, m in enumerate(task.milestones):
        why = always_true(m)
        if why:
            raise SpecError(str(path), f"milestones[{i}].checkers", f"milestone {m.code!r} is always true at the start: {why}")
    out = TaskCheck(task)
    worlds = worlds or sorted(world_biomes())
    for condition in conditions:
        for world in worlds:
            save = world_dir(world, condition, build)
            if not (save / "level.dat").is_file():
                raise SpecError(str(path), "<build>", f"no save at {save} (run `mcbuild build worlds`)")
            try:
                rules = rules_of(save)
            except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
                raise CompileError(str(save), f"rules unreadable ({type(exc).__name__}: {exc}); "
                                   "run `mcbuild build verify`") from None
            model = suite_model(rules)
            for i, m in enumerate(task.milestones):
                if not route(model, rules, m).reachable:
                    raise SpecError(str(path), f"milestones[{i}]",
                                    f"milestone {m.code!r} has no route in {world} under {condition}")
            d = task_difficulty(model, rules, task)
            out.difficulty[condition] = max(out.difficulty.get(condition, -math.inf), d or 0.0)
            out.saves += 1
    return out


def conditions_of(build: Path, worlds: list[str] | None = None) -> list[str]:
    """Vanilla and every suite the build holds saves for (of the first of ``worlds``, default every world)."""
    first = sorted(worlds or world_biomes())[0]
    found = sorted(p.name for p in (build / "worlds" / first).iterdir() if p.is_dir() and p.name != VANILLA) \
        if (build / "worlds" / first).is_dir() else []
    return [VANILLA, *found]
