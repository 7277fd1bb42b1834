"""Cross-check the vanilla 1.19 catalog (the game's data as ``mcbuild.compiler.rules.catalog.load()`` gives
it, plus catalogs/game_facts.yaml) against the generator output and against minecraft-data 1.19.

The loaded data must equal the generator output file for file. minecraft-data is read straight
from its JSON files under node_modules (installed by `make test` / `npm install`); runtime code
never needs node. Every disagreement is a failing assertion. The only tolerated differences are
the minecraft-data errata below (BLOCK_LOOT_ERRATA, BLOCK_ITEM_ERRATA, ENTITY_LOOT_ERRATA), where
minecraft-data's own generator simplifies the loot tables (fortune bonuses, set_count ranges,
state-dependent counts, silk-touch flags, tag and table entries). Each erratum pins BOTH values
(what minecraft-data says and what the game's 1.19.0 table gives) and the group says why, so any
change on either side fails the test.
"""
from __future__ import annotations

import collections
import hashlib
import json
import pathlib

import pytest
import yaml

from mcbuild.compiler.core.paths import VANILLA_DATA
from mcbuild.compiler.core.vanilla import SHARED_SOURCE, read_manifest
from mcbuild.compiler.rules.catalog import load
from mcbuild.compiler.rules.pack import parse_resource_path

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = ROOT / SHARED_SOURCE
CATALOG = load()
MCDATA = ROOT / "node_modules" / "minecraft-data" / "minecraft-data" / "data"

NS = "minecraft:"


# --------------------------------------------------------------------------- catalog access
def _of_kind(kind: str) -> dict[str, dict]:
    return {rid: value for (k, rid), value in sorted(CATALOG.resources.items()) if k == kind}


RECIPES = _of_kind("recipe")
LOOT = _of_kind("loot_table")
ADVANCEMENTS = _of_kind("advancement")
ITEM_TAGS = _of_kind("item_tag")
BLOCK_TAGS = _of_kind("block_tag")
FACTS = CATALOG.facts
REGISTRY = {"items": sorted(CATALOG.items), "blocks": sorted(CATALOG.blocks), "entities": sorted(CATALOG.entities)}


def expand(tags: dict[str, dict], ref: str, _seen=()) -> set[str]:
    """Expand '#ns:tag' (or a plain id) through the catalog's own tags."""
    if not ref.startswith("#"):
        return {ref}
    name = ref[1:]
    assert name in tags, f"tag {ref} is referenced but not defined in the catalog"
    assert name not in _seen, f"tag cycle through {ref}"
    out: set[str] = set()
    for v in tags[name]["values"]:
        out |= expand(tags, v if isinstance(v, str) else v["id"], _seen + (name,))
    return out


def ingredient_items(ing) -> set[str]:
    """Items accepted by one recipe ingredient (object or list of alternatives)."""
    alts = ing if isinstance(ing, list) else [ing]
    out: set[str] = set()
    for a in alts:
        if "item" in a:
            out.add(a["item"])
        else:
            out |= expand(ITEM_TAGS, "#" + a["tag"])
    return out


# --------------------------------------------------------------------------- minecraft-data
def _mcdata_path(key: str) -> pathlib.Path:
    paths = json.loads((MCDATA / "dataPaths.json").read_text())["pc"]["1.19"]
    return MCDATA / paths[key] / f"{key}.json"


@pytest.fixture(scope="module")
def mc():
    if not (MCDATA / "dataPaths.json").exists():
        pytest.skip(
            "node_modules/minecraft-data is missing: run `npm install --no-audit --no-fund` "
            "(or `make test`, which installs it) to cross-check the vanilla catalog"
        )
    d = {k: json.loads(_mcdata_path(k).read_text())
         for k in ("items", "blocks", "entities", "recipes", "blockLoot", "entityLoot")}
    d["item_name"] = {i["id"]: i["name"] for i in d["items"]}
    d["block_by_name"] = {b["name"]: b for b in d["blocks"]}
    d["block_loot"] = {b["block"]: b["drops"] for b in d["blockLoot"]}
    d["entity_loot"] = {e["entity"]: e["drops"] for e in d["entityLoot"]}
    return d


# --------------------------------------------------------------------------- the whole data, loaded
def _generator_output() -> pathlib.Path:
    """The shared generator output when it sits beside the checkout, else the verified copy."""
    return SHARED if SHARED.is_dir() else VANILLA_DATA


def test_loaded_data_equals_the_generator_output_file_for_file():
    """Every file the manifest lists is loaded, byte for byte, and parsed to what the generator
    wrote; every id list is the game's registry. Nothing is missing, nothing is added."""
    source = _generator_output()
    manifest = read_manifest()
    data_files = {rel for rel in manifest if rel.startswith("data/")}
    assert set(CATALOG.files) == data_files
    for rel, (size, digest) in manifest.items():
        raw = (source / rel).read_bytes()
        assert (len(raw), hashlib.sha256(raw).hexdigest()) == (size, digest), rel
        if rel in data_files:
            assert CATALOG.files[rel] == raw, rel
            key = parse_resource_path(rel)
            if key is not None:
                assert CATALOG.resources[key] == json.loads(raw), rel
    unparsed = {"/".join(rel.split("/")[2:4]) for rel in data_files if parse_resource_path(rel) is None}
    assert all(u.startswith("tags/") for u in unparsed) and "tags/items" not in unparsed, sorted(unparsed)
    assert len(CATALOG.resources) == len(data_files) - sum(parse_resource_path(r) is None for r in data_files)
    registries = json.loads((source / "reports/registries.json").read_bytes())
    for name, key in (("items", "minecraft:item"), ("blocks", "minecraft:block"), ("entities", "minecraft:entity_type")):
        assert REGISTRY[name] == sorted(registries[key]["entries"]), name
    counts = {kind: sum(1 for k, _ in CATALOG.resources if k == kind) for kind in ("recipe", "loot_table", "advancement")}
    assert counts == {"recipe": 1089, "loot_table": 1026, "advancement": 1179}      # SOURCE.md's counts
    assert sum(1 for rel in data_files if rel.startswith("data/minecraft/tags/")) == 342


