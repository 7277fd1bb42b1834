"""Structured outputs on the wire, against the scripted chat-completions endpoint.

Every configuration plays the same short scripted episode (a malformed first reply, then the
opening to the first milestone). With ``structured: off`` the request bodies are the bytes the
client sent before structured outputs existed (``fixtures/llm_wire_off.json``, captured from
main before the change); with ``json_schema`` every request carries a valid JSON Schema.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from test_agents_llm import NAMES, OPENING, Script, make, play, world  # noqa: F401 - the world fixture

from mcbuild.llm.client import ChatClient
from mcbuild.runtime.agents.llm import voyager as voyager_mod
from mcbuild.runtime.agents.llm.contracts import ID_CHARS, NOTE_CHARS, ContractError
from mcbuild.llm.testing import ScriptedEndpoint

FIXTURE = Path(__file__).parent / "fixtures" / "llm_wire_off.json"
HI = [{"role": "user", "content": "hi"}]


def scripted(first: str = "I would mine a log.") -> Script:
    """The opening, after one reply that ignores the contract."""
    chunks = [OPENING[i:i + voyager_mod.MACRO_LENGTH] for i in range(0, len(OPENING), voyager_mod.MACRO_LENGTH)]
    program = lambda n: {"name": f"chunk_{n}", "description": "opening", "subgoal": "progress",
                         "success": {"kind": "action_result"},
                         "actions": [{"skill": a["skill"], "args": a["args"]} for a in chunks[min(n, len(chunks)) - 1]]}
    replies = iter([first])
    return Script(actions=lambda n: next(replies, None) or OPENING[min(n - 1, len(OPENING)) - 1], program=program)


def wire(world, name: str, **settings):
    """The agent and the raw request bodies of one scripted episode of ``name``."""
    with ScriptedEndpoint(scripted()) as ep:
        agent = make(name, ep, **settings)
        play(world, agent, budget=len(OPENING))
    return agent, ep


def digests(raw: list[bytes]) -> list[str]:
    return [hashlib.sha256(body).hexdigest()[:16] for body in raw]


@pytest.mark.parametrize("name", NAMES)
def test_off_sends_the_bytes_main_sent(world, name):
    _, ep = wire(world, name, structured="off")
    assert digests(ep.raw) == json.loads(FIXTURE.read_text())[name]


def sent_schemas(ep) -> list[dict]:
    """The JSON Schema of every request (each checked as a Draft 2020-12 schema)."""
    out = []
    for body in ep.requests:
        fmt = body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"]
        Draft202012Validator.check_schema(fmt["json_schema"]["schema"])
        out.append(fmt["json_schema"]["schema"])
    return out


@pytest.mark.parametrize("name", NAMES)
def test_json_schema_is_sent_in_every_request(world, name):
    agent, ep = wire(world, name, structured="json_schema", id_enum=False)
    schemas_sent = sent_schemas(ep)
    assert len(schemas_sent) == len(agent.calls) == len(ep.requests) > 0
    # the reply that ignored the schema still got its repair turn (Voyager's actor is its program call)
    assert name == "voyager" or any(c["repair"] for c in agent.calls)
    # apart from response_format, the requests are the ones structured: off sends
    off = [json.loads(b) for b in wire(world, name, structured="off")[1].raw]
    assert [{k: v for k, v in r.items() if k != "response_format"} for r in ep.requests] == off


def test_a_reply_that_follows_the_schema_needs_no_repair(world):
    replies = [{"thought": "t", "skill": "mine", "args": {"block": "log", "count": 3}},
               {"thought": "t", "skill": "craft_grid", "args": {"station": "inventory",
                                                                  "grid": [["minecraft:oak_log", None]]}}]
    with ScriptedEndpoint(Script(actions=lambda n: json.dumps(replies[(n - 1) % 2]))) as ep:
        agent = make("react", ep, structured="json_schema")
        played, _ = play(world, agent, budget=2)
    [schema] = {json.dumps(s) for s in sent_schemas(ep)}
    assert "minecraft:oak_log" in schema                     # the registry's ids as an enum
    for call in agent.calls:
        assert not list(Draft202012Validator(json.loads(schema)).iter_errors(json.loads(call["reply"])))
    assert [c["repair"] for c in agent.calls] == [0, 0] and played.used == 2


def test_json_object_and_the_library_path(monkeypatch):
    from mcbuild.llm import client as client_mod
    from mcbuild.runtime.agents.llm import reply_schemas as schemas

    with ScriptedEndpoint(lambda m: "{}") as ep:
        create_client = lambda **kw: ChatClient(ep.settings(**kw))
        create_client(structured="json_object").chat(HI, schema=schemas.action())
        create_client(structured="json_schema").chat(HI)         # a call that expects no JSON
        monkeypatch.setattr(client_mod.wire, "direct_ok", lambda base_url: False)
        create_client(structured="json_schema", id_enum=False).chat(HI, schema=schemas.action())
        direct = ep.requests[:]
        monkeypatch.undo()
        create_client(structured="json_schema", id_enum=False).chat(HI, schema=schemas.action())
    assert direct[0]["response_format"] == {"type": "json_object"}
    assert "response_format" not in direct[1]
    assert direct[2] == ep.requests[3] and direct[2]["response_format"]["json_schema"]["name"] == "action"


def test_designer_judge_and_validator_send_their_schemas():
    from mcbuild.designer_judge.contracts import DesignerReply, JudgeReply, TaskDesignerReply, ValidatorReply, schema

    models = (DesignerReply, JudgeReply, TaskDesignerReply, ValidatorReply)
    with ScriptedEndpoint(lambda m: '{"ok": true}') as ep:
        client = ChatClient(ep.settings(structured="json_schema"))
        for model in models:
            client.chat_json(HI, lambda d: d, schema=schema(model))
    sent = sent_schemas(ep)
    assert [r["response_format"]["json_schema"]["name"] for r in ep.requests] == [m.__name__ for m in models]
    assert sent == [m.model_json_schema(mode="serialization") for m in models]     # text lists as strings


def test_per_model_settings_reach_the_wire():
    with ScriptedEndpoint(lambda m: "{}") as ep:
        ChatClient(ep.settings(temperature=0.2, top_p=0.9, max_tokens=64, sampling_seed=7,
                                     reasoning=True)).chat(HI)
        ChatClient(ep.settings()).chat(HI)
        ChatClient(ep.settings(provider="vllm")).chat(HI)
    tuned, default, vllm = ep.requests
    assert tuned == {"model": "scripted", "messages": HI, "temperature": 0.2, "top_p": 0.9, "max_tokens": 64, "seed": 7}
    # a server on loopback of no named kind gets no reasoning switch (a strict proxy refuses unknown fields)
    assert default == {"model": "scripted", "messages": HI, "temperature": 0.7, "max_tokens": 2048}
    assert vllm == {**default, "chat_template_kwargs": {"enable_thinking": False}}


# ---------------------------------------------------------------------------- bounded reply schemas
def _walk(schema):
    """Every sub-schema of ``schema``."""
    if isinstance(schema, dict):
        yield schema
        for value in schema.values():
            yield from _walk(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _walk(value)


def longest(schema, root=None):
    """The longest instance ``schema`` allows: every property, every list at its maxItems, every
    string at its maxLength (of one repeated letter), the longest alternative."""
    root = root or schema
    if "$ref" in schema:
        return longest(root["$defs"][schema["$ref"].split("/")[-1]], root)
    if "anyOf" in schema:
        return max((longest(s, root) for s in schema["anyOf"]), key=lambda v: len(json.dumps(v)))
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return max(schema["enum"], key=lambda v: len(json.dumps(v)))
    kind = schema.get("type", "object")
    if kind == "object":
        return {k: longest(v, root) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [longest(schema["items"], root)] * schema["maxItems"]
    return {"string": lambda: "x" * schema["maxLength"], "integer": lambda: schema.get("minimum", 1),
            "boolean": lambda: True, "null": lambda: None}[kind]()


def reply_schemas():
    """(schema, contract check) of every reply an LLM configuration asks for."""
    from mcbuild.llm import schemas
    from mcbuild.runtime.agents.llm import adam, reflexion, reply_schemas, xenon
    from mcbuild.runtime.agents.llm.contracts import EXTRA_CHARS, parse_action

    keys = ("mine(minecraft:oak_log)", "craft(minecraft:stick)")
    adam_agent, voyager_agent = adam.AdamAgent(client=object()), voyager_mod.VoyagerAgent(client=object())
    voyager_agent.library["chop_logs"] = {}
    return [(adam.PLAN_SCHEMA, adam._plan),
            (schemas.choices(adam.EDGES_SCHEMA, adam.SAMPLE_KEY, keys), lambda d: adam_agent._merge(d, set(keys))),
            (reflexion.LESSON_SCHEMA, reflexion._lesson), (xenon.GRAPH_SCHEMA, xenon._graph),
            (voyager_mod.CRITIQUE_SCHEMA, voyager_mod._critique),
            (voyager_mod.program_schema(()), voyager_agent._program),
            (voyager_mod.program_schema(("chop_logs",)), voyager_agent._program),
            (reply_schemas.action(("thought", "subgoal"), ("thought",), EXTRA_CHARS),
             lambda d: parse_action(d, ("thought",)))]


def test_reply_schemas_are_bounded_and_free_of_patterns():
    """What grammar-constrained decoders honour: llama.cpp's converter turns an unanchored pattern or an
    ``anyOf`` of bare ``required`` lists into "any JSON"; every string and list has a bound."""
    for schema, _ in reply_schemas():
        for ids in (False, True):
            for node in _walk(schema.make(ids)):
                assert "pattern" not in node, schema.name
                assert node.get("type") != "string" or "maxLength" in node or "enum" in node, (schema.name, node)
                assert node.get("type") != "array" or "maxItems" in node, (schema.name, node)
                assert "anyOf" not in node or all("type" in a or "$ref" in a for a in node["anyOf"]), schema.name


GRAMMAR = Path(__file__).parents[1] / "build" / "cache" / "llama-cpp-python" / "llama_grammar.py"


def designer_schemas():
    from mcbuild.designer_judge.contracts import DesignerReply, JudgeReply, TaskDesignerReply, ValidatorReply, schema

    return [schema(m) for m in (DesignerReply, JudgeReply, TaskDesignerReply, ValidatorReply)]


def _property_names(schema) -> set[str]:
    return {name for node in _walk(schema) if isinstance(node.get("properties"), dict) for name in node["properties"]}


def test_every_reply_schema_converts_in_llama_cpps_grammar_converter():
    """llama-cpp-python's server (make llm-smoke) turns a schema into a grammar with llama.cpp's converter
    and, when that raises, quietly constrains the reply to any JSON. Every schema the toolkit sends
    (agents, Designer, Judge, task Validator; ids as strings and as enums) converts, and every property
    it names is in the grammar. The converter is the pinned release's own file (Makefile: GRAMMAR)."""
    if not GRAMMAR.is_file():
        pytest.skip(f"{GRAMMAR} is missing: `make test` fetches it")
    import importlib.util

    spec = importlib.util.spec_from_file_location("llama_grammar", GRAMMAR)
    converter = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(converter)
    for schema in [s for s, _ in reply_schemas()] + designer_schemas():
        for ids in (False, True):
            body = schema.make(ids)
            grammar = converter.json_schema_to_gbnf(json.dumps(body))
            missing = [n for n in _property_names(body) if f'\\"{n}\\"' not in grammar]
            assert not missing, (schema.name, ids, missing)


