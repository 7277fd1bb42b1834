"""The game's own 1.19.0 data: its manifest, ``mcbuild vanilla import``/``verify`` and the check
every reader runs first.

The repository never holds the game's files. ``catalogs/vanilla-1.19.manifest.tsv`` lists each file
the toolkit reads (the ``SCOPE`` below) with its size and sha256. ``import_data`` copies them from the
data generator's output (a folder, or the official server jar whose generator it runs) into
``VANILLA_DATA`` after checking every file against the manifest, atomically, with a stamp of the
sizes and modification times it verified. ``ensure`` trusts a copy whose stamp still matches and
re-hashes it otherwise; a missing copy is a :class:`DataMissing` (exit 2), a damaged one a
:class:`DataDamaged` (exit 1), each one line saying how to import the data.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path

import yaml

from mcbuild.compiler.core.canonical import atomic_write, dump_bytes, sha256
from mcbuild.compiler.core.errors import CompileError, SpecError
from mcbuild.compiler.core.owned import MARKER, atomic_write_dir, check_replaceable
from mcbuild.compiler.core.paths import CATALOGS, VANILLA_DATA
from mcbuild.compiler.core.scratch import sweep, temporary_dir

MANIFEST = CATALOGS / "vanilla-1.19.manifest.tsv"
STAMP = ".verified.json"            # inside the imported copy: what was verified, and when
SCOPE = ("data/minecraft/advancements/", "data/minecraft/loot_tables/", "data/minecraft/recipes/",
         "data/minecraft/tags/", "reports/registries.json")
SHARED_SOURCE = "../shared/data/mcdata-1.19/generated"
GENERATOR = ["-DbundlerMainClass=net.minecraft.data.Main", "-jar", "{jar}", "--server", "--reports",
             "--output", "{out}"]
GENERATOR_TIMEOUT = 1800            # seconds, generous for a slow machine
JAVA_ENV = "MCBUILD_JAVA"           # the same Java the server backend uses

Entry = tuple[int, str]             # (size, sha256)
Listing = dict[str, list[int]]      # relative path -> [size, mtime_ns]

HOW_TO_IMPORT = (f"import the game's 1.19.0 data with `mcbuild vanilla import {SHARED_SOURCE}` (the data generator's "
                 "output, where that shared folder exists) or `mcbuild vanilla import /path/to/server.jar` (the "
                 "official 1.19.0 server jar, run with Java 17)")


class DataMissing(SpecError):
    """The game's data was never imported (exit 2)."""

    def __init__(self, where: Path):
        super().__init__(str(where), "game data", f"not imported; {HOW_TO_IMPORT}")


class DataDamaged(CompileError):
    """Files that are not what the manifest lists (exit 1); ``problems`` holds one line per file."""

    def __init__(self, where: Path | str, problems: list[str], hint: str):
        self.problems = problems
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(str(where), f"{problems[0]}{more}; {hint}")


def in_scope(rel: str) -> bool:
    return rel.startswith(SCOPE)


# ----------------------------------------------------------------------------- the manifest
def read_manifest(path: Path = MANIFEST) -> dict[str, Entry]:
    """``path -> (size, sha256)`` of every file the toolkit reads; a damaged manifest names its line."""
    out: dict[str, Entry] = {}
    for number, raw in enumerate(_manifest_bytes(path).split(b"\n"), 1):
        try:
            line = raw.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError:
            raise CompileError(str(path), f"line {number}: not UTF-8 text") from None
        if not line or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3 or not parts[1].isdigit() or len(parts[2]) != 64 or not in_scope(parts[0]):
            raise CompileError(str(path), f"line {number}: expected PATH<TAB>SIZE<TAB>SHA256 of a file in scope")
        out[parts[0]] = (int(parts[1]), parts[2])
    if not out:
        raise CompileError(str(path), "the manifest lists no file")
    return out


def manifest_key(path: Path = MANIFEST) -> str:
    """The content key of the game's data: the sha256 of its manifest."""
    return sha256(_manifest_bytes(path))


def _manifest_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CompileError(str(path), f"cannot read the manifest: {exc.strerror or exc}") from None


