"""Every rule of the six suites is observable through the skills in its Mirror world and absent in
the Vanilla twin (issue #5; rule sheets in paper L.11).

The probes are derived from the suites' own specs (``mcbuild.compiler.mirror.resolve``), so a rule is
checked exactly as the compiler materialized it: the probe performs the changed transition with the
public skills, and the agent-visible result must show the rule's outputs in the Mirror world, differ
from the Vanilla world's, and be flagged by the hidden evaluator only in the Mirror world. Items are
handed to the body with a test-only helper; nothing agent-callable can do that.
"""
from __future__ import annotations

from collections import Counter
from functools import lru_cache

import pytest

from mcbuild.compiler.core.paths import SPECS
from mcbuild.compiler.mirror.emit import emit
from mcbuild.compiler.mirror.resolve import ChangedTransition, resolve
from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.rules.crafting import craft_station, example_grid, grid_size
from mcbuild.compiler.rules.pack import build_zip, read_zip
from mcbuild.compiler.rules.rulebook import Rulebook, vanilla
from mcbuild.compiler.spec.kinds import load_spec
from mcbuild.runtime.backends.sim import synthetic
from mcbuild.runtime.backends.sim.backend import SimBackend
from mcbuild.runtime.episode.episode import Episode

SUITES = ("m01", "m02", "m03", "m04", "m05", "m06")
TOOLS = {"minecraft:diamond_pickaxe": 1, "minecraft:diamond_axe": 1, "minecraft:diamond_shovel": 1}


@lru_cache(maxsize=None)
def resolved(suite: str) -> list:
    return resolve(load_spec(SPECS / f"{suite}.yaml"), suite, vanilla())


@lru_cache(maxsize=None)
def suite_pack(suite: str) -> tuple[str, dict[str, bytes]]:
    files = emit(resolved(suite), vanilla())
    return f"file/{suite}.zip", read_zip(build_zip(files))


@lru_cache(maxsize=None)
def world():
    return synthetic.static_world()


def probe_transition(res) -> ChangedTransition:
    """The change's first transition the synthetic world can exercise."""
    for tr in res.transitions:
        if tr.skill != "mine" or tr.target in synthetic.PALETTE:
            return tr
    raise AssertionError(f"{res.change.id}: no transition can be probed in the synthetic world")


def probe(suite: str | None, tr: ChangedTransition) -> tuple[dict, list]:
    """Run the probe of ``tr``; returns (its agent-visible result, the evaluator events)."""
    twin = Rulebook(packs=[synthetic.biome_pack()])
    rules = twin if suite is None else Rulebook(packs=[synthetic.biome_pack(), suite_pack(suite)])
    with Episode.from_parts(SimBackend(world(), rules), rules, twin, "enchantment", budget=20,
                            condition=suite or "vanilla") as ep:
        body = ep.provisioning
        if tr.skill == "craft_grid":
            recipe = vanilla().recipes[tr.target]
            station = craft_station(vanilla(), recipe)
            grid = example_grid(vanilla(), recipe, lambda accepted: sorted(accepted)[0], grid_size(station))
            body.give(Counter(c for row in grid for c in row if c))
            if station == "crafting_table":
                body.give({"minecraft:crafting_table": 1})
                ep.step({"skill": "place", "args": {"block": "crafting_table"}})
            result = ep.step({"skill": "craft_grid", "args": {"station": station, "grid": grid}})
        elif tr.skill == "smelt":
            body.give({tr.target: 1, "minecraft:coal": 2, ns(tr.station): 1})
            ep.step({"skill": "place", "args": {"block": tr.station}})
            result = ep.step({"skill": "smelt", "args": {"input": tr.target, "station": tr.station}})
        elif tr.skill == "mine":
            body.give(TOOLS)
            ep.step({"skill": "explore", "args": {"target": tr.target}})
            result = ep.step({"skill": "mine", "args": {"block": tr.target}})
        else:
            result = ep.step({"skill": "attack", "args": {"target": tr.target}})
        return result, [e for step in ep.trajectory for e in step["evaluator"]]


CASES = [(suite, res.change.id, i) for suite in SUITES for i, res in enumerate(resolved(suite))]


def test_the_suites_have_29_rules():
    assert len(CASES) == 29


@pytest.mark.parametrize("suite, change, index", CASES, ids=[f"{s}-{c}" for s, c, _ in CASES])
def test_rule_is_observable_in_mirror_and_absent_in_vanilla(suite, change, index):
    tr = probe_transition(resolved(suite)[index])
    mirrored, events = probe(suite, tr)
    plain, plain_events = probe(None, tr)
    assert mirrored["ok"], mirrored["message"]
    shown = mirrored.get("produced") if tr.skill == "craft_grid" else mirrored["gained"]
    for item, count in tr.outputs:
        assert shown.get(item, 0) >= count, f"{change}: expected {count} {item}, saw {shown}"
    if tr.skill in ("craft_grid", "smelt"):
        assert shown == dict(tr.outputs)
    assert plain.get("gained") != mirrored["gained"] or plain.get("produced") != mirrored.get("produced")
    assert [e["first"] for e in events] == [True] and not plain_events


def test_pack_functions_convert_every_cooked_item():
    """M01's multi-item smelting runs through the pack's own advancement/function files: any number
    of raw iron taken at once gives three nuggets each, in either station."""
    rules = Rulebook(packs=[synthetic.biome_pack(), suite_pack("m01")])
    with Episode.from_parts(SimBackend(world(), rules), rules, rules, "iron_armor") as ep:
        ep.provisioning.give({"minecraft:raw_iron": 9, "minecraft:coal": 2, "minecraft:furnace": 1,
                                  "minecraft:blast_furnace": 1})
        ep.step({"skill": "place", "args": {"block": "furnace"}})
        ep.step({"skill": "place", "args": {"block": "blast_furnace"}})
        assert ep.step({"skill": "smelt", "args": {"input": "raw_iron", "count": 3}})["gained"] == \
            {"minecraft:iron_nugget": 9}
        out = ep.step({"skill": "smelt", "args": {"input": "raw_iron", "station": "blast_furnace", "count": 6}})
        assert out["gained"] == {"minecraft:iron_nugget": 18}
        assert not set(ep.observe()["inventory"]) & {ns(i) for i in vanilla().facts["survival_unobtainable_items"]}
