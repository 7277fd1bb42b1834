"""mcbuild, the MirrorCraft toolkit: the project's one import package.

Its subpackages are the repository's top-level folders, ``mcbuild.compiler``, ``mcbuild.audits``,
``mcbuild.designer_judge`` and ``mcbuild.runtime`` (with the data folders ``catalogs``, ``specs`` and
``studies``), plus ``mcbuild.cli``, the ``mcbuild`` command. A wheel holds them all below
``mcbuild/`` (``setup.py`` maps each folder there). In a checkout the folders stay at the top, so the
package's path also takes in the checkout: its code is what runs, whether the package was found
through an editable install, ``PYTHONPATH`` or the current folder.
"""
from pathlib import Path

__version__ = "0.2.0"     # the one place of the version: pyproject reads it, CHANGELOG.md's newest entry names it

_CHECKOUT = Path(__file__).resolve().parent.parent
if (_CHECKOUT / "pyproject.toml").is_file() and (_CHECKOUT / "compiler" / "__init__.py").is_file():
    __path__.append(str(_CHECKOUT))
