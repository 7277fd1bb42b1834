"""The simulator on built world saves (``mcbuild build worlds``): save reading and cache, the
paired-observation integrity script, the suite rules, vanilla-planner on every task, and the CLI.

Uses ``build/worlds`` when it holds built worlds (the first two for the regular checks, all of them
for the ``slow`` exhaustive ones); otherwise builds plains-1 into a temporary folder once.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from test_sim_integrity import SCRIPT
from test_sim_rules import SUITES, TOOLS, probe_transition, resolved

from mcbuild.compiler.spec.task import tasks
from mcbuild.compiler.worlds.layout import world_dir
from mcbuild.cli import main
from mcbuild.runtime.agents.registry import create
from mcbuild.runtime.backends.sim import save
from mcbuild.runtime.backends.sim.factory import SimFactory
from mcbuild.runtime.backends.sim.world import derive
from mcbuild.runtime.contract.observation import serialize
from mcbuild.runtime.episode.loop import run
from mcbuild.runtime.episode.opening import open_episode

REGULAR = 2
# Suites with drop rules: those are the rules the built worlds' terrain decides (every rule is
# probed on the synthetic world in test_sim_rules).
MINE_SUITES = [s for s in SUITES if any(probe_transition(r).skill == "mine" for r in resolved(s))]


@pytest.fixture(scope="module")
def build_root(world_build) -> Path:
    return world_build


@pytest.fixture(scope="module")
def worlds(built_world_ids) -> list[str]:
    return built_world_ids


def test_save_reader_and_cache(build_root, worlds, tmp_path):
    saved = world_dir(worlds[0], "vanilla", build_root)
    data = save.read(saved)
    assert data.palette[0] == "minecraft:air" and data.spawn == save.spawn(saved)
    cold = SimFactory(cache_dir=tmp_path).world(saved)
    warm = SimFactory(cache_dir=tmp_path).world(world_dir(worlds[0], "m04", build_root))    # same region files
    assert len(list(tmp_path.glob("*.npz"))) == 1 and not list(tmp_path.glob(".*"))        # no temp file left
    for name in ("labels", "label_open", "reach"):
        assert np.array_equal(getattr(cold, name), getattr(warm, name))
    assert np.array_equal(warm.reach, derive(data).reach)


def paired(build_root: Path, world: str) -> None:
    def script(condition: str) -> tuple[list[str], list]:
        with open_episode(world, condition, "enchantment", len(SCRIPT), 5, build=build_root) as ep:
            seen = [serialize(ep.observe())]
            for action in SCRIPT:
                ep.step(action)
                seen.append(serialize(ep.observe()))
            return seen, [e for t in ep.trajectory for e in t["evaluator"]]

    reference, events = script("vanilla")
    assert not events
    for suite in SUITES:
        seen, events = script(suite)
        assert not events and seen == reference, f"{world} {suite}"


def planner_completes(build_root: Path, world: str) -> None:
    for task, spec in tasks().items():
        if spec.checked:            # the scripted planner plans towards advancements only
            continue
        with open_episode(world, "vanilla", task, build=build_root) as ep:
            run(ep, create("vanilla-planner"), 0)
            assert ep.success and ep.used <= spec.budget, (world, task, ep.end_reason, ep.trajectory[-1]["result"])


def test_paired_observations_are_identical(build_root, worlds):
    for world in worlds[:REGULAR]:
        paired(build_root, world)


def test_vanilla_planner_completes_every_task(build_root, worlds):
    for world in worlds[:REGULAR]:
        planner_completes(build_root, world)


@pytest.mark.slow
def test_every_world_paired_and_solvable(build_root, worlds):
    for world in worlds:
        paired(build_root, world)
        planner_completes(build_root, world)


@pytest.mark.parametrize("suite", MINE_SUITES)
def test_suite_drop_rules_show_in_the_built_world(build_root, worlds, suite):
    """Each drop rule of the suite, probed with explore + mine in a built world."""
    mined = [probe_transition(res) for res in resolved(suite) if probe_transition(res).skill == "mine"]
    assert mined
    for tr in mined:
        with open_episode(worlds[0], suite, "enchantment", 10, 0, build=build_root) as ep:
            ep.provisioning.give(TOOLS)
            ep.step({"skill": "explore", "args": {"target": tr.target}})
            result = ep.step({"skill": "mine", "args": {"block": tr.target}})
            for item, count in tr.outputs:
                assert result["gained"].get(item, 0) >= count, (suite, tr.key(), result)
            assert [e["first"] for t in ep.trajectory for e in t["evaluator"]] == [True]


def test_cli_episode_run(build_root, worlds, tmp_path):
    trace = tmp_path / "trace.jsonl"
    out = CliRunner().invoke(main, ["episode", "run", "--world", worlds[0], "--condition", "m04",
                                    "--task", "iron_armor", "--agent", "adaptive-planner", "--trace", str(trace),
                                    "--build", str(build_root)])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].split()[0] == "1" and lines[-1].startswith("Score 100  SR 100%")
    assert len(trace.read_text().splitlines()) == len(lines) + 1
    missing = CliRunner().invoke(main, ["episode", "run", "--world", "nowhere-1", "--task", "diamond",
                                        "--build", str(build_root)])
    assert missing.exit_code == 2 and "unknown world 'nowhere-1' (known: " in missing.output


def test_a_world_in_use_is_not_loaded_again(build_root, worlds, monkeypatch):
    """Episodes in flight may span more worlds than the factory's LRU holds: a world the LRU
    dropped while an episode still runs on it is handed out again, not loaded a second time."""
    from mcbuild.compiler.worlds.layout import rules_of
    from mcbuild.runtime.backends.sim import factory as factory_mod

    loads = []
    real = factory_mod.load_save
    monkeypatch.setattr(factory_mod, "load_save", lambda *args: loads.append(args) or real(*args))
    sims = SimFactory()
    save = world_dir(worlds[0], "vanilla", build_root)
    backend = sims.open(save, rules_of(save), 0)
    sims._worlds.pop(sims.key(save))            # what the LRU does when other worlds come in
    assert sims.world(save) is backend.world and len(loads) == 1
    backend.close()
