"""The live log of the episodes in flight, for ``mcbuild study watch`` (``runtime/study/watch/``).

While a study runs, each episode in flight has ``<study>/live/<episode_id>.jsonl``, written by the
process that plays it: a head line (which episode, where the body starts), one line per action
(what it was, whether it worked, the body's block position after it, the score) and an end line.
Each line is written whole as it is made (one ``write`` to an unbuffered file), so a reader in
another process sees the episode grow; a reader ignores a last line without its newline. The runner removes an episode's log
:data:`LIVE_KEEP_S` seconds after the episode is committed to the store (the store is then the
record; a page following the episode meanwhile keeps its path) and removes the folder when the run ends;
a run starting clears what a killed one left. The log is for the researcher watching, never for an
agent: nothing reads it back into an episode, and it holds no rule and no evaluator event.

Writing it costs one small line per action; an unwritable folder (a Ray worker on another host)
only turns the log off for that episode.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from mcbuild.runtime.study.design.plan import PlanEntry

__all__ = ["LIVE_DIR", "LiveLog", "clear", "discard"]

LIVE_DIR = "live"
#: Seconds an episode's log stays after the episode is committed to the store.
LIVE_KEEP_S = 10.0
#: The keys of an action's line (``i``: its index; ``pos``: the body's block position after it).
STEP_KEYS = ("i", "skill", "args", "ok", "reason", "pos", "score")


_encode = json.JSONEncoder(separators=(",", ":"), default=str).encode     # made once, not on every line


def _line(fh: IO[bytes], doc: dict[str, Any]) -> None:
    """One line, in one ``write`` to the unbuffered file (nothing is held back: a reader sees it now)."""
    data = memoryview((_encode(doc) + "\n").encode())
    while data:
        written = fh.write(data)
        if not written:                 # a file that takes nothing more: the log stops, it never spins
            raise OSError("the live log's file took no bytes")
        data = data[written:]


class LiveLog:
    """One episode's live log (a no-op when its file cannot be written)."""

    def __init__(self, folder: Path, entry: PlanEntry):
        self.fh: IO[bytes] | None = None
        try:
            self.fh = open(folder / f"{entry.episode_id}.jsonl", "wb", buffering=0)   # closed in end()
        except OSError:
            return
        self.head = {"type": "episode", "id": entry.episode_id, **{k: getattr(entry, k) for k in (
            "world", "condition", "task", "configuration", "model", "budget", "repetition")}}

    def start(self, position: tuple[int, int, int]) -> None:
        self._write({**self.head, "pos": list(position)})

    def step(self, index: int, result: Mapping[str, Any], position: tuple[int, int, int], score: int) -> None:
        self._write({"i": index, "skill": result.get("skill"), "args": result.get("args", {}), "ok": bool(result.get("ok")),
                     "reason": result.get("reason"), "pos": list(position), "score": score})

    def end(self, end_reason: str, score: int, success: bool) -> None:
        self._write({"type": "end", "end": end_reason.split(":", 1)[0], "score": score, "success": success})
        self.close()

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None

    def _write(self, doc: dict[str, Any]) -> None:
        if self.fh is None:
            return
        try:
            _line(self.fh, doc)
        except (OSError, ValueError):       # a full disk or a closed file: the log stops, the episode goes on
            self.close()


def clear(folder: Path) -> None:
    """An empty live folder for a run (what a killed run left is removed)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)


def discard(folder: Path, episode_ids: list[str]) -> None:
    """Remove the logs of episodes the store now holds."""
    for eid in episode_ids:
        (folder / f"{eid}.jsonl").unlink(missing_ok=True)
