"""Per-model endpoints and sampling (issue 25 item 2): each entry of a study's ``models:`` carries its
own endpoint and sampling settings, they reach the wire, and the store records them."""
from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner
from test_study_inflight import responder

from mcbuild.runtime.agents.llm.testing import ScriptedEndpoint
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.run.runner import MAX_ATTEMPTS, run_study
from mcbuild.runtime.study.store.results import Store, StoreError

KEY = {"api_key_env": "MCBUILD_TEST_NO_KEY"}


def study(hosted: ScriptedEndpoint, local: ScriptedEndpoint, **own) -> dict:
    return dict(name="mixed", worlds=["plains-1"], conditions=["vanilla"], tasks=["iron_armor"],
                configurations=["direct"], repetitions=1, budget=3, endpoint={"timeout": 30, **KEY},
                models=[{"name": "hosted", "base_url": hosted.base_url, "temperature": 0.2, "max_tokens": 300,
                         **own},
                        {"name": "local", "base_url": local.base_url, "structured": "json_schema", "id_enum": False,
                         "seed": 5, "top_p": 0.5, "reasoning": True}])


def test_one_study_mixes_two_endpoints_each_with_its_sampling(world_build, tmp_path):
    with ScriptedEndpoint(responder, model="hosted") as hosted, ScriptedEndpoint(responder, model="local") as local:
        cfg = StudyConfig.model_validate(study(hosted, local))
        s = run_study(cfg, out_dir=tmp_path / "s", build_root=world_build)
        assert s.complete and not s.errors
        with pytest.raises(StoreError, match="other model settings"):
            run_study(StudyConfig.model_validate(study(hosted, local, temperature=0.9)), out_dir=tmp_path / "s",
                      build_root=world_build, resume=True)
    assert hosted.requests and local.requests
    for r in hosted.requests:
        assert (r["model"], r["temperature"], r["max_tokens"]) == ("hosted", 0.2, 300)
        assert {"response_format", "seed", "top_p"}.isdisjoint(r)
        assert r["chat_template_kwargs"] == {"enable_thinking": False}        # reasoning off: the default
    for r in local.requests:
        assert (r["model"], r["temperature"], r["max_tokens"], r["seed"], r["top_p"]) == ("local", 0.7, 2048, 5, 0.5)
        assert r["response_format"]["type"] == "json_schema" and "chat_template_kwargs" not in r
    with Store.open(tmp_path / "s") as st:
        sampling = json.loads(st.meta()["sampling"])
    assert sampling["hosted"] == {"base_url": hosted.base_url, "temperature": 0.2, "top_p": None, "max_tokens": 300,
                                  "sampling_seed": None, "reasoning_off": True, "extra_body": None, "structured": "off",
                                  "id_enum": True}
    assert sampling["local"]["structured"] == "json_schema" and sampling["local"]["reasoning_off"] is False


def test_model_entries_and_their_errors():
    base = {"name": "t", "configurations": ["react"]}
    cfg = StudyConfig.model_validate({**base, "models": ["a", {"name": "b", "temperature": 0.1}],
                                      "endpoint": {"max_tokens": 99}})
    assert cfg.models == ["a", "b"]
    assert cfg.llm_settings("a") == {"max_tokens": 99} and cfg.llm_settings("b") == {"max_tokens": 99, "temperature": 0.1}
    assert StudyConfig.model_validate(cfg.to_json()) == cfg
    for bad, where in (({"name": "b", "temperature": 3}, "temperature"), ({"name": "b", "structured": "yes"}, "structured"),
                       ({"name": "b", "bogus": 1}, "bogus")):
        with pytest.raises(ValueError, match=where):
            StudyConfig.model_validate({**base, "models": [bad]})


def test_study_run_model_takes_one_model_and_the_settings_options(tmp_path):
    from mcbuild.cli import main
    from mcbuild.cli.cmd_study import with_model
    from mcbuild.cli.model_options import given_settings

    cfg = StudyConfig.model_validate({"name": "t", "configurations": ["react"],
                                      "models": ["a", {"name": "b", "temperature": 0.1, "seed": 3}]})
    one = with_model(cfg, "b", given_settings({"top_p": 0.9, "sampling_seed": None, "reasoning": False}))
    assert one.models == ["b"] and one.llm_settings("b") == {"temperature": 0.1, "sampling_seed": 3, "top_p": 0.9,
                                                            "reasoning_off": True}
    both = with_model(cfg, None, {"structured": "json_schema"})
    assert both.models == ["a", "b"] and all(both.llm_settings(m)["structured"] == "json_schema" for m in "ab")
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(cfg.to_json()))
    res = CliRunner().invoke(main, ["study", "run", str(path), "--model", "b", "--temperature", "7"])
    assert res.exit_code == 2 and "--temperature" in res.output


def test_episode_run_takes_the_same_settings(tmp_path):
    from mcbuild.cli.cmd_episode import _agent_options
    from mcbuild.cli.model_options import given_settings

    with ScriptedEndpoint(responder) as ep:
        given = given_settings({"base_url": ep.base_url, "api_key_env": KEY["api_key_env"], "temperature": 0.0,
                                "structured": "json_schema", "max_reply_bytes": 4096, "reasoning": None})
        options = _agent_options("react", "vanilla", tmp_path, "scripted", given)
    assert options["settings"] == {"model": "scripted", "base_url": ep.base_url, "api_key_env": "MCBUILD_TEST_NO_KEY",
                                   "temperature": 0.0, "structured": "json_schema", "max_reply_bytes": 4096}


def test_an_unusable_reply_is_a_logged_fault_never_a_scored_episode(world_build, tmp_path, monkeypatch):
    """A null content here; tests/test_llm_wire.py sends the client every kind of unusable reply."""
    from mcbuild.runtime.agents.llm import client

    bad, problem = None, "content is null"

    monkeypatch.setattr(client.LLMSettings, "backoff", 0.0)
    with ScriptedEndpoint(lambda messages: bad, model="m") as ep:
        cfg = StudyConfig.model_validate(dict(
            name="faults", worlds=["plains-1"], conditions=["vanilla"], tasks=["iron_armor"], configurations=["direct"],
            budget=3, models=[{"name": "m", "base_url": ep.base_url, "max_reply_bytes": 4096, **KEY}]))
        s = run_study(cfg, out_dir=tmp_path / "s", build_root=world_build)
    assert s.infrastructure_faults == MAX_ATTEMPTS and len(s.gave_up) == 1   # rerun, then given up on
    with Store.open(tmp_path / "s") as st:
        faults = st.faults()
        assert st.count() == 0                                  # nothing scored
    assert all(problem in f["message"] and f["kind"] == "infrastructure" for f in faults)
    assert len(ep.requests) == MAX_ATTEMPTS * 4                 # each run: the client's 3 retries
