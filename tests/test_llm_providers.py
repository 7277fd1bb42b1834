"""Every provider family answers the first request: each profile's requests pass an endpoint that refuses
as that family does (tests/provider_endpoints.py), and an endpoint no profile describes is adapted to
once, on the record.

* per family, an episode of ``react`` with ``structured: off`` and with ``json_schema`` uses its whole
  budget, and the endpoint never had to refuse a request;
* adaptation: a renamed token cap, a refused sampling value, an unknown field and a refused
  ``response_format`` (a 400, a Gemini list body, a llama-cpp-python 500) are each adapted to once per
  endpoint and model, announced, and kept by the next client; ``adapt: false`` refuses instead;
* Azure's key header and api-version on both request paths; a one-request-at-a-time server gets one
  request at a time; cached and reasoning tokens are read and priced.
"""
from __future__ import annotations

import threading

import pytest
from provider_endpoints import FAMILIES, azure, deepseek, family, gemini, llamacpp, openai_reasoning
from test_agents_llm import MINE_LOG, Script, make, play, world  # noqa: F401 - the world fixture

from mcbuild.llm import client as client_mod
from mcbuild.llm import shape
from mcbuild.llm.client import ChatClient, LLMError
from mcbuild.llm.settings import ModelSettings
from mcbuild.llm.shape import Adjustment
from mcbuild.llm.testing import ScriptedEndpoint

HI = [{"role": "user", "content": "Reply with a JSON object."}]
BUDGET = 3


@pytest.fixture
def announced():
    """Every adaptation announced while the test runs."""
    seen: list[tuple[str, Adjustment]] = []
    stop = shape.listen(lambda model, base_url, adj: seen.append((model, adj)))
    yield seen
    stop()


def provider_of(name: str) -> str | None:
    return None if name == "local" else name         # the strict proxy on loopback is found by its host


@pytest.mark.parametrize("structured", ["off", "json_schema"])
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_each_family_plays_an_episode_without_a_refusal(world, name, structured):
    with family(name, Script(actions=lambda n: MINE_LOG)) as ep:
        agent = make("react", ep, provider=provider_of(name), structured=structured, model=ep.model)
        played, _ = play(world, agent, budget=BUDGET)
    assert played.used == BUDGET and played.end_reason == "budget_exhausted", name
    assert ep.refused == [], (name, ep.refused)
    assert len(ep.requests) == BUDGET                # no repair turns, no retries


def test_the_profiles_shape_what_each_family_receives():
    sent = {}
    for name in ("openai-reasoning", "openai-gpt5x", "gemini", "deepseek", "anthropic", "llamacpp", "local"):
        with family(name, lambda m: '{"ok": true}') as ep:
            ChatClient(ep.settings(model=ep.model, provider=provider_of(name), structured="json_schema")) \
                .chat(HI, schema=client_mod.PROBE)
        sent[name] = ep.requests[0]
    assert "max_completion_tokens" in sent["openai-reasoning"] and "temperature" not in sent["openai-reasoning"]
    assert sent["openai-reasoning"]["reasoning_effort"] == "low"
    assert sent["openai-gpt5x"]["temperature"] == 0.7 and sent["openai-gpt5x"]["reasoning_effort"] == "none"
    assert sent["gemini"]["reasoning_effort"] == "none" and sent["gemini"]["response_format"]["type"] == "json_schema"
    assert sent["deepseek"]["thinking"] == {"type": "disabled"}
    assert sent["deepseek"]["response_format"] == {"type": "json_object"}          # json_schema is refused there
    assert "response_format" not in sent["anthropic"]                             # ignored there: not sent
    assert sent["llamacpp"]["response_format"]["type"] == "json_object" and "schema" in sent["llamacpp"]["response_format"]
    assert set(sent["local"]) == {"model", "messages", "temperature", "max_tokens", "response_format"}


