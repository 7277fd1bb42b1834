"""The embedded simulator's skills on small in-memory worlds (no saves needed).

``give`` is a test-only helper: it puts items into the body's inventory directly, which nothing an
agent can call is able to do.
"""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

from mcbuild.compiler.rules.loot import roll
from mcbuild.compiler.rules.rulebook import Rulebook
from mcbuild.runtime.backends.sim import synthetic
from mcbuild.runtime.backends.sim.backend import SimBackend
from mcbuild.runtime.backends.sim.loot_context import block_context
from mcbuild.runtime.body.copies import Copy
from mcbuild.runtime.backends.sim.world import WorldData, derive
from mcbuild.runtime.contract import skills
from mcbuild.runtime.contract.skills import ActionError, Validator, validate
from mcbuild.runtime.episode.episode import Episode


@pytest.fixture(scope="module")
def world():
    return synthetic.static_world()


@pytest.fixture(scope="module")
def rules():
    return Rulebook(packs=[synthetic.biome_pack()])


@pytest.fixture()
def sim(world, rules):
    return SimBackend(world, rules, seed=1)


def give(sim: SimBackend, **items: int) -> None:
    sim.body.receive({f"minecraft:{k}": n for k, n in items.items()})


def do(sim: SimBackend, skill: str, **args) -> dict:
    outcome = sim.execute(validate({"skill": skill, "args": args}, sim.rules.catalog))
    return {"ok": outcome.ok, "reason": outcome.reason, **outcome.details}


def test_a_snapshot_follows_every_change_of_the_inventory_and_of_wear(sim):
    """The snapshot keeps its inventory and durability while neither changed (an action that leaves
    them alone shares them): wear without a count change, a command's clear, a direct give and a
    give through the provisioning, with no action between, each show in the next snapshot."""
    pick = "minecraft:stone_pickaxe"
    give(sim, stone_pickaxe=1)
    first = sim.snapshot(surroundings=False)
    assert do(sim, "wait")["ok"]
    kept = sim.snapshot(surroundings=False)
    assert kept.inventory is first.inventory and kept.durability is first.durability
    sim.primitives._wear(pick, "mine")
    worn = sim.snapshot(surroundings=False)
    assert worn.inventory == first.inventory and worn.durability[pick] == (first.durability[pick][0] - 1,)
    sim.provisioning.give({"minecraft:dirt": 2})
    assert sim.snapshot(surroundings=False).inventory["minecraft:dirt"] == 2
    sim.body.player.clear(pick, None)
    gone = sim.snapshot(surroundings=False)
    assert pick not in gone.inventory and pick not in gone.durability
    sim.body.player.add_items({pick: 1})
    assert sim.snapshot(surroundings=False).durability[pick] == first.durability[pick]   # a new one, unworn


def test_a_lost_tool_gained_again_is_a_new_copy_and_a_broken_one_takes_no_other_with_it(sim):
    """Copies follow every loss, read or not: a worn tool cleared and one gained again before anything
    read its copies comes back new; a copy that breaks leaves the other copies as they were."""
    pick = "minecraft:stone_pickaxe"
    give(sim, stone_pickaxe=1)
    full = sim.snapshot(surroundings=False).durability[pick]
    sim.primitives._wear(pick, "mine")
    sim.body.player.clear(pick, None)
    sim.body.player.add_items({pick: 1})
    assert sim.snapshot(surroundings=False).durability[pick] == full
    give(sim, stone_pickaxe=1)
    copies = sim.body.copies(pick)
    copies[:] = [Copy(sim.body.policy.max_durability(pick) - 1), Copy(5)]
    sim.primitives._wear(pick, "mine")                  # the copy in hand (the most worn) breaks
    assert sim.body.copies(pick) == [Copy(5)] and sim.body.player.count(pick) == 1