def test_the_data_is_1_19_0_shaped():
    """Fields that moved in later versions are in their 1.19.0 form."""
    for rid, r in RECIPES.items():
        assert "category" not in r, f"{rid}: 'category' is 1.19.3+, not 1.19.0"
        kind = r["type"]
        if kind in ("minecraft:smelting", "minecraft:blasting", "minecraft:smoking", "minecraft:campfire_cooking"):
            assert isinstance(r["result"], str), f"{rid}: 1.19 cooking result must be a string"
        elif kind == "minecraft:stonecutting":
            assert isinstance(r["result"], str) and isinstance(r["count"], int), rid
        elif kind.startswith("minecraft:crafting_special_"):
            assert "result" not in r, rid
        else:
            assert isinstance(r["result"], dict) and r["result"].get("count", 2) != 1, rid
    for lid, t in LOOT.items():
        assert "random_sequence" not in t, f"{lid}: random_sequence is 1.20+"


def test_key_1_19_details():
    assert RECIPES[NS + "furnace"]["key"]["#"] == {"tag": "minecraft:stone_crafting_materials"}
    for t in ("pickaxe", "axe", "shovel", "sword", "hoe"):
        assert RECIPES[NS + f"stone_{t}"]["key"]["X"] == {"tag": "minecraft:stone_tool_materials"}
        assert RECIPES[NS + f"wooden_{t}"]["key"]["X"] == {"tag": "minecraft:planks"}
    for w in ("oak", "spruce", "birch", "jungle", "acacia", "dark_oak", "mangrove", "crimson",
              "warped"):
        r = RECIPES[NS + f"{w}_planks"]
        tag = f"minecraft:{w}_stems" if w in ("crimson", "warped") else f"minecraft:{w}_logs"
        assert r == {"type": "minecraft:crafting_shapeless", "group": "planks",
                     "ingredients": [{"tag": tag}],
                     "result": {"item": f"minecraft:{w}_planks", "count": 4}}, w
    assert RECIPES[NS + "charcoal"]["ingredient"] == {"tag": "minecraft:logs_that_burn"}
    for n in ("iron_nugget_from_smelting", "iron_nugget_from_blasting"):
        assert len(RECIPES[NS + n]["ingredient"]) == 14
    mine_stone = ADVANCEMENTS[NS + "story/mine_stone"]["criteria"]
    assert mine_stone == {"get_stone": {"trigger": "minecraft:inventory_changed", "conditions": {
        "items": [{"tag": "minecraft:stone_tool_materials"}]}}}
    armor = ADVANCEMENTS[NS + "story/obtain_armor"]
    assert len(armor["criteria"]) == 4 and len(armor["requirements"]) == 1
    assert len(armor["requirements"][0]) == 4
    assert ADVANCEMENTS[NS + "story/enchant_item"]["criteria"] == {
        "enchanted_item": {"trigger": "minecraft:enchanted_item", "conditions": {}}}
    # The advancement evaluator reads inventory_changed item predicates by items and tag only; the
    # one criterion of another form (occupied slots) unlocks the chest recipe, never a milestone.
    other = {}
    for aid, a in ADVANCEMENTS.items():
        for c in a["criteria"].values():
            if c["trigger"] == "minecraft:inventory_changed":
                if set(c["conditions"]) != {"items"}:
                    other[aid] = c["conditions"]
                    continue
                assert all(set(p) <= {"items", "tag"} for p in c["conditions"]["items"]), aid
    assert other == {NS + "recipes/decorations/chest": {"slots": {"occupied": {"min": 10}}}}


# --------------------------------------------------------------------------- (a) recipes
def _slots(recipe):
    """Crafting recipe -> (grid rows of item-sets or None) | list of item-sets."""
    if recipe["type"] == "minecraft:crafting_shaped":
        key = {k: ingredient_items(v) for k, v in recipe["key"].items()}
        return [[None if ch == " " else key[ch] for ch in row] for row in recipe["pattern"]]
    return [ingredient_items(i) for i in recipe["ingredients"]]


def _bipartite(variant_ids: list[str], slots: list[set[str]]) -> bool:
    if len(variant_ids) != len(slots):
        return False
    match: dict[int, int] = {}

    def place(i, seen):
        for j, s in enumerate(slots):
            if variant_ids[i] in s and j not in seen:
                seen.add(j)
                if j not in match or place(match[j], seen):
                    match[j] = i
                    return True
        return False

    return all(place(i, set()) for i in range(len(variant_ids)))


