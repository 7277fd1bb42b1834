"""A study against an endpoint that refuses as a reasoning model's does: the preflight adapts once, the
adaptation is kept in the store, printed once and shown by ``study status``; cached prompt tokens are
recorded per episode, priced at the cached price in the study's cost, and exported; an unpriced model
reads ``unpriced``, never $0.00."""
from __future__ import annotations

import io
import json

import pytest
from provider_endpoints import openai_reasoning
from test_study_inflight import responder

from mcbuild.llm.testing import PROMPT_TOKENS, ScriptedEndpoint
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.run.runner import run_study
from mcbuild.runtime.study.store.export import export
from mcbuild.runtime.study.store.results import Store
from mcbuild.runtime.study.store.status import read_status

CACHED = 60
PRICES = {"o4-mini": {"input": 1.0, "cached_input": 0.25, "output": 4.0}}      # USD per 1M tokens


def config(ep: ScriptedEndpoint, **kw) -> StudyConfig:
    data = dict(name="providers", worlds=["plains-1"], conditions=["vanilla"], tasks=["iron_armor"],
                configurations=["react"], repetitions=2, budget=3, base_seed=5,
                models=[{"name": ep.model, "base_url": ep.base_url, "api_key_env": "MCBUILD_TEST_NO_KEY",
                         "prices": PRICES}])
    data.update(kw)
    return StudyConfig.model_validate(data)


def reasoning_endpoint(**kw) -> ScriptedEndpoint:
    """o4-mini behind a proxy on loopback: the generic local profile sends max_tokens and temperature."""
    return ScriptedEndpoint(responder, model="o4-mini", refuse=openai_reasoning,
                            usage=lambda body: {"prompt_tokens_details": {"cached_tokens": CACHED}}, **kw)


def test_the_adaptation_is_stored_printed_once_and_shown_by_status(world_build, tmp_path):
    stream = io.StringIO()
    with reasoning_endpoint() as ep:
        s = run_study(config(ep), out_dir=tmp_path / "s", build_root=world_build, progress=False, stream=stream)
        refused = list(ep.refused)
    assert s.complete and not s.errors and s.infrastructure_faults == 0
    assert len(refused) == 2                              # the preflight's two refusals; no episode was refused
    warnings = [line for line in stream.getvalue().splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: model 'o4-mini': token cap sent as max_completion_tokens (the endpoint refused max_tokens: "
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' "
        "instead.)",
        "warning: model 'o4-mini': temperature: provider default (the endpoint refused 0.7: Unsupported value: "
        "'temperature' does not support 0.7 with this model. Only the default (1) value is supported.)"]
    with Store.open(tmp_path / "s") as st:
        meta = json.loads(st.meta()["adaptations"])
        rows = st.records()
    assert [a["field"] for a in meta["o4-mini"]] == ["token_cap", "temperature"]
    assert all([a["field"] for a in r["adaptations"]] == ["token_cap", "temperature"] for r in rows)
    status = read_status(tmp_path / "s").lines()
    assert [line for line in status if line.startswith("adapted:")] == [
        w.replace("warning: ", "adapted: ") for w in warnings]


def test_cached_tokens_are_recorded_priced_and_exported(world_build, tmp_path):
    with reasoning_endpoint() as ep:
        s = run_study(config(ep), out_dir=tmp_path / "s", build_root=world_build, progress=False)
    assert s.complete
    with Store.open(tmp_path / "s") as st:
        rows = st.records()
    for r in rows:
        calls = r["tokens_in"] // PROMPT_TOKENS
        assert r["cached_prompt_tokens"] == CACHED * calls and r["priced"] is True
        full = (r["tokens_in"] * 1.0 + r["tokens_out"] * 4.0) / 1e6
        assert r["cost_usd"] == pytest.approx(full - r["cached_prompt_tokens"] * (1.0 - 0.25) / 1e6)
        assert r["cost_usd"] < full
    path, n = export(tmp_path / "s")
    exported = [json.loads(line)["record"] for line in path.open()]
    assert n == len(rows) and [e["cached_prompt_tokens"] for e in exported] == [r["cached_prompt_tokens"] for r in rows]


def test_an_unpriced_model_reads_unpriced_never_zero(world_build, tmp_path):
    stream = io.StringIO()
    with ScriptedEndpoint(responder, model="unlisted-model") as ep:
        cfg = config(ep, models=[{"name": ep.model, "base_url": ep.base_url, "api_key_env": "MCBUILD_TEST_NO_KEY"}])
        s = run_study(cfg, out_dir=tmp_path / "s", build_root=world_build, progress=True, stream=stream)
    assert s.complete
    bar = stream.getvalue().splitlines()[-1]
    assert bar.endswith("unpriced") and "$0.00" not in bar
    spent = next(line for line in read_status(tmp_path / "s").lines() if line.startswith("spent:"))
    assert spent.startswith("spent: unpriced") and "2 episode(s) of a model with no price" in spent
