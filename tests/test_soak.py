"""The chaos soak (``make test-soak``; opt-in: ``MCBUILD_SOAK=1``): an LLM study of 1,008 episodes with 256
in flight (2 workers x 128) against a local endpoint that injects every fault kind at set rates
(tests/chaos_endpoint.py). Midway the runner and its workers are SIGKILLed, then the study resumes
to the end. It checks that every planned episode is stored exactly once, that no fault was ever
scored (the first episodes of the plan equal a fault-free run's, every stored model reply is a
scripted one), and that the faults the store logs are the calls that exhausted their retries (those
of the killed run whose episodes had not ended are lost with them, within ``LOST_WINDOW_S`` of the
kill). It writes the table ``docs/study.md`` shows to ``build/soak/soak.md``.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chaos_endpoint import KINDS, ChaosEndpoint
from mcbuild.compiler.core.paths import BUILD, ROOT
from mcbuild.llm.testing import ScriptedEndpoint
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.design.plan import build_plan
from mcbuild.runtime.study.store.results import Store
from test_study_inflight import records, responder
from waiting import DEADLINE_S, until

pytestmark = pytest.mark.soak

RATES = {"rate_limit": 0.04, "server_error": 0.04, "reset": 0.03, "drip": 0.004, "truncated": 0.03, "oversize": 0.02}
WORKERS, CONCURRENCY = 2, 128
KILL_AT = 0.4                   # share of the plan stored when the runner is killed
REFERENCE = 40                  # episodes of the plan also run without faults
LOST_WINDOW_S = 120.0           # a killed run's exhausted calls may go unlogged only this close to the kill: an
                                # exhausted call's fault line is written when its episode ends (rerun, a drip: 30 s)


def soak_config(ep: ScriptedEndpoint, world: str) -> dict:
    return {"name": "soak", "worlds": [world], "tasks": ["iron_armor", "diamond", "enchantment"],
            "configurations": ["react"], "models": [ep.model], "repetitions": 48, "budget": 6, "base_seed": 39,
            "workers": WORKERS, "concurrency": CONCURRENCY,
            "endpoint": {"base_url": ep.base_url, "api_key_env": "MCBUILD_TEST_NO_KEY", "max_retries": 2,
                         "backoff": 0.2, "timeout": 30.0}}


def study_run(config: Path, out: Path, build: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "mcbuild", "study", "run", str(config), "--out", str(out),
                             "--build", str(build), "--quiet", *extra], cwd=ROOT, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def stored(out: Path) -> int:
    try:
        with Store.read_only(out) as st:
            return st.count()
    except Exception:  # noqa: BLE001 - not there yet, or being created
        return 0


def logged(out: Path) -> list[dict]:
    with Store.read_only(out) as st:
        return [f for f in st.faults() if f["kind"] == "infrastructure"]


def test_chaos_soak(tmp_path, world_build, built_world_ids):
    t0 = time.monotonic()
    load = os.getloadavg()
    with ChaosEndpoint(responder, RATES, seed=39, latency=0.5, timeout=30.0) as ep:
        config = tmp_path / "soak.json"
        config.write_text(json.dumps(soak_config(ep, built_world_ids[0])))
        cfg = StudyConfig.model_validate(json.loads(config.read_text()))
        planned = len(build_plan(cfg))
        out = tmp_path / "study"

        first = study_run(config, out, world_build)
        try:
            until(lambda: stored(out) >= KILL_AT * planned or first.poll() is not None, "40% of the plan stored",
                  DEADLINE_S * 2, every=0.5)
            assert first.poll() is None, first.stdout.read()
            os.killpg(first.pid, signal.SIGKILL)            # the runner and its workers, mid-study
            killed_at = time.time()
            first.wait(DEADLINE_S)
        finally:
            if first.poll() is None:
                os.killpg(first.pid, signal.SIGKILL)
        at_kill, logged_at_kill = stored(out), len(logged(out))
        assert 0 < at_kill < planned

        runs = 1
        while stored(out) < planned and runs < 4:       # an episode whose every attempt met an exhausted call
            resumed = study_run(config, out, world_build, "--resume")
            output, _ = resumed.communicate(timeout=DEADLINE_S * 3)
            assert resumed.returncode in (0, 1), output
            runs += 1
        tally, before_kill = ep.tally(), ep.tally(before=killed_at)

    with ScriptedEndpoint(responder, model=ep.model) as clean:
        reference_cfg = {**soak_config(clean, built_world_ids[0]), "name": "reference"}
        (tmp_path / "reference.json").write_text(json.dumps(reference_cfg))
        ref = study_run(tmp_path / "reference.json", tmp_path / "reference", world_build, "--limit", str(REFERENCE))
        output, _ = ref.communicate(timeout=DEADLINE_S * 3)
        assert ref.returncode == 0, output

    # every planned episode stored exactly once (the id is the store's key)
    with Store.read_only(out) as st:
        ids = [r["episode_id"] for r in st.records()]
    assert sorted(ids) == sorted(e.episode_id for e in build_plan(cfg)) and len(ids) == len(set(ids)) == planned

    # no fault ever scored: the episodes run without faults are stored identically, and every stored model
    # reply is one the responder wrote
    from test_study_inflight import scored

    chaos, clean_rows = records(out), records(tmp_path / "reference")
    assert len(clean_rows) == REFERENCE and all(scored(chaos[eid]) == scored(r) for eid, r in clean_rows.items())
    for row in chaos.values():
        for step in map(json.loads, row["trajectory"].splitlines()):
            for call in step.get("llm_calls", ()):
                assert json.loads(call["reply"])["skill"], call["reply"][:200]

    # the faults the store logs are the calls that exhausted their retries; the killed run's last ones
    # may be lost with it, and only those
    faults = logged(out)
    unlogged = before_kill["exhausted"] - logged_at_kill
    late = sum(1 for at in before_kill["exhausted_at"] if at > killed_at - LOST_WINDOW_S)
    assert 0 <= unlogged <= late
    assert len(faults) - logged_at_kill == tally["exhausted"] - before_kill["exhausted"]
    assert set(tally["injected"]) == set(KINDS)

    rows = [("episodes planned / stored", f"{planned:,} / {len(ids):,}"),
            ("lost (planned, not stored)", str(planned - len(ids))),
            ("in flight (configured; most requests served at once)", f"{WORKERS * CONCURRENCY}; {tally['in_flight_max']}"),
            ("stored when SIGKILLed; runs to finish", f"{at_kill:,}; {runs}"),
            ("requests", f"{tally['requests']:,}"),
            *((f"faults injected: {k} ({RATES[k]:.1%} of requests)", str(tally["injected"].get(k, 0))) for k in KINDS),
            ("retried (client retries)", f"{tally['retried']:,}"),
            ("exhausted their retries (3 attempts)", str(tally["exhausted"])),
            ("logged in the store", str(len(faults))),
            ("exhausted in the killed run, not logged (their episodes died with it)", str(unlogged)),
            ("episodes equal to a fault-free run", f"{REFERENCE} of {REFERENCE} compared"),
            ("wall time; load average at start", f"{time.monotonic() - t0:.0f} s; {load[0]:.1f}")]
    table = "\n".join(["| soak | |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)]) + "\n"
    (BUILD / "soak").mkdir(parents=True, exist_ok=True)
    (BUILD / "soak" / "soak.md").write_text(table)
    print("\n" + table)
