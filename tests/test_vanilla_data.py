"""The game's data: the manifest, ``mcbuild vanilla import`` (a folder or a server jar), ``verify``,
the stamp that spares ordinary commands a re-hash, and the one line every command prints when the
data is missing or damaged."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mcbuild.compiler.core import vanilla
from mcbuild.compiler.core.errors import CompileError, SpecError
from mcbuild.compiler.core.paths import VANILLA_DATA
from mcbuild.compiler.core.owned import MARKER
from mcbuild.compiler.core.vanilla import DataDamaged, DataMissing, ensure, import_data, verify, write_manifest
from mcbuild.cli import exit_code

FILES = {
    "data/minecraft/recipes/stick.json": b'{"type": "minecraft:crafting_shaped"}\n',
    "data/minecraft/loot_tables/blocks/dirt.json": b'{"type": "minecraft:block"}\n',
    "data/minecraft/tags/items/planks.json": b'{"values": ["minecraft:oak_planks"]}\n',
    "reports/registries.json": b'{"minecraft:item": {"entries": {"minecraft:stick": {"protocol_id": 0}}}}\n',
}
OUT_OF_SCOPE = {"reports/commands.json": b"{}\n", ".cache/hashes": b"x\n"}


def _write(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


@pytest.fixture
def tiny(tmp_path):
    """A tiny generator output, its manifest and an import destination."""
    src = _write(tmp_path / "generated", {**FILES, **OUT_OF_SCOPE})
    manifest = tmp_path / "manifest.tsv"
    assert write_manifest(src, None, manifest) == len(FILES)
    return src, manifest, tmp_path / "copy"


def _one_problem(exc: pytest.ExceptionInfo, path: Path, what: str) -> None:
    assert exc.value.problems == [f"{path}: {what}"]
    assert "\n" not in str(exc.value) and str(path) in str(exc.value)


def test_the_manifest_lists_what_the_toolkit_reads(tiny):
    _src, manifest, _dest = tiny
    entries = vanilla.read_manifest(manifest)
    assert sorted(entries) == sorted(FILES)
    for rel, data in FILES.items():
        assert entries[rel] == (len(data), hashlib.sha256(data).hexdigest())


def test_the_manifest_checks_the_upstream_blob_hashes(tiny, tmp_path):
    src, _manifest, _dest = tiny
    blob = lambda data: hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    blobs = tmp_path / "BLOBS.tsv"
    blobs.write_text("".join(f"generated/{rel}\t{blob(data)}\n" for rel, data in FILES.items()))
    assert write_manifest(src, blobs, tmp_path / "m2.tsv") == len(FILES)
    (src / "data/minecraft/recipes/stick.json").write_bytes(b"{}\n")
    with pytest.raises(DataDamaged) as exc:
        write_manifest(src, blobs, tmp_path / "m3.tsv")
    _one_problem(exc, src / "data/minecraft/recipes/stick.json", f"git blob SHA-1 differs from {blobs}")
    blobs.write_bytes(b"generated/\xff\t0\n")                         # damaged: one line naming it
    with pytest.raises(CompileError, match=f"^{blobs}: cannot read as UTF-8 text"):
        write_manifest(src, blobs, tmp_path / "m4.tsv")


def test_import_a_folder_then_trust_its_stamp(tiny, monkeypatch):
    src, manifest, dest = tiny
    assert import_data(src, dest, manifest) == len(FILES)
    copied = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert copied == sorted([*FILES, vanilla.STAMP, MARKER])     # nothing out of scope is copied
    assert verify(dest, manifest) == []
    key = vanilla.manifest_key(manifest)

    def no_reading(*_a):
        raise AssertionError("a stamped copy is not re-hashed")

    with monkeypatch.context() as m:
        m.setattr(vanilla, "_read_all", no_reading)
        assert ensure(dest, manifest) == key
    os.utime(dest / "data/minecraft/recipes/stick.json", ns=(1, 1))     # a new time: hashed once more
    with monkeypatch.context() as m:
        m.setattr(vanilla, "_read_all", no_reading)
        with pytest.raises(AssertionError):
            ensure(dest, manifest)
    assert ensure(dest, manifest) == key                                 # re-hashed, whole, stamped again
    with monkeypatch.context() as m:
        m.setattr(vanilla, "_read_all", no_reading)
        assert ensure(dest, manifest) == key


@pytest.mark.parametrize("change, what", [
    (lambda src: (src / "data/minecraft/recipes/stick.json").write_bytes(b"{}\n"), "sha256 differs from manifest.tsv"),
    (lambda src: (src / "data/minecraft/recipes/stick.json").unlink(), "missing (listed in manifest.tsv)"),
    (lambda src: _write(src, {"data/minecraft/recipes/stick.json.orig": b"{}"}), "not in manifest.tsv"),
], ids=["tampered", "missing", "extra"])
def test_a_bad_source_imports_nothing(tiny, change, what):
    src, manifest, dest = tiny
    import_data(src, dest, manifest)
    before = (dest / vanilla.STAMP).read_bytes()
    change(src)
    with pytest.raises(DataDamaged) as exc:
        import_data(src, dest, manifest)
    name = "data/minecraft/recipes/stick.json" + (".orig" if what.startswith("not in") else "")
    _one_problem(exc, src / name, what)
    assert exit_code(exc.value) == 1
    assert (dest / vanilla.STAMP).read_bytes() == before and verify(dest, manifest) == []


@pytest.mark.parametrize("change, rel, what", [
    (lambda d: (d / "data/minecraft/tags/items/planks.json").write_bytes(b'{"values": []}\n'),
     "data/minecraft/tags/items/planks.json", "sha256 differs from manifest.tsv"),
    (lambda d: (d / "reports/registries.json").unlink(), "reports/registries.json", "missing (listed in manifest.tsv)"),
    (lambda d: _write(d, {"notes.txt": b"hello"}), "notes.txt", "not in manifest.tsv"),
], ids=["changed", "missing", "extra"])
def test_verify_names_each_bad_file_and_ordinary_loads_refuse_it(tiny, change, rel, what):
    src, manifest, dest = tiny
    import_data(src, dest, manifest)
    change(dest)
    assert verify(dest, manifest) == [f"{dest / rel}: {what}"]
    with pytest.raises(DataDamaged) as exc:
        ensure(dest, manifest)
    assert exit_code(exc.value) == 1 and "mcbuild vanilla import" in str(exc.value)


def test_the_source_is_never_the_destination(tiny):
    src, manifest, _dest = tiny
    for dest in (src, src / "data", src.parent):
        with pytest.raises(SpecError, match="overlaps the data folder"):
            import_data(src, dest, manifest)
    assert sorted(p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()) == sorted({**FILES, **OUT_OF_SCOPE})


def test_generator_output_is_no_imported_copy(tiny):
    src, manifest, _dest = tiny
    with pytest.raises(DataDamaged, match="this is generator output, not an imported copy"):
        ensure(src, manifest)
    assert not (src / vanilla.STAMP).exists()


def test_missing_data_is_exit_2_saying_how_to_import(tiny):
    _src, manifest, dest = tiny
    (dest.parent / "empty").mkdir()
    for where in (dest, dest.parent / "empty"):
        with pytest.raises(DataMissing) as exc:
            ensure(where, manifest)
        assert exit_code(exc.value) == 2
        assert "mcbuild vanilla import ../shared/data/mcdata-1.19/generated" in str(exc.value)
        assert "server.jar" in str(exc.value)


@pytest.mark.parametrize("damage, what", [
    (lambda m: m.write_bytes(m.read_bytes() + b"reports/registries.json\t1\t\xff\xfe\n"), "line 7: not UTF-8 text"),
    (lambda m: m.write_bytes(m.read_bytes()[:-40]), "line 6: expected PATH<TAB>SIZE<TAB>SHA256"),
    (lambda m: m.unlink(), "cannot read the manifest"),
], ids=["binary", "truncated", "missing"])
def test_a_damaged_manifest_is_one_line_naming_it(tiny, damage, what):
    src, manifest, dest = tiny
    import_data(src, dest, manifest)
    damage(manifest)
    for call in (lambda: ensure(dest, manifest), lambda: verify(dest, manifest), lambda: import_data(src, dest, manifest)):
        with pytest.raises(CompileError) as exc:
            call()
        assert str(exc.value).startswith(f"{manifest}: {what}") and exit_code(exc.value) == 1


@pytest.mark.parametrize("stamp", [b"", b"\xff\x00binary", b'{"manifest_sha256": ', b"[1, 2]"])
def test_a_damaged_stamp_means_a_re_hash(tiny, stamp):
    src, manifest, dest = tiny
    import_data(src, dest, manifest)
    (dest / vanilla.STAMP).write_bytes(stamp)
    assert ensure(dest, manifest) == vanilla.manifest_key(manifest)
    assert json.loads((dest / vanilla.STAMP).read_bytes())["manifest_sha256"] == vanilla.manifest_key(manifest)


def test_an_unreadable_jar_is_one_line_naming_it(tiny, tmp_path, monkeypatch):
    _src, manifest, dest = tiny
    jar = tmp_path / "server.jar"
    jar.write_bytes(b"PK")
    real_open = Path.open

    def refuse(self, *args, **kwargs):
        if self == jar:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refuse)                   # chmod 0 does not stop root
    with pytest.raises(CompileError) as exc:
        import_data(jar, dest, manifest)
    assert str(exc.value) == f"{jar}: cannot read: Permission denied" and not dest.exists()


def test_a_file_changed_behind_its_stamp_is_damaged_not_a_traceback(tmp_path):
    from mcbuild.compiler.rules import catalog

    registries = {key: {"entries": {}} for key in catalog.REGISTRY_KEYS.values()}
    copy = _write(tmp_path / "copy", {catalog.REGISTRIES: json.dumps(registries).encode(),
                                      "data/minecraft/recipes/stick.json": b'{"type": \xff'})
    with pytest.raises(DataDamaged) as exc:
        catalog._parse(copy)
    assert exc.value.problems[0].startswith(f"{copy}/data/minecraft/recipes/stick.json: not valid JSON")
    assert "mcbuild vanilla verify" in str(exc.value) and "\n" not in str(exc.value)
    (copy / catalog.REGISTRIES).write_bytes(b"[]")
    with pytest.raises(DataDamaged, match="registries.json: not the generator's registries report"):
        catalog._parse(copy)


# ----------------------------------------------------------------------------- the jar route
GENERATOR_SOURCE = """
import java.nio.file.*;
public class Main {
    public static void main(String[] args) throws Exception {
        if (!"net.minecraft.data.Main".equals(System.getProperty("bundlerMainClass"))
                || !String.join(" ", args).startsWith("--server --reports --output ")) {
            System.err.println("unexpected command line");
            System.exit(3);
        }
        Files.writeString(Paths.get("bundler-was-here"), "");          // the real jar unpacks here
        Path out = Paths.get(args[args.length - 1]);
        String[][] files = {FILES};
        for (String[] f : files) {
            Path p = out.resolve(f[0]);
            Files.createDirectories(p.getParent());
            Files.writeString(p, f[1]);
        }
    }
}
"""


@pytest.fixture
def generator_jar(tmp_path):
    """A jar whose main class writes the tiny generator output, run the way the server jar is."""
    if shutil.which("javac") is None:
        pytest.skip("no JDK (javac) on this machine")
    java_files = ", ".join("{%s, %s}" % (json.dumps(rel), json.dumps(data.decode()))
                           for rel, data in {**FILES, **OUT_OF_SCOPE}.items())
    src = tmp_path / "java"
    src.mkdir()
    (src / "Main.java").write_text(GENERATOR_SOURCE.replace("{FILES}", "{" + java_files + "}"))
    subprocess.run(["javac", "--release", "17", "Main.java"], cwd=src, check=True, capture_output=True)
    jar = tmp_path / "server.jar"
    with zipfile.ZipFile(jar, "w") as zf:
        zf.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nMain-Class: Main\n")
        zf.write(src / "Main.class", "Main.class")
    return jar


def test_import_from_a_jar_runs_its_data_generator(tiny, generator_jar, tmp_path):
    _src, manifest, dest = tiny
    sha1 = hashlib.sha1(generator_jar.read_bytes()).hexdigest()
    assert import_data(generator_jar, dest, manifest, jar_sha1=sha1) == len(FILES)
    assert {rel: (dest / rel).read_bytes() for rel in FILES} == FILES
    assert verify(dest, manifest) == []
    assert not (tmp_path / "bundler-was-here").exists()                 # ran in a scratch folder
    with pytest.raises(CompileError, match="is not the official 1.19.0 server jar"):
        import_data(generator_jar, dest, manifest, jar_sha1="0" * 40)
    with pytest.raises(CompileError, match=r"cannot run .*MCBUILD_JAVA"):
        import_data(generator_jar, dest, manifest, jar_sha1=sha1, java=str(tmp_path / "no-java"))


def test_a_jar_whose_output_differs_imports_nothing(tiny, generator_jar, tmp_path):
    _src, manifest, dest = tiny
    lines = manifest.read_text().splitlines()
    manifest.write_text("\n".join(line.replace("\t", "\t1", 1) if "stick" in line else line for line in lines) + "\n")
    with pytest.raises(DataDamaged) as exc:
        import_data(generator_jar, dest, manifest, jar_sha1=hashlib.sha1(generator_jar.read_bytes()).hexdigest())
    assert len(exc.value.problems) == 1 and "recipes/stick.json: sha256 differs" in exc.value.problems[0]
    assert not dest.exists()


# ----------------------------------------------------------------------------- the command line
def _mcbuild(*args: str, data: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "MCBUILD_VANILLA": str(data), "MCBUILD_DEBUG": "0"}
    return subprocess.run([sys.executable, "-c", "from mcbuild.cli import main; main()", *args],
                          capture_output=True, text=True, env=env, timeout=300)


def test_the_commands_on_the_real_manifest(tmp_path):
    copy = tmp_path / "vanilla"
    missing = _mcbuild("compile", "--all", data=copy)
    assert missing.returncode == 2 and len(missing.stderr.splitlines()) == 1
    assert "not imported" in missing.stderr and "mcbuild vanilla import" in missing.stderr
    done = _mcbuild("vanilla", "import", str(VANILLA_DATA), data=copy)
    assert done.returncode == 0, done.stderr
    assert _mcbuild("vanilla", "verify", data=copy).stdout.startswith("ok: ")
    stick = copy / "data/minecraft/recipes/stick.json"
    stick.write_bytes(stick.read_bytes().replace(b"4", b"64"))
    bad = _mcbuild("vanilla", "verify", data=copy)
    assert bad.returncode == 1 and bad.stderr.splitlines()[1:] == [f"{stick}: sha256 differs from vanilla-1.19.manifest.tsv"]
    assert bad.stderr.startswith(f"{copy}: 1 file(s) differ from the manifest (0 missing, 1 changed, 0 extra); ")
    damaged = _mcbuild("compile", "--all", data=copy)
    assert damaged.returncode == 1 and len(damaged.stderr.splitlines()) == 1
    assert str(stick) in damaged.stderr and "mcbuild vanilla import" in damaged.stderr


def test_verify_prints_a_summary_then_at_most_20_files(tmp_path):
    """An empty folder lacks all 3,637 files: a summary line first, 20 of them, and how many more."""
    (tmp_path / "empty").mkdir()
    out = _mcbuild("vanilla", "verify", data=tmp_path / "empty")
    lines = out.stderr.splitlines()
    total = len(vanilla.read_manifest())
    assert out.returncode == 1 and len(lines) == 22, lines
    assert lines[0].startswith(f"{tmp_path / 'empty'}: {total} file(s) differ from the manifest ({total} missing, "
                               "0 changed, 0 extra); import the game's 1.19.0 data with `mcbuild vanilla import")
    assert all(line.endswith(": missing (listed in vanilla-1.19.manifest.tsv)") for line in lines[1:21])
    assert lines[21] == f"… and {total - 20} more"


def test_the_test_session_stops_when_the_data_is_missing(tmp_path):
    env = {**os.environ, "MCBUILD_VANILLA": str(tmp_path / "none")}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_layers.py"],
                         cwd=Path(__file__).parents[1], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 2 and "passed" not in out.stdout
    assert "game data: not imported" in out.stdout + out.stderr and "mcbuild vanilla import" in out.stdout + out.stderr


def test_the_parsed_data_is_cached_by_content_key(tmp_path, monkeypatch):
    from mcbuild.compiler.rules import catalog

    monkeypatch.setattr(catalog, "CACHE_DIR", tmp_path / "cache")
    key = ensure()
    first = catalog._cached(VANILLA_DATA, key)
    (cached,) = (tmp_path / "cache").iterdir()

    def no_parsing(_root):
        raise AssertionError("a current cache is not parsed again")

    with monkeypatch.context() as m:
        m.setattr(catalog, "_parse", no_parsing)
        assert catalog._cached(VANILLA_DATA, key) == first
    cached.write_bytes(cached.read_bytes()[:-100])                       # damaged: parsed again, replaced
    assert catalog._cached(VANILLA_DATA, key) == first
    with monkeypatch.context() as m:
        m.setattr(catalog, "_parse", no_parsing)
        assert catalog._cached(VANILLA_DATA, key) == first
    catalog._cached(VANILLA_DATA, "another content key")                 # a new key replaces the old file
    assert [p.name for p in (tmp_path / "cache").iterdir()] != [cached.name]
    assert len(list((tmp_path / "cache").iterdir())) == 1
