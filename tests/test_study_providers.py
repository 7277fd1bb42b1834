"""A study against an endpoint that refuses as a reasoning model's does: the preflight adapts once, the
adaptation is kept in the store, printed once and shown by ``study status``; cached prompt tokens are
recorded per episode, priced at the cached price in the study's cost, and exported; an unpriced model
reads ``unpriced``, never $0.00; a refusal that is not adapted to (``adapt: false``, or nothing the
client chose) stops ``study run`` at the preflight, before any episode, in one line."""
from __future__ import annotations

import json

import pytest
from provider_endpoints import openai_reasoning
from test_study_inflight import responder

from mcbuild.llm.testing import PROMPT_TOKENS, ScriptedEndpoint
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.report import load_study
from mcbuild.runtime.study.report.extras import table_model_settings
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
    printed: list[str] = []
    with reasoning_endpoint() as ep:
        s = run_study(config(ep), out_dir=tmp_path / "s", build_root=world_build, warn=printed.append)
        refused = list(ep.refused)
    assert s.complete and not s.errors and s.infrastructure_faults == 0
    assert len(refused) == 2                              # the preflight's two refusals; no episode was refused
    warnings = [line for line in printed if line.startswith("warning:")]
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
    table = {row[1]: row[2:] for row in table_model_settings(load_study(tmp_path / "s")).rows}
    assert table["temperature"] == ["0.7", "provider default (the endpoint refused 0.7: Unsupported value: "
                                           "'temperature' does not support 0.7 with this model. Only the default (1) "
                                           "value is supported.)"]
    assert table["token cap"][0] == "max_tokens 2048" and table["token cap"][1].startswith("max_completion_tokens 2048")
    assert table["provider profile"][1].startswith("local ")


def test_cached_tokens_are_recorded_priced_and_exported(world_build, tmp_path):
    with reasoning_endpoint() as ep:
        s = run_study(config(ep), out_dir=tmp_path / "s", build_root=world_build)
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
    shown: list[str] = []
    with ScriptedEndpoint(responder, model="unlisted-model") as ep:
        cfg = config(ep, models=[{"name": ep.model, "base_url": ep.base_url, "api_key_env": "MCBUILD_TEST_NO_KEY"}])
        s = run_study(cfg, out_dir=tmp_path / "s", build_root=world_build, progress=lambda t: shown.append(t.stats()))
    assert s.complete
    assert shown[-1].endswith("unpriced") and "$0.00" not in shown[-1]        # what the progress line shows
    spent = next(line for line in read_status(tmp_path / "s").lines() if line.startswith("spent:"))
    assert spent.startswith("spent: unpriced") and "2 episode(s) of a model with no price" in spent


def test_the_papers_models_go_to_their_providers():
    from mcbuild.llm.providers import profile_of, resolved
    from mcbuild.runtime.study.design.config import load_config

    paper = load_config("paper")
    got = {m: resolved(paper.llm_settings(m)) for m in paper.models}
    assert {m: (profile_of(s).name, s.base_url, s.api_key_env) for m, s in got.items()} == {
        "gemini-3.1-flash-lite": ("gemini", "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY"),
        "deepseek-v4-flash": ("deepseek", "https://api.deepseek.com", "DEEPSEEK_API_KEY")}


