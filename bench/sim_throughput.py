"""Embedded-simulator throughput: semantic actions per second and world-reset time (one core).

Uses the first built Vanilla world (``build/worlds``) when there is one, else the synthetic test
world. The action mix is a complete vanilla-planner Enchantment episode (mine, explore, craft,
place, smelt, attack, enchant), replayed from a fresh world each time. Rates are per CPU second of
this process (best of three windows), so other load on a shared machine does not count; they are
printed beside the numbers of one recorded run (BASELINE): ``actions_per_s`` steps an Episode
(validation, evaluator, trajectory; no observations), ``backend_actions_per_s`` the simulator
alone, ``observed_actions_per_s`` also builds an observation before every action.
Targets: the simulator >= 2,000 actions/s, reset <= 20 ms.

    .venv/bin/python bench/sim_throughput.py [--world plains-1] [--build build] [--seconds 2]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcbuild.compiler.core.paths import BUILD  # noqa: E402
from mcbuild.compiler.rules.rulebook import Rulebook  # noqa: E402
from mcbuild.compiler.worlds.layout import (
    rules_of,  # noqa: E402
    world_dir,  # noqa: E402
)
from mcbuild.runtime.agents.registry import create  # noqa: E402
from mcbuild.runtime.backends.registry import factory  # noqa: E402
from mcbuild.runtime.backends.sim import synthetic  # noqa: E402
from mcbuild.runtime.backends.sim.backend import SimBackend  # noqa: E402
from mcbuild.runtime.backends.sim.factory import SimFactory  # noqa: E402
from mcbuild.runtime.backends.sim.world import StaticWorld  # noqa: E402
from mcbuild.runtime.contract.skills import validate  # noqa: E402
from mcbuild.runtime.episode.episode import Episode  # noqa: E402
from mcbuild.runtime.episode.loop import run  # noqa: E402

# One run on the development machine (2 shared cores, Python 3.11, jungle-1), for comparison.
BASELINE = {"load_cold_s": 1.61, "load_cached_s": 0.11, "reset_ms": 0.94, "new_episode_ms": 0.84,
            "actions_per_s": 1834.0, "backend_actions_per_s": 2659.0, "observed_actions_per_s": 319.0}
TARGETS = {"backend_actions_per_s": 2000.0, "reset_ms": 20.0}


def _parts(world: str | None, build: Path) -> tuple[StaticWorld, Rulebook]:
    """The static world and Vanilla rules of a built world (or of the synthetic one)."""
    if world is None:
        return synthetic.static_world(), Rulebook(packs=[synthetic.biome_pack()])
    save = world_dir(world, "vanilla", build)
    return factory("sim").world(save), rules_of(save)


def _first_world(build: Path) -> str | None:
    worlds = sorted(p.parent.parent.name for p in (build / "worlds").glob("*/vanilla/level.dat"))
    return worlds[0] if worlds else None


def _loads(world: str | None, build: Path) -> tuple[float, float]:
    """Seconds to read a save into arrays (empty cache), then to load it from the cache."""
    if world is None:
        start = time.perf_counter()
        synthetic.static_world()
        return time.perf_counter() - start, 0.0
    with tempfile.TemporaryDirectory() as cache:
        times = []
        for _ in range(2):
            start = time.perf_counter()
            SimFactory(cache_dir=Path(cache)).world(world_dir(world, "vanilla", build))
            times.append(time.perf_counter() - start)
    return times[0], times[1]


def _rate(reset, act, actions: list, seconds: float, rounds: int = 3) -> float:
    """Actions per CPU second of this process, best of ``rounds`` windows."""
    best = 0.0
    for _ in range(rounds):
        done, start = 0, time.process_time()
        while time.process_time() - start < seconds:
            reset()
            for action in actions:
                act(action)
                done += 1
        best = max(best, done / (time.process_time() - start))
    return best


def _observed_step(episode: Episode):
    def act(action: dict) -> None:
        episode.observe()
        episode.step(action)
    return act


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", default=None, help="built world id (default: the first one, else synthetic)")
    parser.add_argument("--build", type=Path, default=BUILD)
    parser.add_argument("--seconds", type=float, default=2.0, help="length of each of the 3 timing windows")
    args = parser.parse_args()
    world = args.world or _first_world(args.build)
    load_cold, load_cached = _loads(world, args.build)

    static, rules = _parts(world, args.build)
    with Episode.from_parts(factory("sim").on(static, rules, 0), rules, rules, "enchantment") as episode:
        run(episode, create("vanilla-planner"), 0)
        actions = [step["action"] for step in episode.trajectory]
        resets = []
        for _ in range(20):
            start = time.perf_counter()
            episode.reset()
            resets.append(time.perf_counter() - start)
            for action in actions:
                episode.step(action)
        rate = _rate(episode.reset, episode.step, actions, args.seconds)
        observed = _rate(episode.reset, _observed_step(episode), actions, args.seconds)
        backend = SimBackend(static, rules)       # the body alone, without the episode's bookkeeping
        validated = [validate(a, rules.catalog) for a in actions]
        bare = _rate(lambda: backend.reset(0), backend.execute, validated, args.seconds)
    starts = []
    for _ in range(20):
        start = time.perf_counter()
        Episode.from_parts(factory("sim").on(static, rules, 0), rules, rules, "enchantment").close()
        starts.append(time.perf_counter() - start)

    now = {"load_cold_s": load_cold, "load_cached_s": load_cached, "reset_ms": statistics.median(resets) * 1000,
           "new_episode_ms": statistics.median(starts) * 1000, "actions_per_s": rate,
           "backend_actions_per_s": bare, "observed_actions_per_s": observed}
    print(f"world: {world or 'synthetic'}; action mix: {len(actions)}-action vanilla-planner enchantment episode")
    print(f"{'metric':<24}{'this run':>12}{'baseline':>12}{'target':>10}")
    for key, value in now.items():
        target = TARGETS.get(key)
        print(f"{key:<24}{value:>12.2f}{BASELINE[key]:>12.2f}{'' if target is None else f'{target:g}':>10}")
    met = now["backend_actions_per_s"] >= TARGETS["backend_actions_per_s"] and now["reset_ms"] <= TARGETS["reset_ms"]
    print("targets met" if met else "TARGETS MISSED")


if __name__ == "__main__":
    main()
