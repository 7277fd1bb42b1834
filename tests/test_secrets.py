"""No secret reaches an artifact: with a sentinel API key, an LLM study against a scripted endpoint that
echoes the request's Authorization header into its error bodies (as some providers' error pages do),
its report (with the viewer and the results card), exports (tables and full), status and comparison,
a design run and a Ray study leave no byte of the key in any file they write, in their output or in
their error lines; nor do Ray's own logs."""
from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from mcbuild.compiler.core.paths import ROOT
from mcbuild.llm.testing import ScriptedEndpoint

KEY_ENV = "MCBUILD_SENTINEL_KEY"
CORE = secrets.token_hex(16)
KEY = f"sk-sentinel-{CORE}"
ACTIONS = [{"skill": "mine", "args": {"block": "log", "count": 1}}, {"skill": "explore", "args": {"target": "log"}}]


class EchoingEndpoint(ScriptedEndpoint):
    """The scripted endpoint, but every seventh completion fails with a 400 (final: no retry) whose body
    repeats the request's Authorization header, and it refuses a request without the sentinel key."""

    def __init__(self, responder):
        super().__init__(responder, model="echo")
        self.seen = 0

    def intercept(self, handler, body) -> bool:
        auth = handler.headers.get("Authorization", "")
        if auth != f"Bearer {KEY}":
            handler.send_error(401, "no key")
            return True
        with self._lock:
            self.seen += 1
            fail = self.seen % 7 == 3
        if fail:
            data = json.dumps({"error": {"message": f"upstream rejected {auth} for {body.get('model')}"}}).encode()
            handler.send_response(400)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        return fail


def responder(messages) -> str:
    n = len(json.dumps(messages))
    return json.dumps({"thought": "go", **ACTIONS[n % 2]})


def leaks(folder: Path) -> list[str]:
    """Files below ``folder`` holding the key or its random core."""
    out = []
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if KEY.encode() in data or CORE.encode() in data:
                out.append(str(path))
    return out


def mcbuild(*args, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    res = subprocess.run([sys.executable, "-m", "mcbuild", *map(str, args)], capture_output=True, text=True,
                         cwd=ROOT, timeout=900, env={**os.environ, KEY_ENV: KEY, **(env or {})})
    assert KEY not in res.stdout + res.stderr and CORE not in res.stdout + res.stderr, (args, res.stderr)
    if check:
        assert res.returncode == 0, (args, res.stdout, res.stderr)
    return res


def study_config(path: Path, ep: ScriptedEndpoint, **extra) -> Path:
    path.write_text(json.dumps({
        "name": "secret", "worlds": ["plains-1"], "conditions": ["vanilla", "m01"], "tasks": ["iron_armor"],
        "configurations": ["react"], "models": [ep.model], "repetitions": 2, "budget": 4,
        "endpoint": {"base_url": ep.base_url, "api_key_env": KEY_ENV, "max_retries": 1, "backoff": 0.0}, **extra}))
    return path


def test_a_study_its_report_export_and_a_design_run_never_hold_the_key(tmp_path, world_build):
    with EchoingEndpoint(responder) as ep:
        cfg = study_config(tmp_path / "study.yaml", ep)
        out = tmp_path / "study"
        run = mcbuild("study", "run", cfg, "--build", world_build, "--out", out, "--quiet", check=False)
        assert run.returncode in (0, 1), run.stderr
        mcbuild("study", "run", cfg, "--build", world_build, "--out", out, "--quiet", "--resume", check=False)
        design = mcbuild("design", "--kind", "mirror", "--model", ep.model, "--base-url", ep.base_url,
                         "--api-key-env", KEY_ENV, "--rounds", "1", "--build", tmp_path / "dbuild", check=False)
        assert ep.requests and ep.seen >= 7
    mcbuild("study", "status", out)
    mcbuild("study", "report", out, "--build", world_build, "--quiet")
    for fmt in ("csv", "jsonl", "parquet", "full"):
        mcbuild("study", "export", out, "--format", fmt, "--out", tmp_path / f"export-{fmt}")
    mcbuild("study", "compare", out, out / "report" / "card.json", "--build", world_build)
    mcbuild("study", "compare", out, out, "--build", world_build, "--json")
    with __import__("sqlite3").connect(out / "results.sqlite") as conn:
        messages = [m for (m,) in conn.execute("SELECT message FROM faults")]
    assert any("upstream rejected Bearer ***" in m for m in messages), messages     # the echo, redacted
    assert (out / "report" / "viewer" / "index.html").is_file() and (out / "report" / "card.json").is_file()
    assert (tmp_path / "export-full").is_file() and (tmp_path / "export-parquet" / "calls.parquet").is_file()
    assert list((tmp_path / "dbuild" / "designs").iterdir()), design.stderr
    assert leaks(tmp_path) == []


@pytest.mark.xdist_group("ray")
def test_a_ray_study_never_holds_the_key_nor_do_rays_logs(tmp_path, world_build, ray_cluster):
    import ray

    with EchoingEndpoint(responder) as ep:
        cfg = study_config(tmp_path / "study.yaml", ep, scheduler="ray", ray_batch=2)
        out = tmp_path / "study"
        run = mcbuild("study", "run", cfg, "--build", world_build, "--out", out, "--quiet", "--ray-address",
                      ray_cluster, check=False)
        assert run.returncode in (0, 1), run.stderr
        assert ep.requests
    assert leaks(tmp_path) == []
    session = Path(ray._private.worker._global_node.get_session_dir_path())
    assert leaks(session) == []
