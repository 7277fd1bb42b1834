"""Results cards (`study report` writes report/card.json; its JSON Schema) and `study compare A B`:
episodes paired by world, condition, task and repetition, paired tests, and the refusal to compare
studies run on other worlds or packs."""
from __future__ import annotations

import copy
import hashlib
import json

import jsonschema
import pytest
from click.testing import CliRunner

from mcbuild.analysis.card import CARD_VERSION, CardError, build_card, card_schema, card_text, read_card, save_card
from mcbuild.analysis.compare import Incomparable, Side, compare, load_side
from mcbuild.analysis.source import StudySource
from mcbuild.cli import main
from mcbuild.runtime.records import EpisodeRecord
from mcbuild.runtime.study import metrics as M
from mcbuild.runtime.study.metrics import stats


def records(path) -> list[EpisodeRecord]:
    with StudySource(path) as src:
        return [EpisodeRecord.from_dict(r) for r in src.records()]


def test_the_card_holds_what_the_study_ran_on_and_found(planner_studies, world_build):
    card = build_card(planner_studies["planners"], world_build)
    jsonschema.Draft202012Validator(card_schema()).validate(card)
    assert card["card_version"] == CARD_VERSION and card["toolkit"]["name"] == "mcbuild"
    study, build = card["study"], card["build"]
    assert (study["planned"], study["valid"], study["missing"]) == (14, 14, 0) and len(study["plan_digest"]) == 64
    assert build["verified"] and build["fingerprint"].startswith("content:")
    for suite in ("m01", "m04"):
        pack = hashlib.sha256((world_build / suite / "datapack.zip").read_bytes()).hexdigest()
        assert build["packs"][suite] == pack == next(s for s in build["suites"] if s["id"] == suite)["pack_sha256"]
    assert {"plains-1/vanilla", "plains-1/m04"} <= set(build["saves"])
    recs = records(planner_studies["planners"])
    assert len(card["episodes"]["rows"]) == 14
    for row in card["results"]:
        own = [r for r in recs if r.configuration == row["configuration"]]
        mirror = [r for r in own if r.is_mirror]
        assert row["mirror"]["score"]["value"] == pytest.approx(sum(r.score for r in mirror) / len(mirror))
        wins = sum(r.success for r in mirror)
        assert row["mirror"]["sr"]["ci"] == pytest.approx([100 * x for x in stats.wilson_interval(wins, len(mirror))])
        rie = M.rie(own, ())[()]
        assert row["rie_sr"]["value"] == pytest.approx(rie.rie_sr) and row["rie_sr"]["n"] == rie.n_pairs == 6
        assert [c["condition"] for c in row["conditions"]] == study["conditions"]
    assert card_text(card) == card_text(build_card(planner_studies["planners"], world_build))   # no wall clock


def test_study_report_writes_the_card(planner_studies, world_build, tmp_path):
    out = tmp_path / "report"
    res = CliRunner().invoke(main, ["study", "report", str(planner_studies["planners"]), "--out", str(out),
                                                    "--build", str(world_build), "--no-viewer", "--no-trajectories",
                                                    "--quiet"])
    assert res.exit_code == 0, res.output
    assert f"card: {out / 'card.json'}" in res.stdout.splitlines() and res.stderr == ""
    card = read_card(out / "card.json")
    assert card == build_card(planner_studies["planners"], world_build)
    other = tmp_path / "not-the-build"
    other.mkdir()
    res = CliRunner().invoke(main, ["study", "report", str(planner_studies["planners"]), "--out",
                                                    str(tmp_path / "r2"), "--build", str(other), "--no-viewer",
                                                    "--no-trajectories", "--quiet"])
    assert res.exit_code == 0 and res.stderr.startswith(f"warning: {other} is not the build this study ran on")
    assert read_card(tmp_path / "r2" / "card.json")["build"] == {"fingerprint": card["build"]["fingerprint"],
                                                                 "verified": False}


