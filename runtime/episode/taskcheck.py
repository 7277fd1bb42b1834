"""``mcbuild task check``, the runtime part: no checked milestone may already hold at the start of
an episode in any Vanilla world (checked on a backend, the simulator by default, exactly as an
episode checks it: the start state counts as action 0)."""
from __future__ import annotations

from pathlib import Path

from compiler.rules.tasks import Task
from compiler.worlds.layout import VANILLA, world_biomes
from runtime.episode.opening import open_episode


def met_at_start(task: Task, build: Path, backend: str = "sim") -> list[tuple[str, str]]:
    """``(world, milestone code)`` for every milestone that holds before the first action."""
    out = []
    for world in sorted(world_biomes()):
        with open_episode(world, VANILLA, task, build=build, backend=backend) as ep:
            out += [(world, code) for code in ep.milestones_met]
    return out
