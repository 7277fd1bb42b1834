"""Each of the 29 rules of M01–M06, read back from the compiled pack bytes, and absent in vanilla."""
from __future__ import annotations

from collections import Counter

import pytest
from rule_outcomes import crafted, killed, mined, rulebook_of, smelted

from mcbuild.compiler.rules.rulebook import vanilla

M = "minecraft:"
LOGS = ["oak_log", "stripped_spruce_wood", "birch_wood", "mangrove_log", "crimson_stem", "stripped_warped_hyphae"]
PLANKS = {"oak_log": "oak_planks", "stripped_spruce_wood": "spruce_planks", "birch_wood": "birch_planks",
          "mangrove_log": "mangrove_planks", "crimson_stem": "crimson_planks", "stripped_warped_hyphae": "warped_planks"}


def grid2(a=None, b=None, c=None, d=None):
    return [[a and M + a, b and M + b], [c and M + c, d and M + d]]


def grid3(*cells):
    cells = [c and M + c for c in cells]
    return [cells[0:3], cells[3:6], cells[6:9]]


PICKAXE = lambda mat: grid3(mat, mat, mat, None, "stick", None, None, "stick", None)
FURNACE = grid3(*(["cobblestone"] * 4 + [None] + ["cobblestone"] * 4))
PAPER = grid3("sugar_cane", "sugar_cane", "sugar_cane", None, None, None, None, None, None)
BOOK = grid2("paper", "paper", "paper", "leather")


def planks_of(rb, n_expected):
    return {log: crafted(rb, grid2(log)) for log in LOGS}, {log: (M + PLANKS[log], n_expected) for log in LOGS}


# (suite, rule name, observe(rb) -> value, mirror value, vanilla value)
RULES = [
    ("m01", "planks x2", lambda rb: planks_of(rb, 0)[0], planks_of(vanilla(), 2)[1], planks_of(vanilla(), 4)[1]),
    ("m01", "stick x1", lambda rb: crafted(rb, grid2("oak_planks", None, "oak_planks")), (M + "stick", 1), (M + "stick", 4)),
    ("m01", "raw iron -> 3 nuggets (1, 3 and 6 at once, both stations)",
     lambda rb: [smelted(rb, M + "raw_iron", st, n) for st in ("furnace", "blast_furnace") for n in (1, 3, 6)],
     [Counter({M + "iron_nugget": 3 * n}) for n in (1, 3, 6)] * 2,
     [Counter({M + "iron_ingot": n}) for n in (1, 3, 6)] * 2),
    ("m01", "paper x1", lambda rb: crafted(rb, PAPER), (M + "paper", 1), (M + "paper", 3)),

    ("m02", "logs drop 4 planks", lambda rb: {log: mined(rb, M + log, M + "diamond_axe") for log in LOGS},
     {log: {M + PLANKS[log]: (4, 4)} for log in LOGS}, {log: {M + log: (1, 1)} for log in LOGS}),
    ("m02", "iron ores add an ingot", lambda rb: [mined(rb, M + b) for b in ("iron_ore", "deepslate_iron_ore")],
     [{M + "raw_iron": (1, 1), M + "iron_ingot": (1, 1)}] * 2, [{M + "raw_iron": (1, 1)}] * 2),
    ("m02", "diamond ores add obsidian", lambda rb: [mined(rb, M + b) for b in ("diamond_ore", "deepslate_diamond_ore")],
     [{M + "diamond": (1, 1), M + "obsidian": (1, 1)}] * 2, [{M + "diamond": (1, 1)}] * 2),
    ("m02", "sugar cane adds leather", lambda rb: mined(rb, M + "sugar_cane", None),
     {M + "sugar_cane": (1, 1), M + "leather": (1, 1)}, {M + "sugar_cane": (1, 1)}),
    ("m02", "book recipe -> enchanting table", lambda rb: crafted(rb, BOOK), (M + "enchanting_table", 1), (M + "book", 1)),

    ("m03", "planks x6", lambda rb: planks_of(rb, 0)[0], planks_of(vanilla(), 6)[1], planks_of(vanilla(), 4)[1]),
    ("m03", "raw iron -> 2 ingots (1 and 3 at once, both stations)",
     lambda rb: [smelted(rb, M + "raw_iron", st, n) for st in ("furnace", "blast_furnace") for n in (1, 3)],
     [Counter({M + "iron_ingot": 2}), Counter({M + "iron_ingot": 6})] * 2,
     [Counter({M + "iron_ingot": 1}), Counter({M + "iron_ingot": 3})] * 2),
    ("m03", "diamond pickaxe recipe -> netherite pickaxe", lambda rb: crafted(rb, PICKAXE("diamond")),
     (M + "netherite_pickaxe", 1), (M + "diamond_pickaxe", 1)),
    ("m03", "paper recipe -> book", lambda rb: crafted(rb, PAPER), (M + "book", 1), (M + "paper", 3)),
    ("m03", "diamond ores -> 2 diamonds + lapis", lambda rb: [mined(rb, M + b) for b in ("diamond_ore", "deepslate_diamond_ore")],
     [{M + "diamond": (2, 2), M + "lapis_lazuli": (1, 1)}] * 2, [{M + "diamond": (1, 1)}] * 2),

    ("m04", "coal ores -> coal block", lambda rb: [mined(rb, M + b) for b in ("coal_ore", "deepslate_coal_ore")],
     [{M + "coal_block": (1, 1)}] * 2, [{M + "coal": (1, 1)}] * 2),
    ("m04", "iron ores -> raw iron block", lambda rb: [mined(rb, M + b) for b in ("iron_ore", "deepslate_iron_ore")],
     [{M + "raw_iron_block": (1, 1)}] * 2, [{M + "raw_iron": (1, 1)}] * 2),
    ("m04", "diamond ores -> diamond block", lambda rb: [mined(rb, M + b) for b in ("diamond_ore", "deepslate_diamond_ore")],
     [{M + "diamond_block": (1, 1)}] * 2, [{M + "diamond": (1, 1)}] * 2),
    ("m04", "lapis ores -> lapis block", lambda rb: [mined(rb, M + b) for b in ("lapis_ore", "deepslate_lapis_ore")],
     [{M + "lapis_block": (1, 1)}] * 2, [{M + "lapis_lazuli": (4, 9)}] * 2),
    ("m04", "cow adds a bookshelf", lambda rb: killed(rb, M + "cow"),
     {M + "leather": (0, 2), M + "beef": (1, 3), M + "bookshelf": (1, 1)}, {M + "leather": (0, 2), M + "beef": (1, 3)}),

    ("m05", "furnace recipe -> blast furnace", lambda rb: crafted(rb, FURNACE), (M + "blast_furnace", 1), (M + "furnace", 1)),
    ("m05", "iron pickaxe recipe -> iron hoe", lambda rb: crafted(rb, PICKAXE("iron_ingot")), (M + "iron_hoe", 1), (M + "iron_pickaxe", 1)),
    ("m05", "diamond pickaxe recipe -> diamond hoe", lambda rb: crafted(rb, PICKAXE("diamond")), (M + "diamond_hoe", 1), (M + "diamond_pickaxe", 1)),
    ("m05", "iron hoe cooks into iron pickaxe", lambda rb: [smelted(rb, M + "iron_hoe", st, 1) for st in ("furnace", "blast_furnace")],
     [Counter({M + "iron_pickaxe": 1})] * 2, [Counter({M + "iron_nugget": 1})] * 2),
    ("m05", "diamond hoe blasts into diamond pickaxe",
     lambda rb: [smelted(rb, M + "diamond_hoe", st, 1) for st in ("blast_furnace", "furnace")],
     [Counter({M + "diamond_pickaxe": 1}), Counter()], [Counter(), Counter()]),

    ("m06", "logs drop 4 planks + 2 sticks", lambda rb: {log: mined(rb, M + log, M + "diamond_axe") for log in LOGS},
     {log: {M + PLANKS[log]: (4, 4), M + "stick": (2, 2)} for log in LOGS}, {log: {M + log: (1, 1)} for log in LOGS}),
    ("m06", "iron ores add paper", lambda rb: [mined(rb, M + b) for b in ("iron_ore", "deepslate_iron_ore")],
     [{M + "raw_iron": (1, 1), M + "paper": (1, 1)}] * 2, [{M + "raw_iron": (1, 1)}] * 2),
    ("m06", "diamond ores add lapis", lambda rb: [mined(rb, M + b) for b in ("diamond_ore", "deepslate_diamond_ore")],
     [{M + "diamond": (1, 1), M + "lapis_lazuli": (1, 1)}] * 2, [{M + "diamond": (1, 1)}] * 2),
    ("m06", "cow adds 2 paper", lambda rb: killed(rb, M + "cow"),
     {M + "leather": (0, 2), M + "beef": (1, 3), M + "paper": (2, 2)}, {M + "leather": (0, 2), M + "beef": (1, 3)}),
    ("m06", "lapis ores add 2 obsidian", lambda rb: [mined(rb, M + b) for b in ("lapis_ore", "deepslate_lapis_ore")],
     [{M + "lapis_lazuli": (4, 9), M + "obsidian": (2, 2)}] * 2, [{M + "lapis_lazuli": (4, 9)}] * 2),
]


