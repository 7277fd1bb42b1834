"""A non-editable install works from any folder: the data folders ship as package data, and the one
top-level name it adds is ``mcbuild``.

The game's data is not package data: the installed copy finds the checkout's imported copy through
``MCBUILD_VANILLA`` (a user's install imports into its per-user folder instead, see README)."""
from __future__ import annotations

import shutil
import subprocess
import sys

from mcbuild import __version__
from mcbuild.compiler.core.paths import ROOT, VANILLA_DATA

SHIPPED = ("pyproject.toml", "setup.py", "README.md", "mcbuild", "catalogs", "specs", "studies")


def test_installed_copy_compiles_every_spec_from_another_folder(tmp_path):
    source, target, work = tmp_path / "src", tmp_path / "site", tmp_path / "work"
    work.mkdir()
    source.mkdir()
    for name in SHIPPED:            # a copy: setuptools writes its own build/ into the tree it installs
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, source / name, ignore=shutil.ignore_patterns("node_modules", "__pycache__"))
        else:
            shutil.copy2(src, source / name)
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-v", "--no-deps", "--target", str(target), str(source)],
                         check=True, capture_output=True, text=True)
    for warning in ("BuildBackendWarning", "SetuptoolsWarning", "SetuptoolsDeprecationWarning", "is absent from"):
        assert warning not in pip.stdout + pip.stderr                 # the build prints no setuptools warning
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
        subprocess.run([sys.executable, "-c", "from mcbuild.compiler.build import compile_path; from mcbuild.compiler.core.paths import "
                        "SPECS; import sys; sys.stdout.buffer.write(compile_path(SPECS / 'm04.yaml')"
                        ".files['datapack.zip'])"], capture_output=True, check=True).stdout
