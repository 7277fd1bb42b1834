"""Per-model endpoints and sampling (issue 25 item 2): each entry of a study's ``models:`` carries its
own endpoint and sampling settings, they reach the wire, and the store records them."""
from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner
from test_study_inflight import responder

from mcbuild.llm.settings import ModelSettings
from mcbuild.llm.testing import ScriptedEndpoint
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
                         "sampling_seed": 5, "top_p": 0.5, "reasoning": True}])


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
                                  "sampling_seed": None, "reasoning": False, "extra_body": None, "structured": "off",
                                  "id_enum": True}
    assert sampling["local"]["structured"] == "json_schema" and sampling["local"]["reasoning"] is True


def test_a_store_written_before_model_settings_resumes(tmp_path):
    """Stores written before ModelSettings recorded ``reasoning_off``; their sampling record reads as today's ``reasoning``."""
    old = {"m": {"base_url": None, "temperature": 0.7, "top_p": None, "max_tokens": 2048, "sampling_seed": None,
                 "reasoning_off": True, "extra_body": None, "structured": "off", "id_enum": True}}
    now = {"m": ModelSettings(model="m").sampling()}
    pin = dict(study="s", config_json={}, plan_digest="p", fingerprint="f")
    with Store.open(tmp_path / "s") as st:
        st.bind(**pin, sampling=old)
        st.bind(**pin, sampling=now)                       # the same sampling: no error
        with pytest.raises(StoreError, match="other model settings"):
            st.bind(**pin, sampling={"m": ModelSettings(model="m", reasoning=True).sampling()})


def test_model_entries_and_their_errors():
    base = {"name": "t", "configurations": ["react"]}
    cfg = StudyConfig.model_validate({**base, "models": ["a", {"name": "b", "temperature": 0.1}],
                                      "endpoint": {"max_tokens": 99}})
    assert cfg.models == ["a", "b"]
    assert cfg.llm_settings("a").given() == {"model": "a", "max_tokens": 99}
    assert cfg.llm_settings("b").given() == {"model": "b", "max_tokens": 99, "temperature": 0.1}
    again = StudyConfig.model_validate(cfg.to_json())
    assert again == cfg and again.model_settings["b"].given() == {"temperature": 0.1}   # dumped as given
    for bad, where in (({"name": "b", "temperature": 3}, "temperature"), ({"name": "b", "structured": "yes"}, "structured"),
                       ({"name": "b", "bogus": 1}, "bogus"), ({"name": "b", "seed": 1}, "write sampling_seed"),
                       ({"name": "b", "reasoning_off": True}, "write reasoning, its opposite"),
                       ({"name": "b", "model": "c"}, "entry's `name`")):
        with pytest.raises(ValueError, match=where):
            StudyConfig.model_validate({**base, "models": [bad]})
    with pytest.raises(ValueError, match="a model is named in `models:`"):
        StudyConfig.model_validate({**base, "endpoint": {"model": "x"}})


def test_a_study_sets_every_model_setting():
    """Each field of ModelSettings, given in a study's ``endpoint:`` or a model's entry, reaches that
    model's settings."""
    values = {"base_url": "http://127.0.0.1:9/v1", "api_key_env": "K", "prices": "p.json", "temperature": 0.1,
              "top_p": 0.5, "max_tokens": 7, "sampling_seed": 3, "reasoning": True, "extra_body": {"x": 1},
              "structured": "json_object", "id_enum": False, "max_retries": 0, "backoff": 0.0, "timeout": 5.0,
              "max_in_flight": 2, "max_reply_bytes": 100}
    assert set(values) | {"model"} == set(ModelSettings.model_fields)
    for where in ("endpoint", "entry"):
        data = {"name": "t", "configurations": ["react"],
                "models": [{"name": "m", **values}] if where == "entry" else ["m"]}
        if where == "endpoint":
            data["endpoint"] = values
        got = StudyConfig.model_validate(data).llm_settings("m")
        assert {k: getattr(got, k) for k in values} == values


