"""``mcbuild server check``: the integrity of built saves on a real server (paper §3.7).

For one save (a world under one condition) on a fresh server, :func:`check_save` verifies the game
version, the datapacks the server has enabled against the save's ``level.dat``, that every task
advancement exists, the bot's spawn against ``level.dat``, a sample of the placed blocks (two
positions of every non-bulk block of the save, with ``execute if block``), and that each changed
crafting and cooking rule of the suite gives on the server the outcome the simulator gives for the
same action (``ok``, reason, what was gained and lost); each changed block loot table is probed by
mining that block (the drops must be ones the table can give). Other changed loot tables, tags
and functions are listed as not probed.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.rules.crafting import craft_station, example_grid
from mcbuild.compiler.rules.loot import LootContext, expected
from mcbuild.compiler.rules.rulebook import STATION_RECIPE_TYPES
from mcbuild.compiler.spec.task import tasks
from mcbuild.compiler.worlds.layout import VANILLA, world_dir
from mcbuild.compiler.worlds.save.level_dat import read_data
from mcbuild.runtime.backends.registry import factory
from mcbuild.runtime.backends.server.backend import ServerBackend
from mcbuild.runtime.backends.server.console import passed
from mcbuild.runtime.backends.sim.factory import SimFactory
from mcbuild.runtime.contract.skills import COOK_STATIONS, CRAFTING_TABLE, validate
from mcbuild.runtime.episode.integrity import verify_save
from mcbuild.runtime.episode.opening import save_rules

SAMPLED_PER_BLOCK = 2
BULK = {"minecraft:air", "minecraft:stone", "minecraft:dirt", "minecraft:deepslate", "minecraft:bedrock",
        "minecraft:water", "minecraft:grass_block"}
PICKAXE = "minecraft:diamond_pickaxe"
COOKING_STATION = {ns(t): s for s, t in STATION_RECIPE_TYPES.items()}     # recipe type -> smelt station
STATIONS = (CRAFTING_TABLE, *(ns(s) for s in COOK_STATIONS))     # placed before the recipe probes


@dataclass(frozen=True)
class Finding:
    save: str
    check: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'} {self.save} {self.check}: {self.detail}"


def saves(build: Path, world: str | None = None, condition: str | None = None) -> list[tuple[str, str]]:
    """(world, condition) of every built save, optionally only one world and/or condition."""
    found = []
    for level in sorted((build / "worlds").glob("*/*/level.dat")):
        w, c = level.parent.parent.name, level.parent.name
        if (world is None or w == world) and (condition is None or c == condition):
            found.append((w, c))
    return found


def check_save(world: str, condition: str, build: Path) -> Iterator[Finding]:
    save = world_dir(world, condition, build)
    name = f"{world}/{condition}"
    verify_save(save, build)            # the copy the server gets is the frozen save, byte for byte
    rules = save_rules(save)
    backend = factory("server").open(save, rules, 0)
    if not isinstance(backend, ServerBackend):
        raise TypeError(f"the server backend's factory opened a {type(backend).__name__}")
    try:
        console = backend.console
        version = getattr(backend.session, "version", None)
        wanted_version = str(rules.facts["version"])            # catalogs/game_facts.yaml, as the bot speaks it
        yield Finding(name, "version", version == wanted_version, f"server {version}, expected {wanted_version}")
        level = read_data(save / "level.dat")
        enabled = [str(p) for p in level["DataPacks"]["Enabled"]]
        listed = console.run("datapack list enabled")
        absent = [p for p in enabled if f"[{p} (" not in listed]
        yield Finding(name, "datapacks", not absent, f"missing {absent}: {listed}" if absent else ", ".join(enabled))
        wanted = sorted({m.advancement for t in tasks().values() for m in t.milestones if m.advancement})
        user = backend.username
        lacking = [a for a in wanted if not passed(console.run(f"execute if entity {user}[advancements={{{a}=false}}]"))]
        yield Finding(name, "task advancements", not lacking, f"absent or already done: {lacking}" if lacking
                      else f"{len(wanted)} present, none done")
        spawn = (int(level["SpawnX"]), int(level["SpawnY"]), int(level["SpawnZ"]))
        here = backend.position()
        near = here[0] == spawn[0] and here[2] == spawn[2] and abs(here[1] - spawn[1]) <= 2
        yield Finding(name, "spawn", near, f"bot at {here}, level.dat spawn {spawn}")
        wrong = [f"{b}@{p}" for b, p in sampled_blocks(save) if not passed(console.run(f"execute if block {p[0]} {p[1]} {p[2]} {b}"))]
        yield Finding(name, "placed blocks", not wrong, f"not on the server: {wrong[:8]}" if wrong else "sample matches")
        if condition != VANILLA:
            yield from rule_probes(name, rules, save_rules(world_dir(world, VANILLA, build)), backend, save)
    finally:
        backend.close()


def sampled_blocks(save: Path) -> list[tuple[str, tuple[int, int, int]]]:
    """Two positions (first and last in x, y, z order) of every non-bulk block of the save."""
    sim = factory("sim")
    if not isinstance(sim, SimFactory):
        raise TypeError(f"the simulator's factory is a {type(sim).__name__}")
    data = sim.world(save).data
    origin = np.array(data.origin)
    out = []
    for index, block in enumerate(data.palette):
        if block in BULK:
            continue
        cells = np.flatnonzero(data.blocks == index)
        if not len(cells):
            continue
        for flat in sorted({int(cells[0]), int(cells[-1])})[:SAMPLED_PER_BLOCK]:
            pos = np.array(np.unravel_index(flat, data.blocks.shape)) + origin
            out.append((block, (int(pos[0]), int(pos[1]), int(pos[2]))))
    return out


def probes(rules, vanilla_rules) -> tuple[list[tuple[str, dict, dict[str, int]]], list[str]]:
    """(rule, action, items to give) for each changed crafting and cooking recipe and block loot
    table (``mine`` of that block, with a diamond pickaxe); the other changed resources (not probed)."""
    found, skipped = [], []
    for kind, rid in rules.changed_keys(vanilla_rules):
        if kind == "loot_table" and rid.startswith("minecraft:blocks/"):
            block = "minecraft:" + rid.split("/", 1)[1]
            if block in rules.catalog.blocks:
                found.append((f"loot_table {rid}", {"skill": "mine", "args": {"block": block}}, {PICKAXE: 1}))
                continue
        recipe = rules.get(kind, rid) if kind == "recipe" else None
        rtype = ns(recipe["type"]) if recipe else None
        if recipe is not None and rtype in ("minecraft:crafting_shaped", "minecraft:crafting_shapeless"):
            station = craft_station(rules, recipe)
            grid = example_grid(rules, recipe, min, 3 if station == "crafting_table" else 2)
            if grid is not None:
                need = dict(Counter(c for row in grid for c in row if c))
                found.append((f"recipe {rid}", {"skill": "craft_grid", "args": {"station": station, "grid": grid}}, need))
                continue
        if recipe is not None and rtype in COOKING_STATION:
            item = min(rules.ingredient(recipe["ingredient"]))
            found.append((f"recipe {rid}", {"skill": "smelt", "args": {"input": item, "station": COOKING_STATION[rtype]}},
                          {item: 1, "minecraft:coal": 1}))
            continue
        skipped.append(f"{kind} {rid}")
    return found, skipped


def rule_probes(name: str, rules, vanilla_rules, backend, save: Path) -> Iterator[Finding]:
    """Each probe on the server and on the simulator, from the same inventory: same outcome."""
    found, skipped = probes(rules, vanilla_rules)
    sim = factory("sim").open(save, rules, 0)
    try:
        both = [backend, sim]
        for b in both:
            b.provisioning.give({s: 1 for s in STATIONS})
            for station in STATIONS:
                b.execute(validate({"skill": "place", "args": {"block": station}}, rules.catalog))
        for rule, action, items in found:
            if action["skill"] == "mine":
                yield _loot_probe(name, rule, action, items, rules, backend)
                continue
            seen = []
            for b in both:
                b.provisioning.give(items)
                out = b.execute(validate(action, rules.catalog))
                seen.append((out.ok, out.reason, out.details.get("gained"), out.details.get("lost")))
            same = seen[0] == seen[1]
            yield Finding(name, rule, same, f"server {seen[0]}" + ("" if same else f" vs simulator {seen[1]}"))
    finally:
        sim.close()
    if skipped:
        yield Finding(name, "not probed", True, ", ".join(skipped))


def _loot_probe(name: str, rule: str, action: dict, items: dict[str, int], rules, backend) -> Finding:
    """Mine a block set next to the bot: every drop must be one the rules' loot table can give,
    in a count it can give (the simulator rolls the same table)."""
    block = action["args"]["block"]
    if backend.link.inventory().get(PICKAXE, 0) < 1:
        backend.provisioning.give(items)
    x, y, z = backend.position()
    backend.console.run(f"setblock {x + 2} {y} {z} {block}")
    out = backend.execute(validate(action, rules.catalog))
    table = rules.block_loot(block)
    can = expected(rules, table, LootContext(tool=PICKAXE)) if table else {}
    gained = {i: n for i, n in out.details.get("gained", {}).items() if i != block or i in can}
    bad = {i: n for i, n in gained.items() if i not in can or not can[i].min <= n <= can[i].max}
    ok = out.ok and not bad
    return Finding(name, rule, ok, f"gained {gained}" + (f"; outside the table: {bad}" if bad else "")
                   + ("" if out.ok else f"; {out.reason}: {out.message}"))
