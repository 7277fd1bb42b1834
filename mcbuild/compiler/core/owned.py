"""Folders a command replaces or writes into: only an empty one, or one it recognizably wrote itself.

A command that replaces a whole folder (``vanilla import``, ``compile``, ``build worlds``) or writes
its files into one (``study report``) keeps a marker there, :data:`MARKER`: which command wrote the
folder and, for a replaced folder, every file it holds. Before it writes, the command checks the
folder:

* absent, or an empty folder: written;
* marked by the same command: replaced (or written into) when it holds no file but those the marker
  lists or the command writes now; a file of the user's there is never lost;
* unmarked (written before markers existed, or never by mcbuild): accepted only when every file
  is one the command writes now (a replaced folder) or every entry one of the names it writes (a
  folder written into);
* anything else (a file, a symbolic link, a folder with other files, another command's folder) is
  refused with :class:`NotOurs`, one line naming the path (exit 2); nothing is changed.
"""
from __future__ import annotations

import json
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from mcbuild.compiler.core.canonical import atomic_write, follow_umask, naming
from mcbuild.compiler.core.errors import SpecError
from mcbuild.compiler.core.scratch import is_scratch, make_dir, scratch_name, sweep

__all__ = ["MARKER", "NotOurs", "COMMANDS", "atomic_write_dir", "check_file", "check_replaceable", "claim_folder",
           "install", "marker_bytes", "own_files", "staged_dir"]

MARKER = ".mcbuild.json"          # not a temporary name (scratch.PREFIX is ".mcbuild-")
#: The tool names of the commands that keep a marker, and how the user calls them.
COMMANDS = {"vanilla": "vanilla import", "compile": "compile", "worlds": "build worlds", "report": "study report",
            "export": "study export"}


class NotOurs(SpecError):
    """A folder (or file) that a command would replace but did not write (exit 2, one line naming it)."""

    def __init__(self, path: Path, message: str):
        self.file, self.field, self.message = str(path), "", message
        Exception.__init__(self, f"{path}: {message}")


def marker_bytes(tool: str, files: Iterable[str] | None) -> bytes:
    """The marker of a folder written by ``tool``: the files it holds (None: a folder written into)."""
    data = {"written_by": f"mcbuild {COMMANDS[tool]}", "files": None if files is None else sorted(files)}
    return (json.dumps(data, sort_keys=True, indent=1) + "\n").encode("utf-8")