OVER = {"adam_plan": lambda r: {"subgoals": [{"target": "x" * (ID_CHARS + 1)}]},
        "xenon_graph": lambda r: {"nodes": [{"item": "x" * (ID_CHARS + 1)}]},
        "reflexion_lesson": lambda r: {**r, "diagnosis": "x" * (NOTE_CHARS + 1)}}


@pytest.mark.parametrize("index", range(8))
def test_a_reply_at_the_schemas_bounds_passes_its_contract(index):
    """Everything the schema allows passes the contract, down to its longest reply; the non-action
    contracts refuse a text one character over the bound (the bound is the contract's own)."""
    schema, contract = reply_schemas()[index]
    body = schema.make(False)
    reply = longest(body)
    assert not list(Draft202012Validator(body).iter_errors(reply)), schema.name
    contract(json.loads(json.dumps(reply)))
    if schema.name in OVER:
        with pytest.raises(Exception, match="at most"):
            contract(OVER[schema.name](reply))


def test_the_action_schema_refuses_an_action_without_a_required_argument():
    """Each skill's alternative requires the arguments the contract requires: an action lacking one is
    refused by the schema as by the contract (an endpoint that follows the schema never sends it)."""
    from mcbuild.runtime.agents.llm import reply_schemas
    from mcbuild.runtime.agents.llm.contracts import parse_action
    from mcbuild.runtime.contract.skills import SKILLS

    validator = Draft202012Validator(reply_schemas.action().make(False))
    needs = {skill: [a.name for a in spec if a.required] for skill, spec in SKILLS.items()}
    assert sum(map(len, needs.values())) >= len(SKILLS) - 1          # nearly every skill has one
    for skill, names in needs.items():
        for name in names:
            errors = list(validator.iter_errors({"skill": skill, "args": {}}))
            assert errors, f"the schema lets {skill} through without {name}"
            with pytest.raises(ContractError, match=name):
                parse_action({"skill": skill, "args": {}}, ())


