"""The Designer/Judge loop against a scripted local OpenAI-compatible endpoint."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from mcbuild.pipeline.build import compile_data
from mcbuild.compiler.core.paths import SPECS
from mcbuild.compiler.spec.kinds import load_spec
from mcbuild.llm.client import ChatClient, LLMError
from mcbuild.llm.replies import extract_json
from mcbuild.llm.settings import ModelSettings
from mcbuild.cli import main

TASKS = ["iron_armor", "diamond", "enchantment"]
PROMPT_TOKENS, COMPLETION_TOKENS = 100, 50
COST_PER_CALL = (PROMPT_TOKENS * 1.0 + COMPLETION_TOKENS * 2.0) / 1_000_000  # "scripted" in prices.json


class Script:
    """Scripted replies, served in order; each entry is a reply text or an HTTP status (int)."""

    def __init__(self):
        self.replies: list[str | int] = []
        self.requests: list[dict] = []


@pytest.fixture
def endpoint():
    script = Script()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep test output quiet
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            script.requests.append(body)
            reply = script.replies.pop(0) if script.replies else 500
            if isinstance(reply, int):
                data = json.dumps({"error": {"message": "scripted failure", "type": "server_error"}}).encode()
                self.send_response(reply)
            else:
                data = json.dumps({
                    "id": f"chatcmpl-{len(script.requests)}", "object": "chat.completion", "created": 0,
                    "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": reply}}],
                    "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS,
                              "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS},
                }).encode()
                self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    script.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield script
    server.shutdown()
    server.server_close()


def spec_of(name: str) -> dict:
    data = yaml.safe_load((SPECS / f"{name}.yaml").read_text())
    return {**data, "id": f"designed-{name}", "selected_tasks": TASKS}


def designer(spec: dict, summary: str = "compressed drops", feedback: list[str] | None = None) -> str:
    return json.dumps({"schema_version": "1.0", "kind": "mirror", "design_summary": summary,
                       "resolved_feedback": feedback or [], "spec": spec})


def judge(verdict: str, *, solvable: bool = True, instructions: list[str] | None = None,
          hard: list[str] | None = None) -> str:
    return json.dumps({
        "schema_version": "1.0", "kind": "mirror", "verdict": verdict, "confidence": 0.8,
        "summary": f"scripted {verdict}", "hard_failures": hard or [], "warnings": [],
        "task_assessments": [{"task": t, "solvable": solvable, "route": ["log", "planks"], "principal_risk": "none"}
                             for t in TASKS],
        "change_assessments": [{"change": "iron-ore-block", "assessment": "relevant and observable"}],
        "revision_instructions": instructions or [],
    })


def run(endpoint, tmp_path: Path, monkeypatch, *extra: str, rounds: int = 4):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "new.yaml"
    args = ["design", "--kind", "mirror", "--tasks", ",".join(TASKS), "--rounds", str(rounds),
            "--model", "scripted", "--base-url", endpoint.url, "--max-retries", "0",
            "--design-dir", str(tmp_path / "design"), "--run-id", "run", "--out", str(out), *extra]
    result = CliRunner().invoke(main, args)
    return result, out, tmp_path / "design" / "run"


def test_accept_on_round_one(endpoint, tmp_path, monkeypatch):
    endpoint.replies = [designer(spec_of("m04")), judge("accept")]
    result, out, run_dir = run(endpoint, tmp_path, monkeypatch)
    assert result.exit_code == 0, result.output
    assert "round 1/4: Judge accepted" in result.output
    art = compile_data(yaml.safe_load(out.read_text()), str(out))  # ready for `mcbuild compile`
    assert art.id == "designed-m04" and load_spec(out).kind == "mirror"
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "accepted" and record["rounds_run"] == 1
    assert record["usage"]["calls"] == 2
    assert record["usage"]["cost_usd"] == pytest.approx(2 * COST_PER_CALL)
    for name in ("designer_prompt.json", "designer_calls.json", "designer_reply.json", "candidate.json",
                 "static_report.json", "judge_prompt.json", "judge_calls.json", "judge_reply.json"):
        assert (run_dir / "round-01" / name).is_file(), name
    # the Designer saw a not_run Judge report; the Judge saw the static report
    assert '"verdict": "not_run"' in endpoint.requests[0]["messages"][1]["content"]
    assert '"on_routes"' in endpoint.requests[1]["messages"][1]["content"]
    # the Designer's own settings layer: the provider's sampling defaults, no reasoning switch
    assert all(list(r) == ["model", "messages"] for r in endpoint.requests)


def test_design_takes_the_model_settings_options_and_the_old_retries_spelling(endpoint, tmp_path, monkeypatch):
    endpoint.replies = [designer(spec_of("m04")), judge("accept")]
    result, _, _ = run(endpoint, tmp_path, monkeypatch, "--temperature", "0.3", "--max-tokens", "9000",
                       "--no-reasoning")
    assert result.exit_code == 0, result.output
    assert [(r["temperature"], r["max_tokens"], r.get("chat_template_kwargs")) for r in endpoint.requests] == \
        [(0.3, 9000, None)] * 2          # a loopback server of no named kind: no reasoning switch to send
    args = ["design", "--kind", "mirror", "--retries", "0", "--max-retries", "1", "--static-only"]
    assert "give only --max-retries" in CliRunner().invoke(main, args).output


def test_revise_then_accept(endpoint, tmp_path, monkeypatch):
    note = "drop the cow bookshelf change; it makes the enchanting route too short"
    endpoint.replies = [designer(spec_of("m04")), judge("revise", instructions=[note]),
                        designer(spec_of("m02"), feedback=[note]), judge("accept")]
    result, out, run_dir = run(endpoint, tmp_path, monkeypatch)
    assert result.exit_code == 0, result.output
    assert "Judge asks for revision" in result.output
    assert json.loads((run_dir / "round-01" / "judge_reply.json").read_text())["verdict"] == "revise"
    second_prompt = json.loads((run_dir / "round-02" / "designer_prompt.json").read_text())
    assert note in second_prompt[1]["content"]
    assert yaml.safe_load(out.read_text())["id"] == "designed-m02"


def test_non_whitelisted_item_is_fed_back(endpoint, tmp_path, monkeypatch):
    bad = spec_of("m04")
    bad["changes"] = [dict(c) for c in bad["changes"]]
    bad["changes"][4] = {**bad["changes"][4], "outputs": [{"item": "minecraft:tnt", "count": 1}]}
    endpoint.replies = [designer(bad), designer(spec_of("m04"), feedback=["tnt is not allowed"]), judge("accept")]
    result, out, run_dir = run(endpoint, tmp_path, monkeypatch)
    assert result.exit_code == 0, result.output
    static = json.loads((run_dir / "round-01" / "static_report.json").read_text())
    assert static["compiled"] is False
    assert static["hard_failures"][0]["field"] == "changes[4].outputs[0].item"
    assert not (run_dir / "round-01" / "judge_prompt.json").exists()  # the Judge did not run
    prompt = endpoint.requests[1]["messages"][1]["content"]
    assert "is not an allowed output" in prompt and '"verdict": "not_run"' in prompt
    assert out.is_file()


def test_invalid_json_is_repaired(endpoint, tmp_path, monkeypatch):
    endpoint.replies = ["Here is my design: {\"schema_version\": \"1.0\", \"kind\": ", designer(spec_of("m04")),
                        judge("accept")]
    result, out, run_dir = run(endpoint, tmp_path, monkeypatch)
    assert result.exit_code == 0, result.output
    calls = json.loads((run_dir / "round-01" / "designer_calls.json").read_text())["calls"]
    assert len(calls) == 2
    repair_turn = endpoint.requests[1]["messages"]
    assert repair_turn[-2]["role"] == "assistant" and "could not be used" in repair_turn[-1]["content"]
    assert out.is_file()


def test_unusable_replies_are_recorded_and_the_loop_goes_on(endpoint, tmp_path, monkeypatch):
    """A Designer reply still invalid after its repairs ends the round with a recorded failure (its
    calls and usage stored, the Judge not asked); an unusable Judge reply likewise; the loop goes on."""
    from mcbuild.designer_judge.loop import JSON_REPAIRS
    bad = ["not json"] * (JSON_REPAIRS + 1)
    endpoint.replies = [*bad, designer(spec_of("m04")), *bad, designer(spec_of("m04")), judge("accept")]
    result, out, run_dir = run(endpoint, tmp_path, monkeypatch, rounds=3)
    assert result.exit_code == 0, result.output
    assert "Designer reply unusable" in result.output and "Judge reply unusable" in result.output
    first = json.loads((run_dir / "round-01" / "static_report.json").read_text())
    assert first["stage"] == "designer_reply" and first["hard_failures"][0]["code"] == "designer_reply_invalid"
    assert not (run_dir / "round-01" / "judge_prompt.json").exists()
    for rd, role in (("round-01", "designer"), ("round-02", "judge")):
        stored = json.loads((run_dir / rd / f"{role}_calls.json").read_text())
        assert len(stored["calls"]) == JSON_REPAIRS + 1 and stored["usage"]["prompt_tokens"] > 0
    assert out.is_file() and len(endpoint.requests) == 2 * (JSON_REPAIRS + 1) + 3


def test_reject_ends_with_nonzero_exit(endpoint, tmp_path, monkeypatch):
    endpoint.replies = [designer(spec_of("m04")), judge("reject", hard=["the suite trivializes enchantment"])]
    result, out, run_dir = run(endpoint, tmp_path, monkeypatch)
    assert result.exit_code == 1
    assert "rejected" in result.output and "trivializes" in result.output
    assert not out.exists()
    assert json.loads((run_dir / "run.json").read_text())["status"] == "rejected"


def test_rounds_exhausted_writes_nothing(endpoint, tmp_path, monkeypatch):
    endpoint.replies = [designer(spec_of("m04")), judge("revise", instructions=["x"]),
                        designer(spec_of("m04")), judge("revise", instructions=["y"])]
    result, out, run_dir = run(endpoint, tmp_path, monkeypatch, rounds=2)
    assert result.exit_code == 1
    assert "exhausted after 2 rounds" in result.output
    assert not out.exists() and not (run_dir / "accepted.yaml").exists()
    assert (run_dir / "round-02" / "judge_reply.json").is_file()


def test_accept_with_unsolvable_task_is_not_honoured(endpoint, tmp_path, monkeypatch):
    endpoint.replies = [designer(spec_of("m04")), judge("accept", solvable=False)]
    result, out, run_dir = run(endpoint, tmp_path, monkeypatch, rounds=1)
    assert result.exit_code == 1 and not out.exists()
    assert "accept not honoured" in (run_dir / "round-01" / "judge_reply.json").read_text()


def test_missing_key_is_one_readable_line(tmp_path, monkeypatch):
    monkeypatch.delenv("MCBUILD_TEST_KEY", raising=False)
    result = CliRunner().invoke(main, ["design", "--kind", "mirror", "--tasks", "diamond", "--api-key-env",
                                       "MCBUILD_TEST_KEY", "--out", str(tmp_path / "x.yaml")])
    assert result.exit_code == 1
    assert "no API key: set $MCBUILD_TEST_KEY" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "x.yaml").exists()


def test_unreachable_endpoint_is_one_readable_line(tmp_path, monkeypatch):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = CliRunner().invoke(main, ["design", "--kind", "mirror", "--tasks", "diamond", "--max-retries", "0",
                                       "--base-url", f"http://127.0.0.1:{port}/v1", "--design-dir",
                                       str(tmp_path / "d"), "--out", str(tmp_path / "x.yaml")])
    assert result.exit_code == 1
    assert "error: cannot reach model" in result.output and "Traceback" not in result.output
    runs = list((tmp_path / "d").iterdir()) if (tmp_path / "d").exists() else []
    assert all(json.loads((r / "run.json").read_text())["status"] == "failed" for r in runs)


def test_client_retries_transport_errors_and_prices_calls(endpoint, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    waits: list[float] = []
    client = ChatClient(ModelSettings(model="scripted", base_url=endpoint.url, max_retries=2, backoff=0.5),
                        sleep=waits.append)
    endpoint.replies = [503, 500, '{"ok": true}']
    result = client.chat([{"role": "user", "content": "hi"}])
    assert result.text == '{"ok": true}' and result.attempts == 3
    assert len(waits) == 2 and 0 <= waits[0] <= 0.5 and 0 <= waits[1] <= 1.0     # jittered backoff
    assert result.usage.cost_usd == pytest.approx(COST_PER_CALL) and result.usage.priced
    endpoint.replies = [400]
    with pytest.raises(LLMError, match="HTTP 400"):  # not a transport error: no retry
        client.chat([{"role": "user", "content": "hi"}])
    assert len(endpoint.requests) == 4


def test_extract_json_tolerates_fences_and_prose():
    assert extract_json('```json\n{"a": 1}\n```') == {"a": 1}
    assert extract_json('Sure: {"a": {"b": 2}} done') == {"a": {"b": 2}}
    assert extract_json('{"thought": "two\nlines"}') == {"thought": "two\nlines"}     # a raw newline in a string
    with pytest.raises(ValueError):
        extract_json("no json here")


def test_biome_goes_through_the_same_loop(endpoint, tmp_path, monkeypatch):
    plains = {**yaml.safe_load((SPECS / "plains.yaml").read_text()), "id": "designed-plains", "selected_tasks": TASKS}
    bad = {**plains, "base_biome": "minecraft:nether_wastes"}
    reply = lambda spec: json.loads(designer(spec)) | {"kind": "biome"}
    accept = json.loads(judge("accept")) | {"kind": "biome"}
    endpoint.replies = [json.dumps(reply(bad)), json.dumps(reply(plains)), json.dumps(accept)]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "biome.yaml"
    result = CliRunner().invoke(main, ["design", "--kind", "biome", "--tasks", ",".join(TASKS), "--model", "scripted",
                                       "--base-url", endpoint.url, "--design-dir", str(tmp_path / "d"),
                                       "--run-id", "b", "--out", str(out)])
    assert result.exit_code == 0, result.output
    static = json.loads((tmp_path / "d" / "b" / "round-01" / "static_report.json").read_text())
    assert static["hard_failures"][0]["field"] == "base_biome"
    assert compile_data(yaml.safe_load(out.read_text()), str(out)).kind == "biome"
    assert '"worldgen"' in endpoint.requests[0]["messages"][1]["content"]  # the world-gen catalog


def test_static_only_from_spec(tmp_path):
    out = tmp_path / "plains.yaml"
    result = CliRunner().invoke(main, ["design", "--kind", "biome", "--tasks", ",".join(TASKS), "--static-only",
                                       "--from", str(SPECS / "plains.yaml"), "--design-dir", str(tmp_path / "d"),
                                       "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert load_spec(out).id == "plains"