def _variant_matches(mc, recipe, variant) -> bool:
    name = mc["item_name"]
    res = recipe["result"]
    if variant["result"]["count"] != res.get("count", 1):
        return False
    if name[variant["result"]["id"]] != res["item"][len(NS):]:
        return False
    slots = _slots(recipe)
    if recipe["type"] == "minecraft:crafting_shaped":
        if "inShape" not in variant:
            return False
        grid = [[None if x is None else NS + name[x] for x in row] for row in variant["inShape"]]
        for g in (grid, [list(reversed(r)) for r in grid]):  # shaped recipes also match mirrored
            if len(g) == len(slots) and all(
                len(gr) == len(sr) and all((a is None and s is None) or
                                           (a is not None and s is not None and a in s)
                                           for a, s in zip(gr, sr))
                for gr, sr in zip(g, slots)):
                return True
        return False
    if "ingredients" not in variant:
        return False
    return _bipartite([NS + name[x] for x in variant["ingredients"]], slots)


def test_a_crafting_recipes_match_minecraft_data(mc):
    by_id = {v: k for k, v in mc["item_name"].items()}
    checked = 0
    for rid, r in RECIPES.items():
        if r["type"] not in ("minecraft:crafting_shaped", "minecraft:crafting_shapeless"):
            continue
        result = r["result"]["item"][len(NS):]
        variants = mc["recipes"].get(str(by_id[result]), [])
        assert variants, f"{rid}: minecraft-data has no recipe for {result}"
        assert any(_variant_matches(mc, r, v) for v in variants), (
            f"{rid}: no minecraft-data recipe for {result} has this shape/ingredients/count")
        # tag/list ingredients: the items the catalog accepts at each such slot must be exactly the
        # items minecraft-data's expanded variants (same skeleton) use there
        for slot, accepted in _alternative_slots(r):
            used = _variant_items_at(mc, r, variants, slot)
            assert used == accepted, (
                f"{rid}: slot {slot} accepts {sorted(accepted - used)} not in the game, "
                f"misses {sorted(used - accepted)}")
        checked += 1
    assert checked >= 60


def _alternative_slots(recipe):
    """(slot, item-set) for every slot that accepts more than one item."""
    slots = _slots(recipe)
    if recipe["type"] == "minecraft:crafting_shaped":
        return [((r, c), s) for r, row in enumerate(slots) for c, s in enumerate(row)
                if s is not None and len(s) > 1]
    return [(i, s) for i, s in enumerate(slots) if len(s) > 1]


def _variant_items_at(mc, recipe, variants, slot) -> set[str]:
    """Items that minecraft-data variants with the recipe's skeleton (same count, same fixed
    items, same empty cells) put at `slot`."""
    name = mc["item_name"]
    count = recipe["result"].get("count", 1)
    slots = _slots(recipe)
    used: set[str] = set()
    for v in variants:
        if v["result"]["count"] != count:
            continue
        if recipe["type"] == "minecraft:crafting_shaped":
            if "inShape" not in v:
                continue
            grid = [[None if x is None else NS + name[x] for x in row] for row in v["inShape"]]
            for g in (grid, [list(reversed(row)) for row in grid]):
                if len(g) != len(slots) or any(len(a) != len(b) for a, b in zip(g, slots)):
                    continue
                if all((a is None) == (s is None) and (s is None or len(s) > 1 or a in s)
                       for ga, sa in zip(g, slots) for a, s in zip(ga, sa)):
                    used.add(g[slot[0]][slot[1]])
                    break
        else:
            if "ingredients" not in v or len(v["ingredients"]) != len(slots):
                continue
            rest = collections.Counter(NS + name[x] for x in v["ingredients"])
            fixed = collections.Counter(next(iter(s)) for s in slots if len(s) == 1)
            if fixed - rest:
                continue
            leftover = list((rest - fixed).elements())
            multi = [s for s in slots if len(s) > 1]
            assert len(multi) == 1, "only one alternative slot supported for shapeless recipes"
            if len(leftover) == 1:
                used.add(leftover[0])
    return used


def test_cooking_recipes_use_the_station_cooking_time():
    ticks = {"minecraft:smelting": FACTS["cooking_ticks"]["furnace"],
             "minecraft:blasting": FACTS["cooking_ticks"]["blast_furnace"],
             "minecraft:smoking": FACTS["cooking_ticks"]["smoker"]}
    n = 0
    for rid, r in RECIPES.items():
        if r["type"] in ticks:
            assert r["cookingtime"] == ticks[r["type"]], rid
            n += 1
    assert n >= 20


# --------------------------------------------------------------------------- (b) block drops
# What a player can get from a table without silk touch or fortune, any block state and any luck:
# each item with its (fewest, most) count. Conditions are three-valued (True, False, None = may
# hold); a function whose own conditions may hold may or may not apply.
TOOLS = ("minecraft:stone_pickaxe", "minecraft:stone_axe", "minecraft:stone_shovel", "minecraft:stone_hoe",
         "minecraft:shears", "minecraft:stick")        # a stick: the bare hand's drops
MAYBE_CONDITIONS = ("minecraft:table_bonus", "minecraft:random_chance", "minecraft:random_chance_with_looting",
                    "minecraft:block_state_property", "minecraft:entity_properties", "minecraft:killed_by_player",
                    "minecraft:damage_source_properties", "minecraft:location_check")
