"""Benchmark: the CPU the Gymnasium environment mcbuild/MirrorCraft-v0 costs per step against the bare
Episode loop.

    .venv/bin/python bench/env_overhead.py [--rounds 5] [--world plains-1] [--build build]

The adaptive planner plays each (condition, task) of ``CELLS`` once per seed on the simulator. Three
comparisons, each a pair of sides run **in lockstep**: every action is taken on both sides, one after
the other (which goes first alternates), and each side's process CPU time is summed over its own
calls, so whatever else runs on the machine weighs on both sides alike (the machine is shared):

* ``agent``: the planner through the bare Episode loop (``agent.act(episode.observe())``, then
  ``episode.step(action)``, as ``runtime/episode/loop.run`` does) against a second planner through
  ``gymnasium.make(..., observation="state")`` (``agent.act(obs["state"])``, ``env.step(action)``);
* ``replay``: the planner's recorded actions without the planner: ``episode.observe()`` +
  ``episode.step(action)`` against ``env.step(action)`` with ``observation="state"`` (the wrapper alone:
  ``info``, Gymnasium's own wrappers, the read-only state, of which nothing is read);
* ``agent + text``: the first with the observation's text on both sides, against the environment's
  defaults (``observation="both"``);
* ``replay, all read``: the replay, reading every part of the environment's state (``dict(obs["state"])``,
  a fresh copy of each part) while the loop reads nothing: the cost for an agent that reads everything;
* ``replay + text``: the replay with the observation's text on both sides (what an LLM agent renders
  from every observation) against the default ``observation="both"``;
* ``agent, copy=True`` and ``replay, copy=True``: the first two with ``copy=True`` (the whole
  observation copied into a plain dict every step).

It prints each side's CPU per step and steps per CPU second, the overhead (environment over loop,
summed over all rounds), the median over steps of one side's CPU over the other's for the same step
(both sides take the same actions; the median is robust to the moments another process took the
core), and the load average before and after.
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gymnasium
import harness

import mcbuild.envs
from mcbuild.compiler.core.paths import BUILD
from mcbuild.runtime.agents.llm.rendering import observation_text
from mcbuild.runtime.agents.registry import create
from mcbuild.runtime.episode.loop import run
from mcbuild.runtime.episode.opening import open_episode

CELLS = [(c, t) for c in ("vanilla", "m01", "m04", "m05") for t in ("iron_armor", "diamond")]
SEEDS = (0, 1)
TARGET = 10.0               # percent
#: The comparisons of the environment with its default copy, each judged against ``TARGET`` at its median step
#: (``replay, all read`` shows what reading every part costs: about what ``copy=True`` costs).
JUDGED = ("agent", "replay", "agent + text", "replay + text")
Plays = dict[tuple[str, str], dict[int, list[dict[str, Any]]]]


def record(world: str, build: Path) -> Plays:
    """The adaptive planner's actions in each cell and seed."""
    out: Plays = {}
    for cell in CELLS:
        for seed in SEEDS:
            with open_episode(world, *cell, None, seed, build=build) as ep:
                run(ep, create("adaptive-planner"), seed)
                out.setdefault(cell, {})[seed] = [step["action"] for step in ep.trajectory]
    return out


class Clock:
    """CPU seconds spent inside ``timed`` calls, in total and per call."""

    def __init__(self) -> None:
        self.spent = 0.0
        self.calls: list[float] = []

    def timed(self, fn: Callable[..., Any], *args: Any) -> Any:
        start = time.process_time()
        try:
            return fn(*args)
        finally:
            took = time.process_time() - start
            self.spent += took
            self.calls.append(took)


class Loop:
    """One side that plays through the bare episode."""

    def __init__(self, world: str, cell: tuple[str, str], build: Path, text: bool):
        self.episode = open_episode(world, *cell, None, 0, build=build)
        self.text = text
        self.agent = create("adaptive-planner")

    def reset(self, seed: int) -> None:
        self.episode.reset(seed)
        self.agent.reset(seed)

    def replay(self, action: dict[str, Any]) -> None:
        obs = self.episode.observe()
        if self.text:
            observation_text(obs)
        self.episode.step(action)

    def act(self) -> bool:
        obs = self.episode.observe()
        if self.text:
            observation_text(obs)
        action = self.agent.act(obs)
        if action is None:
            return False
        self.episode.step(action)
        return not self.episode.done


class Env:
    """The other side: the same through the environment (``read``: every part of the state read)."""

    def __init__(self, world: str, cell: tuple[str, str], build: Path, observation: str, copy: bool = False,
                 read: bool = False):
        self.env = gymnasium.make(mcbuild.envs.ENV_ID, world=world, condition=cell[0], task=cell[1], build=build,
                                  observation=observation, copy=copy)
        self.agent = create("adaptive-planner")
        self.read = read
        self.obs: dict[str, Any] = {}

    def reset(self, seed: int) -> None:
        self.obs, _ = self.env.reset(seed=seed)
        self.agent.reset(seed)

    def replay(self, action: dict[str, Any]) -> None:
        obs = self.env.step(action)[0]
        if self.read:
            dict(obs["state"])

    def act(self) -> bool:
        action = self.agent.act(self.obs["state"])
        if action is None:
            return False
        self.obs, _, terminated, truncated, _ = self.env.step(action)
        return not (terminated or truncated)


