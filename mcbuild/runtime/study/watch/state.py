"""What ``mcbuild study watch`` shows, read from a study folder without disturbing the run that writes it.

The store is opened read-only for each look (``mode=ro``: no lock of the writer's is taken, nothing is
written; WAL lets the writer go on); the episodes in flight are the live logs of ``<study>/live/``
(``run/live.py``) whose episode the store does not hold yet; the maps are drawn once per world from
the Vanilla save (``viewer/worldmap.py``).
"""
from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from mcbuild.compiler.worlds.layout import VANILLA, world_dir
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.design.plan import build_plan
from mcbuild.runtime.study.run.live import LIVE_DIR
from mcbuild.runtime.study.store.lock import holder
from mcbuild.runtime.study.store.results import STORE_NAME, Store, StoreError

__all__ = ["Watcher", "LAST_ACTIONS"]

#: Actions shown for each episode in flight.
LAST_ACTIONS = 5


def read_log(path: Path) -> list[dict[str, Any]]:
    """The complete lines of a live log (a line still being written is left for the next look)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    out = []
    for line in text.split("\n")[:-1]:
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def action_text(step: dict[str, Any]) -> str:
    """``mine stone ×4``, ``craft_grid cobblestone×8 at crafting_table``: an action in a few words."""
    args = dict(step.get("args") or {})
    short = lambda v: str(v).removeprefix("minecraft:")
    parts = [str(step.get("skill"))]
    grid = args.pop("grid", None)
    if isinstance(grid, list):
        cells = Counter(short(c) for row in grid if isinstance(row, list) for c in row if c)
        parts.append(" ".join(f"{item}×{n}" if n > 1 else item for item, n in sorted(cells.items())))
    station = args.pop("station", None)
    count = args.pop("count", None)
    parts += [short(v) if isinstance(v, str) else f"{k}={v}" for k, v in args.items()]
    if count not in (None, 1):
        parts.append(f"×{count}")
    if station:
        parts.append(f"at {short(station)}")
    return " ".join(parts)


class Watcher:
    """One study folder as the page sees it (safe to call from the server's threads)."""

    def __init__(self, study: Path, build: Path):
        self.study, self.build = Path(study), Path(build)
        self.live = self.study / LIVE_DIR
        self._plan: tuple[str, dict[tuple[str, str], int], int] | None = None
        self._maps: dict[str, tuple[bytes, dict] | None] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ the study
    def state(self) -> dict[str, Any]:
        store = Store.read_only(self.study)
        try:
            meta, config = store.meta(), store.config_json() or {}
            planned_cells, planned = self._planned(meta.get("config", ""), config)
            rows = store.conn.execute("SELECT condition, configuration, COUNT(*), AVG(score), 100.0 * AVG(success) "
                                      "FROM episodes GROUP BY condition, configuration").fetchall()
            faults = dict(store.conn.execute("SELECT kind, COUNT(*) FROM faults GROUP BY kind").fetchall())
            recent = [{"episode": e, "attempt": a, "kind": k, "message": " ".join(str(m).split())[:200]}
                      for e, a, k, m in store.conn.execute(
                          "SELECT episode_id, attempt, kind, message FROM faults ORDER BY id DESC LIMIT 5")]
            _, _, spent = store.totals()
            stored = store.count()
            logs = sorted(self.live.glob("*.jsonl")) if self.live.is_dir() else []
            ids = [p.stem for p in logs]
            held = {r[0] for r in store.conn.execute(
                f"SELECT episode_id FROM episodes WHERE episode_id IN ({','.join('?' * len(ids))})", ids)} if ids else set()
        finally:
            store.close()
        writer = holder(self.study / STORE_NAME)
        running = writer is not None and (not writer.here() or writer.alive())
        got = {(c, k): (n, s, sr) for c, k, n, s, sr in rows}
        cells = [{"condition": c, "configuration": k, "planned": n, "stored": got.get((c, k), (0,))[0],
                  "score": got.get((c, k), (0, None))[1], "sr": got.get((c, k), (0, None, None))[2]}
                 for (c, k), n in planned_cells.items()]
        inflight = [self._summary(p) for p in logs if p.stem not in held] if running else []
        report = self.study / "report" / "report.html"
        return {"study": meta.get("study", self.study.name), "path": str(self.study), "planned": planned,
                "stored": stored, "running": running, "writer": writer.describe() if writer and running else None,
                "spent": spent, "cap": config.get("max_cost_usd"), "faults": faults, "recent_faults": recent,
                "cells": cells, "inflight": [e for e in inflight if e is not None],
                "report": "report/report.html" if report.is_file() else None}

    def _planned(self, key: str, config: dict) -> tuple[dict[tuple[str, str], int], int]:
        """Planned episodes per (condition, configuration) of the stored config, computed once."""
        with self._lock:
            if self._plan is None or self._plan[0] != key:
                try:
                    plan = build_plan(StudyConfig.model_validate(config))
                except ValueError:
                    plan = []
                cells = Counter((e.condition, e.configuration) for e in plan)
                self._plan = (key, dict(sorted(cells.items(), key=lambda kv: (kv[0][0] != VANILLA, kv[0]))), len(plan))
            return self._plan[1], self._plan[2]

    def _summary(self, path: Path) -> dict[str, Any] | None:
        lines = read_log(path)
        if not lines or lines[0].get("type") != "episode":
            return None
        head, steps = lines[0], [x for x in lines[1:] if "i" in x]
        end = next((x for x in lines if x.get("type") == "end"), None)
        return {**{k: head.get(k) for k in ("id", "world", "condition", "task", "configuration", "model", "budget")},
                "actions": len(steps), "score": steps[-1]["score"] if steps else 0, "finished": end is not None,
                "last": [{"i": s["i"], "text": action_text(s), "ok": s.get("ok"), "reason": s.get("reason")}
                         for s in steps[-LAST_ACTIONS:]]}

    # ---------------------------------------------------------------- one episode
    def episode(self, episode_id: str, since: int = 0) -> dict[str, Any] | None:
        """The episode's head, its actions from ``since`` on (with the body's positions while it is in
        flight) and, once stored, its result; None when it is neither in flight nor stored."""
        path = self.live / f"{episode_id}.jsonl"
        lines = read_log(path) if path.parent == self.live else []
        if lines and lines[0].get("type") == "episode":
            head, steps = lines[0], [x for x in lines[1:] if "i" in x]
            end = next((x for x in lines if x.get("type") == "end"), None)
            return {"head": {**head, "map": self._map_bounds(str(head.get("world")))}, "n": len(steps),
                    "steps": [{**s, "text": action_text(s)} for s in steps[since:]],
                    "end": end and {**end, "actions": len(steps)}, "stored": end is not None and self._held(episode_id)}
        return self._stored(episode_id, since)

    def _held(self, episode_id: str) -> bool:
        store = Store.read_only(self.study)
        try:
            return store.conn.execute("SELECT 1 FROM episodes WHERE episode_id = ?", (episode_id,)).fetchone() is not None
        finally:
            store.close()

    def _stored(self, episode_id: str, since: int) -> dict[str, Any] | None:
        from mcbuild.runtime.study.viewer.episodes import parse_trajectory

        store = Store.read_only(self.study)
        try:
            row = store.conn.execute("SELECT world, condition, task, configuration, model, budget, score, success, "
                                     "actions FROM episodes WHERE episode_id = ?", (episode_id,)).fetchone()
            if row is None:
                return None
            text = store.trajectory(episode_id)
        except StoreError:
            return None
        finally:
            store.close()
        world, condition, task, configuration, model, budget, score, success, actions = row
        trajectory = parse_trajectory(text)
        path = self._replayed(episode_id, row, trajectory) if since == 0 else []
        steps = [{"i": t["index"], "skill": t["action"].get("skill"), "args": t["action"].get("args", {}),
                  "ok": t["result"].get("ok"), "reason": t["result"].get("reason"), "score": t.get("score"),
                  "pos": list(path[n + 1]) if n + 1 < len(path) else None}
                 for n, t in enumerate(x for x in trajectory if "action" in x)]
        head = {"id": episode_id, "world": world, "condition": condition, "task": task, "configuration": configuration,
                "model": model, "budget": budget, "pos": list(path[0]) if path else None, "map": self._map_bounds(world)}
        return {"head": head, "n": len(steps), "steps": [{**s, "text": action_text(s)} for s in steps[since:]],
                "end": {"score": score, "success": bool(success), "actions": actions}, "stored": True}

    def _replayed(self, episode_id: str, row: tuple, trajectory: list) -> list:
        """The body's path of a stored episode, replayed as the viewer does (empty when it cannot be)."""
        from mcbuild.runtime.study.viewer.replay import replay_path

        store = Store.read_only(self.study)
        try:
            info = store.conn.execute("SELECT seed FROM episodes WHERE episode_id = ?", (episode_id,)).fetchone()
            backend = (store.config_json() or {}).get("backend", "sim")
        finally:
            store.close()
        try:
            return replay_path(row[0], row[1], row[2], int(row[5]), int(info[0] or 0), trajectory, build=self.build,
                               backend=backend).positions
        except Exception:  # noqa: BLE001 - a path that cannot be replayed is only left out
            return []

    # ----------------------------------------------------------------- the maps
    def map_png(self, world: str) -> bytes | None:
        made = self._map(world)
        return None if made is None else made[0]

    def _map_bounds(self, world: str) -> dict | None:
        made = self._map(world)
        return None if made is None else made[1]

    def _map(self, world: str) -> tuple[bytes, dict] | None:
        from mcbuild.runtime.study.viewer.worldmap import world_map

        with self._lock:
            if world not in self._maps:
                save = world_dir(world, VANILLA, self.build)
                try:
                    self._maps[world] = world_map(save) if (save / "level.dat").is_file() else None
                except Exception:  # noqa: BLE001 - a map that cannot be drawn is only left out
                    self._maps[world] = None
            return self._maps[world]
