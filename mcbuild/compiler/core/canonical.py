"""Canonical serialization: the same data always gives the same bytes."""
from __future__ import annotations

import hashlib
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterator

from mcbuild.compiler.core.scratch import make_file


def dumps(data: Any) -> str:
    """Canonical JSON text: sorted keys, 2-space indent, UTF-8, trailing newline."""
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def dump_bytes(data: Any) -> bytes:
    return dumps(data).encode("utf-8")


_COMPACT = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def compact(data: Any) -> str:
    """Canonical one-line JSON (for hashing and byte-for-byte comparison): ``json.dumps`` with these
    options, from one encoder made once (``json.dumps`` makes one per call)."""
    return _COMPACT.encode(data)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def atomic_write(path: Path, data: bytes, *, tool: str) -> None:
    """Write via a temp file of ``tool`` in the same folder, then rename: never a half-written file."""
    with atomic_open(path, "wb", tool=tool) as fh:
        fh.write(data)


@contextmanager
def atomic_open(path: Path, mode: str = "w", *, tool: str) -> Iterator[IO]:
    """A file handle on a temp file of ``tool`` in ``path``'s folder (``scratch.py``: a killed run's
    is swept by the next), renamed to ``path`` when the block ends without error (removed
    otherwise); the file gets the umask's mode and an ``OSError`` (a full disk) names ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = make_file(path.parent, tool)
    try:
        with naming(path, tmp), os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as fh:
            yield fh
        follow_umask(tmp)
        with naming(path, tmp):
            os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def naming(path: Path, writing: str | Path | None = None) -> Iterator[None]:
    """Re-raise an ``OSError`` (a full disk) that names no file, or names the temporary file
    ``writing`` that becomes ``path``, as one naming ``path``."""
    try:
        yield
    except OSError as exc:
        if exc.errno is not None and exc.filename in (None, None if writing is None else str(writing)):
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise


def write_file(path: Path, data: bytes) -> None:
    """``path.write_bytes(data)``, an ``OSError`` (a full disk) naming ``path``."""
    with naming(path):
        path.write_bytes(data)


def follow_umask(path: str | Path, mode: int = 0o666) -> None:
    """Give ``path`` the mode an ordinary create would (temporaries are made 0600, folders 0700)."""
    os.chmod(path, mode & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask

