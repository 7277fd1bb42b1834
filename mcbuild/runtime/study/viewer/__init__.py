"""Static trajectory viewer written beside the study report (``report/viewer/``).

* ``index.html`` + ``app.js``: the episode browser (search, filters, sortable columns, 100 rows
  per page; the state is in the URL), one page per episode (``#ep=<id>``) and the paired
  Vanilla/Mirror view (``#pair=<vanilla id>,<mirror id>``), all rendered in the browser;
  ``map.js`` draws the zoomable, pannable world maps with block-coordinate axes;
* ``data/index.js``: one row per episode, the pairs with their first divergence and first rule
  encounter, display names and map bounds;
* ``data/ep/<id[:2]>/<id>.js``: one file per episode, loaded only when its page opens;
* ``maps/<world>.png``: the top-down surface map of each world.

Data files are ``<script>`` files (``MCV.index(...)``, ``MCV.episode(...)``) so the pages work
from ``file://`` without a server; no external asset is referenced. Paths on the maps come from
replaying the recorded actions (:mod:`.replay`) for the first ``map_limit`` episodes.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from mcbuild.compiler.core.canonical import atomic_write

from .build import build_viewer_data
from .page import INDEX_HTML

__all__ = ["write_viewer", "ViewerResult", "DEFAULT_MAP_LIMIT"]

#: Episodes whose path is replayed for the map when no limit is given.
DEFAULT_MAP_LIMIT = 500


@dataclass
class ViewerResult:
    """Where the viewer was written, how many episode files and bytes, and how long it took."""

    out_dir: Path
    episodes: int
    replayed: int
    bytes: int
    seconds: float


def _write_if_changed(path: Path, data: bytes) -> None:
    """Write ``data`` unless the file already holds exactly it (re-runs touch only what changed)."""
    if path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data:
        return
    atomic_write(path, data, tool="report")


def _script(call: str, payload: Any) -> bytes:
    return f"{call}({json.dumps(payload, sort_keys=True, separators=(',', ':'), ensure_ascii=False)});\n".encode()


def write_viewer(d: Any, out: Path, *, build: Path, map_limit: int | None = None,
                 progress: Callable[[int, int], None] | None = None) -> ViewerResult:
    """Write the viewer of study ``d`` (a :class:`mcbuild.runtime.study.report.StudyData`) into ``out``;
    ``progress(done, total)`` hears of each episode written (its path replayed first, if chosen)."""
    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    limit = DEFAULT_MAP_LIMIT if map_limit is None else int(map_limit)
    counts = {"episodes": 0, "replayed": 0}

    def emit(eid: str, data: dict) -> None:
        counts["episodes"] += 1
        counts["replayed"] += data.get("path") is not None
        if progress is not None:
            progress(counts["episodes"], len(d.records))
        _write_if_changed(out / "data" / "ep" / eid[:2] / f"{eid}.js", _script("MCV.episode", data))

    (out / "maps").mkdir(parents=True, exist_ok=True)
    index, maps = build_viewer_data(d, build=build, map_limit=limit, emit=emit, map_cache=out / "maps")
    for world, png in maps.items():
        _write_if_changed(out / "maps" / f"{world}.png", png)
    _write_if_changed(out / "data" / "index.js", _script("MCV.index", index))
    for js in ("app.js", "map.js"):
        _write_if_changed(out / js, (Path(__file__).parent / js).read_bytes())
    _write_if_changed(out / "index.html", INDEX_HTML.encode())
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return ViewerResult(out, counts["episodes"], counts["replayed"], size, time.perf_counter() - t0)