def test_copies_read_again_while_the_inventory_is_unchanged_equal_copies_made_afresh(sim):
    """The body hands back an item's kept copies while its count and removed units are those of the
    last read: after a give, wear, a command's clear, a direct add, a loss and a gain of one (the
    count unchanged), a break and a mine, each read first (so kept), they equal the copies
    reconciled with the inventory afresh."""
    pick, body = "minecraft:stone_pickaxe", sim.body

    def swap() -> None:                 # the newest copy (worn) leaves, a fresh one comes
        body.copies(pick)[-1] = Copy(5)
        body.player.remove_items({pick: 1})
        body.player.add_items({pick: 1})

    changes = [lambda: give(sim, stone_pickaxe=2), lambda: sim.primitives._wear(pick, "mine"),
               lambda: body.player.clear(pick, 1), lambda: body.player.add_items({pick: 2}), swap,
               lambda: body.lose_copy(pick, 0), lambda: do(sim, "mine", block="stone", count=2)]
    for change in changes:
        body.copies(pick)
        change()
        kept = list(body.copies(pick))
        assert kept == body.reconcile(pick) and len(kept) == body.player.count(pick)


def test_the_bodys_durability_read_again_only_on_a_change_equals_the_policys_read_afresh(sim):
    """The body reads an item's uses left again only when its count, removed units or wear changed:
    after gains, wear by mining and by hits, a worn newest copy lost and a fresh one gained (count
    and wear as last read), a command's clear, a direct add, a break and a mine, it equals the
    policy's durability read from every copy afresh."""
    pick, sword, body = "minecraft:stone_pickaxe", "minecraft:iron_sword", sim.body

    def swap() -> None:
        body.wore(pick, len(body.copies(pick)) - 1, Copy(5))
        body.durability()
        body.player.remove_items({pick: 1})
        body.player.add_items({pick: 1})

    steps = [lambda: give(sim, stone_pickaxe=2, iron_sword=1), lambda: sim.primitives._wear(pick, "mine"),
             lambda: sim.primitives._wear(sword, "hit"), swap, lambda: body.player.clear(pick, 1),
             lambda: body.player.add_items({pick: 2}), lambda: body.lose_copy(pick, 0),
             lambda: do(sim, "mine", block="stone", count=2)]
    for step in steps:
        step()
        assert body.durability() == body.policy.durability(body.inventory, body.copies)


def test_a_digs_drops_kept_for_the_episode_are_what_a_roll_of_its_table_gives(sim):
    """The drops a dig looks up (kept for the episode per table, block state, tool and enchantments)
    are a roll of the block's table in its context: stone dug with a plain pickaxe, with a
    silk-touch one, then with the plain one again."""
    p, pick, stone = sim.primitives, "minecraft:iron_pickaxe", "minecraft:stone"
    give(sim, iron_pickaxe=1)
    for enchantments in ((), (("minecraft:silk_touch", 1),), ()):
        sim.body.wore(pick, 0, Copy(0, enchantments))
        at = next(t.pos for t in p.blocks(frozenset({stone})) if t.reach == 1)
        rolled = roll(sim.rules, sim.rules.block_loot(stone), block_context(sim.terrain, at, pick, enchantments),
                      random.Random(0))
        assert p.dig(at, stone, pick, pickup=True) == rolled and rolled


def pit_world(buried: int) -> WorldData:
    """A stone slab (y 0..3) under open air; a diamond ore at (4, 2, 4) under ``buried`` stones."""
    palette = ("minecraft:air", "minecraft:stone", "minecraft:diamond_ore", "minecraft:bedrock")
    blocks = np.zeros((9, 8, 9), dtype=np.uint16)
    blocks[:, :4, :] = 1
    blocks[:, 0, :] = 3
    blocks[4, 3 - buried, 4] = 2
    return WorldData(palette, blocks, (0, 0, 0), (1, 4, 1), ("minecraft:plains",), np.zeros((3, 2, 3), np.uint8))