# ---------------------------------------------------------------------------- adaptation
def test_a_reasoning_model_behind_an_unlisted_endpoint_is_adapted_once(world, announced):
    """An o-series model behind a proxy on loopback (the generic local profile): max_tokens renamed,
    temperature left to the provider's default, each once; the episode still uses its whole budget."""
    with ScriptedEndpoint(Script(actions=lambda n: MINE_LOG), model="o4-mini", refuse=openai_reasoning) as ep:
        agent = make("react", ep, model="o4-mini")
        played, _ = play(world, agent, budget=BUDGET)
        later = ChatClient(ep.settings(model="o4-mini"))       # a new client of the same endpoint and model
        later.chat(HI)
    assert played.used == BUDGET
    assert [r[1]["error"]["param"] for r in ep.refused] == ["max_tokens", "temperature"]
    assert "max_tokens" not in ep.requests[-1] and ep.requests[-1]["max_completion_tokens"] == 2048
    assert "temperature" not in ep.requests[-1]
    lines = [adj.line() for _, adj in announced]
    assert lines == [
        "token cap sent as max_completion_tokens (the endpoint refused max_tokens: Unsupported parameter: 'max_tokens' "
        "is not supported with this model. Use 'max_completion_tokens' instead.)",
        "temperature: provider default (the endpoint refused 0.7: Unsupported value: 'temperature' does not support "
        "0.7 with this model. Only the default (1) value is supported.)"]
    assert [a.line() for a in later.adjustments] == lines


@pytest.mark.parametrize("refuse, status", [(deepseek, 400), (llamacpp, 500)], ids=["deepseek", "llama-cpp-python"])
def test_a_refused_response_format_steps_down_and_a_500_refusal_is_not_retried(world, announced, refuse, status):
    waits: list[float] = []
    with ScriptedEndpoint(Script(actions=lambda n: MINE_LOG), model="m", refuse=refuse) as ep:
        client = ChatClient(ep.settings(model="m", structured="json_schema"), sleep=waits.append)
        result = client.chat(HI, schema=client_mod.PROBE)
    assert result.attempts == 2 and waits == []                           # adapted at once, never retried
    assert [s for s, _ in ep.refused] == [status]
    assert ep.requests[-1]["response_format"] == {"type": "json_object"}
    [(_, adj)] = announced
    assert adj.field == "response_format" and (adj.asked, adj.sent) == ("json_schema", "json_object")


def test_a_gemini_list_body_names_the_refused_field(announced):
    with ScriptedEndpoint(lambda m: "{}", model="gemini-3.1-flash-lite", refuse=gemini) as ep:
        client = ChatClient(ep.settings(model="gemini-3.1-flash-lite", provider="gemini",
                                          extra_body={"reasoning_effort": "minimal"}))
        client.chat(HI)
    assert "reasoning_effort" not in ep.requests[-1]
    [(_, adj)] = announced
    assert adj.line() == ("reasoning_effort: provider default (the endpoint refused minimal: Invalid reasoning_effort: "
                          "minimal. Valid values are: high, low, medium, none)")


def test_adapt_false_stops_with_the_providers_own_message(announced):
    with ScriptedEndpoint(lambda m: "{}", model="o3", refuse=openai_reasoning) as ep:
        client = ChatClient(ep.settings(model="o3", adapt=False))
        with pytest.raises(LLMError) as err:
            client.chat(HI)
    message = str(err.value)
    assert "\n" not in message and "the endpoint refused max_tokens" in message
    assert "Unsupported parameter: 'max_tokens' is not supported with this model" in message
    assert len(ep.requests) == 1 and announced == []


def test_a_refusal_naming_no_field_the_client_chose_is_not_adapted(announced):
    refuse = lambda request: (400, {"error": {"message": "Your credit balance is too low."}})
    with ScriptedEndpoint(lambda m: "{}", model="m", refuse=refuse) as ep:
        with pytest.raises(LLMError, match="HTTP 400: .*credit balance"):
            ChatClient(ep.settings(model="m")).chat(HI)
    assert len(ep.requests) == 1 and announced == []


