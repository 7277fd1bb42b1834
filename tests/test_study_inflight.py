"""Many LLM episodes in flight: threads per worker, the same records whatever the concurrency,
endpoint caps, and 429/5xx retries (only exhausted ones are infrastructure faults).

The model is the scripted OpenAI-compatible server of ``mcbuild.llm.testing``; its reply
depends only on the request, so the same seed and the same replies must give the same record.
"""
from __future__ import annotations

import hashlib
import json
import threading

import pytest

from mcbuild.llm.testing import ScriptedEndpoint
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.design.plan import build_plan
from mcbuild.runtime.study.run.attempt import AttemptResult, Status
from mcbuild.runtime.study.run.schedulers.inflight import InflightScheduler
from mcbuild.runtime.study.run.runner import run_study
from mcbuild.runtime.study.store.results import Store
from chaos_endpoint import ChaosEndpoint
from study_fakes import plan_entries
from waiting import DEADLINE_S

ACTIONS = [
    {"skill": "mine", "args": {"block": "log", "count": 1}},
    {"skill": "explore", "args": {"target": "log"}},
    {"skill": "mine", "args": {"block": "stone", "count": 1}},
    {"skill": "craft_grid", "args": {"station": "inventory", "grid": [["minecraft:oak_log", None], [None, None]]}},
]


def responder(messages: list[dict[str, str]]) -> str:
    """A reply chosen by the request alone (never by arrival order)."""
    h = int(hashlib.sha256(json.dumps(messages).encode()).hexdigest(), 16)
    return json.dumps({"thought": f"t{h % 97}", **ACTIONS[h % len(ACTIONS)]})


def llm_config(ep: ScriptedEndpoint, **kw) -> StudyConfig:
    data = dict(name="llm", worlds=["plains-1"], conditions=["vanilla", "m04"], tasks=["iron_armor"],
                configurations=["react", "direct"], models=[ep.model], repetitions=2, budget=6, base_seed=11,
                endpoint={"base_url": ep.base_url, "api_key_env": "MCBUILD_TEST_NO_KEY"})
    data.update(kw)
    return StudyConfig.model_validate(data)


def untimed(trajectory: str) -> str:
    """A stored trajectory without the model calls' wall time (a measurement that differs run to run)."""
    steps = [json.loads(line) for line in trajectory.splitlines()]
    for step in steps:
        for call in step.get("llm_calls") or ():
            assert call.pop("seconds") >= 0
    return "".join(json.dumps(s, sort_keys=True) + "\n" for s in steps)


def records(path) -> dict[str, dict]:
    with Store.open(path) as st:
        rows = {r["episode_id"]: r for r in st.records()}
        for eid in rows:
            rows[eid]["trajectory"] = untimed(st.trajectory(eid))
    for r in rows.values():
        r.pop("wall_s", None)
        r.pop("finished_at", None)
    return rows


def test_records_do_not_depend_on_concurrency(world_build, tmp_path):
    with ScriptedEndpoint(responder, latency=0.01) as ep:
        cfg = llm_config(ep)
        one = run_study(cfg, out_dir=tmp_path / "one", build_root=world_build)
        many = run_study(cfg, out_dir=tmp_path / "many", build_root=world_build, concurrency=8)
        assert ep.in_flight_max > 1                      # episodes really overlapped
        procs = run_study(cfg, out_dir=tmp_path / "procs", build_root=world_build, workers=2, concurrency=3)
    assert one.complete and many.complete and procs.complete and not (one.errors or many.errors or procs.errors)
    a, b, c = records(tmp_path / "one"), records(tmp_path / "many"), records(tmp_path / "procs")
    assert len(a) == 8 and a == b == c
    assert all(r["actions"] > 0 and '"llm_calls"' in r["trajectory"] for r in a.values())


def test_endpoint_cap_bounds_requests_in_flight(world_build, tmp_path):
    with ScriptedEndpoint(responder, latency=0.05) as ep:
        cfg = llm_config(ep, endpoint={"base_url": ep.base_url, "api_key_env": "MCBUILD_TEST_NO_KEY",
                                       "max_in_flight": 2})
        s = run_study(cfg, out_dir=tmp_path / "s", build_root=world_build, concurrency=8)
    assert s.complete and 1 <= ep.in_flight_max <= 2


def test_429_with_retry_after_is_retried_not_a_fault(world_build, tmp_path):
    with ScriptedEndpoint(responder, fail_first=2, fail_status=429, retry_after="0", fail_after=1) as ep:
        cfg = llm_config(ep, configurations=["direct"], conditions=["vanilla"], repetitions=1)
        s = run_study(cfg, out_dir=tmp_path / "s", build_root=world_build)
    assert s.complete and s.infrastructure_faults == 0
    first = json.loads(records(tmp_path / "s").popitem()[1]["trajectory"].splitlines()[0])
    assert first["llm_calls"][0]["attempts"] == 3


