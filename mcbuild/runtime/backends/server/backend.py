"""The server backend: the 13 shared skills (``mcbuild.runtime.skills``) on a real Minecraft server, over
the primitives of one bot of the bridge (``primitives.ServerPrimitives``).

Each :meth:`ServerBackend.reset` ends the current server and takes a fresh one (a new copy of the
frozen save: ``#minecraft:load`` runs at start-up, so fixed daytime, weather and game rules are the
pack's), lets the bot join, and runs the pack's player setup function as the bot (effects,
experience, creatures). Milestones are the bridge's advancements (from the server's packets),
each new one cross-checked over RCON (``execute if entity <bot>[advancements={id=true}]``). The
``Snapshot`` is built from bridge readings, so the observation code is the simulator's.
"""
from __future__ import annotations

import math
import time
from collections import Counter
from typing import TYPE_CHECKING, Callable, Mapping, Protocol

from mcbuild.compiler.rules import functions
from mcbuild.compiler.rules.cooking import marker_items
from mcbuild.compiler.spec.task import tasks
from mcbuild.runtime.body.config import BodyConfig
from mcbuild.runtime.body.policy import Policy
from mcbuild.runtime.contract.backend import Outcome, Snapshot, Surroundings, cardinal
from mcbuild.runtime.contract.skills import Action
from mcbuild.runtime.errors import InfrastructureFault
from mcbuild.runtime.skills import HANDLERS
from mcbuild.runtime.skills.common import region_of

from .bridge_client import BridgeError
from .console import BridgeConsole, Console, passed
from .link import Link
from .primitives import ServerPrimitives

if TYPE_CHECKING:
    from mcbuild.compiler.rules.rulebook import Rulebook

HARNESS_RULES = ("gamerule announceAdvancements false", "gamerule sendCommandFeedback false",
                 "gamerule logAdminCommands false", "gamerule commandBlockOutput false")
MILESTONES = frozenset(m.advancement for t in tasks().values() for m in t.milestones if m.advancement)  # rule-checked ones have none
SETUP_SETTLE_S = 0.5    # for the setup function's effect and experience packets to arrive
PACKET_WAIT_S = 2.0     # how long an advancements packet may lag behind the server's grant


class Session(Protocol):
    """A started server the bot can join: its port, its RCON console (None: no RCON), its timings."""

    port: int
    timings: dict[str, float]

    @property
    def console(self) -> Console | None:
        """Its RCON console (None: no RCON)."""

    def check_alive(self) -> None: ...

    def stop(self) -> None: ...


