"""The viewer's data: the index (episode rows, pairs, names, map bounds), each episode's data
(handed to ``emit`` one at a time, so a large study is never held in memory) and the world maps."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from mcbuild.compiler.core.canonical import atomic_write
from mcbuild.compiler.worlds.layout import VANILLA, world_dir
from mcbuild.runtime.errors import BackendUnavailable, InfrastructureFault
from mcbuild.runtime.study.report.labels import bname, cname, mname, task_title
from mcbuild.runtime.study.store.results import Store
from .episodes import episode_data, first_divergence, pairs_of, parse_trajectory
from .replay import replay_path
from .worldmap import world_map

#: Columns of an index row, in order (``pair`` is the Vanilla partner of a Mirror episode).
FIELDS = ("id", "world", "task", "configuration", "model", "condition", "repetition", "score", "success", "actions",
          "end", "encounters", "pair")


def _order(d: Any) -> Callable:
    configs = {c: i for i, c in enumerate(d.configs)}
    tasks = {t: i for i, t in enumerate(d.config.tasks)}
    return lambda r: (r.world, tasks.get(r.task, 99), r.model, configs.get(r.configuration, 99),
                      r.condition != VANILLA, r.condition, r.repetition)


def replay_set(d: Any, limit: int) -> set[str]:
    """The episodes whose path is replayed: whole (world, task, configuration) blocks of every condition,
    first repetition and first model first, up to ``limit``."""
    models = {m: i for i, m in enumerate(d.models)}
    configs = {c: i for i, c in enumerate(d.configs)}
    ranked = sorted(d.records, key=lambda r: (r.repetition, models.get(r.model, 99), configs.get(r.configuration, 99),
                                              r.world, r.task, r.condition))
    return {r.episode_id for r in ranked[:max(0, limit)]}


def _stamp(save: Path) -> list:
    """Names, sizes and mtimes of a save's level.dat and region files (a map is redrawn when they change)."""
    files = [save / "level.dat", *sorted((save / "region").glob("*.mca"))]
    return [[p.name, p.stat().st_size, p.stat().st_mtime_ns] for p in files if p.is_file()]


def _cached_bounds(png: Path, meta: Path, stamp: list) -> dict | None:
    """The bounds a cached map was drawn with, if its PNG and metadata are there, readable and for
    this ``stamp`` (an unreadable cache entry is only redrawn)."""
    if not (png.is_file() and meta.is_file()):
        return None
    try:
        doc = json.loads(meta.read_bytes())
        return doc["bounds"] if doc.get("stamp") == stamp else None
    except (OSError, ValueError, KeyError, AttributeError):
        return None


def _maps(d: Any, build: Path, cached: Path | None) -> tuple[dict[str, bytes], dict[str, dict]]:
    """Map PNG and bounds of every world; a map already in ``cached`` for the same save is reused."""
    pngs, bounds = {}, {}
    for world in sorted({r.world for r in d.records}):
        save = world_dir(world, VANILLA, build)
        if not (save / "level.dat").is_file():
            continue
        stamp = _stamp(save)
        meta = None
        if cached:
            png, meta = cached / f"{world}.png", cached / f"{world}.json"
            known = _cached_bounds(png, meta, stamp)
            if known is not None:
                pngs[world], bounds[world] = png.read_bytes(), known
                continue
        pngs[world], bounds[world] = world_map(save)
        if meta:
            atomic_write(meta, json.dumps({"stamp": stamp, "bounds": bounds[world]}, sort_keys=True).encode(), tool="report")
    return pngs, bounds


def _path(r: Any, info: dict, trajectory: list, build: Path, backend: str) -> tuple[list | None, str]:
    """The replayed path and a note. A save or name this build lacks, a damaged save or an unavailable
    backend only costs the map path; any other exception is a bug and propagates."""
    from mcbuild.runtime.episode.opening import UnknownName

    try:
        rp = replay_path(r.world, r.condition, r.task, r.budget, int(info.get("seed") or 0), trajectory,
                         build=build, backend=backend)
    except (InfrastructureFault, BackendUnavailable, UnknownName) as exc:
        return None, f"Path not available: {type(exc).__name__}: {exc}"[:300]
    note = "" if rp.diverged_at is None else (
        f"The replay differed from the record at action {rp.diverged_at}; the path stops there.")
    return [list(p) for p in rp.positions], note


def build_viewer_data(d: Any, *, build: Path, map_limit: int, emit: Callable[[str, dict], None],
                      map_cache: Path | None = None) -> tuple[dict, dict[str, bytes]]:
    """Emit every valid episode's data; return the index and the map PNGs by world (maps already in
    ``map_cache`` for the same saves are reused)."""
    pngs, bounds = _maps(d, build, map_cache)
    replay = replay_set(d, map_limit) if bounds else set()
    light: dict[str, list[dict]] = {}
    first_enc: dict[str, dict] = {}
    store = Store.read_only(d.store_path)
    try:
        # world and condition order: consecutive replays reuse the backend's cached world
        for r in sorted(d.records, key=lambda x: (x.world, x.condition, x.episode_id)):
            eid, text = r.episode_id, store.trajectory(r.episode_id)
            info = d.info.get(eid, {})
            trajectory = parse_trajectory(text)
            path, note = (_path(r, info, trajectory, build, d.config.backend) if eid in replay else (None, ""))
            data = episode_data(r, info, trajectory, path)
            if note:
                data["path_note"] = note
            emit(eid, data)
            steps = data["steps"]
            light[eid] = [{"i": s["i"], "sig": s["sig"], "delta": s["delta"], "ok": s["ok"]} for s in steps]
            enc = next(({"index": s["i"], "rule": e["rule"]} for s in steps for e in s["enc"] if e["first"]), None)
            if enc:
                first_enc[eid] = enc
    finally:
        store.close()
    return _index(d, light, first_enc, bounds), pngs


def _index(d: Any, light: dict, first_enc: dict, bounds: dict) -> dict:
    pairs, partner_of = {}, {}
    partners: dict[str, list[str]] = {}
    for v, m in pairs_of(d.records):
        pairs[f"{v.episode_id},{m.episode_id}"] = {
            "divergence": first_divergence(light.get(v.episode_id, []), light.get(m.episode_id, [])),
            "first_encounter": first_enc.get(m.episode_id)}
        partners.setdefault(v.episode_id, []).append(m.episode_id)
        partner_of[m.episode_id] = v.episode_id
    records = sorted(d.records, key=_order(d))
    rows = [[r.episode_id, r.world, r.task, r.configuration, r.model, r.condition, r.repetition, r.score,
             r.success, r.actions, d.end_reason(r.episode_id), len(r.encounters), partner_of.get(r.episode_id)]
            for r in records]
    values = {k: sorted({row[FIELDS.index(k)] for row in rows}, key=str) for k in ("world", "task", "model", "end")}
    values["configuration"] = [c for c in d.configs if any(r.configuration == c for r in records)]
    values["condition"] = [c for c in [VANILLA] + d.suites if any(r.condition == c for r in records)]
    labels = {"task": {t: task_title(t) for t in d.config.tasks}, "configuration": {c: cname(c) for c in d.configs},
              "model": {m: mname(m) for m in d.models}, "biome": {r.biome: bname(r.biome) for r in records}}
    summary = (f"{len(rows)} valid episodes, {len(pairs)} Vanilla/Mirror pairs (same world, task, configuration, "
               "model, budget and repetition).")
    return {"study": d.config.name, "summary": summary, "fields": list(FIELDS), "rows": rows, "pairs": pairs,
            "partners": partners, "values": values, "labels": labels, "maps": bounds}
