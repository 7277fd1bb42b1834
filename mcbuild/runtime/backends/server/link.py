"""The backend's view of one bot through the bridge: ops with deadlines, faults as
:class:`mcbuild.runtime.errors.InfrastructureFault`, and the agent-visible readings of state.

A :class:`BridgeError` (an op's own failure, e.g. ``no_result``) is returned to the skill that
asked; a dead or hung bridge (``BridgeFault``) or an op that ran past its deadline is a fault of
the machinery. The smelting marker items are never reported in any reading.
"""
from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

from mcbuild.runtime.errors import InfrastructureFault

from .bridge_client import BRIDGE_DIR, BridgeClient, BridgeError, BridgeFault
from .config import BRIDGE_ENV

NOT_LIVING = frozenset({"player", "object", "orb", "projectile", "other", "global"})
Pos = tuple[int, int, int]


def _pos(position: Iterable[Any]) -> Pos:
    """A block position the bridge reported."""
    x, y, z = (int(v) for v in position)
    return x, y, z


def bridge_dir() -> Path:
    given = os.environ.get(BRIDGE_ENV)
    return Path(given) if given else BRIDGE_DIR


def visible(items: Mapping[str, int], markers: frozenset[str]) -> dict[str, int]:
    """Item counts without the marker items, sorted."""
    return {i: int(n) for i, n in sorted(items.items()) if n > 0 and i not in markers}


class Link:
    """One bridge process driving one bot named ``username``; ``markers`` are the items the packs
    cook into before converting them (``mcbuild.compiler.rules.cooking.marker_items``), never reported."""

    def __init__(self, username: str, markers: frozenset[str], directory: Path | None = None,
                 log_path: Path | None = None):
        self.username = username
        self.markers = markers
        try:
            self.client = BridgeClient(bridge_dir=directory or bridge_dir(), log_path=log_path)
        except BridgeFault as err:
            raise InfrastructureFault(f"server bridge: {err}") from None

    def call(self, op: str, args: Mapping[str, Any] | None = None, deadline_ms: int = 30_000) -> dict:
        """The op's result; raises BridgeError for the op's own failures, InfrastructureFault otherwise."""
        try:
            return self.client.request(op, args, deadline_ms)
        except BridgeFault as err:
            raise InfrastructureFault(f"server bridge: {err}") from None
        except BridgeError as err:
            if err.code in ("timeout", "internal", "bad_request", "unknown_op", "not_connected"):
                raise InfrastructureFault(f"server bridge: {err}") from None
            raise

    def connect(self, port: int, version: str, attempts: int = 1, spawn_timeout_ms: int = 60_000) -> dict:
        """Join the server on ``port`` speaking game ``version`` (``attempts`` tries, a second apart)."""
        last: BridgeError | None = None
        for attempt in range(attempts):
            if attempt:
                time.sleep(1.0)
            try:
                return self.call("connect", {"host": "127.0.0.1", "port": port, "username": self.username,
                                             "version": version, "spawn_timeout_ms": spawn_timeout_ms,
                                             "markers": sorted(self.markers)},
                                 spawn_timeout_ms + 10_000)
            except BridgeError as err:
                last = err
        raise InfrastructureFault(f"the bot could not join the server: {last}")

    def close(self) -> None:
        try:
            self.client.close()
        except BridgeFault:
            pass

    # ------------------------------------------------------------------ readings
    def state(self) -> dict:
        raw = self.call("state")
        raw["inventory"] = visible(raw.get("inventory", {}), self.markers)
        return raw

    def inventory(self) -> dict[str, int]:
        return self.state()["inventory"]

    def find(self, ids: Iterable[str], radius: float = 32.0, limit: int = 64) -> list[tuple[str, Pos, float, int]]:
        """Reachable blocks of these ids within ``radius``, nearest first: (id, position, distance, reach)."""
        ids = sorted(set(ids))
        if not ids:
            return []
        found = self.call("scan_reach", {"ids": ids, "radius": radius, "max": limit})["blocks"]
        return [(b["id"], _pos(b["position"]), float(b["distance"]), int(b["reach"])) for b in found]

    def nearest(self, radius: float = 32.0) -> dict[str, float]:
        """Nearest distance of every reachable block id within ``radius``."""
        return {b: round(float(d), 1) for b, d in self.call("scan_reach", {"radius": radius})["nearest"].items()}

    def living(self, radius: float = 32.0, kind: str | None = None) -> list[dict]:
        """Living entities (not players, items or projectiles) within ``radius``, nearest first."""
        out = []
        for e in self.call("entities", {"radius": radius})["entities"]:
            if e.get("kind") in NOT_LIVING or e.get("type") in (None, "minecraft:item", "minecraft:experience_orb"):
                continue
            if kind is None or e["type"] == kind:
                out.append(e)
        return out

    def drops(self, radius: float = 32.0) -> list[dict]:
        return [e for e in self.call("entities", {"radius": radius})["entities"]
                if e.get("item") and e["item"]["id"] not in self.markers]

    def goto(self, pos: Pos, reach: float = 2.0, segment_ms: int = 20_000) -> bool:
        """Walk next to ``pos``; False when the pathfinder found no way or got stuck."""
        try:
            self.call("goto", {"x": pos[0], "y": pos[1], "z": pos[2], "range": reach, "segment_ms": segment_ms},
                      segment_ms + 10_000)
            return True
        except BridgeError as err:
            if err.code in ("no_path", "stuck", "segment_budget"):
                return False
            raise

    def block_at(self, pos: Pos) -> str | None:
        return self.call("block_at", {"x": pos[0], "y": pos[1], "z": pos[2]})["id"]

    def column(self, x: int, z: int, y0: int | None = None, y1: int | None = None) -> tuple[list[str | None], int]:
        """The block ids of column (x, z) from ``y0`` (the world's bottom) to ``y1`` (its top),
        bottom up, and the height of the first."""
        args = {"x": x, "z": z, **({"y0": y0} if y0 is not None else {}), **({"y1": y1} if y1 is not None else {})}
        done = self.call("column", args)
        return list(done["ids"]), int(done["y0"])

    def obstruction(self, pos: Pos) -> tuple[str, Pos] | None:
        """The block between the bot's eyes and ``pos``, if any."""
        seen = self.call("line_of_sight", {"x": pos[0], "y": pos[1], "z": pos[2]})
        if seen["clear"]:
            return None
        o = seen["obstruction"]
        return o["id"], _pos(o["position"])

    def advancements(self) -> list[str]:
        return list(self.call("advancements")["done"])


def distance(a: Iterable[float], b: Iterable[float]) -> float:
    return math.dist(tuple(a), tuple(b))