# ---------------------------------------------------------------------------- arguments
@pytest.mark.parametrize("action, reason", [
    ({"skill": "fly", "args": {}}, "invalid_action"),
    (["mine"], "invalid_action"),
    ({"skill": "mine", "args": {"block": "stone", "count": 5}}, "invalid_args"),
    ({"skill": "mine", "args": {"block": "diamond"}}, "invalid_args"),
    ({"skill": "craft_grid", "args": {"station": "inventory", "grid": ["oak_log", None]}}, "invalid_args"),
    ({"skill": "craft_grid", "args": {"station": "inventory", "grid": [["oak_log"] * 3] * 3}}, "invalid_args"),
    ({"skill": "craft_grid", "args": {"station": "inventory", "grid": [["oak_log"]], "count": 2}}, "invalid_args"),
    ({"skill": "smelt", "args": {"input": "raw_iron", "station": "campfire"}}, "invalid_args"),
    ({"skill": "smelt", "args": {"input": "raw_iron", "count": 7}}, "invalid_args"),
    ({"skill": "explore", "args": {"target": "north"}}, "not_searchable"),
    ({"skill": "attack", "args": {"target": "player"}}, "invalid_args"),
    ({"skill": "ascend", "args": {"height": 7}}, "invalid_args"),
    ({"skill": "enchant", "args": {"item": "book", "option": "best"}}, "invalid_args"),
])
def test_invalid_actions_have_reason_codes(rules, action, reason):
    with pytest.raises(ActionError) as err:
        validate(action, rules.catalog)
    assert err.value.reason == reason


@pytest.mark.parametrize("c_encoder", [True, False], ids=["c-encoder", "python-encoder"])
def test_a_remembered_validation_is_the_validation_of_the_action_given(rules, monkeypatch, c_encoder):
    """The episode's Validator remembers each valid action by its JSON text, yet answers exactly as
    validate() does for every action: one that only differs from a remembered one by NaN where
    that one had null, a tuple for a list, or its key order, and one that is not JSON at all (an
    object, a cycle); with the C encoder's key and with the one of an interpreter without it."""
    if not c_encoder:
        monkeypatch.setattr(skills, "_ACTION_KEY", skills.action_key_encoder(None))
    nan = float("nan")
    grid = [["oak_planks", None], [None, None]]
    cycle: dict = {"skill": "mine", "args": {"block": "stone"}}
    cycle["args"]["block"] = cycle
    actions = [
        {"skill": "mine", "args": {"block": "stone", "count": None}},
        {"skill": "mine", "args": {"block": "stone", "count": nan}},
        {"args": {"count": None, "block": "stone"}, "skill": "mine"},
        {"skill": "craft_grid", "args": {"station": "inventory", "grid": grid}},
        {"skill": "craft_grid", "args": {"station": "inventory", "grid": [["oak_planks", nan], [None, None]]}},
        {"skill": "craft_grid", "args": {"station": "inventory", "grid": (("oak_planks", None), (None, None))}},
        {"skill": "smelt", "args": {"input": "raw_iron", "count": 2.0}},
        {"skill": "smelt", "args": {"input": "raw_iron", "count": 2}},
        {"skill": "mine", "args": {"block": "stone", 1: 2}},
        {"skill": "mine", "args": {"block": object()}},
        cycle,
    ]

    def answer(check, action):
        try:
            return check(action)
        except ActionError as err:
            return err.reason, str(err)
        except TypeError as err:            # validate's own answer to a non-string argument name
            return type(err), str(err)

    remembered = Validator(rules.catalog)
    for _ in range(2):
        for action in actions:
            want = answer(lambda a: validate(a, rules.catalog), action)
            got = answer(lambda a: remembered(a)[0], action)
            assert got == want, (action, got, want)
    reference = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False).encode
    for action in actions:          # the key is the canonical text, or refuses what it refuses
        try:
            want = reference(action)
        except (TypeError, ValueError):
            with pytest.raises((TypeError, ValueError, RecursionError)):
                "".join(skills._ACTION_KEY(action, 0))
        else:
            assert "".join(skills._ACTION_KEY(action, 0)) == want


