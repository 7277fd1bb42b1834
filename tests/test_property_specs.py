"""Property: random mutations of the real spec files and study configs either give an accepted
spec (a whole artifact), or exit 2 (bad input) or 1 (a failed check) with one ``error:`` line
naming the file, never a traceback or an unexpected error, and nothing half-written."""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from mcbuild.compiler.core.errors import SpecError
from mcbuild.compiler.core.owned import MARKER
from mcbuild.compiler.core.paths import ROOT, SPECS
from mcbuild.cli import main

SETTINGS = settings(max_examples=30, deadline=None)
COMPILED = sorted(p.name for p in SPECS.glob("*.yaml") if p.name != "worlds.yaml")
STUDY_FILES = sorted(p.name for p in (ROOT / "studies").glob("*.yaml"))
ARTIFACT = {"mirror": {"datapack.zip", "report.json", "spec.json", "rules.md"},
            "biome": {"datapack.zip", "report.json", "spec.json"}}

leaves = (st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False)
          | st.text(max_size=12) | st.sampled_from(["m01", "../x", "minecraft:iron_ingot", "", "iron_armor", "0"]))
values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                           max_size=3), max_leaves=6)


@st.composite
def byte_mutations(draw, text: str) -> bytes:
    """The file's bytes with one random byte-level change."""
    data = bytearray(text.encode("utf-8"))
    op = draw(st.sampled_from(["delete", "insert", "replace", "truncate", "duplicate_line", "swap_lines"]))
    i = draw(st.integers(0, max(0, len(data) - 1)))
    if op == "delete":
        del data[i:i + draw(st.integers(1, 40))]
    elif op == "insert":
        data[i:i] = draw(st.binary(min_size=1, max_size=12) | st.sampled_from([b": ", b"\n  - ", b"&a ", b"*a", b"\t"]))
    elif op == "replace":
        data[i] = draw(st.integers(0, 255))
    elif op == "truncate":
        del data[i:]
    else:
        lines = bytes(data).split(b"\n")
        j = draw(st.integers(0, len(lines) - 1))
        k = draw(st.integers(0, len(lines) - 1))
        if op == "duplicate_line":
            lines.insert(k, lines[j])
        else:
            lines[j], lines[k] = lines[k], lines[j]
        data = bytearray(b"\n".join(lines))
    return bytes(data)


def _nodes(doc: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _nodes(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _nodes(v, path + (i,))
    return out


@st.composite
def tree_mutations(draw, text: str) -> bytes:
    """The parsed file with one node replaced, removed or given a new sibling, dumped as YAML."""
    doc = yaml.safe_load(text)
    path = draw(st.sampled_from(_nodes(doc)[1:]))
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    op = draw(st.sampled_from(["replace", "remove", "add", "repeat"]))
    last = path[-1]
    if op == "replace":
        parent[last] = draw(values)
    elif op == "remove":
        del parent[last]
    elif op == "add" and isinstance(parent, dict):
        parent[draw(st.text(min_size=1, max_size=8))] = draw(values)
    elif isinstance(parent, list):
        parent.insert(last, parent[last])
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True).encode("utf-8")


def _check_failure(res, file: Path) -> None:
    assert res.exit_code in (1, 2), (res.exit_code, res.output)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.output and "rerun with --debug" not in lines[0], lines[0]
    assert str(file) in lines[0] or file.name in lines[0], lines[0]


def _compile(data: bytes, name: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        file, out = Path(tmp) / name, Path(tmp) / "out"
        file.write_bytes(data)
        res = CliRunner().invoke(main, ["compile", str(file), "--build", str(out)])
        written = sorted(out.iterdir()) if out.is_dir() else []
        if res.exit_code == 0:
            assert len(written) == 1 and not written[0].name.startswith("."), written
            kind = "mirror" if (written[0] / "rules.md").is_file() else "biome"
            assert {p.name for p in written[0].iterdir()} == ARTIFACT[kind] | {MARKER}
            return
        _check_failure(res, file)
        assert written == [], written                     # nothing half-written


@SETTINGS
@given(data=st.data(), name=st.sampled_from(COMPILED))
def test_byte_mutations_of_real_specs(data, name):
    _compile(data.draw(byte_mutations((SPECS / name).read_text(encoding="utf-8"))), name)


@SETTINGS
@given(data=st.data(), name=st.sampled_from(COMPILED))
def test_tree_mutations_of_real_specs(data, name):
    _compile(data.draw(tree_mutations((SPECS / name).read_text(encoding="utf-8"))), name)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), name=st.sampled_from(STUDY_FILES), tree=st.booleans())
def test_mutations_of_study_configs(data, name, tree):
    text = (ROOT / "studies" / name).read_text(encoding="utf-8")
    mutated = data.draw(tree_mutations(text) if tree else byte_mutations(text))
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / name
        file.write_bytes(mutated)
        res = CliRunner().invoke(main, ["study", "plan", str(file)])
        if res.exit_code != 0:
            _check_failure(res, file)
            assert res.exit_code == 2


@settings(max_examples=40, deadline=None)
@given(data=st.data(), tree=st.booleans())
def test_mutations_of_the_worlds_spec(data, tree):
    from mcbuild.compiler.spec.worlds import WorldsSpec, load_worlds

    text = (SPECS / "worlds.yaml").read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / "worlds.yaml"
        file.write_bytes(data.draw(tree_mutations(text) if tree else byte_mutations(text)))
        try:
            assert isinstance(load_worlds(file), WorldsSpec)
        except SpecError as exc:
            assert str(exc).startswith(str(file)) and "\n" not in str(exc)