def _git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def write_manifest(src: Path, blobs: Path | None, out: Path = MANIFEST) -> int:
    """Write the manifest of the generator output ``src``; with ``blobs`` (``BLOBS.tsv``: path
    relative to its folder, git blob SHA-1), every file in scope must be listed there with that hash."""
    files = _read_all(src, source_files(src))
    if blobs is not None:
        listed = {}
        try:
            text = blobs.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CompileError(str(blobs), f"cannot read as UTF-8 text: {exc}") from None
        for line in text.splitlines():
            name, _, digest = line.partition("\t")
            listed[(blobs.parent / name).resolve()] = digest
        root = src.resolve()
        wanted = {p for p in listed if p.is_relative_to(root) and in_scope(p.relative_to(root).as_posix())}
        bad = [f"{src / rel}: git blob SHA-1 differs from {blobs}" for rel, data in sorted(files.items())
               if listed.get((src / rel).resolve()) != _git_blob_sha1(data)]
        bad += [f"{p}: listed in {blobs} but missing" for p in sorted(wanted - {(src / r).resolve() for r in files})]
        if bad:
            raise DataDamaged(src, bad, "the source is not the published 1.19.0 generator output")
    rows = [f"{rel}\t{len(data)}\t{sha256(data)}" for rel, data in sorted(files.items())]
    header = ("# The game's 1.19.0 data files the toolkit reads: path, size, sha256 (tab-separated).\n"
              "# Written by `mcbuild vanilla manifest SRC --blobs BLOBS.tsv`; see catalogs/README.md.\n")
    atomic_write(out, (header + "\n".join(rows) + "\n").encode("utf-8"), tool="vanilla")
    return len(rows)


# ----------------------------------------------------------------------------- checking files
def source_files(src: Path) -> dict[str, Path]:
    """The files of a generator output (or an imported copy) that are in scope, by relative path."""
    out = {}
    for root, _dirs, names in os.walk(src):
        for name in names:
            path = Path(root) / name
            rel = path.relative_to(src).as_posix()
            if in_scope(rel):
                out[rel] = path
    return dict(sorted(out.items()))


def _listing(folder: Path) -> Listing:
    """Size and mtime of every file of ``folder`` but the stamp and the marker (``os.scandir`` and plain strings:
    every command runs this over some 3,600 files)."""
    out: Listing = {}
    todo = [("", str(folder))]
    try:
        while todo:
            prefix, path = todo.pop()
            with os.scandir(path) as entries:
                for entry in entries:
                    rel = prefix + entry.name
                    if entry.is_dir(follow_symlinks=False):
                        todo.append((rel + "/", entry.path))
                    elif rel not in (STAMP, MARKER):
                        st = entry.stat()
                        out[rel] = [st.st_size, st.st_mtime_ns]
    except OSError as exc:
        raise CompileError(str(folder), f"cannot read: {exc}") from None
    return dict(sorted(out.items()))


def _problems(folder: Path, files: dict[str, bytes], manifest: dict[str, Entry], label: str,
              strict: bool) -> list[str]:
    """One line per file that is missing, changed or (``strict``: anywhere; else in scope) extra."""
    out = []
    for rel in sorted(set(files) | set(manifest)):
        if rel not in files:
            out.append(f"{folder / rel}: missing (listed in {label})")
        elif rel not in manifest:
            if strict or in_scope(rel):
                out.append(f"{folder / rel}: not in {label}")
        elif (len(files[rel]), sha256(files[rel])) != manifest[rel]:
            out.append(f"{folder / rel}: sha256 differs from {label}")
    return out


def tally(problems: list[str]) -> str:
    """How many of the :func:`_problems` lines say missing, changed and extra, as one phrase."""
    kinds = {"missing": " missing (listed in ", "changed": ": sha256 differs from ", "extra": ": not in "}
    counts = {kind: sum(1 for line in problems if mark in line) for kind, mark in kinds.items()}
    return (f"{len(problems)} file(s) differ from the manifest "
            f"({', '.join(f'{n} {kind}' for kind, n in counts.items())})")


def _read_all(folder: Path, names: dict[str, Path]) -> dict[str, bytes]:
    try:
        return {rel: path.read_bytes() for rel, path in names.items()}
    except OSError as exc:
        raise CompileError(str(folder), f"cannot read: {exc}") from None


def verify(dest: Path = VANILLA_DATA, manifest_path: Path = MANIFEST) -> list[str]:
    """Re-hash the imported copy: one line per changed, missing or extra file (none: the stamp is
    renewed). A folder that does not exist is :class:`DataMissing`."""
    if not dest.is_dir():
        raise DataMissing(dest)
    sweep(dest, "vanilla")          # a stamp's temporary left by a killed run
    listing = _listing(dest)
    files = _read_all(dest, {rel: dest / rel for rel in listing})
    problems = _problems(dest, files, read_manifest(manifest_path), manifest_path.name, strict=True)
    if not problems:
        _write_stamp(dest, manifest_key(manifest_path), listing)
    return problems


