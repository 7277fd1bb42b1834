"""Study report: the paper's tables, plots and one self-contained HTML page.

``write_report(study_path)`` reads ``results.sqlite``, checks every record
against the study plan (``metrics.check_records``; excluded records are listed
with their reasons), and writes into ``<study>/report/``:

* ``report.md`` -- every table in Markdown, plus exclusions and faults;
* ``tables/<key>.csv``, ``.tex`` and ``.md`` -- each table as CSV, LaTeX and Markdown;
* ``plots/rie_by_suite.png``, ``plots/checkpoints.png`` (matplotlib, Agg);
* ``report.html`` -- tables and plots (images embedded as base64) with links
  to ``trajectories/<episode_id>.jsonl`` (first line: the episode record and
  its evaluator events; then one line per action);
* ``inputs.json`` -- the digest of what the report was made from (:mod:`.stamp`).

Modules: :mod:`.data` (the study and its checked records), :mod:`.tables`
(the paper's tables), :mod:`.labels` (cell and label text), :mod:`.plots`,
:mod:`.writers` (the report folder), :mod:`.stamp` (whether it is current).  All numbers come from
:mod:`mcbuild.runtime.study.metrics`; a cell with fewer than ``min_episodes``
episodes (or comparisons) reads ``n<k``.
"""
from .data import StudyData, load_study
from .table import Table
from .tables import MIN_EPISODES, build_tables
from .writers import ReportResult, write_report

__all__ = ["Table", "StudyData", "load_study", "build_tables", "write_report", "ReportResult", "MIN_EPISODES"]