SAME_COUNT = ("minecraft:explosion_decay", "minecraft:copy_name", "minecraft:copy_nbt", "minecraft:copy_state",
              "minecraft:set_nbt", "minecraft:set_contents", "minecraft:set_potion", "minecraft:set_stew_effect",
              "minecraft:looting_enchant", "minecraft:furnace_smelt", "minecraft:set_instrument")


def _cond(c, tool):
    kind = c["condition"]
    if kind == "minecraft:match_tool":
        pred = c["predicate"]
        if "enchantments" in pred:
            return False  # no silk touch / enchantments on the tool
        assert set(pred) <= {"items", "tag"}, f"unhandled match_tool predicate {pred}"
        return tool in (pred["items"] if "items" in pred else expand(ITEM_TAGS, "#" + pred["tag"]))
    if kind == "minecraft:inverted":
        v = _cond(c["term"], tool)
        return None if v is None else not v
    if kind == "minecraft:alternative":
        vals = [_cond(t, tool) for t in c["terms"]]
        return True if True in vals else (None if None in vals else False)
    if kind == "minecraft:survives_explosion":
        return True  # broken by a player, not an explosion
    if kind in MAYBE_CONDITIONS:
        return None
    raise AssertionError(f"unhandled loot condition {kind}")


def _conds(cs, tool):
    vals = [_cond(c, tool) for c in cs or []]
    return False if False in vals else (None if None in vals else True)


def _number(n) -> tuple[float, float]:
    if isinstance(n, (int, float)):
        return n, n
    kind = n.get("type", "minecraft:uniform")
    if kind == "minecraft:uniform":
        return _number(n["min"])[0], _number(n["max"])[1]
    if kind == "minecraft:binomial":
        return 0, _number(n["n"])[1]
    if kind == "minecraft:constant":
        return n["value"], n["value"]
    raise AssertionError(f"unhandled number provider {n}")


def _count_range(functions, tool):
    """(fewest, most) items of an entry after its functions (fortune level 0, no explosion)."""
    ranges = {(1, 1)}
    for f in functions or []:
        fn, state = f["function"], _conds(f.get("conditions"), tool)
        if state is False or fn in SAME_COUNT:
            continue
        if fn == "minecraft:set_count":
            lo, hi = _number(f["count"])
            new = {(a + lo, b + hi) if f.get("add") else (lo, hi) for a, b in ranges}
        elif fn == "minecraft:limit_count":
            lim = f["limit"]
            lo, hi = lim.get("min", -10 ** 9), lim.get("max", 10 ** 9)
            new = {(min(max(a, lo), hi), min(max(b, lo), hi)) for a, b in ranges}
        elif fn == "minecraft:apply_bonus":
            extra = f["parameters"]["extra"] if f["formula"] == "minecraft:binomial_with_bonus_count" else 0
            new = {(a, b + extra) for a, b in ranges}      # level 0 still rolls `extra` binomial trials
        else:
            raise AssertionError(f"unhandled loot function {fn}")
        ranges = new | (ranges if state is None else set())
    return int(min(a for a, _ in ranges)), int(max(b for _, b in ranges))


def _entry_drops(entry, tool, out, tables=()):
    """Evaluate one entry; return its condition state and collect reachable item drops."""
    state = _conds(entry.get("conditions"), tool)
    kind = entry["type"]
    if state is False:
        return False
    if kind in ("minecraft:alternatives", "minecraft:sequence", "minecraft:group"):
        for child in entry["children"]:
            child_state = _entry_drops(child, tool, out, tables)
            if kind == "minecraft:alternatives" and child_state is True:
                break
            if kind == "minecraft:sequence" and child_state is False:
                break
    elif kind == "minecraft:item":
        out[entry["name"]].append(_count_range(entry.get("functions"), tool))
    elif kind == "minecraft:tag":
        for item in expand(ITEM_TAGS, "#" + entry["name"]):
            out[item].append(_count_range(entry.get("functions"), tool))
    elif kind == "minecraft:loot_table":
        assert entry["name"] not in tables, f"loot table cycle through {entry['name']}"
        for item, rng in table_drops(LOOT[entry["name"]], (tool,), tables + (entry["name"],)).items():
            out[item].append(rng)
    elif kind not in ("minecraft:empty", "minecraft:dynamic"):   # dynamic: a container's own contents
        raise AssertionError(f"unhandled entry type {kind}")
    return state


def table_drops(table, tools=TOOLS, tables=()) -> dict[str, tuple[int, int]]:
    """Items a table can drop for a player without silk touch or fortune, with their count range."""
    out: dict[str, list] = collections.defaultdict(list)
    for tool in tools:
        for pool in table.get("pools", []):
            if _conds(pool.get("conditions"), tool) is False:
                continue
            for e in pool["entries"]:
                _entry_drops(e, tool, out, tables)
    return {k: (min(a for a, _ in v), max(b for _, b in v)) for k, v in out.items()}


