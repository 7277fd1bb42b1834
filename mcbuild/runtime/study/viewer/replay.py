"""The body's path through an episode, recovered by replaying its stored actions.

Trajectories do not store positions, so the viewer re-opens the episode on the study's backend
with the stored seed and runs the recorded actions in order (no agent is involved). After each
action it checks that the inventory changed exactly as recorded; at the first mismatch the path
stops there and the viewer says so.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence


@dataclass(frozen=True)
class Replay:
    """Positions after the start and after each replayed action; ``diverged_at`` is the first action
    whose replay differed from the record (``None`` if all matched)."""

    positions: list[tuple[int, int, int]]
    diverged_at: int | None


def _block(position: Sequence[int]) -> tuple[int, int, int]:
    """A snapshot's block position as a tuple."""
    return position[0], position[1], position[2]


def replay_path(world: str, condition: str, task: str, budget: int, seed: int,
                trajectory: Sequence[Mapping[str, Any]], *, build: Path, backend: str = "sim") -> Replay:
    """Replay ``trajectory``'s actions on a fresh episode and record the body's block position."""
    from mcbuild.runtime.episode.opening import open_episode

    with open_episode(world, condition, task, budget, seed, build=build, backend=backend) as ep:
        positions = [_block(ep.backend.snapshot(surroundings=False).position)]
        for step in trajectory:
            if "action" not in step:
                continue
            if ep.done:
                return Replay(positions, int(step["index"]))
            ep.step(step["action"])
            positions.append(_block(ep.backend.snapshot(surroundings=False).position))
            if ep.trajectory[-1]["inventory_delta"] != step.get("inventory_delta"):
                return Replay(positions, int(step["index"]))
    return Replay(positions, None)
