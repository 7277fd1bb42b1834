"""Embedded-simulator throughput, side by side with other checkouts measured in the same run.

The action mix is a complete vanilla-planner Enchantment episode on the first built Vanilla world
(``build/worlds``; else the synthetic test world), replayed from a fresh world each time. Figures
are CPU time of the measuring process, best replay of many (a shared machine's load and steal
time only ever add to a replay), so the ratios between trees measured alternately in one run are
what to read: ``step_obs`` steps an Episode and builds an observation before every action (the
agent loop), ``step`` steps alone, ``backend`` is the simulator alone; ``bare_read`` is the bound
an action is measured against, one uncached read of the nearest block of every kind around the
body (what every observation needs).

    .venv/bin/python bench/sim_throughput.py [--baseline DIR[:PYTHON]]... [--rounds 3] [--replays 20]

Each ``--baseline`` checkout (e.g. /work/base-start) runs this file's measurement in a subprocess
with its own tree on the path (and its own interpreter after ``:``), on the same built world.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
METRICS = ("step_obs_per_s", "step_per_s", "backend_per_s", "reset_ms", "bare_read_us", "step_obs_us")


def _module(name: str):
    """``mcbuild.<name>``, or plain ``<name>`` in a checkout of the old top-level layout (0e26dbb)."""
    old = importlib.util.find_spec("mcbuild.runtime") is None
    return importlib.import_module(name if old else f"mcbuild.{name}")


def measure(build: Path, replays: int) -> dict[str, float]:
    """The figures of the tree on ``sys.path`` (best replay of ``replays``)."""
    Rulebook = _module("compiler.rules.rulebook").Rulebook
    layout = _module("compiler.worlds.layout")
    rules_of, world_dir = layout.rules_of, layout.world_dir
    create = _module("runtime.agents.registry").create
    factory = _module("runtime.backends.registry").factory
    synthetic = _module("runtime.backends.sim.synthetic")
    SimBackend = _module("runtime.backends.sim.backend").SimBackend
    validate = _module("runtime.contract.skills").validate
    Episode = _module("runtime.episode.episode").Episode
    run = _module("runtime.episode.loop").run

    worlds = sorted(p.parent.parent.name for p in (build / "worlds").glob("*/vanilla/level.dat"))
    if worlds:
        save = world_dir(worlds[0], "vanilla", build)
        static, rules = factory("sim").world(save), rules_of(save)
    else:
        static, rules = synthetic.static_world(), Rulebook(packs=[synthetic.biome_pack()])
    with Episode.from_parts(factory("sim").on(static, rules, 0), rules, rules, "enchantment") as episode:
        run(episode, create("vanilla-planner"), 0)
        actions = [step["action"] for step in episode.trajectory]

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
    return {"world": worlds[0] if worlds else "synthetic", "actions": n, "step_obs_per_s": n / step_obs,
            "step_per_s": n / step, "backend_per_s": n / bare, "reset_ms": resets * 1000,
            "bare_read_us": read * 1e6, "step_obs_us": step_obs / n * 1e6}


def child(tree: Path, python: str, build: Path, replays: int) -> dict[str, float]:
    """:func:`measure` in a subprocess with ``tree`` first on its path."""
    env = dict(os.environ, PYTHONPATH=str(tree), MCBUILD_BUILD=str(build))
    out = subprocess.run([python, __file__, "--measure", str(tree), "--build", str(build), "--replays", str(replays)],
                         env=env, cwd=tree, capture_output=True, text=True, check=False)
    if out.returncode:
        raise SystemExit(f"error: measuring {tree} failed: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", action="append", default=[], help="another checkout, DIR[:PYTHON]")
    parser.add_argument("--build", type=Path, default=None, help="build folder with the worlds (default: this tree's)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating measurements of every tree")
    parser.add_argument("--replays", type=int, default=20, help="replays per measurement (the best counts)")
    parser.add_argument("--measure", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure is not None:            # the subprocess: the tree is first on sys.path already
        sys.path.insert(0, str(args.measure))
        print(json.dumps(measure(args.build, args.replays)))
        return 0
    build = args.build or HERE / "build"
    trees = [(str(HERE), HERE, sys.executable)] + [
        (spec, Path(spec.split(":")[0]), spec.split(":")[1] if ":" in spec else sys.executable) for spec in args.baseline]
    best: dict[str, dict[str, float]] = {}
    loads = []
    for _ in range(args.rounds):
        for name, tree, python in trees:
            loads.append(os.getloadavg()[0])
            got = child(tree, python, build, args.replays)
            old = best.setdefault(name, got)
            for key in METRICS:      # the best of the rounds: rates up, times down
                better = max if key.endswith("_per_s") else min
                old[key] = better(old[key], got[key])
    here = best[str(HERE)]
    print(f"world: {here['world']}; action mix: {here['actions']}-action vanilla-planner enchantment episode; "
          f"load average during the run {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")
    print(f"{'metric':<16}" + "".join(f"{Path(n.split(':')[0]).name:>16}" for n, _, _ in trees))
    for key in METRICS:
        print(f"{key:<16}" + "".join(f"{best[n][key]:>16.1f}" for n, _, _ in trees))
    for name, _, _ in trees:
        b = best[name]
        print(f"bound ({Path(name.split(':')[0]).name}): step + observation {b['step_obs_us']:.0f} us of CPU per action "
              f"= {b['step_obs_us'] / b['bare_read_us']:.1f} bare terrain reads of {b['bare_read_us']:.0f} us")
    for name, _, _ in trees[1:]:
        ratios = ", ".join(f"{key[:-6]} {here[key] / best[name][key]:.2f}x" for key in METRICS if key.endswith("_per_s"))
        print(f"this tree vs {name}: {ratios}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