def _read_marker(folder: Path) -> dict | None:
    try:
        data = json.loads((folder / MARKER).read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def own_files(folder: Path) -> list[str]:
    """Every file below ``folder`` (posix paths relative to it) but the marker."""
    out = []
    for root, _dirs, names in os.walk(folder):
        for name in names:
            rel = (Path(root) / name).relative_to(folder).as_posix()
            if rel != MARKER:
                out.append(rel)
    return sorted(out)


def _refuse_non_folder(target: Path, tool: str) -> None:
    if target.is_symlink():
        raise NotOurs(target, f"a symbolic link, which `mcbuild {COMMANDS[tool]}` would replace; nothing was changed "
                      "(remove the link or write elsewhere)")
    if target.exists() and not target.is_dir():
        raise NotOurs(target, f"a file, not a folder `mcbuild {COMMANDS[tool]}` wrote; nothing was changed "
                      "(move it away or write elsewhere)")


def _foreign_marker(target: Path, tool: str, marker: dict | None) -> None:
    wrote = f"mcbuild {COMMANDS[tool]}"
    if marker is not None and marker.get("written_by") != wrote:
        raise NotOurs(target, f"written by `{marker.get('written_by')}`, not `{wrote}`; nothing was changed "
                      "(choose another folder)")


def _refuse(target: Path, tool: str, foreign: list[str]) -> None:
    more = f" and {len(foreign) - 1} more file(s)" if len(foreign) > 1 else ""
    raise NotOurs(target, f"holds {foreign[0]}{more} that `mcbuild {COMMANDS[tool]}` did not write; nothing was "
                  "replaced (move them away, or choose another folder)")


def check_replaceable(target: Path, tool: str, writing: Iterable[str]) -> None:
    """Raise :class:`NotOurs` unless ``tool`` may replace the folder ``target`` by one holding the
    files ``writing`` (see the module docstring)."""
    _refuse_non_folder(target, tool)
    if not target.exists():
        return
    marker = _read_marker(target)
    _foreign_marker(target, tool, marker)
    known = set(writing)
    if marker is not None and isinstance(marker.get("files"), list):
        known.update(str(f) for f in marker["files"])
    foreign = [rel for rel in own_files(target) if rel not in known and not is_scratch(Path(rel).name, tool)]
    if foreign:
        _refuse(target, tool, foreign)


def check_file(path: Path, tool: str, head: bytes) -> None:
    """Refuse (:class:`NotOurs`) to replace ``path`` unless it is absent, empty or begins with
    ``head``, the way every file ``tool`` writes begins."""
    if path.is_symlink() or path.is_dir():
        raise NotOurs(path, f"not a file `mcbuild {COMMANDS[tool]}` wrote; nothing was changed (write elsewhere)")
    try:
        with path.open("rb") as fh:
            start = fh.read(len(head))
    except FileNotFoundError:
        return
    if start and start != head:
        raise NotOurs(path, f"a file that `mcbuild {COMMANDS[tool]}` did not write; nothing was replaced "
                      "(move it away, or choose another file)")


def claim_folder(folder: Path, tool: str, names: Iterable[str], *, check_only: bool = False) -> None:
    """Make ``folder`` one that ``tool`` writes its files into (the top-level entries ``names`` and
    what lies below them), marking it: refused with :class:`NotOurs` unless it is absent, empty,
    marked by ``tool``, or holds nothing but those names. ``check_only``: refuse, but neither
    create nor mark it."""
    _refuse_non_folder(folder, tool)
    if folder.exists():
        marker = _read_marker(folder)
        _foreign_marker(folder, tool, marker)
        if marker is not None:
            return
        allowed = set(names)
        foreign = sorted(entry.name for entry in os.scandir(folder)
                         if entry.name not in allowed and not is_scratch(entry.name, tool))
        if foreign:
            _refuse(folder, tool, foreign)
    if check_only:
        return
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / MARKER, marker_bytes(tool, None), tool=tool)


def atomic_write_dir(target: Path, files: dict[str, bytes], *, tool: str, later: Iterable[str] = ()) -> None:
    """Replace the folder ``target`` with exactly ``files`` and the marker of ``tool`` (which also
    lists the files ``later`` that ``tool`` adds afterwards): :func:`staged_dir`."""
    with staged_dir(target, files, tool=tool, later=later) as tmp:
        for name in sorted(files):
            dest = tmp / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            with naming(target / name, dest):
                dest.write_bytes(files[name])


@contextmanager
def staged_dir(target: Path, names: Iterable[str], *, tool: str, later: Iterable[str] = ()) -> Iterator[Path]:
    """A sibling temporary folder for the caller to fill with the files ``names`` (as large as they
    like, written as they come), which then replaces the folder ``target``, with the marker of
    ``tool`` (listing ``names`` and the files ``later`` that ``tool`` adds afterwards), by renames;
    refused (:class:`NotOurs`) unless :func:`check_replaceable`, before anything is written. The
    temporaries of an earlier run of ``tool`` killed there are swept first; an error inside the block
    removes the temporary folder and leaves ``target`` as it was."""
    target.parent.mkdir(parents=True, exist_ok=True)
    sweep(target.parent, tool)
    listed = [*names, *later]
    check_replaceable(target, tool, listed)
    tmp = make_dir(target.parent, tool)
    try:
        follow_umask(tmp, 0o777)
        yield tmp
        with naming(target / MARKER, tmp / MARKER):
            (tmp / MARKER).write_bytes(marker_bytes(tool, listed))
        install(tmp, target, tool)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def install(staging: Path, target: Path, tool: str) -> None:
    """Put the folder ``staging`` in the place of ``target`` (same file system) by renames; the old
    folder goes aside under a temporary name of ``tool`` (swept by a later run if this one dies)."""
    old = None
    if target.exists():
        old = target.parent / scratch_name(tool, ".old")
        os.replace(target, old)
    os.replace(staging, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