def test_the_sent_schemas_carry_the_bounds_and_the_episodes_choices(world):
    """Over the wire: the bounds are in every schema sent, and Voyager offers reuse_skill only once
    its library holds a skill to reuse."""
    for name in ("adam", "reflexion", "xenon", "voyager"):
        agent, ep = wire(world, name, structured="json_schema", id_enum=False)
        for schema in sent_schemas(ep):
            assert '"maxLength"' in json.dumps(schema) and '"pattern"' not in json.dumps(schema)
        if name == "voyager":
            programs = [s for s, r in zip(sent_schemas(ep), ep.requests)
                        if r["response_format"]["json_schema"]["name"] == "voyager_program"]
            assert "reuse_skill" not in json.dumps(programs[0]) and agent.library
            assert any(list(agent.library)[0] in json.dumps(p) for p in programs[1:])


def test_a_raw_newline_inside_a_bounded_string_needs_no_repair(world):
    """llama.cpp's grammar for a string with a maxLength lets raw control characters through; the
    reply is still read (json's strict=False), not sent back for repair."""
    reply = '{"thought": "first\nsecond", "skill": "mine", "args": {"block": "log"}}'
    with ScriptedEndpoint(Script(actions=lambda n: reply)) as ep:
        agent = make("react", ep, structured="json_schema", id_enum=False)
        played, _ = play(world, agent, budget=1)
    assert [c["repair"] for c in agent.calls] == [0] and played.used == 1
