"""The report's Changed-transitions tables tell the truth about both worlds of a pair.

Every changed transition of the six suites is checked against the game's own data, read here
independently of the toolkit's rule engine: the recipe file's result, the cooking recipes that
take the input, the loot table's pools evaluated for a body without enchantments. The suite's
column must be that plus what the change adds (``*_add`` operators) or what it declares.
"""
from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from mcbuild.compiler.build import write
from mcbuild.compiler.core.paths import VANILLA_DATA
from mcbuild.runtime.study.report.extras import _ROWS_PER_CHANGE, outputs_text, table_changes
from conftest import SUITES

DATA = VANILLA_DATA / "data" / "minecraft"
STATION_TYPES = {"furnace": "minecraft:smelting", "blast_furnace": "minecraft:blasting", "smoker": "minecraft:smoking"}
ADDING = {"block_drops_add", "entity_loot_add"}


def read(kind: str, name: str) -> dict | None:
    path = DATA / kind / f"{name.removeprefix('minecraft:')}.json"
    return json.loads(path.read_text()) if path.is_file() else None


@cache
def item_tag(tag: str) -> frozenset[str]:
    doc = read("tags/items", tag)
    out: set[str] = set()
    for v in doc["values"]:
        out |= item_tag(v[1:]) if v.startswith("#") else {v}
    return frozenset(out)


def accepts(ingredient, item: str) -> bool:
    options = ingredient if isinstance(ingredient, list) else [ingredient]
    return any(o.get("item") == item or ("tag" in o and item in item_tag(o["tag"])) for o in options)


def passes(conditions: list[dict], killed: bool) -> bool:
    """Conditions as a body without enchantments meets them (a mob killed by the player)."""
    for c in conditions:
        kind = c["condition"]
        if kind == "minecraft:match_tool":
            return False            # every match_tool of these tables asks for an enchantment
        if kind == "minecraft:killed_by_player":
            if not killed:
                return False
        elif kind != "minecraft:survives_explosion":
            raise AssertionError(f"condition {kind} not covered by this test")
    return True


def mean(number) -> float:
    if isinstance(number, (int, float)):
        return float(number)
    assert number["type"] == "minecraft:uniform", number
    return (float(number["min"]) + float(number["max"])) / 2       # integer counts, both ends included


def entry_drops(entry: dict, killed: bool) -> Counter | None:
    if not passes(entry.get("conditions", []), killed):
        return None
    if entry["type"] == "minecraft:alternatives":
        return next((d for child in entry["children"] if (d := entry_drops(child, killed)) is not None), None)
    assert entry["type"] == "minecraft:item", entry
    count = 1.0
    for f in entry.get("functions", []):
        kind = f["function"]
        if kind == "minecraft:set_count":
            assert not f.get("add"), f
            count = mean(f["count"])
        elif kind == "minecraft:furnace_smelt":
            assert f.get("conditions"), f        # only when the mob burns, which a body never makes it do
        elif kind not in ("minecraft:apply_bonus", "minecraft:explosion_decay", "minecraft:looting_enchant"):
            raise AssertionError(f"function {kind} not covered by this test")
    return Counter({entry["name"]: count})


def loot(table: dict, killed: bool) -> dict[str, float]:
    total: Counter = Counter()
    for pool in table.get("pools", []):
        if not passes(pool.get("conditions", []), killed):
            continue
        for entry in pool["entries"]:
            total.update(entry_drops(entry, killed) or {})
    return {i: n for i, n in total.items() if n > 0}


def vanilla_gives(skill: str, target: str, station: str | None) -> dict[str, float]:
    """What the game's 1.19.0 data says the transition yields, read straight from its files."""
    if skill == "craft_grid":
        recipe = read("recipes", target)
        if recipe is None or recipe["type"] not in ("minecraft:crafting_shaped", "minecraft:crafting_shapeless"):
            return {}
        return {recipe["result"]["item"]: float(recipe["result"].get("count", 1))}
    if skill == "smelt":
        for path in sorted((DATA / "recipes").glob("*.json")):
            recipe = json.loads(path.read_text())
            if recipe.get("type") == STATION_TYPES[station] and accepts(recipe["ingredient"], target):
                return {recipe["result"]: 1.0}
        return {}
    table = read("loot_tables/blocks" if skill == "mine" else "loot_tables/entities", target)
    return loot(table, killed=skill == "attack") if table else {}


@pytest.fixture(scope="module")
def build(suites, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("changes")
    for sid in SUITES:
        write(suites[sid], root)
    return root


def expected_rows(report: dict) -> list[tuple[str, str, str, str]]:
    """(change, input, Vanilla output, suite output) of every row the table should show."""
    rows = []
    for ch in report["changes"]:
        for t in ch["transitions"][:_ROWS_PER_CHANGE]:
            van = vanilla_gives(t["skill"], t["target"], t.get("station"))
            declared = Counter({i: float(n) for i, n in t["outputs"]})
            mirror = Counter(van) + declared if ch["operator"] in ADDING else declared
            rows.append((ch["id"], t["target"].removeprefix("minecraft:"), outputs_text(van), outputs_text(dict(mirror))))
    return rows


@pytest.mark.parametrize("suite", SUITES)
def test_every_changed_transition_shows_the_games_own_vanilla_output(suite, suites, build):
    table = table_changes(suite, build)
    shown = [(r[0], r[1].removeprefix("recipe "), r[3], r[4]) for r in table.rows if not r[1].startswith("…")]
    assert shown == expected_rows(suites[suite].report)


def test_every_transition_of_every_suite_agrees_with_the_data(suites):
    """Beyond the rows shown: each transition's Vanilla outputs, as the report computes them."""
    from mcbuild.compiler.planning.model import transition_outputs
    from mcbuild.compiler.rules.rulebook import vanilla

    checked = 0
    for sid in SUITES:
        for ch in suites[sid].report["changes"]:
            for t in ch["transitions"]:
                key = (t["skill"], t["target"], t.get("station"))
                assert transition_outputs(vanilla(), *key) == pytest.approx(vanilla_gives(*key)), (sid, key)
                checked += 1
    assert checked > 100


def test_known_values(build):
    """The values a reader of the paper knows, spelled out."""
    rows = {(r[0], r[1]): (r[3], r[4]) for r in table_changes("m01", build).rows}
    assert rows[("planks-two", "recipe acacia_planks")] == ("acacia_planks ×4", "acacia_planks ×2")
    assert rows[("planks-two", "recipe birch_planks")] == ("birch_planks ×4", "birch_planks ×2")
    assert rows[("raw-iron-nuggets", "raw_iron")] == ("iron_ingot", "iron_nugget ×3")
    m02 = {(r[0], r[1]): (r[3], r[4]) for r in table_changes("m02", build).rows}
    assert m02[("iron-ore-ingot", "deepslate_iron_ore")] == ("raw_iron", "iron_ingot, raw_iron")
    m05 = {(r[0], r[1]): (r[3], r[4]) for r in table_changes("m05", build).rows}
    assert m05[("diamond-hoe-pickaxe", "diamond_hoe")] == ("(none)", "diamond_pickaxe")