# ---------------------------------------------------------------------------- Azure, one-slot servers, usage
@pytest.mark.parametrize("direct", [True, False], ids=["direct", "library"])
def test_azure_gets_its_key_header_and_api_version(monkeypatch, announced, direct):
    monkeypatch.setenv("AZURE_TEST_KEY", "azure-secret")
    if not direct:
        monkeypatch.setattr(client_mod.wire, "direct_ok", lambda base_url: False)
    with ScriptedEndpoint(lambda m: '{"ok": true}', model="team-gpt5", refuse=azure("azure-secret", "o4-mini")) as ep:
        client = ChatClient(ModelSettings(model="team-gpt5", base_url=f"{ep.root}/openai/deployments/team-gpt5",
                                          api_key_env="AZURE_TEST_KEY", provider="azure-openai-deployments",
                                          max_tokens=64))
        result = client.chat(HI)
    assert result.text == '{"ok": true}'
    # a deployment named freely serves a reasoning model: its refusals were adapted, on the record
    assert [adj.field for _, adj in announced] == ["token_cap", "temperature"]
    assert all(status == 400 for status, _ in ep.refused)


def test_a_key_is_needed_only_where_the_profile_needs_one(monkeypatch):
    monkeypatch.delenv("MCBUILD_NO_SUCH_KEY", raising=False)
    keyless = {"api_key_env": "MCBUILD_NO_SUCH_KEY"}
    for url, provider in (("http://10.1.2.3:8000/v1", None), ("http://gpu-box.example.org:8000/v1", "vllm"),
                          ("http://gpu-box.example.org:8080/v1", "llamacpp"), ("http://127.0.0.1:9/v1", "gemini")):
        ChatClient(ModelSettings(model="m", base_url=url, provider=provider, **keyless))   # no key: none needed
    with pytest.raises(client_mod.MissingKey, match=r"\$MCBUILD_NO_SUCH_KEY"):
        ChatClient(ModelSettings(model="m", base_url="https://api.example.com/v1", **keyless))
    with pytest.raises(client_mod.MissingKey, match=r"\$GEMINI_API_KEY"):
        monkeypatch.delenv("GEMINI_API_KEY", raising=False)
        ChatClient(ModelSettings(model="gemini-3.1-flash-lite"))       # Google's endpoint, its key variable