def test_study_run_model_takes_one_model_and_the_settings_options(tmp_path):
    from mcbuild.cli import main
    from mcbuild.cli.cmd_study import with_model
    from mcbuild.cli.model_options import given_settings

    cfg = StudyConfig.model_validate({"name": "t", "configurations": ["react"],
                                      "models": ["a", {"name": "b", "temperature": 0.1, "sampling_seed": 3}],
                                      "endpoint": {"top_p": 0.2, "timeout": 9}})
    one = with_model(cfg, "b", given_settings({"top_p": 0.9, "sampling_seed": None, "reasoning": False}))
    assert one.models == ["b"] and one.llm_settings("b").given() == {
        "model": "b", "temperature": 0.1, "sampling_seed": 3, "top_p": 0.9, "reasoning": False, "timeout": 9}
    both = with_model(cfg, None, {"structured": "json_schema"})
    assert both.models == ["a", "b"] and all(both.llm_settings(m).structured == "json_schema" for m in "ab")
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
    assert options["settings"].given() == {"model": "scripted", "base_url": ep.base_url,
                                           "api_key_env": "MCBUILD_TEST_NO_KEY", "temperature": 0.0,
                                           "structured": "json_schema", "max_reply_bytes": 4096}


def test_an_unusable_reply_is_a_logged_fault_never_a_scored_episode(world_build, tmp_path):
    """A null content here; tests/test_llm_wire.py sends the client every kind of unusable reply."""
    bad, problem = None, "content is null"

    with ScriptedEndpoint(lambda messages: bad, model="m") as ep:
        cfg = StudyConfig.model_validate(dict(
            name="faults", worlds=["plains-1"], conditions=["vanilla"], tasks=["iron_armor"], configurations=["direct"],
            budget=3, models=[{"name": "m", "base_url": ep.base_url, "max_reply_bytes": 4096, "max_retries": 1,
                               "backoff": 0, **KEY}]))
        s = run_study(cfg, out_dir=tmp_path / "s", build_root=world_build)
    assert s.infrastructure_faults == MAX_ATTEMPTS and len(s.gave_up) == 1   # rerun, then given up on
    with Store.open(tmp_path / "s") as st:
        faults = st.faults()
        assert st.count() == 0                                  # nothing scored
    assert all(problem in f["message"] and f["kind"] == "infrastructure" for f in faults)
    assert len(ep.requests) == MAX_ATTEMPTS * 2                 # each run: the study's 1 retry


def test_the_model_options_are_generated_from_the_settings_fields():
    """study run, episode run and design take one option per setting, named, described and defaulted
    by ModelSettings (design with its own layer: the provider's sampling)."""
    from mcbuild.cli import main
    from mcbuild.cli.model_options import OPTIONS

    assert set(OPTIONS) == set(ModelSettings.model_fields) - {"model", "extra_body"}     # a table has no option
    commands = {"study run": main.commands["study"].commands["run"],
                "episode run": main.commands["episode"].commands["run"], "design": main.commands["design"]}
    for where, command in commands.items():
        params = {p.name: p for p in command.params}
        for name in ("model", *OPTIONS):
            option = params[name]
            field = ModelSettings.model_fields[name]
            assert "--" + name.replace("_", "-") in option.opts and field.description in option.help, (where, name)
            assert option.default is None or (where, name) == ("design", "model"), (where, name)
        design = where == "design"
        assert ("default: not sent" if design else "default 0.7") in params["temperature"].help
        assert ("default on" if design else "default off") in params["reasoning"].help
        assert params["max_retries"].type.min == 0 and params["top_p"].type.min_open
    assert commands["design"].params[[p.name for p in commands["design"].params].index("model")].default == "gpt-4.1"


def test_a_store_written_before_model_settings_reads_its_config(tmp_path):
    """Stores written before ModelSettings dumped each settings layer with every key (None where not given) and ``seed``; the report
    and ``study status`` validate the stored config again."""
    old_layer = dict.fromkeys(("base_url", "api_key_env", "prices", "max_in_flight", "max_tokens", "timeout",
                               "temperature", "top_p", "seed", "reasoning", "structured", "id_enum",
                               "max_reply_bytes"))
    config = {"name": "t", "configurations": ["react"], "models": ["a", "b"],
              "endpoint": {**old_layer, "timeout": 30.0},
              "model_settings": {"b": {**old_layer, "seed": 3, "reasoning": True}}}
    with Store.open(tmp_path / "s") as st:
        st.bind(study="t", config_json=config, plan_digest="p", fingerprint="f")
        cfg = StudyConfig.model_validate(st.config_json())
    assert cfg.llm_settings("b").given() == {"model": "b", "timeout": 30.0, "sampling_seed": 3, "reasoning": True}
