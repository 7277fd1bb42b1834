"""Embedded-simulator throughput, side by side with other checkouts measured in the same run.

The action mix is a complete vanilla-planner Enchantment episode on the first built Vanilla world
(``build/worlds``; else the synthetic test world), replayed from a fresh world each time. Figures
are CPU time of the measuring process, best replay of many (a shared machine's load and steal
time only ever add to a replay), so the ratios between trees measured alternately in one run are
what to read: ``step_obs`` steps an Episode and builds an observation before every action (the
agent loop), ``step`` steps alone, ``backend`` is the simulator alone; ``bare_read`` is the bound
an action is measured against, one uncached read of the nearest block of every kind around the
body (what every observation needs).

    .venv/bin/python bench/sim_throughput.py [--baseline REF]... [--rounds 3] [--replays 20] [--build DIR]

Each ``--baseline`` (a folder or a commit, in its own environment; bench/harness.py) is measured in
its own child process, alternately with this tree, on the same built world; the load average of
every round is printed with the figures.
"""
from __future__ import annotations

import argparse
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import harness

METRICS = ("step_obs_per_s", "step_per_s", "backend_per_s", "reset_ms", "bare_read_us", "step_obs_us")


@contextmanager
def bench_episode(build: Path) -> Iterator[tuple[Any, list[dict], Any, Any, str]]:
    """The bench's episode of the tree on ``sys.path`` (open), the actions of its complete run, the
    static world and rules it runs on, and the world's name."""
    module = harness.module
    Rulebook = module("mcbuild.compiler.rules.rulebook").Rulebook
    layout = module("mcbuild.compiler.worlds.layout")
    rules_of, world_dir = layout.rules_of, layout.world_dir
    create = module("mcbuild.runtime.agents.registry").create
    factory = module("mcbuild.runtime.backends.registry").factory
    synthetic = module("mcbuild.runtime.backends.sim.synthetic")
    Episode = module("mcbuild.runtime.episode.episode").Episode
    run = module("mcbuild.runtime.episode.loop").run

    worlds = sorted(p.parent.parent.name for p in (build / "worlds").glob("*/vanilla/level.dat"))
    if worlds:
        save = world_dir(worlds[0], "vanilla", build)
        static, rules = factory("sim").world(save), rules_of(save)
    else:
        static, rules = synthetic.static_world(), Rulebook(packs=[synthetic.biome_pack()])
    with Episode.from_parts(factory("sim").on(static, rules, 0), rules, rules, "enchantment") as episode:
        run(episode, create("vanilla-planner"), 0)
        yield episode, [step["action"] for step in episode.trajectory], static, rules, worlds[0] if worlds else "synthetic"


def measure(build: Path, replays: int) -> dict[str, Any]:
    """The figures of the tree on ``sys.path`` (best replay of ``replays``)."""
    SimBackend = harness.module("mcbuild.runtime.backends.sim.backend").SimBackend
    validate = harness.module("mcbuild.runtime.contract.skills").validate
    with bench_episode(build) as (episode, actions, static, rules, world):

        def observed(action: dict) -> None:
            episode.observe()
            episode.step(action)

        def best(reset, act, items: list) -> float:
            """CPU seconds of the fastest of ``replays`` replays of ``items``."""
            out = float("inf")
            for _ in range(replays):
                reset()
                start = time.process_time()
                for item in items:
                    act(item)
                out = min(out, time.process_time() - start)
            return out

        step_obs = best(episode.reset, observed, actions)
        step = best(episode.reset, episode.step, actions)
        resets = best(lambda: None, lambda _: episode.reset(), [0])
        backend = SimBackend(static, rules)
        validated = [validate(a, rules.catalog) for a in actions]
        bare = best(lambda: backend.reset(0), backend.execute, validated)
        terrain, here = backend.terrain, backend.body.pos
        read = best(lambda: None, lambda _: terrain._nearest_per_block(here, backend.config.scan_radius), [0])
    n = len(actions)
    return {"world": world, "actions": n, "step_obs_per_s": n / step_obs,
            "step_per_s": n / step, "backend_per_s": n / bare, "reset_ms": resets * 1000,
            "bare_read_us": read * 1e6, "step_obs_us": step_obs / n * 1e6}


def parent(args: argparse.Namespace) -> int:
    from mcbuild.compiler.core.paths import BUILD

    print(harness.machine(), flush=True)
    build = (args.build or BUILD).resolve()
    trees = harness.trees(args.baseline, warm=build)
    argv = [f"--build={build}", f"--replays={args.replays}"]
    best: dict[str, dict] = {}
    loads: list[str] = []
    for _ in range(args.rounds):
        for tree in trees:
            got = next(iter(harness.run(tree, __file__, argv)))
            loads.append(harness.load_cell(got))
            old = best.setdefault(tree.label, got)
            for key in METRICS:      # the best of the rounds: rates up, times down
                better = max if key.endswith("_per_s") else min
                old[key] = better(old[key], got[key])
    here = best["this tree"]
    print(f"world: {here['world']}; action mix: {here['actions']}-action vanilla-planner enchantment episode; "
          f"load (1 min) at the start-end of each measurement: {', '.join(loads)}")
    print(f"{'metric':<16}" + "".join(f"{t.label[-16:]:>16}" for t in trees))
    for key in METRICS:
        print(f"{key:<16}" + "".join(f"{best[t.label][key]:>16.1f}" for t in trees))
    for t in trees:
        b = best[t.label]
        print(f"bound ({t.label}): step + observation {b['step_obs_us']:.0f} us of CPU per action "
              f"= {b['step_obs_us'] / b['bare_read_us']:.1f} bare terrain reads of {b['bare_read_us']:.0f} us")
    ratios = harness.ratio_lines(best, {k: k.endswith("_per_s") for k in METRICS if k.endswith("_per_s")})
    print("\n".join(ratios))
    harness.summary_line("sim_throughput", f"{here['step_obs_per_s']:.0f} observed actions/s, "
                         f"{here['step_per_s']:.0f} steps/s, {here['backend_per_s']:.0f} backend actions/s (CPU time)",
                         "; ".join(ratios))
    return 0


def main() -> int:
    ap = harness.parser(__doc__)
    harness.build_option(ap)
    ap.add_argument("--rounds", type=int, default=3, help="alternating measurements of every tree")
    ap.add_argument("--replays", type=int, default=20, help="replays per measurement (the best counts)")
    args = ap.parse_args()
    return harness.dispatch(lambda: measure(args.build, args.replays), lambda: parent(args))


if __name__ == "__main__":
    sys.exit(main())
