"""Agents from outside the package: ``package.module:factory`` names, entry points of
``mcbuild.agents``, and the walk-through of docs/agents.md installed with pip and run in a study."""
from __future__ import annotations

import json
import os
import re
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcbuild.compiler.core.errors import SpecError
from mcbuild.compiler.core.paths import ROOT
from mcbuild.runtime.agents.registry import UnknownAgent, create, known, offered, resolve
from mcbuild.runtime.study.design.config import load_config

DOC = ROOT / "docs" / "agents.md"
FILE_BLOCK = re.compile(r"<!-- file: (\S+) -->\n```\w*\n(.*?)```", re.S)


def doc_files() -> dict[str, str]:
    """The files of the walk-through, as docs/agents.md shows them."""
    return dict(FILE_BLOCK.findall(DOC.read_text(encoding="utf-8")))


def write_study(path: Path, **fields) -> Path:
    path.write_text(json.dumps({"name": "ext", "worlds": ["plains-1"], "conditions": ["vanilla"],
                                "tasks": ["iron_armor"], "budget": 3, **fields}))
    return path


@pytest.fixture
def module_on_path(tmp_path, monkeypatch):
    (tmp_path / "lumberjack_agent.py").write_text(doc_files()["lumberjack_agent.py"])
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("lumberjack_agent", None)


def test_module_factory_names_resolve_and_create(module_on_path):
    agent = create("lumberjack_agent:Lumberjack", **offered("lumberjack_agent:Lumberjack", seed=3, model="none",
                                                            rules="not taken"))
    assert agent.name == "lumberjack" and agent.act({"inventory": {}, "latest_result": None}) == {
        "skill": "mine", "args": {"block": "log", "count": 1}}
    assert resolve("vanilla-planner") is not None


@pytest.mark.parametrize("name, message", [
    ("nobody", "unknown agent 'nobody'; known: adam, adaptive-planner"),
    ("no_such_module_xyz:make", "cannot import 'no_such_module_xyz'"),
    ("lumberjack_agent:Nothing", "module 'lumberjack_agent' has no callable 'Nothing'"),
])
def test_unknown_names_are_one_line_with_the_known_names(module_on_path, name, message):
    with pytest.raises(UnknownAgent) as err:
        resolve(name)
    text = str(err.value)
    assert message in text and "\n" not in text and text.endswith("or package.module:factory")
    assert all(k in text for k in known())


@pytest.mark.parametrize("fields, where", [
    ({"configurations": ["vanilla-planner", "nobody"]}, "configurations[1]"),
    ({"configurations": ["vanilla-planner"], "conditions": ["vanilla", "m01"],
      "disclosure": {"configurations": ["nobody"]}}, "disclosure.configurations[0]"),
    ({"configurations": ["mine"], "agents": {"mine": "nobody:make"}}, "agents.mine"),
])
def test_config_load_refuses_unknown_configurations(tmp_path, fields, where):
    study = write_study(tmp_path / "s.yaml", **fields)
    with pytest.raises(SpecError) as err:
        load_config(study)
    assert err.value.field == where and "known: adam, adaptive-planner" in err.value.message


def test_config_load_accepts_module_factory(tmp_path, module_on_path):
    cfg = load_config(write_study(tmp_path / "s.yaml", configurations=["lumberjack_agent:Lumberjack"]))
    assert cfg.all_configurations() == ["lumberjack_agent:Lumberjack"]


def _venv_with_package(tmp_path: Path) -> Path:
    """A new venv that sees this interpreter's packages (a .pth file), with the walk-through's
    package installed by pip from a folder: offline and without build isolation."""
    pkg = tmp_path / "lumberjack-agent"
    pkg.mkdir()
    for name, text in doc_files().items():
        if name != "study.yaml":
            (pkg / name).write_text(text)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "_parent_env.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                    "--disable-pip-version-check", str(pkg)], check=True, cwd=tmp_path)
    return python