# minecraft-data 1.19 blockLoot.json errata, each pinned as (block, item) -> (minecraft-data range,
# game range), the game's range being what the 1.19.0 table above gives without silk touch or
# fortune over every block state. Grouped by why minecraft-data differs:
BLOCK_LOOT_ERRATA: dict[tuple[str, str], tuple[tuple, tuple[int, int]]] = {}
_BLOCKS = [b[len(NS):] for b in REGISTRY["blocks"]]
# (1) its generator models apply_bonus(ore_drops) as one or two items, where fortune 0 adds nothing;
for _pre in ("", "deepslate_"):
    for _b, _i in {"coal_ore": "coal", "iron_ore": "raw_iron", "gold_ore": "raw_gold", "diamond_ore": "diamond",
                   "emerald_ore": "emerald"}.items():
        BLOCK_LOOT_ERRATA[(_pre + _b, _i)] = ((1, 2), (1, 1))
BLOCK_LOOT_ERRATA[("nether_quartz_ore", "quartz")] = ((1, 2), (1, 1))
BLOCK_LOOT_ERRATA[("amethyst_cluster", "amethyst_shard")] = ((2, 8), (2, 4))    # 4 with a pickaxe, else 2
# (2) it ignores set_count ranges (and binomial bonus rolls, which fortune 0 still makes);
for _pre in ("", "deepslate_"):
    BLOCK_LOOT_ERRATA[(_pre + "copper_ore", "raw_copper")] = ((1, 2), (2, 5))
    BLOCK_LOOT_ERRATA[(_pre + "lapis_ore", "lapis_lazuli")] = ((1, 2), (4, 9))
    BLOCK_LOOT_ERRATA[(_pre + "redstone_ore", "redstone")] = ((1, 1), (4, 5))
BLOCK_LOOT_ERRATA.update({
    ("nether_gold_ore", "gold_nugget"): ((1, 2), (2, 6)),
    ("gilded_blackstone", "gold_nugget"): ((1, 1), (2, 5)),
    ("glowstone", "glowstone_dust"): ((1, 1), (2, 4)),
    ("sea_lantern", "prismarine_crystals"): ((1, 1), (2, 3)),
    ("dead_bush", "stick"): ((1, 1), (0, 2)),
    ("chorus_plant", "chorus_fruit"): ((1, 1), (0, 1)),
    ("nether_wart", "nether_wart"): ((1, 1), (1, 4)),
    ("melon", "melon_slice"): ((None, 1), (3, 7)),                 # it even writes null for the minimum
    ("brown_mushroom_block", "brown_mushroom"): ((0, None), (0, 2)),
    ("red_mushroom_block", "red_mushroom"): ((0, None), (0, 2)),
    ("glow_lichen", "glow_lichen"): ((-1, -1), (0, 6)),            # one per face: set_count add per state
})
for _b in ("melon_stem", "attached_melon_stem"):
    BLOCK_LOOT_ERRATA[(_b, "melon_seeds")] = ((1, 1), (0, 3))
for _b in ("pumpkin_stem", "attached_pumpkin_stem"):
    BLOCK_LOOT_ERRATA[(_b, "pumpkin_seeds")] = ((1, 1), (0, 3))
for _b in (b for b in _BLOCKS if b.endswith("_leaves")):
    BLOCK_LOOT_ERRATA[(_b, "stick")] = ((1, 1), (1, 2))
# (3) for a count that depends on the block state it gives one state's count (double slab, four
# candles or pickles, ripe cocoa), where the table gives each state its own.
for _b in (b for b in _BLOCKS if b.endswith("_slab")):
    BLOCK_LOOT_ERRATA[(_b, _b)] = ((2, 2), (1, 2))
for _b in (b for b in _BLOCKS if b.endswith("candle")):
    BLOCK_LOOT_ERRATA[(_b, _b)] = ((4, 4), (1, 4))
BLOCK_LOOT_ERRATA[("sea_pickle", "sea_pickle")] = ((4, 4), (1, 4))
BLOCK_LOOT_ERRATA[("cocoa", "cocoa_beans")] = ((3, 3), (1, 3))
# Item sets: block -> (minecraft-data's items without silk touch, the game's). Snow layers drop
# themselves and snow blocks only to silk touch; minecraft-data does not flag those entries.
BLOCK_ITEM_ERRATA = {"snow": ({"snowball", "snow", "snow_block"}, {"snowball"})}


def test_b_block_drops_match_minecraft_data(mc):
    used_errata, used_items = set(), set()
    blocks = [k for k in LOOT if k.startswith(NS + "blocks/")]
    assert len(blocks) == len(mc["block_loot"]) == 869
    for lid in blocks:
        block = lid[len(NS + "blocks/"):]
        assert block in mc["block_loot"], f"minecraft-data has no loot for {block}"
        mine = {k[len(NS):]: v for k, v in table_drops(LOOT[lid]).items()}
        theirs: dict[str, tuple] = {}
        for d in mc["block_loot"][block]:
            if d.get("silkTouch"):
                continue
            lo, hi = d["stackSizeRange"]
            prev = theirs.get(d["item"])
            theirs[d["item"]] = (lo, hi) if prev is None else (
                None if None in (prev[0], lo) else min(prev[0], lo), max(prev[1], hi))
        if set(mine) != set(theirs):
            assert BLOCK_ITEM_ERRATA.get(block) == (set(theirs), set(mine)), (
                f"{block}: non-silk drops {sorted(mine)} vs minecraft-data {sorted(theirs)}")
            used_items.add(block)
        for item, rng in mine.items():
            if item not in theirs or rng == theirs[item]:
                continue
            key = (block, item)
            assert key in BLOCK_LOOT_ERRATA, f"{block}: {item} count {rng} vs minecraft-data {theirs[item]}"
            assert BLOCK_LOOT_ERRATA[key] == (theirs[item], rng), (
                f"{block}: erratum for {item} is stale: minecraft-data {theirs[item]}, game {rng}")
            used_errata.add(key)
    assert used_errata == set(BLOCK_LOOT_ERRATA), sorted(set(BLOCK_LOOT_ERRATA) - used_errata)
    assert used_items == set(BLOCK_ITEM_ERRATA)