def test_a_one_request_server_gets_one_request_at_a_time():
    with family("llamacpp", lambda m: "{}", latency=0.2) as ep:
        clients = [ChatClient(ep.settings(model=ep.model, provider="llamacpp", timeout=None)) for _ in range(4)]
        assert clients[0].settings.max_in_flight == 1 and clients[0]._direct.timeout == 600
        threads = [threading.Thread(target=c.chat, args=(HI,)) for c in clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(ep.requests) == 4 and ep.in_flight_max == 1


def test_cached_and_reasoning_tokens_are_read_and_priced():
    prices = {"deepseek-v4-flash": {"input": 0.30, "cached_input": 0.006, "output": 1.20},
              "gemini-3.1-flash-lite": {"input": 0.25, "output": 1.50}}        # no cached price: billed as input
    with family("deepseek", lambda m: "{}") as ep:
        ds = ChatClient(ep.settings(model=ep.model, provider="deepseek", prices=prices)).chat(HI).usage
    with family("gemini", lambda m: "{}") as ep:
        gm = ChatClient(ep.settings(model=ep.model, provider="gemini", prices=prices)).chat(HI).usage
    assert (ds.prompt_tokens, ds.cached_prompt_tokens, ds.completion_tokens) == (100, 60, 10)
    assert ds.cost_usd == pytest.approx((40 * 0.30 + 60 * 0.006 + 10 * 1.20) / 1e6) and ds.priced
    assert gm.cached_prompt_tokens == 60 and gm.cost_usd == pytest.approx((100 * 0.25 + 10 * 1.50) / 1e6)


# ---------------------------------------------------------------------------- the Designer and Judge
def test_the_designer_and_judge_with_a_gpt5_model_get_answers(monkeypatch, tmp_path):
    """``mcbuild design`` with its default model, the paper's GPT-5.6 Sol, against an endpoint that refuses
    as OpenAI's reasoning family does: with its profile nothing is refused; behind a loopback proxy
    (the generic profile) the token cap is adapted once, announced, and the round still completes."""
    import json

    from click.testing import CliRunner
    from test_design_loop import designer, judge, spec_of

    from mcbuild.cli import main

    def reply(messages):       # the Designer's first prompt carries the not-yet-run Judge report
        return designer(spec_of("m04")) if '"verdict": "not_run"' in messages[1]["content"] else judge("accept")

    for provider, refusals in (("openai-gpt5x", 0), (None, 1)):
        with ScriptedEndpoint(reply, model="gpt-5.6-sol", refuse=openai_reasoning) as ep:
            args = ["design", "--kind", "mirror", "--tasks", "iron_armor,diamond,enchantment", "--rounds", "1",
                    "--base-url", ep.base_url, "--api-key-env", "MCBUILD_TEST_NO_KEY", "--max-tokens", "4000",
                    "--temperature", "0.7", "--no-reasoning", "--structured", "json_schema",
                    "--design-dir", str(tmp_path / "d"), "--run-id", f"r{refusals}", "--out",
                    str(tmp_path / f"new{refusals}.yaml"), *(["--provider", provider] if provider else [])]
            result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert "Judge accepted" in result.output and len(ep.refused) == refusals
        assert all(r["model"] == "gpt-5.6-sol" and "max_completion_tokens" in r for r in ep.requests[refusals:])
        assert [r["response_format"]["json_schema"]["name"] for r in ep.requests[refusals:]] == \
            ["DesignerReply", "JudgeReply"]
        warned = [line for line in result.output.splitlines() if line.startswith("warning:")]
        assert len(warned) == refusals and all("token cap sent as max_completion_tokens" in w for w in warned)
        assert json.loads((tmp_path / "d" / f"r{refusals}" / "run.json").read_text())["status"] == "accepted"


@pytest.mark.parametrize("body, field, rename", [
    ('{"error": {"message": "Unsupported parameter: \'max_tokens\' is not supported with this model. Use '
     '\'max_completion_tokens\' instead.", "param": "max_tokens", "code": "unsupported_parameter"}}',
     "max_tokens", "max_completion_tokens"),
    ('{"error": {"message": "max_tokens is too large: 100000. This model supports at most 16384 completion tokens, '
     'whereas you provided 100000.", "param": "max_tokens", "code": "invalid_value"}}', None, None),
    ('{"error": {"message": "Unrecognized request argument supplied: chat_template_kwargs", "param": null}}',
     "chat_template_kwargs", None),
    ('[{"error": {"code": 400, "message": "Invalid JSON payload received. Unknown name \\"top_k\\": Cannot find '
     'field.", "status": "INVALID_ARGUMENT"}}]', "top_k", None),
    ('{"detail": [{"loc": ["body", "response_format", "type"], "msg": "Input should be \'text\' or \'json_object\'"}]}',
     "response_format", None),
    ('{"error": {"message": "This model\'s maximum context length is 8192 tokens. However, you requested 10000 '
     'tokens.", "param": "messages", "code": "context_length_exceeded"}}', None, None),
], ids=["cap renamed", "cap value", "unknown field", "gemini list", "fastapi detail", "context length"])
def test_a_refusal_names_the_field_the_client_chose_or_nothing(body, field, rename):
    sent = {"model": "m", "messages": [], "temperature": 0.7, "max_tokens": 100000, "top_k": 20,
            "chat_template_kwargs": {}, "response_format": {"type": "json_schema"}}
    refusal = shape.read_refusal(body, sent)
    assert (refusal.field if refusal else None, refusal.rename_to if refusal else None) == (field, rename)


# ---------------------------------------------------------------------------- the data against the endpoints
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_each_profile_agrees_with_its_familys_test_endpoint(name):
    """What profiles.yaml says of a family is what its test endpoint (tests/provider_endpoints.py) does:
    each request the profile shapes is accepted in every structured mode, and so are its known extra
    fields; a reasoning family refuses max_tokens; an unknown field is refused exactly where the
    profile says so, in the error body's shape it names; json_object without the word
    json is refused exactly where ``json_word`` says; a family that refuses a shape with a 5xx says
    ``refusal_5xx``."""
    from mcbuild.llm.client import planned_request
    from mcbuild.llm.profiles import profile
    from mcbuild.llm.testing import Request

    refuse, _, model, _ = FAMILIES[name]
    prof = profile(name)
    path = "/openai/v1/chat/completions" if name.startswith("azure") else "/v1/chat/completions"
    headers = {"api-key": client_mod.DUMMY_KEY, "authorization": f"Bearer {client_mod.DUMMY_KEY}"}

    def answer(body):
        return refuse(Request(path, {}, headers, body))

    settings = ModelSettings(model=model, base_url="http://127.0.0.1:9/v1", provider=provider_of(name),
                             api_key_env="MCBUILD_TEST_NO_KEY", sampling_seed=3, top_p=0.9)
    bodies = {mode: planned_request(settings.model_copy(update={"structured": mode}), HI, client_mod.PROBE)[2]
              for mode in ("off", "json_object", "json_schema")}
    assert {mode: answer(body) for mode, body in bodies.items()} == dict.fromkeys(bodies), name
    unknown = answer({**bodies["off"], "mcbuild_unknown_field": 1})
    assert (unknown is not None) == (prof.unknown_fields == "refused"), name
    if unknown is not None:
        assert unknown[0] == 400 and isinstance(unknown[1], list) == (prof.error_body == "list"), name
    wordless = [{"role": "user", "content": "Reply with an object."}]
    assert (answer({**bodies["off"], "messages": wordless, "response_format": {"type": "json_object"}}) is not None) \
        == prof.json_word, name
    for extra in prof.extra_fields:                        # the fields it is known to accept
        assert answer({**bodies["off"], extra: 20}) is None, (name, extra)
    if prof.token_cap == "max_completion_tokens":          # the other cap's name is refused
        renamed = {("max_tokens" if k == "max_completion_tokens" else k): v for k, v in bodies["off"].items()}
        assert answer(renamed) is not None, name
    openai_form = {"type": "json_schema", "json_schema": {"name": "p", "schema": {"type": "object"}}}
    shape_refused = answer({**bodies["off"], "messages": HI, "response_format": openai_form})
    if shape_refused is not None and shape_refused[0] >= 500:
        assert prof.refusal_5xx, name


def test_a_500_from_a_hosted_family_is_a_fault_not_a_refusal(announced):
    """Only a profile with ``refusal_5xx`` reads a 500 naming a field as a refusal: Gemini's 500 is retried."""
    answered: list[int] = []

    def refuse(request):
        if not answered:
            answered.append(1)
            return 500, [{"error": {"code": 500, "message": "Internal error while reading response_format",
                                    "status": "INTERNAL"}}]
        return None

    waits: list[float] = []
    with ScriptedEndpoint(lambda m: '{"ok": true}', model="gemini-3.1-flash-lite", refuse=refuse) as ep:
        result = ChatClient(ep.settings(model=ep.model, provider="gemini", structured="json_schema"),
                            sleep=waits.append).chat(HI, schema=client_mod.PROBE)
    assert result.attempts == 2 and len(waits) == 1 and announced == []
    assert ep.requests[-1]["response_format"]["type"] == "json_schema"        # not stepped down


def test_the_docs_cite_every_profile_and_its_sources():
    """docs/agents.md lists each row of profiles.yaml with every source it cites (the data is the one source)."""
    from pathlib import Path

    from mcbuild.llm.profiles import load_profiles

    docs = (Path(__file__).resolve().parent.parent / "docs" / "agents.md").read_text(encoding="utf-8")
    sources = docs.split("### Sources", 1)[1].split("### Adaptation", 1)[0]
    listed = {line.split("`")[1]: line for line in sources.splitlines() if line.startswith("- `")}
    assert set(listed) == {p.name for p in load_profiles()}
    for p in load_profiles():
        assert all(f"<{url}>" in listed[p.name] for url in p.sources), p.name