def test_external_package_runs_in_a_study(tmp_path, world_build):
    """docs/agents.md's package, pip-installed into a fresh venv, runs a study by entry point and by
    module:factory; a misspelt name is refused at load (exit 2, the entry point listed) with no store."""
    from mcbuild.runtime.study.store.results import Store

    python = _venv_with_package(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    study = tmp_path / "study.yaml"
    study.write_text(doc_files()["study.yaml"])

    def study_run(config: Path, out: Path) -> subprocess.CompletedProcess:
        return subprocess.run([str(python), "-m", "mcbuild", "study", "run", str(config), "--build", str(world_build),
                               "--out", str(out), "--quiet"], env=env, cwd=tmp_path, capture_output=True, text=True)

    bad = tmp_path / "bad.yaml"
    bad.write_text(textwrap.dedent(doc_files()["study.yaml"]).replace("[lumberjack,", "[lumbrjack,"))
    refused = study_run(bad, tmp_path / "bad")
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.count("\n") == 1 and "configurations[0]: unknown agent 'lumbrjack'" in refused.stderr
    assert ", lumberjack, " in refused.stderr and not (tmp_path / "bad").exists()

    ran = study_run(study, tmp_path / "out")
    assert ran.returncode == 0, ran.stderr
    with Store.open(tmp_path / "out", create=False) as st:
        records = {r["configuration"]: r for r in st.records()}
    assert set(records) == {"lumberjack", "lumberjack_agent:Lumberjack"}
    assert all(r["actions"] == 3 for r in records.values())


# ---------------------------------------------------------------------------- agents that fail
BAD_AGENTS = {
    "raises_at_import": "raise RuntimeError('no GPU here')\n",
    "broken_syntax": "def make(:\n",
    "factory_raises": "def make(seed=0):\n    raise ValueError('weights missing')\n",
    "not_an_agent": "def make(seed=0):\n    return 42\n",
    # builds for the study's load and then never again: a failure only its episodes meet
    "fails_later": textwrap.dedent("""\
        import lumberjack_agent
        calls = []
        def make(seed=0):
            calls.append(seed)
            if len(calls) > 1:
                raise RuntimeError('licence server gone')
            return lumberjack_agent.Lumberjack(seed)
        """),
}


@pytest.fixture
def bad_agents(tmp_path, module_on_path, monkeypatch):
    folder = tmp_path / "bad_agents"
    folder.mkdir()
    for name, text in BAD_AGENTS.items():
        (folder / f"{name}.py").write_text(text)
    monkeypatch.syspath_prepend(str(folder))
    yield
    for name in BAD_AGENTS:
        sys.modules.pop(name, None)


@pytest.mark.parametrize("name, cause", [
    ("raises_at_import:make", "cannot import 'raises_at_import' for agent 'raises_at_import:make' (RuntimeError: no GPU here)"),
    ("broken_syntax:make", "cannot import 'broken_syntax' for agent 'broken_syntax:make' (SyntaxError: "),
    ("../../x:f", "cannot import '../../x' for agent '../../x:f' (TypeError: "),
    (":x", "cannot import '' for agent ':x' (ValueError: Empty module name)"),
    ("factory_raises:make", "agent 'factory_raises:make' could not be built (ValueError: weights missing)"),
    ("not_an_agent:make", "agent 'not_an_agent:make': its factory returned int, not an agent (no reset, act, model_use)"),
])
def test_an_agent_that_does_not_load_or_build_stops_the_study_at_load(tmp_path, bad_agents, name, cause):
    """Whatever an outside agent raises while it loads or builds (or a non-agent it returns) is exit 2
    and one line naming the field, the name and the cause, before any store exists."""
    from click.testing import CliRunner

    from mcbuild.cli import main

    study = write_study(tmp_path / "s.yaml", configurations=["vanilla-planner", name])
    res = CliRunner().invoke(main, ["study", "run", str(study), "--out", str(tmp_path / "out"), "--quiet"])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {study}: configurations[1]: ") and cause in lines[0], lines
    assert "Traceback" not in res.output and not (tmp_path / "out").exists()


def test_an_agent_failing_in_its_episodes_is_reported_once_per_configuration(tmp_path, bad_agents, world_build):
    """A factory that built at load and fails for every episode: one stderr line for its configuration
    (no per-episode lines, no "rerun with --resume"), exit 2; the other configuration's episodes are stored."""
    from click.testing import CliRunner

    from mcbuild.cli import main
    from mcbuild.runtime.study.store.results import Store

    study = write_study(tmp_path / "s.yaml", configurations=["vanilla-planner", "fails_later:make"], repetitions=3)
    res = CliRunner().invoke(main, ["study", "run", str(study), "--build", str(world_build), "--out",
                                    str(tmp_path / "out"), "--quiet"])
    assert res.exit_code == 2, res.output
    assert res.stderr.strip().splitlines() == [
        "error: configuration 'fails_later:make': agent 'fails_later:make' could not be built (RuntimeError: licence "
        "server gone); its 3 episode(s) were not run (fix the agent, then run the study again)"]
    assert "--resume" not in res.output and "fails_later" not in res.stdout
    with Store.open(tmp_path / "out", create=False) as st:
        assert {r["configuration"] for r in st.records()} == {"vanilla-planner"} and st.count() == 3
        assert [f["kind"] for f in st.faults()] == ["agent"]