def ensure(dest: Path = VANILLA_DATA, manifest_path: Path = MANIFEST) -> str:
    """The content key of a verified copy at ``dest``: trusted while its files' sizes and times
    equal the stamp, re-hashed otherwise. Missing: :class:`DataMissing`; damaged: :class:`DataDamaged`."""
    if not dest.is_dir():
        raise DataMissing(dest)
    key = manifest_key(manifest_path)
    sweep(dest, "vanilla")
    listing = _listing(dest)
    if _read_stamp(dest) == {"manifest_sha256": key, "files": listing}:
        return key
    if not listing:
        raise DataMissing(dest)
    problems = verify(dest, manifest_path)
    if problems:
        extra = set(listing) - set(read_manifest(manifest_path))
        if len(problems) == len(extra) and not any(in_scope(rel) for rel in extra):
            raise DataDamaged(dest, problems, f"this is generator output, not an imported copy: run `mcbuild vanilla "
                              f"import {dest}` with MCBUILD_VANILLA unset or naming another folder")
        raise DataDamaged(dest, problems, f"see `mcbuild vanilla verify`, then {HOW_TO_IMPORT}")
    return key


def _read_stamp(dest: Path) -> dict | None:
    try:
        return json.loads((dest / STAMP).read_bytes())
    except (OSError, ValueError):
        return None


def _write_stamp(dest: Path, key: str, listing: Listing) -> None:
    """Record what was verified (a read-only copy simply stays unstamped and is re-hashed)."""
    try:
        atomic_write(dest / STAMP, dump_bytes({"manifest_sha256": key, "files": listing}), tool="vanilla")
    except OSError:
        pass


# ----------------------------------------------------------------------------- import
def official_jar_sha1() -> str:
    """The SHA-1 of the official 1.19.0 server jar (``catalogs/game_facts.yaml``, ``server.jar_sha1``)."""
    return str(yaml.safe_load((CATALOGS / "game_facts.yaml").read_text(encoding="utf-8"))["server"]["jar_sha1"])


def file_sha1(path: Path) -> str:
    """SHA-1 of a file (what Mojang publishes for its jars), read in blocks."""
    digest = hashlib.sha1()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise CompileError(str(path), f"cannot read: {exc.strerror or exc}") from None
    return digest.hexdigest()


def run_generator(jar: Path, out: Path, java: str | None = None) -> None:
    """Run the jar's own data generator (``GENERATOR``) into ``out``, in a scratch working folder
    (the server jar unpacks its libraries into the current folder)."""
    java = java or os.environ.get(JAVA_ENV) or "java"
    args = [java] + [a.format(jar=jar.resolve(), out=out.resolve()) for a in GENERATOR]
    with temporary_dir(Path(tempfile.gettempdir()), "vanilla") as work:
        try:
            proc = subprocess.run(args, cwd=work, capture_output=True, text=True, timeout=GENERATOR_TIMEOUT)
        except FileNotFoundError:
            raise CompileError(str(jar), f"cannot run {java!r}: install Java 17 or set {JAVA_ENV}") from None
        except subprocess.TimeoutExpired:
            raise CompileError(str(jar), f"the data generator ran over {GENERATOR_TIMEOUT} s") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines() or ["no output"])[-1]
        raise CompileError(str(jar), f"the data generator failed (exit {proc.returncode}): {last}")


def import_data(src: Path, dest: Path = VANILLA_DATA, manifest_path: Path = MANIFEST, *,
                jar_sha1: str | None = None, java: str | None = None) -> int:
    """Check the generator output ``src`` (a folder, or a server jar whose generator runs first)
    against the manifest and write its files to ``dest`` atomically; the number of files."""
    manifest = read_manifest(manifest_path)
    here, there = src.resolve(), dest.resolve()
    if here.is_relative_to(there) or there.is_relative_to(here):
        raise SpecError(str(src), "source", f"overlaps the data folder {dest}; import into another place "
                        "(unset MCBUILD_VANILLA or point it elsewhere)")
    check_replaceable(dest, "vanilla", [*manifest, STAMP])      # before the generator runs
    if src.is_file():
        expected = jar_sha1 or official_jar_sha1()
        actual = file_sha1(src)
        if actual != expected:
            raise CompileError(str(src), f"SHA-1 {actual} is not the official 1.19.0 server jar's ({expected})")
        sweep(Path(tempfile.gettempdir()), "vanilla")    # a killed import's generator output
        with temporary_dir(Path(tempfile.gettempdir()), "vanilla") as tmp:
            run_generator(src, tmp / "generated", java)
            return _import_folder(tmp / "generated", dest, manifest, manifest_path)
    if src.is_dir():
        return _import_folder(src, dest, manifest, manifest_path)
    raise SpecError(str(src), "source", "neither a folder of data-generator output nor a server jar")


def _import_folder(src: Path, dest: Path, manifest: dict[str, Entry], manifest_path: Path) -> int:
    files = _read_all(src, source_files(src))
    problems = _problems(src, files, manifest, manifest_path.name, strict=False)
    if problems:
        raise DataDamaged(src, problems, "nothing was imported; the source is not the game's 1.19.0 data")
    atomic_write_dir(dest, files, tool="vanilla", later=(STAMP,))
    _write_stamp(dest, manifest_key(manifest_path), _listing(dest))
    return len(files)
