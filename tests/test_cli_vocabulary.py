"""The command line's one vocabulary (mcbuild/cli/vocabulary.py): -h and --version everywhere, old
flag spellings as warned aliases, backend choices from the registry, key-free hints, the estimate
table, the progress drawn only on a terminal, and the version CHANGELOG.md and the package share."""
from __future__ import annotations

import io
import re
import tomllib

import click
import pytest
from click.testing import CliRunner

import mcbuild
from mcbuild.cli import main
from mcbuild.cli.columns import aligned
from mcbuild.cli.vocabulary import REMOVED_IN
from mcbuild.compiler.core.paths import ROOT, SPECS
from mcbuild.runtime.backends.registry import names as backend_names


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def commands(group: click.Group = main, path: tuple[str, ...] = ()):
    """Every leaf command as (path, command)."""
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from commands(command, path + (name,))
        else:
            yield path + (name,), command


def test_version_is_the_package_version_and_the_newest_changelog_entry():
    res = cli("--version")
    assert res.exit_code == 0 and res.output == f"mcbuild {mcbuild.__version__}\n"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "mcbuild.__version__"}
    headings = re.findall(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert headings[0] == mcbuild.__version__
    assert tuple(map(int, REMOVED_IN.split("."))) > tuple(map(int, mcbuild.__version__.split(".")))


@pytest.mark.parametrize("path", [" ".join(p) for p, _ in commands()] + [""])
def test_every_command_takes_dash_h(path):
    res = cli(*path.split(), "-h")
    assert res.exit_code == 0 and res.output.startswith("Usage:") and "-h, --help" in res.output


def test_backend_choices_come_from_the_registry():
    with_backend = {" ".join(p): c for p, c in commands() if any(o.name == "backend" for o in c.params)}
    assert {"design", "episode run", "study run", "task check"} <= set(with_backend)
    for name, command in with_backend.items():
        option = next(o for o in command.params if o.name == "backend")
        assert isinstance(option.type, click.Choice) and list(option.type.choices) == backend_names(), name


def test_one_flag_per_meaning():
    """The build folder is --build wherever a command takes one, and --out never means it."""
    for path, command in commands():
        opts = {o: p for p in command.params if isinstance(p, click.Option) and not p.hidden for o in p.opts}
        assert "--jobs" not in opts, path
        if "--out" in opts and "--build" in opts:
            assert opts["--out"].name != opts["--build"].name, path
        if path[0] in ("compile", "build"):
            assert "--build" in opts and "--out" not in opts, path


def test_old_spellings_work_with_one_warning_line(tmp_path):
    res = cli("compile", SPECS / "plains.yaml", "--out", tmp_path / "b")
    assert res.exit_code == 0, res.output
    assert res.stderr == f"warning: --out is deprecated, use --build (--out goes in {REMOVED_IN})\n"
    assert (tmp_path / "b" / "plains" / "datapack.zip").is_file()
    assert "--out" not in cli("compile", "-h").output                 # hidden
    res = cli("build", "verify", "--out", tmp_path / "b")             # no worlds there: one warning, the problem
    assert res.exit_code == 1 and res.stderr.startswith("warning: --out is deprecated, use --build")
    assert "run `mcbuild build worlds`" in res.stderr
    res = cli("build", "worlds", "--jobs", "0")
    assert res.exit_code == 2 and "--jobs" in res.stderr
    res = cli("compile", SPECS / "plains.yaml", "--out", tmp_path / "a", "--build", tmp_path / "b")
    assert res.exit_code == 2 and "give only --build" in res.stderr and not (tmp_path / "a").exists()


def test_a_missing_key_names_the_key_free_mode(monkeypatch, tmp_path):
    monkeypatch.delenv("MCBUILD_TEST_UNSET_KEY", raising=False)
    res = cli("design", "--kind", "mirror", "--api-key-env", "MCBUILD_TEST_UNSET_KEY", "--build", tmp_path)
    assert res.exit_code == 1 and "no API key" in res.stderr and "--static-only" in res.stderr
    res = cli("episode", "run", "--world", "plains-1", "--task", "diamond", "--condition", "m01", "--agent", "react",
              "--model", "m", "--api-key-env", "MCBUILD_TEST_UNSET_KEY")
    assert res.exit_code == 1 and "no API key" in res.stderr and "--agent vanilla-planner" in res.stderr


def test_aligned_columns_never_run_together():
    lines = aligned(["configuration", "model", "USD"], [["adaptive-planner", "none", "free"], ["react", "gpt-4.1", "1.25"]],
                    right=frozenset({2}))
    assert lines == ["configuration     model     USD",
                     "adaptive-planner  none     free",
                     "react             gpt-4.1  1.25"]


def test_progress_only_on_a_terminal(monkeypatch):
    from mcbuild.cli import progress
    from mcbuild.runtime.study.run.progress import Tally

    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    with progress.Stages() as stages:                  # not a terminal: nothing
        stages("worlds", 1, 2)
    assert stream.getvalue() == ""
    with progress.StudyBar("study s") as bar:          # not a terminal: one summary line at the end, once
        tally = Tally(4, 0, 0, 0.0, 0, 0.25, 2.0)
        bar(tally)
        tally.add(50.0, False, 0.5)
        bar(tally)
        bar.close()
    assert stream.getvalue().splitlines() == ["study s: 1/4 episodes stored (1 in this run, 0:00:00)  "
                                              "Score 50.0  SR 0.0%  $0.75 of $2.00"]
    stream.truncate(0)
    stream.seek(0)
    with progress.StudyBar("study s", quiet=True) as bar:
        bar(Tally(4, 0, 0, 0.0, 0))
    assert stream.getvalue() == ""
    monkeypatch.setattr(progress, "shown", lambda quiet=False: not quiet)
    with progress.Stages() as stages:
        stages("tables")
        stages("viewer: episodes", 1, 2)
        stages("viewer: episodes", 2, 2)
    assert "] tables\n" in stream.getvalue() and "viewer: episodes" in stream.getvalue()    # a line, then a bar
    assert stream.getvalue().endswith("\n")                                                # the line is ended
    with progress.Stages(quiet=True) as stages:
        stages("plots")
    assert "plots" not in stream.getvalue()


def test_no_eta_until_it_means_something(monkeypatch):
    from mcbuild.cli import progress

    clock = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    bar = progress.Bar("study", 1000)
    clock[0] = 130.0                   # a slow start (forked workers, warm caches) is not the rate
    bar.update(1)
    assert bar.rate(clock[0]) is None and bar.eta(clock[0]) is None
    clock[0] = 131.0
    bar.update(11)
    assert bar.rate(clock[0]) == pytest.approx(10.0) and bar.eta(clock[0]) is None      # 1 s: too soon
    clock[0] = 136.0
    bar.update(41)
    assert bar.eta(clock[0]) is None                   # 40 seen, 959 left: under 5% of them
    clock[0] = 141.0
    bar.update(111)
    assert bar.eta(clock[0]) == pytest.approx(889 / 10.0)
    assert "ETA 0:01:28" in bar.status(clock[0])
    bar.close()

def test_quiet_has_one_wording_and_map_limit_refuses_negatives(tmp_path):
    helps = set()

    def walk(cmd: click.Command) -> None:
        for p in cmd.params:
            if "--quiet" in getattr(p, "opts", ()):
                helps.add(p.help)
        for sub in getattr(cmd, "commands", {}).values():
            walk(sub)
    walk(main)
    assert len(helps) == 1, helps
    res = cli("study", "report", tmp_path, "--map-limit", "-1")
    assert res.exit_code == 2 and "--map-limit" in res.stderr
    assert "--build" in cli("demo", "--help").stdout
    run_help = cli("study", "run", "--help").stdout
    assert re.search(r"--build DIRECTORY\s+\S", run_help), run_help