def test_arguments_are_normalized_with_defaults(rules):
    act = validate({"skill": "smelt", "args": {"input": "Raw_Iron"}}, rules.catalog)
    assert act.args == {"input": "minecraft:raw_iron", "station": "furnace", "count": 1}
    assert validate({"skill": "mine", "args": {"block": "log"}}, rules.catalog).args == {"block": "log", "count": 1}


# ---------------------------------------------------------------------------- mining
def test_mining_needs_the_correct_tool_tier(sim):
    assert do(sim, "mine", block="stone")["reason"] == "needs_tool"
    give(sim, wooden_pickaxe=1)
    out = do(sim, "mine", block="stone", count=2)
    assert out["ok"] and out["gained"] == {"minecraft:cobblestone": 2}
    assert do(sim, "mine", block="iron_ore")["reason"] == "needs_tool"
    give(sim, stone_pickaxe=1)
    assert do(sim, "mine", block="iron_ore")["gained"] == {"minecraft:raw_iron": 1}
    assert do(sim, "mine", block="diamond_ore")["reason"] == "needs_tool"
    assert sim.body.held() == "minecraft:stone_pickaxe"


def test_log_alias_and_no_target(sim):
    out = do(sim, "mine", block="log", count=2)
    assert out["mined"] == {"minecraft:oak_log": 2}
    assert do(sim, "mine", block="emerald_ore")["reason"] == "no_target"


@pytest.mark.parametrize("buried, expected", [(0, "ok"), (1, "ok"), (2, "no_target")])
def test_mine_clears_at_most_one_obstruction(buried, expected):
    sim = SimBackend(derive(pit_world(buried)), Rulebook(), seed=0)
    give(sim, iron_pickaxe=1)
    out = do(sim, "mine", block="diamond_ore")
    assert ("ok" if out["ok"] else out["reason"]) == expected
    if buried == 1:
        assert out["cleared"] == ["minecraft:stone"] and out["gained"] == {"minecraft:diamond": 1}
        assert sim.snapshot().nearby_drops == {"minecraft:cobblestone": pytest.approx(1.0, abs=3)}
        assert do(sim, "collect", item="cobblestone")["gained"] == {"minecraft:cobblestone": 1}
        assert do(sim, "collect", item="cobblestone")["reason"] == "no_target"


def test_prepare_access_clears_without_harvesting():
    sim = SimBackend(derive(pit_world(1)), Rulebook(), seed=0)
    give(sim, iron_pickaxe=1)
    out = do(sim, "prepare_access", target="diamond_ore")
    assert out["ok"] and out["cleared"] == ["minecraft:stone"] and out["gained"] == {}
    assert sim.terrain.reach_at((4, 2, 4)) == 1


def shaft_world() -> WorldData:
    """Stone from y 0 (bedrock) to 5 under open air; the body starts at (4, 2, 4) at the end of a
    two-high tunnel that a shaft at x 8 opens to the sky."""
    palette = ("minecraft:air", "minecraft:stone", "minecraft:bedrock")
    blocks = np.zeros((9, 9, 9), dtype=np.uint16)
    blocks[:, :6, :] = 1
    blocks[:, 0, :] = 2
    blocks[4:9, 2:4, 4] = 0
    blocks[8, 2:6, 4] = 0
    return WorldData(palette, blocks, (0, 0, 0), (4, 2, 4), ("minecraft:plains",), np.zeros((3, 3, 3), np.uint8))


def test_ascend_zero_climbs_the_column_digging_and_pillaring():
    sim = SimBackend(derive(shaft_world()), Rulebook(), seed=0)
    assert do(sim, "ascend", height=0)["reason"] == "unreachable"          # stone needs a pickaxe
    assert sim.body.pos == (4, 2, 4)
    give(sim, wooden_pickaxe=1, dirt=4)
    out = do(sim, "ascend", height=0)              # dig two stones, stand on four blocks
    assert out["ok"] and out["height"] == 4 and out["dug"] == {"minecraft:stone": 2}
    assert out["used"] == {"minecraft:dirt": 3, "minecraft:cobblestone": 1}
    assert sim.body.pos == (4, 6, 4) and sim.terrain.surface(4, 4) == 6      # standing on its pillar
    assert do(sim, "ascend", height=0)["height"] == 0