def test_dry_run_prints_each_models_profile_and_exact_first_request(world_build, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from mcbuild.cli import main

    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test")
    study = tmp_path / "two.yaml"
    study.write_text("name: two\nworlds: [plains-1]\nconditions: [vanilla]\ntasks: [iron_armor]\n"
                     "configurations: [react]\n"
                     "models:\n  - {name: gemini-3.1-flash-lite, provider: gemini, structured: json_schema}\n"
                     "  - {name: deepseek-v4-flash, provider: deepseek, structured: json_schema}\n")
    res = CliRunner().invoke(main, ["study", "run", str(study), "--dry-run", "--build", str(world_build),
                                    "--extra-body", '{"top_k": 20, "thinking": null}'])
    assert res.exit_code == 0, res.output
    out = res.output
    assert "model 'gemini-3.1-flash-lite': provider profile gemini" in out
    assert "POST https://generativelanguage.googleapis.com/v1beta/openai/chat/completions  key $GEMINI_API_KEY " \
           "(not set)" in out
    assert "POST https://api.deepseek.com/chat/completions  key $DEEPSEEK_API_KEY (set)" in out
    assert "differs from its settings: response_format: json_object (profile deepseek" in out
    bodies = [json.loads(chunk.split("):\n", 1)[1].split("\nmodel '", 1)[0])
              for chunk in out.split("  first request (")[1:]]
    gemini, deepseek = bodies
    assert gemini["reasoning_effort"] == "none" and gemini["response_format"]["type"] == "json_schema"
    assert "thinking" not in deepseek and deepseek["response_format"] == {"type": "json_object"}   # null dropped it
    assert gemini["top_k"] == deepseek["top_k"] == 20                               # --extra-body reaches the body
    assert gemini["messages"][0]["role"] == "system" and "JSON" in gemini["messages"][0]["content"]
    assert not (tmp_path / "build" / "studies").exists()


@pytest.mark.parametrize("case", ["adapt false", "nothing to adapt"])
def test_a_refusal_that_is_not_adapted_stops_the_study_before_any_episode(world_build, tmp_path, case):
    """``study run`` with ``adapt: false`` against a reasoning model's endpoint, or against one refusing what
    no field of the request can fix: exit 1, one line with the provider's own message, no episode run
    and none stored; the preflight's request is the only one sent."""
    from click.testing import CliRunner

    from mcbuild.cli import main

    refuse = openai_reasoning if case == "adapt false" else \
        (lambda request: (400, {"error": {"message": "Your credit balance is too low to access the API.",
                                          "type": "invalid_request_error", "param": None, "code": None}}))
    with ScriptedEndpoint(responder, model="o4-mini", refuse=refuse) as ep:
        study = tmp_path / "s.yaml"
        study.write_text("name: s\nworlds: [plains-1]\nconditions: [vanilla]\ntasks: [iron_armor]\n"
                         "configurations: [react]\nrepetitions: 1\nbudget: 3\n"
                         f"models:\n  - {{name: o4-mini, base_url: '{ep.base_url}', api_key_env: MCBUILD_TEST_NO_KEY,"
                         f" prices: {{o4-mini: {{input: 1.0, output: 4.0}}}}, adapt: {str(case != 'adapt false').lower()}}}\n")
        res = CliRunner().invoke(main, ["study", "run", str(study), "--build", str(world_build),
                                        "--out", str(tmp_path / "out")])
        sent = list(ep.requests)
    assert res.exit_code == 1, res.output
    [line] = [line for line in res.output.splitlines() if "o4-mini" in line and "HTTP 400" in line]
    assert "Traceback" not in res.output
    if case == "adapt false":
        assert "the endpoint refused max_tokens" in line and "adapt is off" in line
        assert "Unsupported parameter: 'max_tokens' is not supported with this model" in line
    else:
        assert "Your credit balance is too low to access the API." in line
    assert len(sent) == 1                                     # the preflight's request, nothing more
    if (tmp_path / "out").exists():
        with Store.open(tmp_path / "out") as st:
            assert st.count() == 0


def test_an_azure_key_sent_as_its_header_reaches_no_file_and_no_line(world_build, tmp_path, monkeypatch):
    """The key goes only into the request's ``api-key`` header: not into the store, the trajectories, the
    warnings of the adaptations it met, ``study status`` or a dry run's output."""
    from click.testing import CliRunner

    from mcbuild.cli import main
    from provider_endpoints import azure

    secret = "azure-secret-7c1d9e"
    monkeypatch.setenv("MCBUILD_TEST_AZURE_KEY", secret)
    printed: list[str] = []
    with ScriptedEndpoint(responder, model="team-o4", refuse=azure(secret, "o4-mini")) as ep:
        entry = {"name": "team-o4", "base_url": f"{ep.root}/openai/deployments/team-o4",
                 "provider": "azure-openai-deployments", "api_key_env": "MCBUILD_TEST_AZURE_KEY", "prices": PRICES}
        s = run_study(config(ep, models=[entry]), out_dir=tmp_path / "s", build_root=world_build, warn=printed.append)
        study = tmp_path / "s.yaml"
        study.write_text(f"name: s\nworlds: [plains-1]\nconditions: [vanilla]\ntasks: [iron_armor]\n"
                         f"configurations: [react]\nmodels:\n  - {json.dumps(entry)}\n")
        dry = CliRunner().invoke(main, ["study", "run", str(study), "--dry-run", "--build", str(world_build)])
    assert s.complete and not s.errors and len(printed) == 2                   # adapted: cap and temperature
    assert dry.exit_code == 0 and "key $MCBUILD_TEST_AZURE_KEY (set)" in dry.output
    shown = "\n".join([*printed, *read_status(tmp_path / "s").lines(), dry.output])
    assert secret not in shown
    for path in (tmp_path / "s").rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