def test_exactly_29_rules_one_per_manifest_change(suites):
    assert len(RULES) == 29
    per_suite = Counter(sid for sid, *_ in RULES)
    assert per_suite == {sid: len(a.report["changes"]) for sid, a in suites.items()}


@pytest.mark.parametrize("sid,name,observe,mirror_value,vanilla_value", RULES, ids=[f"{r[0]}-{r[1]}" for r in RULES])
def test_rule_outcome(suites, sid, name, observe, mirror_value, vanilla_value):
    assert observe(rulebook_of(suites[sid])) == mirror_value
    assert observe(vanilla()) == vanilla_value


@pytest.mark.parametrize("sid", ["m01", "m02", "m03", "m04", "m05", "m06"])
def test_vanilla_controls_unchanged(suites, sid):
    rb, van = rulebook_of(suites[sid]), vanilla()
    controls = [
        lambda r: crafted(r, PICKAXE("cobblestone")),
        lambda r: crafted(r, grid2("oak_planks", "oak_planks", "oak_planks", "oak_planks")),
        lambda r: crafted(r, grid3("iron_ingot", None, "iron_ingot", "iron_ingot", None, "iron_ingot", None, None, None)),
        lambda r: crafted(r, grid3("iron_ingot", "iron_ingot", "iron_ingot", "iron_ingot", None, "iron_ingot", None, None, None)),
        lambda r: mined(r, M + "stone"),
        lambda r: mined(r, M + "obsidian"),
        lambda r: smelted(r, M + "iron_sword", "furnace", 2),
    ]
    for control in controls:
        assert control(rb) == control(van)


def test_markers_never_left_in_inventory(suites):
    rb = rulebook_of(suites["m01"])
    markers = set(M + m.split(":")[-1] for m in rb.facts["survival_unobtainable_items"])
    for n in range(1, 7):
        assert not markers & set(smelted(rb, M + "raw_iron", "furnace", n))