def test_ascend_zero_keeps_the_levels_climbed_when_blocks_run_out():
    sim = SimBackend(derive(shaft_world()), Rulebook(), seed=0)
    give(sim, wooden_pickaxe=1)
    short = do(sim, "ascend", height=0)            # the two dug stones are the only blocks to stand on
    assert short["reason"] == "missing_item" and short["height"] == 2 and sim.body.pos == (4, 4, 4)
    assert short["dug"] == {"minecraft:stone": 2} and short["used"] == {"minecraft:cobblestone": 2}
    assert short["gained"] == {} and short["lost"] == {}


def test_terrain_reset_restores_the_pristine_world(world, rules):
    sim = SimBackend(world, rules, seed=0)
    give(sim, iron_pickaxe=1, dirt=8)
    for action in (("mine", {"block": "stone", "count": 4}), ("mine", {"block": "iron_ore", "count": 4}),
                   ("place", {"block": "dirt"}), ("ascend", {"height": 2})):
        assert do(sim, action[0], **action[1])["ok"]
    assert sim.terrain.edited
    sim.reset(0)
    assert not sim.terrain.edited and np.array_equal(sim.terrain.blocks, world.data.blocks)
    for name in ("labels", "label_open", "reach"):
        assert np.array_equal(getattr(sim.terrain, name), getattr(world, name)), name


def test_episodes_on_one_world_share_it_copy_on_write(world, rules):
    """Terrains map the world's arrays copy-on-write: one episode's edits reach neither the
    static world (read-only) nor another episode on it."""
    pristine = world.data.blocks.copy()
    one, other = SimBackend(world, rules, seed=0), SimBackend(world, rules, seed=0)
    give(one, iron_pickaxe=1)
    assert do(one, "mine", block="stone", count=4)["ok"]
    assert not np.array_equal(one.terrain.blocks, pristine)
    assert np.array_equal(other.terrain.blocks, pristine) and np.array_equal(world.data.blocks, pristine)
    assert np.array_equal(other.terrain.reach, world.reach) and np.array_equal(other.terrain.labels, world.labels)
    for array in (world.data.blocks, world.labels, world.reach):
        assert not array.flags.writeable
    with pytest.raises(ValueError):
        world.data.blocks[0, 0, 0] = 1


def test_changes_hold_exactly_how_the_reachable_cells_differ_from_the_pristine_world(world, rules):
    """The terrain's removed and added cells equal a comparison of the whole world with the pristine one."""
    sim = SimBackend(world, rules, seed=0)
    give(sim, iron_pickaxe=1, dirt=8)
    for action in (("mine", {"block": "stone", "count": 4}), ("mine", {"block": "iron_ore", "count": 4}),
                   ("place", {"block": "dirt"}), ("mine", {"block": "stone", "count": 4})):
        assert do(sim, action[0], **action[1])["ok"]
        sim.snapshot()
    terrain = sim.terrain
    was_id, now_id = world.data.blocks.reshape(-1), terrain.blocks.reshape(-1)
    was, now = world.reach.reshape(-1) > 0, terrain.reach.reshape(-1) > 0
    same = was & now & (was_id == now_id)
    gone, came = np.flatnonzero(was & ~same), np.flatnonzero(now & ~same)
    assert len(gone) and len(came)
    assert terrain._removed == dict(zip(gone.tolist(), was_id[gone].tolist()))
    assert terrain._added == dict(zip(came.tolist(), now_id[came].tolist()))


