"""Layer 3: ServerBackend's skills through the real bridge against flying-squid 1.12.0 serving a
copy of a built save (tests/servers/squid.js). flying-squid has no crafting, furnaces,
advancements, datapacks or RCON: provisioning goes through the bridge's harness command op
(``/give``), and what is covered is joining at the save's spawn, the snapshot, explore, mine with
pickup, place, equip, collect, ascend and the failure reason codes the body decides before any
window opens."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from mcbuild.compiler.worlds.layout import world_dir
from mcbuild.compiler.worlds.save.level_dat import read_data
from mcbuild.compiler.rules.tasks import Box, Checker
from mcbuild.runtime.backends.server.backend import ServerBackend
from mcbuild.runtime.backends.server.link import bridge_dir
from mcbuild.runtime.contract import skills
from mcbuild.runtime.contract.checkers import MilestoneChecks
from mcbuild.runtime.contract.skills import validate
from mcbuild.runtime.episode.opening import save_rules
from waiting import until

SQUID = Path(__file__).parent / "servers" / "squid.js"
BRIDGE = bridge_dir()

pytestmark = [
    pytest.mark.skipif(
        not shutil.which("node") or not (BRIDGE / "node_modules" / "flying-squid").is_dir()
        or not (BRIDGE / "lib" / "ops" / "digging.js").is_file(),
        reason=f"needs node and the bridge with flying-squid installed in {BRIDGE} (npm ci there; MCBUILD_BRIDGE_DIR)"),
    pytest.mark.xdist_group("squid"),   # one server for the module, its tests in file order on one worker
]


class Squid:
    """A flying-squid process serving a copy of ``save`` (a :class:`Session` without RCON)."""

    console = None

    def __init__(self, save: Path):
        self.proc = subprocess.Popen(["node", str(SQUID), str(BRIDGE), str(save)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        while line and not line.startswith("{"):
            line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("flying-squid did not start")
        info = json.loads(line)
        self.port, self.spawn = int(info["port"]), tuple(info["spawn"])
        self.timings: dict[str, float] = {}
        # flying-squid accepts a login some seconds after "listening" (50 s on 2 cores under a load of
        # 45): the backend's join waits for the spawn against its own deadline and retries (join_attempts)

    def check_alive(self) -> None:
        assert self.proc.poll() is None, "flying-squid died"

    def stop(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def squid(world_build, built_world_ids):
    save = world_dir(built_world_ids[0], "vanilla", world_build)
    rules = save_rules(save)
    servers: list[Squid] = []

    def start() -> Squid:
        servers.append(Squid(save))
        return servers[-1]

    backend = ServerBackend(rules, 0, start, join_attempts=5)
    backend.servers = servers
    yield backend, rules, read_data(save / "level.dat")
    backend.close()
    assert all(s.proc.poll() is not None for s in servers)


def act(backend: ServerBackend, rules, skill: str, **args) -> dict:
    out = backend.execute(validate({"skill": skill, "args": args}, rules.catalog))
    assert out.ok or out.reason in skills.REASONS, out
    return {"ok": out.ok, "reason": out.reason, "message": out.message, **out.details, "transitions": out.transitions}


def test_joins_at_the_save_spawn_with_an_agent_visible_snapshot(squid):
    backend, rules, level = squid
    snap = backend.snapshot()
    x, y, z = snap.position
    assert (x, z) == (int(level["SpawnX"]), int(level["SpawnZ"])) and abs(y - int(level["SpawnY"])) <= 2
    assert snap.inventory == {} and snap.mainhand is None and snap.alive and snap.advancements == ()
    assert snap.nearby_blocks and all(0 <= d <= 32 for d in snap.nearby_blocks.values())
    assert any(b in rules.tag("block", skills.LOG_TAG) for b in snap.nearby_blocks)
    assert list(snap.nearby_blocks) == sorted(snap.nearby_blocks)
    assert backend.timings["reset_s"] > 0


def test_ascend_pillars_with_owned_blocks(squid):
    backend, rules, _ = squid
    assert act(backend, rules, "ascend", height=6)["reason"] == skills.MISSING_ITEM
    backend.provisioning.give({"minecraft:dirt": 2})
    before = backend.snapshot(False).position
    up = act(backend, rules, "ascend", height=1)
    assert up["ok"] and up["height"] == 1 and up["lost"] == {"minecraft:dirt": 1}, up
    assert backend.snapshot(False).position[1] == before[1] + 1
    _back_to(backend, before, top=before[1] + 1)


def _back_to(backend: ServerBackend, feet: tuple[int, int, int], top: int) -> None:
    """Harness: take down a pillar under the body (from ``feet`` up to below ``top``) and put the
    bot back at ``feet``."""
    x, y, z = feet
    for cy in range(y, top):
        backend.console.run(f"setblock {x} {cy} {z} minecraft:air")
    backend.console.run(f"tp {backend.username} {x + 0.5} {y} {z + 0.5}")
    until(lambda: backend.snapshot(False).position == feet, f"the bot back at {feet}")


def _set_above(backend: ServerBackend, cells: dict[int, str]) -> tuple[int, int, int]:
    """Set blocks at these heights above the body's feet (harness command); returns the feet."""
    x, y, z = backend.snapshot(False).position
    for dy, block in cells.items():
        backend.console.run(f"setblock {x} {y + dy} {z} {block}")
    until(lambda: all(backend.link.block_at((x, y + dy, z)) == b for dy, b in cells.items()), f"blocks set {cells}")
    return x, y, z