class ServerBackend:
    """A :class:`mcbuild.runtime.contract.backend.Backend` on servers that ``start()`` provides."""

    config = BodyConfig()           # the body's bounds, the simulator's

    def __init__(self, rules: "Rulebook", seed: int, start: Callable[[], Session], *, username: str = "mcbuild",
                 join_attempts: int = 3, link_factory: Callable[[str, frozenset[str]], Link] = Link):
        self.rules = rules
        self.markers = frozenset(marker_items(rules))
        self.policy = Policy.of(rules, self.config.inventory_slots)
        self.username = username
        self.provisioning = _Provisioning(self)
        self._primitives: ServerPrimitives | None = None
        self.timings: dict[str, float] = {}
        self._start = start
        self._join_attempts = join_attempts
        self._link_factory = link_factory
        self.session: Session | None = None
        self._link: Link | None = None
        self.reset(seed)

    @property
    def link(self) -> Link:
        """The bot's link to the server (an ``InfrastructureFault`` once the backend is closed)."""
        if self._link is None:
            raise InfrastructureFault("the server backend is closed")
        return self._link

    @property
    def primitives(self) -> ServerPrimitives:
        """The bot's primitives (an ``InfrastructureFault`` once the backend is closed)."""
        if self._primitives is None:
            raise InfrastructureFault("the server backend is closed")
        return self._primitives

    # ------------------------------------------------------------------ episode control
    def reset(self, seed: int) -> None:
        t0 = time.monotonic()
        self._end()
        self.seed = seed
        self.actions = 0
        self.advancements: list[str] = []
        self.session = session = self._start()
        try:
            self._join(session)
        except BaseException:
            self._end()         # never leave a server or a bridge behind
            raise
        self.timings = {**session.timings, "reset_s": round(time.monotonic() - t0, 3)}

    def _join(self, session: Session) -> None:
        """The bot joins the new server; the pack's player setup runs as the bot."""
        self._link = link = self._link_factory(self.username, self.markers)
        self._primitives = ServerPrimitives(link, self.rules, self.policy, self.config)
        self.console: Console = session.console or BridgeConsole(link)
        if self.console.replies:
            for command in HARNESS_RULES:
                self.console.run(command)
        link.connect(session.port, str(self.rules.facts["version"]), self._join_attempts)
        if self.rules.get("function", functions.SETUP) is not None:
            self.console.run(f"execute as {self.username} at @s run function {functions.SETUP}")
            time.sleep(SETUP_SETTLE_S)
        self.primitives.visited.add(region_of(self.position(), self.config.region_size))
        self._track_advancements()

    def close(self) -> None:
        self._end()

    def _end(self) -> None:
        if self._link is not None:
            self._link.close()
            self._link = None
        if self.session is not None:
            self.session.stop()
            self.session = None

    # ------------------------------------------------------------------ actions
    def execute(self, action: Action) -> Outcome:
        if self._link is None or self.session is None:
            raise InfrastructureFault("the server backend is closed")
        self.actions += 1
        self.session.check_alive()
        before = Counter(self.link.inventory())
        try:
            outcome = HANDLERS[action.skill](self.primitives, action.args)
        except BridgeError as err:
            raise InfrastructureFault(f"server bridge, {action.skill}: {err}") from None
        self.primitives.visited.add(region_of(self.position(), self.config.region_size))
        after = Counter(self.link.inventory())
        self._track_advancements()
        outcome.details["gained"] = {i: after[i] - before[i] for i in sorted(after) if after[i] > before[i]}
        outcome.details["lost"] = {i: before[i] - after[i] for i in sorted(before) if before[i] > after[i]}
        return outcome

    def _track_advancements(self) -> None:
        """Append the advancements the bridge newly reports (from the server's packets), each
        confirmed over RCON; a task milestone RCON reports done must reach the bridge too."""
        done = set(self.link.advancements())
        if self.console.replies:
            granted = {a for a in MILESTONES if a not in self.advancements and self._rcon_done(a)}
            end = time.monotonic() + PACKET_WAIT_S
            while granted - done and time.monotonic() < end:
                time.sleep(0.05)
                done = set(self.link.advancements())
            if granted - done:
                raise InfrastructureFault(f"the server granted {sorted(granted - done)} but no advancements packet said so")
        for advancement in sorted(done - set(self.advancements)):
            if self.console.replies and advancement not in MILESTONES and not self._rcon_done(advancement):
                raise InfrastructureFault(f"the bridge reports {advancement} but the server does not confirm it")
            self.advancements.append(advancement)

    def _rcon_done(self, advancement: str) -> bool:
        return passed(self.console.run(f"execute if entity {self.username}[advancements={{{advancement}=true}}]"))

    # ------------------------------------------------------------------ where the bot is
    def position(self) -> tuple[int, int, int]:
        return self.primitives.position()

    # ------------------------------------------------------------------ observation
    def snapshot(self, surroundings: bool = True) -> Snapshot:
        state = self.link.state()
        blocks: dict[str, float] = {}
        drops: dict[str, float] = {}
        mobs: dict[str, tuple[int, float]] = {}
        if surroundings:
            blocks, drops, mobs = self.surroundings()
        x, y, z = state["block_position"]
        return Snapshot(
            inventory=state["inventory"],
            mainhand=self.primitives.held(state["inventory"]),
            xp_level=int(state.get("xp_level", 0)),
            position=(int(x), int(y), int(z)),
            health=float(state.get("health", 0.0)),
            food=int(state.get("food", 0)),
            alive=bool(state.get("alive", True)),
            effects=dict(sorted(state.get("effects", {}).items())),
            biome=state.get("biome") or "minecraft:the_void",
            advancements=tuple(self.advancements),
            nearby_blocks=blocks,
            nearby_drops=drops,
            nearby_entities=mobs,
            facing=facing_of_yaw(float(state["yaw"])),
        )

    def count_in_box(self, kind: str, target: str, low: tuple[int, int, int], high: tuple[int, int, int]) -> int:
        """Blocks ``target`` or living mobs ``target`` inside the box (absolute, corners inclusive),
        with the simulator's semantics: a block cell, a mob by the block its feet are in. Read from
        the bot's view of the world (vanilla 1.19 has no command that counts blocks without
        changing them, and a ``dx`` selector tests hitbox overlap rather than the feet's block)."""
        if kind == "entity":
            here = self.link.state()["position"]
            far = max(math.dist(here, (x, y, z)) for x in (low[0], high[0] + 1) for y in (low[1], high[1] + 1)
                      for z in (low[2], high[2] + 1))
            return sum(all(lo <= math.floor(v) <= hi for lo, v, hi in zip(low, e["position"], high))
                       for e in self.link.living(far + 1.0, target))
        done = self.link.call("count_blocks", {"id": target, "low": list(low), "high": list(high)})
        if done["chunks_missing"]:
            raise InfrastructureFault(f"count_in_box: {done['chunks_missing']} chunk column(s) of the box never arrived")
        return int(done["count"])

    def surroundings(self) -> Surroundings:
        blocks = self.link.nearest(self.config.scan_radius)
        drops: dict[str, float] = {}
        for e in self.link.drops(self.config.scan_radius):
            item = e["item"]["id"]
            drops[item] = round(min(e["distance"], drops.get(item, e["distance"])), 1)
        mobs: dict[str, tuple[int, float]] = {}
        for e in self.link.living(self.config.scan_radius):
            count, best = mobs.get(e["type"], (0, e["distance"]))
            mobs[e["type"]] = (count + 1, round(min(best, e["distance"]), 1))
        return dict(sorted(blocks.items())), dict(sorted(drops.items())), dict(sorted(mobs.items()))

def facing_of_yaw(yaw: float) -> str | None:
    """The cardinal direction the body looks at, from the game's yaw in degrees (0 south, 90 west)."""
    rad = math.radians(yaw)
    dx, dz = round(-math.sin(rad), 9), round(math.cos(rad), 9)
    return cardinal(dx, dz)


class _Provisioning:
    """Harness-only: ``/give`` over the server console, confirmed by the bot's inventory."""

    def __init__(self, backend: ServerBackend):
        self._backend = backend

    def give(self, items: Mapping[str, int]) -> None:
        b = self._backend
        before = Counter(b.link.inventory())
        want = Counter({i: n for i, n in items.items() if n > 0 and i not in b.markers})
        for item, n in sorted(want.items()):
            b.console.run(f"give {b.username} {item} {n}")
        end = time.monotonic() + 5.0
        while time.monotonic() < end:
            now = Counter(b.link.inventory())
            if all(now[i] - before[i] >= n for i, n in want.items()):
                return
            time.sleep(0.1)
