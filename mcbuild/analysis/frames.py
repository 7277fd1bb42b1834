"""A study as pandas DataFrames (needs the ``analysis`` extra: ``pip install 'mcbuild[analysis]'``).

``study = mcbuild.analysis.open("build/studies/quick")`` reads the store read-only. Its
``episodes``, ``actions`` and ``calls`` properties are the whole tables, each read once when first
used; for a long study, ``read_episodes(columns=...)`` reads only the columns asked for,
``read_actions(episodes=...)`` and ``read_calls(episodes=...)`` only the trajectories of some
episodes, ``iter_actions()`` and ``iter_calls()`` the tables a batch of episodes at a time, and
``trajectory(episode_id)`` one episode's steps with its prompts and replies. The columns are
those of :mod:`mcbuild.analysis.schema` (``docs/analysis.md``), with nullable dtypes and JSON text
in the ``json`` columns, so a frame equals what its Parquet export reads back as.
"""
from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

from mcbuild.analysis.schema import ACTIONS, CALLS, Col
from mcbuild.analysis.source import StudySource

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Study", "frame", "DTYPES"]

#: The pandas dtype of each column kind.
DTYPES = {"str": "string", "json": "string", "int": "Int64", "float": "Float64", "bool": "boolean"}


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise ImportError("mcbuild.analysis needs pandas: pip install 'mcbuild[analysis]'") from None
    return pandas


def frame(rows: Iterable[tuple], columns: Sequence[Col]) -> "pd.DataFrame":
    """A DataFrame of ``rows`` with ``columns``' names and dtypes."""
    pd = _pandas()
    df = pd.DataFrame.from_records(list(rows), columns=[c.name for c in columns])
    return df.astype({c.name: DTYPES[c.kind] for c in columns})


class Study:
    """One study, read-only, as DataFrames. ``path``: the study folder or its ``results.sqlite``."""

    def __init__(self, path: str | Path):
        _pandas()
        self.source = StudySource(path)

    @property
    def path(self) -> Path:
        """The study folder."""
        return self.source.folder

    @property
    def name(self) -> str:
        return str(self.source.meta.get("study", self.path.name))

    @property
    def meta(self) -> dict[str, str]:
        """The store's metadata: config, plan digest, build fingerprint, model settings."""
        return dict(self.source.meta)

    @cached_property
    def config(self) -> dict[str, Any]:
        """The study config it was run with (as stored)."""
        return self.source.config()

    @property
    def settings(self) -> dict[str, Any]:
        """How each model sampled, as stored (empty for scripted agents)."""
        return dict(self.source.settings)

    def close(self) -> None:
        self.source.close()

    def __enter__(self) -> "Study":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Study {self.name!r}: {self.source.count()} episodes at {self.path}>"

    # ------------------------------------------------------------------ the whole tables
    @cached_property
    def episodes(self) -> "pd.DataFrame":
        """One row per stored episode: identity, seed, agent, model and its settings, Score, SR
        (``success``), actions, end reason, milestones, tokens, cost, attempts, wall time."""
        return self.read_episodes()

    @cached_property
    def actions(self) -> "pd.DataFrame":
        """One row per budgeted action of every episode (reads every trajectory once)."""
        return self.read_actions()

    @cached_property
    def calls(self) -> "pd.DataFrame":
        """One row per model call of every episode (empty for scripted agents)."""
        return self.read_calls()

    # ------------------------------------------------------------------ parts of them
    def read_episodes(self, columns: Sequence[str] | None = None,
                      episodes: Iterable[str] | None = None) -> "pd.DataFrame":
        """The ``episodes`` table with only ``columns`` (``episode_id`` always), of ``episodes`` only."""
        cols = self.source.episode_columns(columns)
        return frame(self.source.episode_rows(cols, episodes), cols)

    def read_actions(self, episodes: Iterable[str] | None = None) -> "pd.DataFrame":
        """The ``actions`` of ``episodes`` (ids; all by default)."""
        return frame((r for batch in self.source.action_rows(episodes) for r in batch), ACTIONS)

    def read_calls(self, episodes: Iterable[str] | None = None) -> "pd.DataFrame":
        """The model ``calls`` of ``episodes`` (ids; all by default)."""
        return frame((r for batch in self.source.call_rows(episodes) for r in batch), CALLS)

    def iter_actions(self, episodes: Iterable[str] | None = None) -> Iterator["pd.DataFrame"]:
        """The ``actions`` table as DataFrames of a batch of episodes each (a bounded memory)."""
        for batch in self.source.action_rows(episodes):
            yield frame(batch, ACTIONS)

    def iter_calls(self, episodes: Iterable[str] | None = None) -> Iterator["pd.DataFrame"]:
        """The ``calls`` table as DataFrames of a batch of episodes each."""
        for batch in self.source.call_rows(episodes):
            yield frame(batch, CALLS)

    def trajectory(self, episode_id: str) -> list[dict[str, Any]]:
        """One episode's whole stored trajectory: each step's action, result, Score, the evaluator's
        events and, for an LLM agent, its model calls with their prompts and replies."""
        return self.source.steps(episode_id)
