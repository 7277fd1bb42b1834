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
from test_agents_llm import NAMES, OPENING, Script, make, play, world  # noqa: F401 - the world fixture

from mcbuild.runtime.agents.llm import voyager as voyager_mod
from mcbuild.runtime.agents.llm.testing import ScriptedEndpoint

FIXTURE = Path(__file__).parent / "fixtures" / "llm_wire_off.json"


def scripted(first: str = "I would mine a log.") -> Script:
    """The opening, after one reply that ignores the contract."""
    chunks = [OPENING[i:i + voyager_mod.MACRO_LENGTH] for i in range(0, len(OPENING), voyager_mod.MACRO_LENGTH)]
    program = lambda n: {"name": f"chunk_{n}", "description": "opening", "subgoal": "progress",  # noqa: E731
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