def test_exhausted_retries_are_an_infrastructure_fault(world_build, tmp_path):
    # the default 3 retries: 4 failures, after the preflight's request was answered
    with ScriptedEndpoint(responder, fail_first=4, fail_status=502, fail_after=1) as ep:
        cfg = llm_config(ep, configurations=["direct"], conditions=["vanilla"], repetitions=1,
                         endpoint={"base_url": ep.base_url, "api_key_env": "MCBUILD_TEST_NO_KEY", "backoff": 0})
        s = run_study(cfg, out_dir=tmp_path / "s", build_root=world_build)
    assert s.complete and s.infrastructure_faults == 1
    with Store.open(tmp_path / "s") as st:
        (fault,) = st.faults()
    assert "HTTP 502" in fault["message"] and fault["kind"] == "infrastructure"


def test_retry_after_and_jittered_backoff():
    from mcbuild.llm.transport import retry_after, retry_delay

    assert retry_after({"retry-after": "7"}) == 7.0
    assert retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470.0) == 10.0
    assert retry_after({"retry-after": "soon"}) is None and retry_after(None) is None
    assert retry_delay(3, 1.0, server_wait=500.0, max_backoff=60.0) == 60.0
    waits = [retry_delay(3, 1.0) for _ in range(200)]
    assert all(0.0 <= w <= 4.0 for w in waits) and len(set(waits)) > 100


def test_threads_in_one_process_and_results_on_the_calling_thread():
    caller = threading.get_ident()
    seen: list[tuple[str, int]] = []
    together = threading.Barrier(8, timeout=DEADLINE_S)        # broken unless 8 attempts run at once

    def attempt(entry, done):
        together.wait()
        return AttemptResult(Status.OK, entry.episode_id, done + 1)

    entries = plan_entries(*(f"e{i}" for i in range(16)))
    InflightScheduler(1, 8).run(entries, attempt, lambda r: seen.append((r.episode_id, threading.get_ident())),
                                lambda *a: True)
    assert not together.broken                                   # overlapped, eight at a time
    assert sorted(i for i, _ in seen) == sorted(e.episode_id for e in entries)
    assert {t for _, t in seen} == {caller}


def test_invalid_concurrency_is_refused():
    with pytest.raises(ValueError, match="at least 1"):
        InflightScheduler(1, 0)


def test_faults_at_set_rates_are_retried_logged_when_exhausted_and_never_scored(world_build, tmp_path):
    """The chaos endpoint (tests/chaos_endpoint.py; ``make test-soak`` is its large run): every fault
    kind but the slow drip at set rates, one retry a call. Every planned episode is stored once, each
    exactly as a fault-free run stores it, and the store logs one fault per call whose retry failed too."""
    rates = {"rate_limit": 0.05, "server_error": 0.05, "reset": 0.05, "truncated": 0.04, "oversize": 0.04}
    settings = {"api_key_env": "MCBUILD_TEST_NO_KEY", "max_retries": 1, "backoff": 0.0, "timeout": DEADLINE_S}
    with ChaosEndpoint(responder, rates, seed=7, max_retries=1) as ep:
        cfg = llm_config(ep, repetitions=4, endpoint={"base_url": ep.base_url, **settings})
        runs = [run_study(cfg, out_dir=tmp_path / "chaos", build_root=world_build, concurrency=8)]
        while not runs[-1].complete and len(runs) < 4:          # an episode whose three attempts all failed
            runs.append(run_study(cfg, out_dir=tmp_path / "chaos", build_root=world_build, concurrency=8,
                                  resume=True))
        tally = ep.tally()
    with ScriptedEndpoint(responder, model=ep.model) as clean:
        reference = run_study(llm_config(clean, repetitions=4), out_dir=tmp_path / "clean", build_root=world_build,
                              concurrency=8)
    assert runs[-1].complete and reference.complete and not any(r.errors for r in runs)
    assert set(tally["injected"]) == set(rates) and tally["retried"] > 0 and tally["exhausted"] > 0
    chaos, clean_rows = records(tmp_path / "chaos"), records(tmp_path / "clean")
    assert len(chaos) == len(build_plan(cfg)) == 16
    assert {eid: scored(r) for eid, r in chaos.items()} == {eid: scored(r) for eid, r in clean_rows.items()}
    with Store.open(tmp_path / "chaos") as st:
        logged = [f for f in st.faults() if f["kind"] == "infrastructure"]
    assert len(logged) == tally["exhausted"] == sum(r.infrastructure_faults for r in runs)


def scored(row: dict) -> dict:
    """A stored episode without what a retry may change: its attempts, and each model call's attempts."""
    out = {k: v for k, v in row.items() if k not in ("attempts", "trajectory")}
    steps = [json.loads(line) for line in row["trajectory"].splitlines()]
    for step in steps:
        for call in step.get("llm_calls", ()):
            call.pop("attempts", None)
    return {**out, "trajectory": steps}
