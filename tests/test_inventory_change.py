"""The one inventory difference (``mcbuild.runtime.contract.backend.inventory_change``): what an
action's ``gained``/``lost``, the episode's ``inventory_delta`` and the LLM agents' view of a change
are all computed with."""
from __future__ import annotations

from collections import Counter

from mcbuild.runtime.contract.backend import inventory_change
from mcbuild.runtime.episode.episode import _delta


def test_gained_and_lost_in_item_order_with_missing_items_as_zero():
    before = {"minecraft:stick": 4, "minecraft:oak_log": 1, "minecraft:dirt": 2}
    after = Counter({"minecraft:stick": 2, "minecraft:oak_planks": 4, "minecraft:dirt": 2, "minecraft:apple": 0})
    gained, lost = inventory_change(before, after)
    assert gained == {"minecraft:oak_planks": 4}
    assert list(lost.items()) == [("minecraft:oak_log", 1), ("minecraft:stick", 2)]     # item order
    assert inventory_change(after, before) == (lost, gained)
    assert inventory_change(before, before) == ({}, {})


def test_the_episode_delta_is_the_signed_change():
    before, after = {"b": 1, "a": 3}, {"a": 1, "c": 2}
    assert list(_delta(*inventory_change(before, after)).items()) == [("a", -2), ("b", -1), ("c", 2)]
    assert _delta(*inventory_change(after, after)) == {}


def test_each_steps_delta_is_the_difference_of_the_inventories_around_it():
    """The trajectory's ``inventory_delta`` comes from the outcome's ``gained``/``lost``: it must equal
    the difference of the episode's inventory before and after the step, refused actions included."""
    from mcbuild.compiler.rules.rulebook import Rulebook
    from mcbuild.runtime.agents.registry import create
    from mcbuild.runtime.backends.registry import factory
    from mcbuild.runtime.backends.sim import synthetic
    from mcbuild.runtime.episode.episode import Episode
    from mcbuild.runtime.episode.loop import run

    rules = Rulebook(packs=[synthetic.biome_pack()])
    with Episode.from_parts(factory("sim").on(synthetic.static_world(), rules, 0), rules, rules, "enchantment") as ep:
        run(ep, create("vanilla-planner"), 0)
        actions = [step["action"] for step in ep.trajectory]
        ep.reset()
        refused = {"skill": "mine", "args": {"block": "minecraft:stone", "count": 9}}
        for action in actions[:3] + [refused] + actions[3:]:
            if ep.done:
                break
            before = dict(ep._snap.inventory)
            ep.step(action)
            signed = {i: n - before.get(i, 0) for i, n in ep._snap.inventory.items() if n != before.get(i, 0)}
            signed |= {i: -n for i, n in before.items() if i not in ep._snap.inventory}
            assert ep.trajectory[-1]["inventory_delta"] == dict(sorted(signed.items())), action
        assert len([s for s in ep.trajectory if s["inventory_delta"]]) > 10