# Entity loot errata: entity -> (items minecraft-data lists, the game's). It leaves out tag entries
# (a creeper killed by a skeleton drops a disc of #creeper_drop_music_discs) and referenced tables
# (a guardian's fishing-loot fish).
_DISCS = {"music_disc_" + d for d in ("11", "13", "blocks", "cat", "chirp", "far", "mall", "mellohi", "stal",
                                      "strad", "wait", "ward")}
_FISH = {"pufferfish", "salmon", "tropical_fish"}
_GUARDIAN = {"prismarine_shard", "cod", "prismarine_crystals"}
ENTITY_LOOT_ERRATA = {
    "creeper": ({"gunpowder"}, {"gunpowder"} | _DISCS),
    "guardian": (_GUARDIAN, _GUARDIAN | _FISH),
    "elder_guardian": (_GUARDIAN | {"wet_sponge"}, _GUARDIAN | {"wet_sponge"} | _FISH),
}


def test_entity_drops_match_minecraft_data(mc):
    used = set()
    tables = [lid for lid in LOOT if lid.startswith(NS + "entities/") and "/" not in lid[len(NS + "entities/"):]]
    assert {lid[len(NS + "entities/"):] for lid in tables} >= set(mc["entity_loot"])
    for lid in tables:
        entity = lid[len(NS + "entities/"):]
        items = {k[len(NS):] for k in table_drops(LOOT[lid], ("minecraft:stick",))}
        theirs = {d["item"] for d in mc["entity_loot"].get(entity, [])}
        if items != theirs:
            assert ENTITY_LOOT_ERRATA.get(entity) == (theirs, items), (
                f"{entity}: {sorted(items)} vs minecraft-data {sorted(theirs)}")
            used.add(entity)
    assert used == set(ENTITY_LOOT_ERRATA)


def test_some_exact_drop_facts():
    d = lambda b: table_drops(LOOT[NS + "blocks/" + b])
    assert d("stone") == {NS + "cobblestone": (1, 1)}
    assert d("deepslate") == {NS + "cobbled_deepslate": (1, 1)}
    assert d("iron_ore") == {NS + "raw_iron": (1, 1)}
    assert d("lapis_ore") == {NS + "lapis_lazuli": (4, 9)}
    assert d("bookshelf") == {NS + "book": (3, 3)}
    assert d("grass_block") == {NS + "dirt": (1, 1)}
    assert d("gravel") == {NS + "flint": (1, 1), NS + "gravel": (1, 1)}
    assert d("oak_log") == {NS + "oak_log": (1, 1)}
    assert d("poppy") == {NS + "poppy": (1, 1)}
    assert d("melon") == {NS + "melon_slice": (3, 7)}
    sheep = table_drops(LOOT[NS + "entities/sheep/white"], ("minecraft:stick",))
    assert sheep == {NS + "white_wool": (1, 1), NS + "mutton": (1, 2)}


# --------------------------------------------------------------------------- (c) harvest tools
def _harvest_tool_items(block: str) -> set[str]:
    bid = NS + block
    need = 0
    for lvl, tag in ((1, "needs_stone_tool"), (2, "needs_iron_tool"), (3, "needs_diamond_tool")):
        if NS + tag in BLOCK_TAGS and bid in expand(BLOCK_TAGS, "#" + NS + tag):
            need = max(need, lvl)
    out = set()
    for kind in ("pickaxe", "axe", "shovel", "hoe"):
        tag = NS + "mineable/" + kind
        if tag not in BLOCK_TAGS or bid not in expand(BLOCK_TAGS, "#" + tag):
            continue
        for tier in FACTS["tool_tiers"].values():
            if tier["level"] >= need:
                out.add(tier["tools"][kind])
    return out


def test_c_harvest_tools_match_minecraft_data(mc):
    required = [b[len(NS):] for b in FACTS["requires_correct_tool"]]
    assert len(set(required)) == len(required)
    for block in required:
        mcb = mc["block_by_name"][block]
        theirs = {NS + mc["item_name"][int(i)] for i in (mcb.get("harvestTools") or {})}
        assert theirs, f"{block} is in requires_correct_tool but minecraft-data needs no tool"
        assert _harvest_tool_items(block) == theirs, (
            f"{block}: catalog tools {sorted(_harvest_tool_items(block))} vs {sorted(theirs)}")
    own = {k[len(NS + "blocks/"):] for k in LOOT if k.startswith(NS + "blocks/")}
    # A wall variant without a table of its own drops like its floor block (dropsLike in 1.19's code).
    assert {b.replace("_wall_", "_") if b not in own else b for b in required} <= own


def test_c_every_block_that_needs_a_tool_is_listed(mc):
    required = {b[len(NS):] for b in FACTS["requires_correct_tool"]}
    missing = sorted(b[len(NS + "blocks/"):] for b in LOOT if b.startswith(NS + "blocks/")
                     and mc["block_by_name"][b[len(NS + "blocks/"):]].get("harvestTools")
                     and b[len(NS + "blocks/"):] not in required)
    # cobweb is left out on purpose (game_facts.yaml says why: its correct tools have no mineable tag).
    missing = [b for b in missing if b != "cobweb"]
    assert not missing, f"need a correct tool in minecraft-data but are not in requires_correct_tool: {missing}"


