"""Turns (mcbuild/llm/turns.py): an episode thread holding its process's turn hands it over while the
chat client waits for the endpoint, its in-flight gate or a retry's pause, and takes it back after."""
from __future__ import annotations

import dataclasses
import threading
import time

from mcbuild.llm import turns
from mcbuild.llm.client import ChatClient
from mcbuild.llm.settings import ModelSettings
from mcbuild.llm.testing import PRICES, ScriptedEndpoint

HI = [{"role": "user", "content": "hi"}]
JOIN_S = 60.0                   # generous: the suite may run on a loaded machine


def client(base_url: str, **settings) -> ChatClient:
    return ChatClient(ModelSettings(model="scripted", base_url=base_url, api_key_env="MCBUILD_TEST_NO_KEY",
                                    prices=PRICES, **settings), sleep=lambda s: None)


def test_the_turn_is_free_while_the_endpoint_answers_and_held_again_after():
    seen: list[bool] = []
    with ScriptedEndpoint(lambda messages: seen.append(turns._turn().locked()) or '{"ok": 1}') as ep:
        c = client(ep.base_url)
        with turns.held():
            assert turns.holding() and turns._turn().locked()
            c.chat(HI)
            assert turns.holding() and turns._turn().locked()
        assert not turns.holding() and not turns._turn().locked()
        c.chat(HI)                                  # a thread without a turn neither takes nor frees one
    assert seen == [False, False]


def test_a_retry_pause_hands_the_turn_over():
    locked: list[bool] = []
    with ScriptedEndpoint(lambda messages: '{"ok": 1}', fail_first=1, fail_status=503) as ep:
        c = ChatClient(ModelSettings(model="scripted", base_url=ep.base_url, api_key_env="MCBUILD_TEST_NO_KEY",
                                     prices=PRICES), sleep=lambda s: locked.append(turns._turn().locked()))
        with turns.held():
            assert c.chat(HI).attempts == 2
    assert locked == [False]


def test_episode_threads_sharing_one_in_flight_slot_all_finish():
    """Each thread holds the turn except while it waits: a thread waiting for the one in-flight slot
    must not keep the turn the slot's holder needs to finish its call."""
    done: list[int] = []
    with ScriptedEndpoint(lambda messages: '{"ok": 1}', latency=0.05) as ep:
        c = client(ep.base_url, max_in_flight=1)

        def episode(i: int) -> None:
            with turns.held():
                for _ in range(3):
                    c.chat(HI)
                done.append(i)

        threads = [threading.Thread(target=episode, args=(i,), daemon=True) for i in range(6)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + JOIN_S
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
    assert sorted(done) == list(range(6))
    assert len(ep.requests) == 18


def test_a_turn_is_taken_once_per_thread_and_per_process():
    with turns.held():
        with turns.held():                          # nested: still the one turn
            assert turns.holding()
        assert turns.holding() and turns._turn().locked()
    other: list[bool] = []
    t = threading.Thread(target=lambda: other.append(turns.holding()))
    t.start()
    t.join(JOIN_S)
    assert other == [False] and not turns._turn().locked()


def test_the_executor_gives_a_turn_only_to_a_simulator_episode_of_an_llm_configuration():
    from mcbuild.runtime.study.run.executor import _in_turn

    from study_fakes import plan_entries

    entry = plan_entries("e1")[0]
    react = dataclasses.replace(entry, configuration="react", agent="react", model="scripted")
    held = _in_turn(lambda entry, **options: turns.holding())
    assert held(react) is True
    assert held(react, backend="sim") is True
    assert held(react, backend="server") is False                   # it waits for its server too
    assert held(entry) is False                                     # vanilla-planner: scripted
    assert held(dataclasses.replace(react, agent="my_pkg.agents:Mine")) is False   # may wait on its own connections
    assert not turns.holding()
