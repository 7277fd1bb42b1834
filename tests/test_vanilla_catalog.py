"""Cross-check the vanilla 1.19 catalog (catalogs/) against minecraft-data 1.19.

minecraft-data is read straight from its JSON files under node_modules (installed by
`make test` / `npm install`); runtime code never needs node. Every disagreement is a failing
assertion. The only tolerated differences are the minecraft-data errata listed in
BLOCK_LOOT_ERRATA below: minecraft-data's blockLoot.json does not model `set_count` ranges and
`apply_bonus`, so its count ranges for a few blocks are not the game's. Each erratum pins BOTH
values (what minecraft-data says and what the game's own 1.19 loot table gives), so any change on
either side fails the test.
"""
from __future__ import annotations

import collections
import json
import pathlib

import pytest

from compiler.rules.catalog import load

ROOT = pathlib.Path(__file__).resolve().parents[1]
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


# --------------------------------------------------------------------------- basic shape
def test_catalog_has_the_expected_files():
    need_recipes = [
        *(f"{w}_planks" for w in ("oak", "spruce", "birch", "jungle", "acacia", "dark_oak",
                                  "mangrove", "crimson", "warped")),
        "stick", "crafting_table", "furnace", "blast_furnace", "smoker", "torch", "charcoal",
        *(f"{m}_{t}" for m in ("wooden", "stone", "iron", "diamond")
          for t in ("pickaxe", "axe", "shovel", "sword", "hoe")),
        "iron_ingot_from_smelting_raw_iron", "iron_ingot_from_blasting_raw_iron",
        "iron_ingot_from_smelting_iron_ore", "iron_ingot_from_blasting_iron_ore",
        "iron_ingot_from_smelting_deepslate_iron_ore", "iron_ingot_from_blasting_deepslate_iron_ore",
        "iron_ingot_from_iron_block", "iron_ingot_from_nuggets", "iron_nugget",
        "iron_nugget_from_smelting", "iron_nugget_from_blasting", "iron_block", "raw_iron",
        "raw_iron_block", "coal_block", "coal", "diamond_block", "diamond", "lapis_block",
        "lapis_lazuli", "iron_helmet", "iron_chestplate", "iron_leggings", "iron_boots", "paper",
        "book", "bookshelf", "enchanting_table", "leather", "item_frame",
        *(f"{x}_from_{how}_{pre}{x if x != 'lapis_lazuli' else 'lapis'}_ore"
          for x in ("coal", "diamond", "lapis_lazuli") for how in ("smelting", "blasting")
          for pre in ("", "deepslate_")),
    ]
    missing = [r for r in need_recipes if NS + r not in RECIPES]
    assert not missing, missing
    need_adv = ["root", "mine_stone", "upgrade_tools", "smelt_iron", "obtain_armor", "lava_bucket",
                "iron_tools", "deflect_arrow", "form_obsidian", "mine_diamond", "enter_the_nether",
                "shiny_gear", "enchant_item", "cure_zombie_villager", "follow_ender_eye",
                "enter_the_end"]
    assert sorted(k for k in ADVANCEMENTS) == sorted(NS + "story/" + a for a in need_adv)
    for e in ("cow", "pig", "sheep", "chicken", "sheep/white"):
        assert NS + "entities/" + e in LOOT


def test_json_is_two_space_indented_and_1_19_shaped():
    for p in DATA.rglob("*.json"):
        text = p.read_text()
        assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n", p
    for rid, r in RECIPES.items():
        assert "category" not in r, f"{rid}: 'category' is 1.19.3+, not 1.19.0"
        if r["type"] in ("minecraft:smelting", "minecraft:blasting", "minecraft:smoking",
                         "minecraft:campfire_cooking"):
            assert isinstance(r["result"], str), f"{rid}: 1.19 cooking result must be a string"
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
    for a in ADVANCEMENTS.values():
        for c in a["criteria"].values():
            if c["trigger"] == "minecraft:inventory_changed":
                assert all(set(p) <= {"items", "tag"} for p in c["conditions"]["items"])


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
def _cond(c, tool):
    """Three-valued condition result (True/False/None=maybe) for a non-silk-touch tool."""
    kind = c["condition"]
    if kind == "minecraft:match_tool":
        pred = c["predicate"]
        if "enchantments" in pred:
            return False  # no silk touch / enchantments on the tool
        if "items" in pred:
            return tool in pred["items"]
        raise AssertionError(f"unhandled match_tool predicate {pred}")
    if kind == "minecraft:inverted":
        v = _cond(c["term"], tool)
        return None if v is None else not v
    if kind == "minecraft:alternative":
        vals = [_cond(t, tool) for t in c["terms"]]
        return True if True in vals else (None if None in vals else False)
    if kind == "minecraft:survives_explosion":
        return True  # broken by a player, not an explosion
    if kind in ("minecraft:table_bonus", "minecraft:random_chance", "minecraft:block_state_property",
                "minecraft:entity_properties"):
        return None
    raise AssertionError(f"unhandled loot condition {kind}")


