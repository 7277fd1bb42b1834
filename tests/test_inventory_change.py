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
    assert list(_delta(before, after).items()) == [("a", -2), ("b", -1), ("c", 2)]
    assert _delta(after, after) == {}