def test_reach_and_nearest_blocks_follow_random_edits():
    """After each break or place (inside the area, at its border, into an enclosed cave), reach
    equals a recomputation over the whole world and the nearest blocks equal a brute-force scan,
    around a random cell or around the cell just edited (whose block was often the nearest one)."""
    import random

    from mcbuild.runtime.backends.sim.episode_terrain import Terrain
    from mcbuild.runtime.backends.sim.world import reach_of

    data = synthetic.world_data()
    blocks = data.blocks.copy()
    blocks[30:34, 20:23, 30:34] = 0          # an enclosed cave under the grass (array y 24) and dirt
    world = derive(WorldData(data.palette, blocks, data.origin, data.spawn, data.biome_palette, data.biomes))
    terrain, rng = Terrain(world), random.Random(7)
    origin = np.array(data.origin)
    for step in range(120):
        reachable = np.argwhere(terrain.reach == 1)
        if step % 4 == 3:
            open_cells = np.argwhere(terrain.label_open[terrain.labels] & (terrain.blocks == 0))
            cell = open_cells[rng.randrange(len(open_cells))]
            terrain.place_block(tuple(int(v) for v in cell + origin), "minecraft:dirt")
        else:
            cell = reachable[rng.randrange(len(reachable))] if step > 1 else np.array([32, 24 - step, 32])
            opened = terrain.label_open.sum()
            terrain.break_block(tuple(int(v) for v in cell + origin))
            assert step != 1 or terrain.label_open.sum() > opened       # the cave joined the open space
        expected = reach_of(terrain.blocks, terrain.label_open[terrain.labels], terrain.solid, terrain.minable)
        assert np.array_equal(terrain.reach, expected), step
        centre = tuple(int(v) for v in (cell if step % 2 else reachable[rng.randrange(len(reachable))]) + origin)
        cells = np.argwhere(terrain.reach > 0)
        d = np.sqrt(((cells + origin - centre) ** 2).sum(axis=1))
        brute: dict[str, float] = {}
        for (x, y, z), dist in zip(cells.tolist(), d.tolist()):
            name = terrain.palette[terrain.blocks[x, y, z]]
            if dist <= 32.0 and dist < brute.get(name, 99.0):
                brute[name] = dist
        assert terrain.nearest_per_block(centre, 32.0) == brute, step
        near = {tuple(c) for c, dist in zip((cells + origin).tolist(), d.tolist()) if dist <= 32.0}
        got = [t.pos for t in terrain.scan(centre, 32.0, np.arange(len(terrain.palette))).targets()]
        assert set(got) == near and len(got) == len(near), step
        assert got == sorted(got, key=lambda p: (sum((a - b) ** 2 for a, b in zip(p, centre)), p)), step


def test_nearby_blocks_kept_across_edits_equal_a_fresh_read():
    """The nearest blocks a terrain keeps per centre and brings up to date from each edit's changes
    equal a fresh read at every step: a few centres asked again and again while blocks are broken
    next to them (often their nearest), placed (a block new to the palette among them) and a cave
    opens (a large edit)."""
    import random

    from mcbuild.runtime.backends.sim.episode_terrain import Terrain

    data = synthetic.world_data()
    blocks = data.blocks.copy()
    blocks[30:34, 20:23, 30:34] = 0          # an enclosed cave under the grass (array y 24) and dirt
    world = derive(WorldData(data.palette, blocks, data.origin, data.spawn, data.biome_palette, data.biomes))
    terrain, fresh, rng = Terrain(world), Terrain(world), random.Random(11)
    origin = np.array(data.origin)
    centres = [tuple(int(v) for v in np.array(c) + origin) for c in ((32, 25, 32), (28, 25, 36), (40, 25, 30))]
    caught_up = 0
    for step in range(90):
        near = centres[step % 3]
        if step % 5 == 4:
            open_cells = np.argwhere(terrain.label_open[terrain.labels] & (terrain.blocks == 0))
            d2 = ((open_cells + origin - near) ** 2).sum(axis=1)
            cell = open_cells[np.argsort(d2, kind="stable")[rng.randrange(1, 6)]]
            block = "minecraft:crafting_table" if step == 9 else "minecraft:dirt"
            pos = tuple(int(v) for v in cell + origin)
            terrain.place_block(pos, block)
            fresh.place_block(pos, block)
        else:
            reachable = np.argwhere(terrain.reach == 1)
            d2 = ((reachable + origin - near) ** 2).sum(axis=1)
            cell = reachable[np.argsort(d2, kind="stable")[rng.randrange(3)]] if step > 2 else np.array([32, 25 - step, 32])
            opened = terrain.label_open.sum()
            for t in (terrain, fresh):
                t.break_block(tuple(int(v) for v in cell + origin))
            assert step != 2 or terrain.label_open.sum() > opened       # the cave joined the open space
        for centre in centres:
            memo = terrain._nearest.get((centre, 32.0))
            kept = memo is not None and memo.seen < len(terrain._log)
            fresh._forget()
            got = terrain.nearby_blocks(centre, 32.0)
            caught_up += kept and terrain._nearest[centre, 32.0] is memo
            expected = fresh.nearby_blocks(centre, 32.0)
            assert got == expected and list(got) == list(expected), (step, centre)
            assert got == {b: round(d, 1) for b, d in sorted(fresh.nearest_per_block(centre, 32.0).items())}
    assert caught_up > 50          # most asks were answered from the changes, not read again


