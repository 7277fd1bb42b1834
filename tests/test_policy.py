"""The body's policy: its tables read once per item give what reading every item each time gives."""
from __future__ import annotations

import math
import random

from mcbuild.compiler.rules.rulebook import vanilla
from mcbuild.runtime.body.copies import Copy
from mcbuild.runtime.body.policy import Policy, in_hand

M = "minecraft:"
ITEMS = [M + i for i in ("iron_pickaxe", "stone_pickaxe", "wooden_sword", "diamond_axe", "shears", "oak_log",
                         "cobblestone", "stick", "iron_ingot", "ender_pearl", "bucket", "iron_boots",
                         "enchanted_book", "crafting_table", "bow", "wheat_seeds")]


def test_durability_room_and_tools_match_reading_every_item():
    """Random inventories (with zero and negative counts, and items first met in a later one) against
    the definitions read item by item from the rules; a policy that kept a stale table fails."""
    rules, rng = vanilla(), random.Random(3)
    policy = Policy(rules, 36)
    for _ in range(200):
        inventory = {i: rng.choice((-1, 0, 1, 1, 2, 5, 64, 70)) for i in rng.sample(ITEMS, rng.randint(0, 12))}
        worn = {i: [Copy(rng.randint(0, 30)) for _ in range(max(n, 0))] for i, n in inventory.items()}
        want = {i: tuple(sorted(rules.max_durability(i) - c.damage for c in worn[i]))
                for i, n in sorted(inventory.items()) if n > 0 and rules.max_durability(i)}
        assert policy.durability(inventory, worn.__getitem__) == want
        assert list(policy.durability(inventory, worn.__getitem__)) == list(want)
        slots = sum(math.ceil(n / rules.stack_size(i)) for i, n in inventory.items() if n > 0)
        assert policy.slots_used(inventory) == slots
        assert policy.tools(inventory) == {i: policy.tool_table[i] for i, n in inventory.items()
                                           if n > 0 and i in policy.tool_table}
        for item in inventory:
            for use in ("mine", "hit"):
                kind = policy.tool_table.get(item)
                expected = 0 if kind is None or not rules.max_durability(item) else rules.facts["wear"][use].get(kind[0], 0)
                assert policy.wear(item, use) == expected


def test_the_copy_in_hand_is_the_most_worn_and_the_first_of_equals():
    assert in_hand([Copy(3)]) == 0
    assert in_hand([Copy(1), Copy(4), Copy(4), Copy(0)]) == 1
