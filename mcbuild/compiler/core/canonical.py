"""Canonical serialization: the same data always gives the same bytes."""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterator


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


def atomic_write(path: Path, data: bytes) -> None:
    """Write via a temp file in the same folder, then rename: never a half-written file."""
    with atomic_open(path, "wb") as fh:
        fh.write(data)


@contextmanager
def atomic_open(path: Path, mode: str = "w") -> Iterator[IO]:
    """A file handle on a temp file in ``path``'s folder, renamed to ``path`` when the block ends
    without error (removed otherwise); the file gets the umask's mode and an ``OSError`` (a full
    disk) names ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
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
    """Give ``path`` the mode an ordinary create would (``mkstemp`` makes 0600, ``mkdtemp`` 0700)."""
    os.chmod(path, mode & ~_umask())


def atomic_write_dir(target: Path, files: dict[str, bytes]) -> None:
    """Replace the folder `target` with exactly `files`, built in a sibling temp folder then renamed."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    try:
        follow_umask(tmp, 0o777)
        for name in sorted(files):
            dest = tmp / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            with naming(target / name, dest):
                dest.write_bytes(files[name])
        old = None
        if target.exists():
            old = target.with_name(f".{target.name}.old")
            if old.exists():
                _rmtree(old)
            os.replace(target, old)
        os.replace(tmp, target)
        if old is not None:
            _rmtree(old)
    except BaseException:
        _rmtree(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