def test_ascend_zero_climbs_digging_above_and_pillaring(squid):
    backend, rules, _ = squid
    backend.provisioning.give({"minecraft:iron_pickaxe": 1, "minecraft:dirt": 4})
    x, y, z = _set_above(backend, {2: "minecraft:dirt", 3: "minecraft:stone"})
    cells, bottom = backend.link.column(x, z, y)
    top = max(bottom + k for k, b in enumerate(cells) if b not in (None, "minecraft:air")) + 1
    climbed = act(backend, rules, "ascend", height=0)
    assert climbed["ok"] and climbed["height"] == top - y, repr(climbed)
    assert {"minecraft:dirt", "minecraft:stone"} <= set(climbed["dug"])
    assert sum(climbed["used"].values()) == top - y
    assert backend.snapshot(False).position == (x, top, z)       # standing on its own pillar
    assert act(backend, rules, "ascend", height=0)["height"] == 0
    _back_to(backend, (x, y, z), top)
    x, y, z = _set_above(backend, {2: "minecraft:bedrock"})
    blocked = act(backend, rules, "ascend", height=0)
    assert blocked["reason"] == skills.UNREACHABLE and "bedrock" in blocked["message"] and blocked["height"] == 0
    assert act(backend, rules, "ascend", height=1)["reason"] == skills.NO_SPOT     # checked before placing
    backend.console.run(f"setblock {x} {y + 2} {z} minecraft:air")


def test_box_checkers_and_facing_run_on_the_shared_checker_code(squid):
    backend, rules, _ = squid
    checks = MilestoneChecks(SimpleNamespace(checked=()))
    checks.start(backend, backend.snapshot(False))
    origin = checks.origin
    backend.provisioning.give({"minecraft:crafting_table": 1})
    assert act(backend, rules, "place", block="crafting_table")["ok"]
    _, table, _, _ = backend.link.find({"minecraft:crafting_table"}, 8.0, 1)[0]
    rel = tuple(t - o for t, o in zip(table, origin))

    def box(kind: str, target: str, kind_of: str, count: int, low: tuple, high: tuple) -> bool:
        return checks.holds(Checker(kind, target=target, count=count, box=Box(low, high), kind=kind_of),
                            backend, backend.snapshot(False))

    around = (tuple(v - 1 for v in rel), tuple(v + 1 for v in rel))
    assert box("count_in_box_at_least", "minecraft:crafting_table", "block", 1, *around)
    assert not box("count_in_box_at_least", "minecraft:crafting_table", "block", 2, *around)
    assert not box("count_in_box_at_most", "minecraft:crafting_table", "block", 0, *around)
    assert box("count_in_box_at_most", "minecraft:crafting_table", "block", 0, (rel[0] + 2, rel[1], rel[2]),
               (rel[0] + 4, rel[1], rel[2]))
    assert act(backend, rules, "mine", block="crafting_table")["ok"]
    assert box("count_in_box_at_most", "minecraft:crafting_table", "block", 0, *around)
    x, y, z = backend.snapshot(False).position
    if backend.link.goto((x + 6, y, z), 1.0):        # a walk east ends looking east (the bot's yaw)
        assert backend.snapshot(False).facing == "east"


