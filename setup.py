"""The wheel's package layout (everything else is in pyproject.toml): one import package, ``mcbuild``.

The code is the ``mcbuild/`` folder. The data folders at the top of the repository (``catalogs/``,
``specs/``, ``studies/``) ship inside it as package data, which pyproject's ``packages.find`` cannot
map below a prefix.

``build/`` is the toolkit's artifact folder (packs, saves, studies), so setuptools' own build tree
(``build/lib``, ``build/bdist.*``), which ``pip install .`` and ``pip wheel .`` would write there, goes
to a temporary folder removed when the build process exits (tests/test_install.py checks it).
"""
import tempfile

from setuptools import find_namespace_packages, setup

DATA = ("catalogs", "specs", "studies")
SKIP = ["*node_modules*", "*__pycache__*"]
SETUPTOOLS_BUILD = tempfile.TemporaryDirectory(prefix="mcbuild-setuptools-")   # removed at exit

packages = find_namespace_packages(".", include=["mcbuild", "mcbuild.*"], exclude=SKIP)
for folder in DATA:
    packages += [f"mcbuild.{p}" for p in find_namespace_packages(".", include=[folder, f"{folder}.*"], exclude=SKIP)]

setup(packages=packages, package_dir={f"mcbuild.{folder}": folder for folder in DATA},
      options={"build": {"build_base": SETUPTOOLS_BUILD.name}})