def lockstep(plays: Plays, sides: dict[tuple[str, str], tuple[Any, Any]], agent: bool) -> tuple[Clock, Clock, int]:
    """The CPU clock of each side over every play (resets left out), and the steps each took (the same
    on both)."""
    clocks, steps, flip = (Clock(), Clock()), 0, False
    for cell, by_seed in plays.items():
        pair = sides[cell]
        for seed, actions in by_seed.items():
            for side in pair:
                side.reset(seed)
            if agent:
                going = [True, True]
                while any(going):
                    flip = not flip
                    for i in ((0, 1) if flip else (1, 0)):
                        if going[i]:
                            going[i] = clocks[i].timed(pair[i].act)
                    steps += 1
            else:
                for action in actions:
                    flip = not flip
                    for i in ((0, 1) if flip else (1, 0)):
                        clocks[i].timed(pair[i].replay, action)
                    steps += 1
    return clocks[0], clocks[1], steps


def main() -> int:
    ap = harness.parser(__doc__, baseline=False)       # the environment is new in this checkout
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--world", default="plains-1")
    ap.add_argument("--build", type=Path, default=BUILD)
    args = ap.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    plays = record(args.world, args.build)
    n = sum(len(a) for by_seed in plays.values() for a in by_seed.values())
    print(f"{len(CELLS)} cells x {len(SEEDS)} seeds in {args.world}: {n} actions of the adaptive planner")
    comparisons = {
        "agent": ({c: (Loop(args.world, c, args.build, False), Env(args.world, c, args.build, "state")) for c in plays},
                  True),
        "replay": ({c: (Loop(args.world, c, args.build, False), Env(args.world, c, args.build, "state"))
                    for c in plays}, False),
        "agent + text": ({c: (Loop(args.world, c, args.build, True), Env(args.world, c, args.build, "both"))
                          for c in plays}, True),
        "replay, all read": ({c: (Loop(args.world, c, args.build, False),
                                  Env(args.world, c, args.build, "state", read=True)) for c in plays}, False),
        "replay + text": ({c: (Loop(args.world, c, args.build, True), Env(args.world, c, args.build, "both"))
                           for c in plays}, False),
        "agent, copy=True": ({c: (Loop(args.world, c, args.build, False),
                                  Env(args.world, c, args.build, "state", copy=True)) for c in plays}, True),
        "replay, copy=True": ({c: (Loop(args.world, c, args.build, False),
                                   Env(args.world, c, args.build, "state", copy=True)) for c in plays}, False),
    }
    for sides, agent in comparisons.values():          # warm every cache once
        lockstep(plays, sides, agent)
    ratios: dict[str, list[float]] = {name: [] for name in comparisons}
    totals = {name: [0.0, 0.0, 0] for name in comparisons}
    for _ in range(args.rounds):
        for name, (sides, agent) in comparisons.items():
            loop, env, steps = lockstep(plays, sides, agent)
            assert len(loop.calls) == len(env.calls) == steps, (name, len(loop.calls), len(env.calls))
            totals[name] = [totals[name][0] + loop.spent, totals[name][1] + env.spent, totals[name][2] + steps]
            # both sides take the same actions (the planners see equal observations): step i is step i
            ratios[name] += [e / x for x, e in zip(loop.calls, env.calls) if x > 0]
    medians = {name: 100 * (statistics.median(r) - 1) for name, r in ratios.items()}
    print(f"{'comparison':<20}{'loop CPU ms/step':>18}{'env CPU ms/step':>17}{'loop steps/s':>14}{'env steps/s':>13}"
          f"{'overhead':>10}{'median step':>13}")
    for name, (loop_s, env_s, steps) in totals.items():
        print(f"{name:<20}{1000 * loop_s / steps:>18.3f}{1000 * env_s / steps:>17.3f}{steps / loop_s:>14,.0f}"
              f"{steps / env_s:>13,.0f}{100 * (env_s / loop_s - 1):>+9.1f}%{medians[name]:>+12.1f}%")
    print("steps/s: per CPU second of one core; overhead: the environment's CPU over the loop's, summed over every "
          "step of every round; median step: the median over steps of the environment's CPU over the loop's for the "
          "same step")
    print(f"target: the wrapper's overhead under {TARGET:.0f}% at the median step with the default copy "
          f"({', '.join(JUDGED)})")
    harness.summary_line("env_overhead", "; ".join(f"{name} {m:+.1f}%" for name, m in medians.items()),
                         ok=all(medians[name] < TARGET for name in JUDGED))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
