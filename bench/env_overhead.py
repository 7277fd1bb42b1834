"""Benchmark: steps per second of the Gymnasium environment mcbuild/MirrorCraft-v0 against the bare
Episode loop.

    .venv/bin/python bench/env_overhead.py [--rounds 7] [--world plains-1] [--build build]

The adaptive planner plays each (condition, task) once per seed on the simulator. Lanes, each on
episodes opened once and reset per play:

* ``loop``: the bare Episode loop, ``runtime/episode/loop.run(episode, planner)``;
* ``env state``: the same planner through ``gymnasium.make(..., observation="state")``, acting on
  ``obs["state"]`` (a fresh copy of the observation each step) until terminated or truncated;
* ``replay loop`` and ``replay env``: the planner's recorded actions replayed without the planner,
  ``episode.observe()`` + ``episode.step(action)`` against ``env.step(action)``, which isolates the
  wrapper (no agent to dilute it);
* ``replay loop + text`` and ``replay env both``: the same with the observation's text rendering, what
  an LLM agent does with every observation, on both sides (``observation="both"``, the default).

Lanes alternate within each round; a lane's figure is its best round, by the process's CPU time
(what the lane itself costs, whatever else runs on the machine) and by wall time. The load average
is printed before and after.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gymnasium  # noqa: E402

import mcbuild.envs  # noqa: E402
from mcbuild.compiler.core.paths import BUILD  # noqa: E402
from mcbuild.runtime.agents.llm.prompts import observation_text  # noqa: E402
from mcbuild.runtime.agents.registry import create  # noqa: E402
from mcbuild.runtime.episode.loop import run  # noqa: E402
from mcbuild.runtime.episode.opening import open_episode  # noqa: E402

CELLS = [(c, t) for c in ("vanilla", "m01", "m04", "m05") for t in ("iron_armor", "diamond")]
SEEDS = (0, 1)
TARGET = 10.0               # percent


def scripts(world: str, build: Path) -> dict[tuple[str, str], dict[int, list[dict[str, Any]]]]:
    """The adaptive planner's actions in each cell and seed."""
    out: dict[tuple[str, str], dict[int, list[dict[str, Any]]]] = {}
    for cell in CELLS:
        for seed in SEEDS:
            with open_episode(world, *cell, None, seed, build=build) as ep:
                run(ep, create("adaptive-planner", seed=seed), seed)
                out.setdefault(cell, {})[seed] = [step["action"] for step in ep.trajectory]
    return out


def lanes(world: str, build: Path, plays: dict) -> dict[str, Callable[[], int]]:
    episodes = {cell: open_episode(world, *cell, None, 0, build=build) for cell in plays}
    planner = create("adaptive-planner", seed=0)
    envs = {kind: {cell: gymnasium.make(mcbuild.envs.ENV_ID, world=world, condition=cell[0], task=cell[1],
                                        build=build, observation=kind) for cell in plays}
            for kind in ("state", "both")}
    for group in envs.values():
        for env in group.values():
            env.reset(seed=0)

    def loop(text: bool) -> Callable[[], int]:
        def go() -> int:
            n = 0
            for cell, by_seed in plays.items():
                ep = episodes[cell]
                for seed, actions in by_seed.items():
                    ep.reset(seed)
                    for action in actions:
                        obs = ep.observe()
                        if text:
                            observation_text(obs)
                        ep.step(action)
                        n += 1
            return n
        return go

    def played() -> int:
        n = 0
        for cell, by_seed in plays.items():
            ep = episodes[cell]
            for seed in by_seed:
                ep.reset(seed)
                run(ep, planner, seed)
                n += ep.used
        return n

    def env_played() -> int:
        n = 0
        for cell, by_seed in plays.items():
            env = envs["state"][cell]
            for seed in by_seed:
                planner.reset(seed)
                obs, _ = env.reset(seed=seed)
                done = False
                while not done:
                    action = planner.act(obs["state"])
                    if action is None:          # no executable action: the loop stops the episode here
                        break
                    obs, _, terminated, truncated, _ = env.step(action)
                    done = terminated or truncated
                    n += 1
        return n

    def env_lane(kind: str) -> Callable[[], int]:
        def go() -> int:
            n = 0
            for cell, by_seed in plays.items():
                env = envs[kind][cell]
                for seed, actions in by_seed.items():
                    env.reset(seed=seed)
                    for action in actions:
                        env.step(action)
                        n += 1
            return n
        return go

    return {"loop": played, "env state": env_played, "replay loop": loop(False), "replay env": env_lane("state"),
            "replay loop + text": loop(True), "replay env both": env_lane("both")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--world", default="plains-1")
    ap.add_argument("--build", type=Path, default=BUILD)
    args = ap.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    plays = scripts(args.world, args.build)
    steps = sum(len(a) for by_seed in plays.values() for a in by_seed.values())
    print(f"{len(CELLS)} cells x {len(SEEDS)} seeds in {args.world}: {steps} recorded actions")
    lane = lanes(args.world, args.build, plays)
    for go in lane.values():          # warm every cache once
        go()
    best = {name: [float("inf"), float("inf")] for name in lane}       # CPU s, wall s
    for _ in range(args.rounds):
        for name, go in lane.items():
            cpu, wall = time.process_time(), time.perf_counter()
            assert go() == steps
            spent = (time.process_time() - cpu, time.perf_counter() - wall)
            best[name] = [min(b, x) for b, x in zip(best[name], spent)]
    print(f"{'lane':<20}{'steps/CPU-s':>12}{'CPU ms/step':>12}{'steps/s':>10}")
    for name, (cpu, wall) in best.items():
        print(f"{name:<20}{steps / cpu:>12.0f}{1000 * cpu / steps:>12.3f}{steps / wall:>10.0f}")
    for env, loop in (("env state", "loop"), ("replay env", "replay loop"), ("replay env both", "replay loop + text"),
                      ("replay env both", "replay loop")):
        cpu = best[env][0] / best[loop][0] - 1
        wall = best[env][1] / best[loop][1] - 1
        print(f"overhead {env} vs {loop}: {100 * cpu:+.1f}% CPU, {100 * wall:+.1f}% wall")
    print(f"target: the wrapper's overhead under {TARGET:.0f}% (env state vs the loop with its agent)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
