"""A non-editable install works from any folder: the data folders ship as package data, and the one
top-level name it adds is ``mcbuild``. Neither ``pip install .`` nor ``pip wheel .`` writes into the
checkout's ``build/``, the artifact folder (setuptools' own build tree goes to a temporary folder).

The game's data is not package data: the installed copy finds the checkout's imported copy through
``MCBUILD_VANILLA`` (a user's install imports into its per-user folder instead, see README)."""
from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from mcbuild import __version__
from mcbuild.compiler.core.paths import ROOT, VANILLA_DATA

SHIPPED = ("pyproject.toml", "setup.py", "README.md", "mcbuild", "catalogs", "specs", "studies")


def _source_copy(source: Path) -> Path:
    """A copy of what a source distribution holds, with a ``build/`` of artifacts as a checkout has."""
    source.mkdir()
    for name in SHIPPED:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, source / name, ignore=shutil.ignore_patterns("node_modules", "__pycache__"))
        else:
            shutil.copy2(src, source / name)
    (source / "build" / "m04").mkdir(parents=True)
    (source / "build" / "m04" / "datapack.zip").write_bytes(b"an artifact")
    return source


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() if p.is_file() else b"" for p in sorted(folder.rglob("*"))}


def test_pip_wheel_adds_only_mcbuild_and_leaves_build_untouched(tmp_path):
    source = _source_copy(tmp_path / "src")
    before = _tree(source / "build")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"), "."],
                   cwd=source, check=True, capture_output=True, text=True)
    assert _tree(source / "build") == before                          # no build/lib, no build/bdist.*
    (wheel,) = (tmp_path / "dist").glob("mcbuild-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"mcbuild", f"mcbuild-{__version__}.dist-info"}
    assert "mcbuild/catalogs/game_facts.yaml" in names and "mcbuild/compiler/core/paths.py" in names


def test_installed_copy_compiles_every_spec_from_another_folder(tmp_path):
    source, target, work = tmp_path / "src", tmp_path / "site", tmp_path / "work"
    work.mkdir()
    _source_copy(source)
    before = _tree(source / "build")
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-v", "--no-deps", "--target", str(target), str(source)],
                         check=True, capture_output=True, text=True)
    for warning in ("BuildBackendWarning", "SetuptoolsWarning", "SetuptoolsDeprecationWarning", "is absent from"):
        assert warning not in pip.stdout + pip.stderr                 # the build prints no setuptools warning
    assert _tree(source / "build") == before                          # setuptools wrote no build/lib there
    assert not (target / "mcbuild" / "compiler" / "core" / "paths.py").is_symlink()
    info = f"mcbuild-{__version__}.dist-info"                          # the version is mcbuild.__version__
    assert {p.name for p in target.iterdir()} == {"mcbuild", info, "bin"}    # bin/: the command
    record = (target / info / "RECORD").read_text(encoding="utf-8").splitlines()
    assert {line.split("/")[0] for line in record if not line.startswith("../")} == {"mcbuild", info}
    run = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(target)!r}); "
           "from mcbuild.cli import main; main()", "compile", "--all"]
    out = subprocess.run(run, cwd=work, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "MCBUILD_VANILLA": str(VANILLA_DATA)})
    assert out.returncode == 0, out.stderr
    built = sorted(p.name for p in (work / "build").iterdir() if p.name != "cache")     # cache: the parsed game data
    assert "m04" in built and "plains" in built and len(built) == 11
    assert (work / "build" / "m04" / "datapack.zip").read_bytes() == \
        subprocess.run([sys.executable, "-c", "from mcbuild.pipeline.build import compile_path; from mcbuild.compiler.core.paths import "
                        "SPECS; import sys; sys.stdout.buffer.write(compile_path(SPECS / 'm04.yaml')"
                        ".files['datapack.zip'])"], capture_output=True, check=True).stdout