def _conds(cs, tool):
    vals = [_cond(c, tool) for c in cs or []]
    return False if False in vals else (None if None in vals else True)


def _count_range(functions):
    lo, hi = 1, 1
    for f in functions or []:
        fn = f["function"]
        if fn == "minecraft:set_count":
            assert not f.get("add"), f
            c = f["count"]
            if isinstance(c, (int, float)):
                lo = hi = int(c)
            else:
                assert c["type"] == "minecraft:uniform", c
                lo, hi = int(c["min"]), int(c["max"])
        elif fn in ("minecraft:apply_bonus", "minecraft:explosion_decay", "minecraft:copy_name",
                    "minecraft:looting_enchant", "minecraft:furnace_smelt"):
            pass  # fortune/looting level 0, no explosion, no fire: count unchanged
        else:
            raise AssertionError(f"unhandled loot function {fn}")
    return lo, hi


def _entry_drops(entry, tool, out):
    """Evaluate one entry; return its condition state and collect reachable item drops."""
    state = _conds(entry.get("conditions"), tool)
    if state is False:
        return False
    if entry["type"] == "minecraft:alternatives":
        for child in entry["children"]:
            if _entry_drops(child, tool, out) is True:
                break
        return state
    if entry["type"] == "minecraft:item":
        out[entry["name"]].append(_count_range(entry.get("functions")))
        return state
    raise AssertionError(f"unhandled entry type {entry['type']}")


def non_silk_drops(table) -> dict[str, tuple[int, int]]:
    """Items a block can drop when mined by a player without silk touch/fortune, with the count
    range per item (tools considered: bare hand/any normal tool, and shears)."""
    out: dict[str, list] = collections.defaultdict(list)
    for tool in ("minecraft:stone_pickaxe", "minecraft:shears"):
        for pool in table.get("pools", []):
            if _conds(pool.get("conditions"), tool) is False:
                continue
            for e in pool["entries"]:
                _entry_drops(e, tool, out)
    return {k: (min(a for a, _ in v), max(b for _, b in v)) for k, v in out.items()}


# minecraft-data 1.19 blockLoot.json errata: (block, item) -> (minecraft-data range, game range).
# The game's ranges come from the 1.19 loot tables in this catalog: ores without set_count drop 1
# (fortune is the only bonus), copper ore set_count uniform 2..5, lapis 4..9, redstone 4..5,
# leaves' sticks uniform 1..2. minecraft-data's generator ignores set_count ranges and models
# apply_bonus(ore_drops) as 1..2.
_ORE_ONE = {"coal_ore": "coal", "iron_ore": "raw_iron", "gold_ore": "raw_gold",
            "diamond_ore": "diamond", "emerald_ore": "emerald"}
BLOCK_LOOT_ERRATA: dict[tuple[str, str], tuple[tuple[int, int], tuple[int, int]]] = {}
for _b, _i in _ORE_ONE.items():
    for _pre in ("", "deepslate_"):
        BLOCK_LOOT_ERRATA[(_pre + _b, _i)] = ((1, 2), (1, 1))
for _pre in ("", "deepslate_"):
    BLOCK_LOOT_ERRATA[(_pre + "copper_ore", "raw_copper")] = ((1, 2), (2, 5))
    BLOCK_LOOT_ERRATA[(_pre + "lapis_ore", "lapis_lazuli")] = ((1, 2), (4, 9))
    BLOCK_LOOT_ERRATA[(_pre + "redstone_ore", "redstone")] = ((1, 1), (4, 5))
for _w in ("oak", "spruce", "birch", "jungle", "acacia", "dark_oak", "mangrove"):
    BLOCK_LOOT_ERRATA[(_w + "_leaves", "stick")] = ((1, 1), (1, 2))


def test_b_block_drops_match_minecraft_data(mc):
    used_errata = set()
    blocks = [k for k in LOOT if k.startswith(NS + "blocks/")]
    assert len(blocks) >= 70
    for lid in blocks:
        block = lid[len(NS + "blocks/"):]
        assert block in mc["block_loot"], f"minecraft-data has no loot for {block}"
        mine = non_silk_drops(LOOT[lid])
        theirs: dict[str, tuple[int, int]] = {}
        for d in mc["block_loot"][block]:
            if d.get("silkTouch"):
                continue
            lo, hi = d["stackSizeRange"]
            prev = theirs.get(d["item"])
            theirs[d["item"]] = (lo, hi) if prev is None else (min(prev[0], lo), max(prev[1], hi))
        mine_short = {k[len(NS):]: v for k, v in mine.items()}
        assert set(mine_short) == set(theirs), (
            f"{block}: non-silk drops {sorted(mine_short)} vs minecraft-data {sorted(theirs)}")
        for item, rng in mine_short.items():
            if rng == theirs[item]:
                continue
            key = (block, item)
            assert key in BLOCK_LOOT_ERRATA, (
                f"{block}: {item} count {rng} vs minecraft-data {theirs[item]}")
            assert BLOCK_LOOT_ERRATA[key] == (theirs[item], rng), (
                f"{block}: erratum for {item} is stale: minecraft-data {theirs[item]}, game {rng}")
            used_errata.add(key)
    assert used_errata == set(BLOCK_LOOT_ERRATA), sorted(set(BLOCK_LOOT_ERRATA) - used_errata)