def test_a_card_is_a_report_entry_and_never_replaces_a_users_file(planner_studies, world_build, tmp_path):
    from mcbuild.analysis.card import CARD_NAME
    from mcbuild.compiler.core.owned import NotOurs
    from mcbuild.runtime.study.report.writers import REPORT_ENTRIES

    assert CARD_NAME in REPORT_ENTRIES              # a report folder holding a card is still a report folder
    mine = tmp_path / "mine.json"
    mine.write_text('{"my": "notes"}')
    card = build_card(planner_studies["adaptive-planner"], world_build)
    with pytest.raises(NotOurs, match=f"^{mine}: a file that `mcbuild study report` did not write"):
        save_card(card, mine)
    assert mine.read_text() == '{"my": "notes"}'
    ours = tmp_path / "card.json"
    save_card(card, ours)
    save_card(card, ours)                           # a card: replaced
    assert read_card(ours) == card


def test_the_demo_writes_the_card_beside_its_report(planner_studies, world_build, tmp_path):
    """`mcbuild demo`'s report step writes the card with the report, and again when a current report
    lacks it (a report of an earlier version)."""
    from mcbuild.cli.cmd_demo import _report

    study = tmp_path / "quick"
    study.mkdir()
    (study / "results.sqlite").write_bytes((planner_studies["planners"] / "results.sqlite").read_bytes())
    card = study / "report" / "card.json"
    _report(study, world_build, quiet=True)
    assert read_card(card) == build_card(study, world_build)
    card.unlink()
    _report(study, world_build, quiet=True)             # the report is current: only the card is written
    assert read_card(card) == build_card(study, world_build)


def test_a_bad_card_is_one_line_naming_the_file_and_field(planner_studies, world_build, tmp_path):
    card = build_card(planner_studies["adaptive-planner"], world_build)
    path = tmp_path / "card.json"
    path.write_text("{not json")
    with pytest.raises(CardError, match=f"^{path}: not a readable card"):
        read_card(path)
    path.unlink()
    broken = copy.deepcopy(card)
    broken["results"][0]["mirror"]["sr"]["n"] = -1
    save_card(broken, path)
    with pytest.raises(CardError, match=f"^{path}: results.0.mirror.sr"):
        read_card(path)
    save_card({**card, "card_version": CARD_VERSION + 1}, path)
    with pytest.raises(CardError, match="newer than this mcbuild reads"):
        read_card(path)
    res = CliRunner().invoke(main, ["study", "compare", str(path), str(planner_studies["adaptive-planner"]),
                                    "--build", str(world_build)])
    assert res.exit_code == 2 and res.output.count("\n") == 1 and res.output.startswith(f"error: {path}: ")


def _by_hand(a_path, b_path, a_configuration):
    a = {(r.world, r.condition, r.task, r.repetition): r for r in records(a_path) if r.configuration == a_configuration}
    b = {(r.world, r.condition, r.task, r.repetition): r for r in records(b_path)}
    keys = sorted(a.keys() & b.keys())
    return [(a[k], b[k]) for k in keys]