# ---------------------------------------------------------------------------- moving
def test_explore_remembers_regions_and_moves_close(sim):
    far = do(sim, "explore", target="emerald_ore")
    assert far["reason"] == "no_target" and far["regions"] == sim.config.explore_regions
    visited = set(sim.body.visited)
    assert do(sim, "explore", target="emerald_ore")["regions"] == sim.config.explore_regions
    assert visited < sim.body.visited
    out = do(sim, "explore", target="diamond_ore")
    assert out["ok"] and sim.snapshot().nearby_blocks["minecraft:diamond_ore"] <= 1.5
    assert do(sim, "explore", target="cow")["found"] == "minecraft:cow"


def test_place_equip_ascend_trade_wait(sim):
    give(sim, crafting_table=1, dirt=3, stick=1)
    assert do(sim, "equip", item="crafting_table")["reason"] == "not_equippable"
    assert do(sim, "equip", item="stick")["ok"] and sim.body.held() == "minecraft:stick"
    assert do(sim, "place", block="stick")["reason"] == "invalid_args"
    assert do(sim, "place", block="crafting_table")["ok"]
    assert sim.snapshot().nearby_blocks["minecraft:crafting_table"] <= 2
    y = sim.body.pos[1]
    assert do(sim, "ascend", height=2)["ok"] and sim.body.pos[1] == y + 2
    assert do(sim, "ascend", height=2)["reason"] == "missing_item"
    assert do(sim, "trade", give="emerald", get="book")["reason"] == "no_target"
    assert do(sim, "wait", ticks=100)["ok"]


# ---------------------------------------------------------------------------- items
def test_craft_grid_matches_any_position_and_mirror(sim):
    give(sim, oak_planks=6, stick=4)
    assert do(sim, "craft_grid", station="crafting_table", grid=[["oak_planks"] * 2] * 2)["reason"] == "needs_table"
    axe = [["oak_planks", "oak_planks"], ["oak_planks", "stick"], [None, "stick"]]
    mirrored = [[None, "oak_planks", "oak_planks"], [None, "stick", "oak_planks"], [None, "stick", None]]
    give(sim, crafting_table=1)
    do(sim, "place", block="crafting_table")
    assert do(sim, "craft_grid", station="crafting_table", grid=axe)["produced"] == {"minecraft:wooden_axe": 1}
    out = do(sim, "craft_grid", station="crafting_table", grid=mirrored)
    assert out["produced"] == {"minecraft:wooden_axe": 1}
    assert out["lost"] == {"minecraft:oak_planks": 3, "minecraft:stick": 2}


def test_craft_failures_keep_the_inventory(sim):
    give(sim, oak_log=1, paper=3, leather=1)
    before = dict(sim.body.inventory)
    assert do(sim, "craft_grid", station="inventory", grid=[["oak_log", "oak_log"]])["reason"] == "missing_item"
    nothing = [[None, "paper"], ["leather", None]]
    assert do(sim, "craft_grid", station="inventory", grid=nothing)["reason"] == "no_result"
    assert dict(sim.body.inventory) == before
    out = do(sim, "craft_grid", station="inventory", grid=[["leather", "paper"], ["paper", "paper"]])
    assert out["produced"] == {"minecraft:book": 1}