def test_tool_tier_facts():
    tiers = FACTS["tool_tiers"]
    assert {k: v["level"] for k, v in tiers.items()} == {
        "wooden": 0, "stone": 1, "iron": 2, "golden": 0, "diamond": 3, "netherite": 4}
    needs = ["minecraft:needs_stone_tool", "minecraft:needs_iron_tool",
             "minecraft:needs_diamond_tool"]
    for name, t in tiers.items():
        assert t["harvests"] == needs[:min(t["level"], 3)], name
        for tag in t["harvests"]:
            assert tag in BLOCK_TAGS
        assert set(t["tools"]) == {"pickaxe", "axe", "shovel", "hoe", "sword"}
        for kind, item in t["tools"].items():
            assert item == f"minecraft:{name}_{kind}"


# --------------------------------------------------------------------------- (d) registry
def test_d_registry_matches_minecraft_data(mc):
    for key in ("items", "blocks", "entities"):
        expected = sorted(NS + x["name"] for x in mc[key])
        assert REGISTRY[key] == expected, key


def test_block_physics_names_registered_blocks():
    """catalogs/block_physics.yaml keeps what registries.json does not hold (collision boxes,
    hardness): every id it names is a 1.19.0 block."""
    physics = yaml.safe_load((ROOT / "catalogs" / "block_physics.yaml").read_text())
    named = {b for ids in physics.values() if isinstance(ids, list) for b in ids}
    assert len(named) > 100 and named <= set(REGISTRY["blocks"]), sorted(named - set(REGISTRY["blocks"]))


# --------------------------------------------------------------------------- references resolve
def _walk(o):
    if isinstance(o, dict):
        for k, v in o.items():
            yield k, v
            yield from _walk(v)
    elif isinstance(o, list):
        for v in o:
            yield from _walk(v)


def test_every_reference_resolves():
    items, blocks = set(REGISTRY["items"]), set(REGISTRY["blocks"])
    entities = set(REGISTRY["entities"])
    for tags, universe in ((ITEM_TAGS, items), (BLOCK_TAGS, blocks)):
        for tid, t in tags.items():
            for v in t["values"]:
                if v.startswith("#"):
                    expand(tags, v)
                else:
                    assert v in universe, f"tag {tid}: unknown id {v}"
    for rid, r in RECIPES.items():
        res = r.get("result")                     # crafting_special_* recipes have none
        assert res is None or (res if isinstance(res, str) else res["item"]) in items, rid
        for k, v in _walk(r):
            if k == "item":
                assert v in items, f"{rid}: unknown item {v}"
            if k == "tag":
                expand(ITEM_TAGS, "#" + v)
    for lid, t in LOOT.items():
        kind, _, name = lid[len(NS):].partition("/")
        if kind == "blocks":
            assert NS + name in blocks, f"loot table for unknown block {name}"
        elif kind == "entities":
            assert NS + name.split("/")[0] in entities, f"loot table for unknown entity {name}"
        else:
            assert kind in ("chests", "gameplay"), lid
        for k, v in _walk(t):
            if k == "entries":
                for e in v:
                    if e["type"] == "minecraft:item":
                        assert e["name"] in items, f"{lid}: unknown item {e['name']}"
                    if e["type"] == "minecraft:loot_table":
                        assert e["name"] in LOOT, f"{lid}: {e['name']}"
                    if e["type"] == "minecraft:tag":
                        expand(ITEM_TAGS, "#" + e["name"])
            if k == "items" and isinstance(v, list) and all(isinstance(x, str) for x in v):
                assert set(v) <= items, f"{lid}: {v}"
            if k == "block" and isinstance(v, str):            # else a location predicate's block
                assert v in blocks, f"{lid}: unknown block {v}"
            if k == "blocks" and isinstance(v, list):
                assert set(v) <= blocks, f"{lid}: {v}"
    for aid, a in ADVANCEMENTS.items():
        if "parent" in a:
            assert a["parent"] in ADVANCEMENTS, f"{aid}: parent {a['parent']}"
        assert "display" not in a or a["display"]["icon"]["item"] in items, aid     # recipe unlocks have none
        for c in a["criteria"].values():
            if c["trigger"] != "minecraft:inventory_changed":
                continue
            for p in c["conditions"].get("items", []):
                for i in p.get("items", []):
                    assert i in items, f"{aid}: {i}"
                if "tag" in p:
                    expand(ITEM_TAGS, "#" + p["tag"])
        flat = [n for group in a["requirements"] for n in group]
        assert sorted(flat) == sorted(a["criteria"]), aid