def test_compare_pairs_two_studies_and_tests_them(planner_studies, world_build, tmp_path):
    """The vanilla planner of one study against the adaptive planner of another."""
    a, b = planner_studies["planners"], planner_studies["adaptive-planner"]
    res = CliRunner().invoke(main, ["study", "compare", str(a), str(b), "--a-arm", "vanilla-planner",
                                    "--build", str(world_build)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert "A vanilla-planner@none vs B adaptive-planner@none: 7 episode pairs by world, condition, task, repetition " \
           "(0 only in A, 0 only in B)" in lines
    assert lines[2].startswith("build: the 7 saves and 6 packs the paired episodes used have the same hashes")
    labels = [line.split(" | ")[0].lstrip("| ") for line in lines if line.startswith("| ") and "---" not in line][1:]
    assert labels == ["Vanilla", "M01", "M02", "M03", "M04", "M05", "M06", "Mirror (pooled)", "All"]
    pairs = _by_hand(a, b, "vanilla-planner")
    result = compare(load_side(a, world_build), load_side(b, world_build), arm_a="vanilla-planner")
    (arm,) = result.arms
    everything = arm.rows[-1]
    diff = stats.paired_difference([y.score for _, y in pairs], [x.score for x, _ in pairs])
    assert everything.n == 7 and everything.score == diff
    a_only = sum(x.success and not y.success for x, y in pairs)
    b_only = sum(y.success and not x.success for x, y in pairs)
    assert (everything.success.b, everything.success.c) == (a_only, b_only)
    assert everything.success.p_value == stats.mcnemar(a_only, b_only).p_value
    # a card on one side gives the same comparison
    card = save_card(build_card(b, world_build), tmp_path / "b.json")
    same = compare(load_side(a, world_build), load_side(card), arm_a="vanilla-planner")
    assert same.to_json()["arms"] == result.to_json()["arms"]
    res = CliRunner().invoke(main, ["study", "compare", str(a), str(card), "--a-arm", "vanilla-planner",
                                    "--build", str(world_build), "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["arms"] == json.loads(json.dumps(result.to_json()))["arms"]


def test_compare_picks_arms(planner_studies, world_build):
    both, adaptive = (load_side(planner_studies[n], world_build) for n in ("planners", "adaptive-planner"))
    (arm,) = compare(both, adaptive).arms                       # the arm both have
    assert arm.arm_a == arm.arm_b == ("adaptive-planner", "none") and arm.rows[-1].score.mean == 0.0
    (arm,) = compare(both, adaptive, arm_a="vanilla-planner").arms
    assert arm.arm_a == ("vanilla-planner", "none") and arm.arm_b == ("adaptive-planner", "none")
    with pytest.raises(Incomparable, match=r"--a-arm react: no such arm .* \(arms: vanilla-planner@none, "
                                           r"adaptive-planner@none\)"):
        compare(both, adaptive, arm_a="react")


def test_compare_refuses_other_worlds_or_packs_naming_them(planner_studies, world_build, tmp_path):
    a = load_side(planner_studies["planners"], world_build)         # its adaptive-planner arm is paired with b's
    b = load_side(planner_studies["adaptive-planner"], world_build)
    other = copy.deepcopy(b.card)
    other["build"]["packs"]["m04"] = "0" * 64
    other["build"]["saves"]["plains-1/m04"] = "1" * 64
    with pytest.raises(Incomparable) as err:
        compare(a, Side("b", other))
    assert str(err.value) == (f"A and B ran on different worlds or packs: pack m04 (A {a.card['build']['packs']['m04'][:12]}…, "
                              f"B 000000000000…); save plains-1/m04 (A {a.card['build']['saves']['plains-1/m04'][:12]}…, "
                              "B 111111111111…)")
    path = save_card(other, tmp_path / "other.json")
    res = CliRunner().invoke(main, ["study", "compare", str(planner_studies["planners"]), str(path),
                                    "--build", str(world_build)])
    assert res.exit_code == 1 and res.output.startswith("error: A and B ran on different worlds or packs: pack m04")
    unverified = copy.deepcopy(b.card)
    unverified["build"] = {"fingerprint": "content:" + "2" * 64, "verified": False}
    with pytest.raises(Incomparable, match="and the packs and saves of B cannot be checked here"):
        compare(a, Side("b", unverified))
    unverified["build"]["fingerprint"] = a.card["build"]["fingerprint"]
    assert compare(a, Side("b", unverified)).build.startswith("the same build fingerprint")
    budget = copy.deepcopy(b.card)
    budget["episodes"]["rows"] = [r[:8] + [200] + r[9:] for r in budget["episodes"]["rows"]]
    with pytest.raises(Incomparable, match="different budgets: iron_armor 50 vs 200"):
        compare(a, Side("b", budget))


def test_the_card_schema_is_printed_and_valid():
    res = CliRunner().invoke(main, ["schema", "--kind", "card"])
    assert res.exit_code == 0 and json.loads(res.output) == card_schema()
    jsonschema.Draft202012Validator.check_schema(card_schema())
    assert card_schema()["$id"] == f"urn:mcbuild:card:{CARD_VERSION}"