def test_smelt_station_fuel_and_recipe_type(sim):
    give(sim, raw_iron=4, furnace=1)
    assert do(sim, "smelt", input="raw_iron")["reason"] == "needs_station"
    do(sim, "place", block="furnace")
    assert do(sim, "smelt", input="raw_iron")["reason"] == "no_fuel"
    assert sim.body.inventory["minecraft:raw_iron"] == 4
    give(sim, oak_planks=2, wooden_pickaxe=1)
    out = do(sim, "smelt", input="raw_iron", count=4)
    assert out["reason"] == "no_fuel" and sim.body.inventory["minecraft:wooden_pickaxe"] == 1
    out = do(sim, "smelt", input="raw_iron", count=2)
    assert out["gained"] == {"minecraft:iron_ingot": 2}
    assert out["lost"] == {"minecraft:oak_planks": 2, "minecraft:raw_iron": 2}
    assert "minecraft:story/smelt_iron" in sim.body.player.advancements.done
    give(sim, coal=1, stick=1)
    assert do(sim, "smelt", input="stick")["reason"] == "not_smeltable"
    assert do(sim, "smelt", input="raw_iron", station="smoker")["reason"] == "needs_station"


def test_attack_rolls_entity_loot(sim):
    out = do(sim, "attack", target="cow", count=2)
    assert out["killed"] == {"minecraft:cow": 2} and set(out["gained"]) <= {"minecraft:beef", "minecraft:leather"}
    assert 2 <= out["gained"]["minecraft:beef"] <= 6
    assert sim.snapshot().nearby_entities["minecraft:cow"][0] == len(synthetic.COWS) - 2
    assert do(sim, "attack", target="pig")["reason"] == "no_target"


def test_enchant_uses_lapis_and_levels(sim):
    give(sim, iron_pickaxe=1, lapis_lazuli=3, enchanting_table=1)
    assert do(sim, "enchant", item="iron_pickaxe")["reason"] == "needs_table"
    do(sim, "place", block="enchanting_table")
    assert do(sim, "enchant", item="stick")["reason"] == "missing_item"
    level = sim.body.player.xp_levels
    out = do(sim, "enchant", item="iron_pickaxe", option="middle")
    assert out["ok"] and out["lost"] == {"minecraft:lapis_lazuli": 2}
    assert sim.body.player.xp_levels == level - 2
    assert "minecraft:story/enchant_item" in sim.body.player.advancements.done
    assert do(sim, "enchant", item="iron_pickaxe", option="middle")["reason"] == "not_enchantable"   # enchanted
    give(sim, iron_pickaxe=1)
    assert do(sim, "enchant", item="iron_pickaxe", option="middle")["reason"] == "missing_item"        # 1 lapis


def test_setup_functions_and_controls(sim):
    snap = sim.snapshot()
    assert snap.xp_level == 100 and set(snap.effects) == {f"minecraft:{e}" for e in
                                                        ("haste", "speed", "resistance", "strength")}
    assert sim.entities.controls["difficulty"] == "peaceful"
    assert snap.nearby_entities["minecraft:cow"][0] == len(synthetic.COWS)


def test_same_seed_same_trajectory(world, rules):
    actions = [{"skill": "attack", "args": {"target": "cow", "count": 3}},
               {"skill": "mine", "args": {"block": "sand", "count": 2}}]

    def trajectory(seed: int) -> list:
        with Episode.from_parts(SimBackend(world, rules, seed), rules, rules, "iron_armor", seed=seed) as ep:
            return [ep.step(a) for a in actions] + [ep.observe()]

    assert trajectory(3) == trajectory(3)
    assert trajectory(3) != trajectory(4)    # drops are rolled from the seed