def test_entity_drops_match_minecraft_data(mc):
    for lid, table in LOOT.items():
        if not lid.startswith(NS + "entities/") or "/" in lid[len(NS + "entities/"):]:
            continue
        entity = lid[len(NS + "entities/"):]
        items = {e["name"][len(NS):] for p in table["pools"] for e in p["entries"]
                 if e["type"] == "minecraft:item"}
        theirs = {d["item"] for d in mc["entity_loot"][entity]}
        assert items == theirs, f"{entity}: {sorted(items)} vs minecraft-data {sorted(theirs)}"


def test_some_exact_drop_facts():
    d = lambda b: non_silk_drops(LOOT[NS + "blocks/" + b])  # noqa: E731
    assert d("stone") == {NS + "cobblestone": (1, 1)}
    assert d("deepslate") == {NS + "cobbled_deepslate": (1, 1)}
    assert d("iron_ore") == {NS + "raw_iron": (1, 1)}
    assert d("lapis_ore") == {NS + "lapis_lazuli": (4, 9)}
    assert d("bookshelf") == {NS + "book": (3, 3)}
    assert d("grass_block") == {NS + "dirt": (1, 1)}
    assert d("gravel") == {NS + "flint": (1, 1), NS + "gravel": (1, 1)}
    assert d("oak_log") == {NS + "oak_log": (1, 1)}


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
    catalog_blocks = {k[len(NS + "blocks/"):] for k in LOOT if k.startswith(NS + "blocks/")}
    for block in sorted(catalog_blocks - set(required)):
        assert not mc["block_by_name"][block].get("harvestTools"), (
            f"{block} needs a correct tool in minecraft-data but is not in requires_correct_tool")
    assert set(required) <= catalog_blocks


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


def test_registry_is_sorted_and_unique():
    assert set(REGISTRY) == {"items", "blocks", "entities"}
    for key, ids in REGISTRY.items():
        assert ids == sorted(set(ids)), key
        assert all(i.startswith(NS) for i in ids)


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
        res = r["result"]
        assert (res if isinstance(res, str) else res["item"]) in items, rid
        for k, v in _walk(r):
            if k == "item":
                assert v in items, f"{rid}: unknown item {v}"
            if k == "tag":
                expand(ITEM_TAGS, "#" + v)
    for lid, t in LOOT.items():
        kind, _, name = lid[len(NS):].partition("/")
        if kind == "blocks":
            assert NS + name in blocks, f"loot table for unknown block {name}"
        else:
            assert NS + name.split("/")[0] in entities, f"loot table for unknown entity {name}"
        for k, v in _walk(t):
            if k == "entries":
                for e in v:
                    if e["type"] == "minecraft:item":
                        assert e["name"] in items, f"{lid}: unknown item {e['name']}"
                    if e["type"] == "minecraft:loot_table":
                        assert e["name"].replace(NS, NS + "", 1) in LOOT, f"{lid}: {e['name']}"
            if k == "items" and isinstance(v, list) and all(isinstance(x, str) for x in v):
                assert set(v) <= items, f"{lid}: {v}"
            if k == "block":
                assert v in blocks, f"{lid}: unknown block {v}"
    for aid, a in ADVANCEMENTS.items():
        if "parent" in a:
            assert a["parent"] in ADVANCEMENTS, f"{aid}: parent {a['parent']}"
        assert a["display"]["icon"]["item"] in items
        for c in a["criteria"].values():
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
    assert len(named) > 100 and not unlisted, unlisted
    for item in FACTS["survival_unobtainable_items"]:
        assert item in items and stack[item] == 64, item
    fuel = FACTS["fuel_ticks"]
    for item in list(fuel["items"]) + fuel["not_fuel"]:
        assert item in items, item
    for tag, ticks in fuel["tags"].items():
        for item in expand(ITEM_TAGS, tag) - set(fuel["not_fuel"]):
            assert fuel["items"].get(item) == ticks, f"{item} should burn {ticks} ticks ({tag})"
    assert not set(fuel["items"]) & set(fuel["not_fuel"])
    assert fuel["items"]["minecraft:coal"] == 1600
    assert fuel["items"]["minecraft:coal_block"] == 16000
    assert fuel["items"]["minecraft:stick"] == 100
    ench = FACTS["enchanting"]
    assert [(o["option"], o["lapis_cost"], o["levels_consumed"]) for o in ench["options"]] == [
        (1, 1, 1), (2, 2, 2), (3, 3, 3)]
    assert ench["lapis_item"] in items
