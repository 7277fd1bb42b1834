"""Use a study from Python: its tables as DataFrames, lean exports, results cards, comparisons.

* :func:`open` -- a study folder (or its ``results.sqlite``) as a read-only :class:`~.frames.Study`
  whose ``episodes``, ``actions`` and ``calls`` are pandas DataFrames (the ``analysis`` extra);
* :mod:`.export` -- ``mcbuild study export --format parquet|csv|jsonl``: the same three tables;
* :mod:`.card` -- the results card ``card.json`` that ``mcbuild study report`` writes;
* :mod:`.compare` -- ``mcbuild study compare A B``: paired tests on the episodes two studies share.

Everything here reads the store read-only (SQLite ``mode=ro``) and never writes it. The CSV and
JSONL exports, the card and the comparison need no pandas.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcbuild.analysis.frames import Study

__all__ = ["open"]


def open(path: str | Path) -> "Study":
    """The study at ``path`` (a study folder or its ``results.sqlite``), read-only, as DataFrames."""
    from mcbuild.analysis.frames import Study

    return Study(path)
