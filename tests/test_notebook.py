"""docs/notebooks/analysis.ipynb runs (nbclient, a real Jupyter kernel) on a small study, draws its
figure, and its Table 3 is the report's."""
from __future__ import annotations

import json

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("pandas")

from mcbuild.compiler.core.paths import ROOT
from mcbuild.runtime.records import select
from mcbuild.runtime.study import metrics as M
from mcbuild.runtime.study.report import load_study

NOTEBOOK = ROOT / "docs" / "notebooks" / "analysis.ipynb"


def test_the_analysis_notebook_runs_and_its_table3_is_the_reports(planner_studies, monkeypatch):
    study = planner_studies["planners"]
    monkeypatch.setenv("MCBUILD_STUDY", str(study))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit the notebook without outputs"
    nb.cells.append(nbformat.v4.new_code_cell("print(table3.to_json())\nprint(planners.to_json())"))
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)                     # the figure
    table3_json, planners_json = outputs[-1].text.splitlines()
    table3, planners = json.loads(table3_json), json.loads(planners_json)

    d = load_study(study)
    hidden_mirror = select(d.records, disclosure="hidden", is_mirror=True)
    by_suite, rie = M.score_sr(hidden_mirror, "condition"), M.rie(d.records, "condition")
    for suite in d.suites:
        assert table3["Score"][suite.upper()] == pytest.approx(by_suite[(suite,)].score)
        assert table3["SR"][suite.upper()] == pytest.approx(by_suite[(suite,)].sr)
        assert table3["RIE_SR"][suite.upper()] == pytest.approx(rie[(suite,)].rie_sr)
        assert table3["comparisons"][suite.upper()] == rie[(suite,)].n_pairs
    assert table3["RIE_SC"]["Pooled"] == pytest.approx(M.rie(d.records, ())[()].rie_sc)
    assert planners["n"][str(len(planners["n"]) - 1)] == 7                                # all pairs
