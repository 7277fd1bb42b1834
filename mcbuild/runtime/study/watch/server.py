"""The read-only page of ``mcbuild study watch``: a small HTTP server (the standard library's) on
127.0.0.1 by default.

Routes (GET only): ``/`` the page, ``/map.js`` the viewer's map, ``/api/state`` the study,
``/api/episode/<id>?since=N`` one episode's actions from N on, ``/maps/<world>.png`` a world's map,
``/report/...`` the study's report folder, once written. Nothing else is served and nothing is written.
"""
from __future__ import annotations

import json
import mimetypes
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from mcbuild.runtime.study.store.results import StoreError
from .page import PAGE
from .state import Watcher

__all__ = ["WatchServer"]

_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_MAP_JS = Path(__file__).resolve().parents[1] / "viewer" / "map.js"


class WatchServer(ThreadingHTTPServer):
    """Serves one study folder's page; ``server_address`` holds the port when 0 was asked for."""

    daemon_threads = True

    def __init__(self, study: Path, build: Path, host: str = "127.0.0.1", port: int = 0):
        self.watcher = Watcher(study, build)
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        return f"http://{str(self.server_address[0])}:{self.server_port}/"


class _Handler(BaseHTTPRequestHandler):
    server: WatchServer

    def log_message(self, format: str, *args: Any) -> None:    # the base class's names
        return                                                  # a quiet server: the page polls every second

    def do_GET(self) -> None:  # the base class's name
        url = urlparse(self.path)
        path, watcher = url.path, self.server.watcher
        try:
            if path == "/":
                return self._send(PAGE.encode(), "text/html; charset=utf-8")
            if path == "/map.js":
                return self._send(_MAP_JS.read_bytes(), "text/javascript; charset=utf-8")
            if path == "/api/state":
                return self._json(watcher.state())
            if path.startswith("/api/episode/"):
                eid = path.rsplit("/", 1)[1]
                since = parse_qs(url.query).get("since", ["0"])[0]
                data = watcher.episode(eid, int(since) if since.isdigit() else 0) if _ID.match(eid) else None
                return self._json(data) if data is not None else self._send(b"no such episode", "text/plain", 404)
            if path.startswith("/maps/") and path.endswith(".png"):
                world = path[len("/maps/"):-len(".png")]
                png = watcher.map_png(world) if _ID.match(world.replace(".", "_")) else None
                return self._send(png, "image/png") if png else self._send(b"no map", "text/plain", 404)
            if path.startswith("/report/"):
                return self._file(watcher.study / "report", path[len("/report/"):])
            return self._send(b"not found", "text/plain", 404)
        except StoreError as exc:
            return self._json({"error": str(exc)}, 503)
        except (BrokenPipeError, ConnectionResetError):
            return None

    def _file(self, root: Path, rel: str) -> None:
        target = (root / rel).resolve()
        if not target.is_relative_to(root.resolve()) or not target.is_file():
            return self._send(b"not found", "text/plain", 404)
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        return self._send(target.read_bytes(), kind)

    def _json(self, data: Any, status: int = 200) -> None:
        self._send(json.dumps(data, separators=(",", ":")).encode(), "application/json", status)

    def _send(self, body: bytes, kind: str, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)
