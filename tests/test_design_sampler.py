"""Static-only runs: the seed-based sampler proposes specs inside the catalog that compile."""
from __future__ import annotations

import json
import re

import yaml
from click.testing import CliRunner

from mcbuild.compiler.build import compile_data
from mcbuild.compiler.spec import operators
from mcbuild.designer_judge.loop import DesignRequest, run_design
from mcbuild.designer_judge.sampler import MAX_CHANGES, MIN_CHANGES, sample
from mcbuild.cli import main

TASKS = ["iron_armor", "diamond", "enchantment"]
SEEDS = range(6)


def test_samples_are_deterministic_and_inside_the_catalog():
    cat = operators.load()
    for seed in SEEDS:
        spec = sample(seed, TASKS)
        assert spec == sample(seed, TASKS)
        assert MIN_CHANGES <= len(spec["changes"]) <= MAX_CHANGES
        families = set()
        for ch in spec["changes"]:
            op = cat["operators"][ch["operator"]]
            assert ch["target"] in cat["targets"][op["target_kind"]]
            assert all(o.get("item") is None or o["item"] in cat["outputs"] for o in ch["outputs"])
            assert all(st in cat["stations"] for st in ch.get("stations", []))
            families.add(f"{op['skill']}:{ch['target']}")
        assert len(families) == len(spec["changes"])  # no two changes on the same transition


def test_static_only_specs_compile_and_differ_across_seeds(tmp_path):
    seen = {}
    for seed in SEEDS:
        req = DesignRequest(kind="mirror", tasks=TASKS, static_only=True, seed=seed, run_id=f"s{seed}",
                            out=tmp_path / f"sampled-{seed}.yaml", design_root=tmp_path / "design")
        result = run_design(req)
        assert result.accepted, (seed, result.last_static)
        data = yaml.safe_load((tmp_path / f"sampled-{seed}.yaml").read_text())
        art = compile_data(data, f"sampled-{seed}.yaml")
        assert art.report["audit"]["hard_failures"] == []
        key = json.dumps(data["changes"], sort_keys=True)
        assert key not in seen, f"seeds {seen.get(key)} and {seed} sampled the same changes"
        seen[key] = seed


def test_cli_static_only_seed_7(tmp_path):
    out = tmp_path / "sampled-7.yaml"
    args = ["design", "--kind", "mirror", "--tasks", ",".join(TASKS), "--static-only", "--seed", "7",
            "--design-dir", str(tmp_path / "design"), "--run-id", "r7", "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "compiled and audited" in result.output
    assert re.search(r"^accepted after \d+ samples?: wrote ", result.output, re.M), result.output   # the sampler's unit
    first = out.read_bytes()
    compiled = CliRunner().invoke(main, ["compile", str(out), "--build", str(tmp_path / "build")])
    assert compiled.exit_code == 0, compiled.output
    again = CliRunner().invoke(main, args[:-2] + ["--out", str(tmp_path / "again.yaml")])
    assert again.exit_code == 0 and (tmp_path / "again.yaml").read_bytes() == first
    assert json.loads((tmp_path / "design" / "r7" / "run.json").read_text())["status"] == "accepted"


def test_static_only_biome_without_from_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(main, ["design", "--kind", "biome", "--tasks", "diamond", "--static-only",
                                       "--design-dir", str(tmp_path), "--out", str(tmp_path / "b.yaml")])
    assert result.exit_code == 2 and "error: static-only sampling" in result.output