def test_failures_the_body_decides_carry_the_simulators_reason_codes(squid):
    backend, rules, _ = squid
    assert act(backend, rules, "craft_grid", station="inventory", grid=[["oak_log"]])["reason"] == skills.MISSING_ITEM
    assert act(backend, rules, "place", block="furnace")["reason"] == skills.MISSING_ITEM
    assert act(backend, rules, "equip", item="diamond_sword")["reason"] == skills.MISSING_ITEM
    assert act(backend, rules, "collect", item="diamond")["reason"] == skills.NO_TARGET
    assert act(backend, rules, "trade", give="emerald", get="bread")["reason"] == skills.NO_TARGET
    backend.provisioning.give({"minecraft:crafting_table": 1, "minecraft:oak_planks": 9, "minecraft:raw_iron": 1,
                               "minecraft:coal": 1, "minecraft:iron_pickaxe": 1, "minecraft:lapis_lazuli": 3})
    assert backend.snapshot(False).inventory["minecraft:oak_planks"] == 9
    assert act(backend, rules, "equip", item="crafting_table")["reason"] == skills.NOT_EQUIPPABLE
    grid = [["oak_planks"] * 3] * 3
    assert act(backend, rules, "craft_grid", station="crafting_table", grid=grid)["reason"] == skills.NEEDS_TABLE
    assert act(backend, rules, "smelt", input="raw_iron")["reason"] == skills.NEEDS_STATION
    assert act(backend, rules, "enchant", item="iron_pickaxe")["reason"] == skills.NEEDS_TABLE
    assert act(backend, rules, "enchant", item="oak_planks")["reason"] == skills.NOT_ENCHANTABLE


def test_equip_sets_the_main_hand(squid):
    backend, rules, _ = squid
    backend.provisioning.give({"minecraft:iron_pickaxe": 1})
    done = act(backend, rules, "equip", item="iron_pickaxe")
    assert done["ok"] and done["equipped"] == "minecraft:iron_pickaxe" and done["gained"] == done["lost"] == {}
    assert backend.snapshot(False).mainhand == "minecraft:iron_pickaxe"


def test_place_then_mine_it_back(squid):
    backend, rules, _ = squid
    backend.provisioning.give({"minecraft:crafting_table": 1})
    placed = act(backend, rules, "place", block="crafting_table")
    assert placed["ok"] and placed["lost"] == {"minecraft:crafting_table": 1}
    assert "minecraft:crafting_table" in backend.snapshot().nearby_blocks
    mined = act(backend, rules, "mine", block="crafting_table")
    assert mined["ok"] and mined["mined"] == {"minecraft:crafting_table": 1}
    assert mined["gained"] == {"minecraft:crafting_table": 1}
    assert [t.kind for t in mined["transitions"]] == ["mine"]


def test_explore_and_mine_logs_report_what_entered_the_inventory(squid):
    backend, rules, _ = squid
    found = act(backend, rules, "explore", target="log")
    assert found["ok"] and found["found"] in rules.tag("block", skills.LOG_TAG)
    mined = act(backend, rules, "mine", block="log", count=1)
    assert mined["ok"] and sum(mined["mined"].values()) == 1
    log = next(iter(mined["mined"]))
    assert mined["gained"].get(log, 0) >= 1 and mined["collected"].get(log) == 1
    assert all(t.kind == "mine" for t in mined["transitions"])
    assert act(backend, rules, "mine", block="diamond_block")["reason"] == skills.NO_TARGET


def test_reset_starts_over_on_a_fresh_server(squid):
    backend, rules, level = squid
    backend.provisioning.give({"minecraft:dirt": 1})        # whatever ran before on this worker's server
    assert backend.snapshot(False).inventory
    first = backend.servers[-1]
    backend.reset(1)
    assert first.proc.poll() is not None and backend.servers[-1] is not first
    snap = backend.snapshot(False)
    assert snap.inventory == {} and snap.mainhand is None and backend.actions == 0
    assert (snap.position[0], snap.position[2]) == (int(level["SpawnX"]), int(level["SpawnZ"]))
