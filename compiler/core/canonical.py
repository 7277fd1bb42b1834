"""Canonical serialization: the same data always gives the same bytes."""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import orjson


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


def plain_copy(data: Any) -> Any:
    """A fresh, unaliased copy of JSON-able data as plain JSON values (objects with sorted string
    keys, arrays for lists and tuples): what ``json.loads(compact(data))`` gives, only faster."""
    return orjson.loads(orjson.dumps(data, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def atomic_write(path: Path, data: bytes) -> None:
    """Write via a temp file in the same folder, then rename: never a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o666 & ~_umask())           # as an ordinary create would (mkstemp makes 0600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_dir(target: Path, files: dict[str, bytes]) -> None:
    """Replace the folder `target` with exactly `files`, built in a sibling temp folder then renamed."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    try:
        os.chmod(tmp, 0o777 & ~_umask())           # as an ordinary mkdir would (mkdtemp makes 0700)
        for name in sorted(files):
            dest = tmp / name
            dest.parent.mkdir(parents=True, exist_ok=True)
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