def test_crafting_grid_sizes_match_minecraft_data(mc):
    """The table grid is the largest recipe shape of minecraft-data; the inventory grid is smaller,
    and the catalog has recipes on both sides of it."""
    grid = FACTS["crafting_grid"]
    shapes = [v["inShape"] for variants in mc["recipes"].values() for v in variants if "inShape" in v]
    shapeless = [len(v["ingredients"]) for variants in mc["recipes"].values() for v in variants if "ingredients" in v]
    assert max(max(len(shape), *map(len, shape)) for shape in shapes) == grid["crafting_table"]
    assert max(shapeless) <= grid["crafting_table"] ** 2
    sides = [max(len(r["pattern"]), *map(len, r["pattern"])) for r in RECIPES.values()
             if r["type"] == "minecraft:crafting_shaped"]
    assert grid["inventory"] < grid["crafting_table"]
    assert min(sides) <= grid["inventory"] < max(sides)


def test_game_facts_ids_resolve(mc):
    items, blocks = set(REGISTRY["items"]), set(REGISTRY["blocks"])
    stack = {NS + i["name"]: i["stackSize"] for i in mc["items"]}
    assert set(FACTS["requires_correct_tool"]) <= blocks
    for item, size in FACTS["stack_sizes"].items():
        assert item in items, item
        assert size != 64 and stack[item] == size, f"{item}: {size} vs minecraft-data {stack[item]}"
    for item in FACTS["survival_unobtainable_items"]:
        assert item in items and stack[item] == 64, item
    fuel = FACTS["fuel_ticks"]
    assert fuel["never"][1:] in ITEM_TAGS
    for entry in fuel["entries"]:
        assert entry["item"] in items if "item" in entry else entry["tag"][1:] in ITEM_TAGS, entry
        assert isinstance(entry["ticks"], int) and entry["ticks"] > 0, entry
    assert set(fuel["burn_divisor"]) == set(FACTS["cooking_ticks"])
    for item, uses in FACTS["max_durability"].items():
        assert item in items and stack[item] == 1 and isinstance(uses, int) and uses > 0, item
    ench = FACTS["enchanting"]
    assert [(o["option"], o["lapis_cost"], o["levels_consumed"]) for o in ench["options"]] == [
        (1, 1, 1), (2, 2, 2), (3, 3, 3)]
    assert ench["lapis_item"] in items


def test_durability_matches_minecraft_data(mc):
    """Every item that wears out, with minecraft-data's maxDurability, and no other."""
    assert FACTS["max_durability"] == {NS + i["name"]: i["maxDurability"] for i in mc["items"] if "maxDurability" in i}


def test_wear_and_melee_facts_cover_every_tool_and_creature(mc):
    """Every tool and sword has a wear for both uses and an attack damage; every creature a world
    may hold has a max health; the instant blocks are minecraft-data's hardness-0 blocks."""
    tools = {item: kind for tier in FACTS["tool_tiers"].values() for kind, item in tier["tools"].items()}
    assert all(kind in FACTS["wear"][use] for kind in tools.values() for use in ("mine", "hit"))
    assert set(FACTS["melee"]["attack_damage"]) == set(tools) and set(tools) <= set(FACTS["max_durability"])
    creatures = yaml.safe_load((ROOT / "catalogs" / "worldgen.yaml").read_text())["creatures"]
    assert set(FACTS["melee"]["max_health"]) == set(creatures)
    physics = yaml.safe_load((ROOT / "catalogs" / "block_physics.yaml").read_text())
    assert sorted(physics["instant"]) == sorted(NS + b["name"] for b in mc["blocks"] if b["hardness"] == 0)


def test_enchanting_facts_match_minecraft_data(mc):
    """The enchantments field for field, in registry order; each enchantable item's categories; the
    table enchants only items that wear out, and the book."""
    ench = json.loads(_mcdata_path("enchantments").read_text())
    assert [(e["id"], e["max_level"], e["weight"], tuple(e["min_cost"]), tuple(e["max_cost"]), e["category"],
             e["treasure"], e["discoverable"], e["exclude"]) for e in FACTS["enchantments"]] == [
        (NS + e["name"], e["maxLevel"], e["weight"], (e["minCost"]["a"], e["minCost"]["b"]),
         (e["maxCost"]["a"], e["maxCost"]["b"]), e["category"], e["treasureOnly"], e["discoverable"],
         [NS + x for x in e["exclude"]]) for e in sorted(ench, key=lambda e: e["id"])]
    categories = {NS + i["name"]: i.get("enchantCategories", []) for i in mc["items"]}
    for item, entry in FACTS["enchantable"].items():
        assert entry["categories"] == categories[item], item
        assert entry["enchantability"] > 0 and (item in FACTS["max_durability"] or item == NS + "book"), item
    book = FACTS["enchanting"]["book"]
    assert book["item"] in FACTS["enchantable"] and book["becomes"] in REGISTRY["items"]


def test_every_item_the_data_names_has_its_stack_size(mc):
    items = set(REGISTRY["items"])
    stack = {NS + i["name"]: i["stackSize"] for i in mc["items"]}
    # The simulator takes 64 for an unlisted item: so every item a catalog recipe or loot table
    # names, or a tag they use holds, must be listed when minecraft-data says it stacks otherwise.
    named: set[str] = set()

    def walk(node) -> None:
        if isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
        elif isinstance(node, str) and node.lstrip("#").startswith(NS):
            named.update(expand(ITEM_TAGS, node) if node.startswith("#") and node[1:] in ITEM_TAGS
                         else {node} if node in items else set())

    walk([RECIPES, LOOT, ITEM_TAGS])
    unlisted = sorted(i for i in named if stack[i] != 64 and i not in FACTS["stack_sizes"])
    assert len(named) > 1000 and not unlisted, unlisted
