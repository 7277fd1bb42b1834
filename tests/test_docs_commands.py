"""Every ``mcbuild …`` command the README and docs/ show parses with click's own parser (nothing runs),
so a renamed or removed command or flag fails the suite instead of the reader.

Commands are taken from shell code blocks (one a line; ``\\`` continues it; a trailing ``# comment``,
pipes and ``&&`` chains are cut) and from inline code spans that start with ``mcbuild``. Synopsis
brackets (``[--workers N]``) are read as what they contain; ``a|b`` is one value. Placeholders stand
as values (``CONFIG``, ``DIR``); a placeholder where a command name should be (``<command>``, ``...``)
ends the check of that line.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from mcbuild.cli import main
from mcbuild.compiler.core.paths import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PREFIXES = ("mcbuild ", ".venv/bin/mcbuild ", "python -m mcbuild ", "$ mcbuild ")
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
_SPAN = re.compile(r"`(mcbuild [^`]+)`")
_PLACEHOLDER = re.compile(r"^(<.*>|\.\.\.|…|[A-Z][A-Z_]*)$")


def commands_in(doc: Path) -> list[tuple[str, str]]:
    """(where, command line) of every mcbuild command shown in ``doc``."""
    text = doc.read_text(encoding="utf-8")
    found: list[tuple[str, str]] = []
    for m in _FENCE.finditer(text):
        if m.group(1) not in ("", "sh", "bash", "console", "shell"):
            continue
        line_no = text[: m.start()].count("\n") + 2
        body = m.group(2).replace("\\\n", " ")
        for n, line in enumerate(body.splitlines()):
            for part in re.split(r"\s(?:&&|\|\||\||;)\s", line.split(" # ")[0].strip()):
                part = part.strip()
                for prefix in PREFIXES:
                    if part.startswith(prefix):
                        found.append((f"{doc.name}:{line_no + n}", "mcbuild " + part[len(prefix):]))
    outside = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for m in _SPAN.finditer(outside):
        found.append((f"{doc.name}:{outside[: m.start()].count(chr(10)) + 1}", m.group(1)))
    return found


def words_of(command: str) -> list[str]:
    command = command.replace("[", " ").replace("]", " ")
    command = re.sub(r"\s2?>\S+", " ", command)              # redirections
    return shlex.split(command)[1:]


def parse(words: list[str]) -> None:
    """Parse ``words`` as ``mcbuild`` would, down to the leaf command, without invoking anything."""
    cmd: click.Command = main
    # with the command's context_settings, as click makes a context: click caches each command's help
    # option from the first context it sees, so a bare context would take `-h` away from later invocations
    ctx = click.Context(main, info_name="mcbuild", resilient_parsing=False, **main.context_settings)
    while True:
        _, rest, _ = cmd.make_parser(ctx).parse_args(list(words))
        if not isinstance(cmd, click.Group):
            n_args = sum(1 if p.nargs >= 0 else 10**6 for p in cmd.params if isinstance(p, click.Argument))
            if len(rest) > n_args:
                raise click.UsageError(f"unexpected extra arguments {rest[n_args:]}")
            return
        if not rest or _PLACEHOLDER.match(rest[0]):
            return                                          # `mcbuild --version`, `mcbuild <command> ...`
        sub = cmd.get_command(ctx, rest[0])
        if sub is None:
            raise click.UsageError(f"no command {rest[0]!r} under {ctx.command_path!r}")
        words = words[words.index(rest[0]) + 1:]
        cmd, ctx = sub, click.Context(sub, parent=ctx, info_name=rest[0], resilient_parsing=False, **sub.context_settings)


ALL = [c for doc in DOCS for c in commands_in(doc)]


def test_the_docs_show_commands():
    assert len(ALL) > 60, len(ALL)
    assert any("study watch" in c for _, c in ALL)


@pytest.mark.parametrize("where, command", ALL, ids=[w for w, _ in ALL])
def test_every_documented_command_parses(where, command):
    try:
        parse(words_of(command))
    except click.ClickException as exc:
        pytest.fail(f"{where}: `{command}`: {exc.format_message()}")


def test_a_renamed_flag_fails():
    with pytest.raises(click.UsageError):
        parse(words_of("mcbuild study run studies/quick.yaml --workerz 2"))
    with pytest.raises(click.UsageError):
        parse(words_of("mcbuild study wacht build/studies/quick"))
    parse(words_of("mcbuild study run [studies/quick.yaml] [--workers N] [--resume]"))
