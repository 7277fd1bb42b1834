"""Where the toolkit's data and artifacts live.

``ROOT`` holds ``catalogs/``, ``specs/`` and ``studies/``: the repository in a checkout, or the
installed ``mcbuild`` package's folder after ``pip install .`` (the three folders ship as its
package data, beside ``compiler/``, ``runtime/`` and its other subpackages). ``MCBUILD_ROOT``
overrides it, e.g. to compile a folder of your own specs against your own catalogs.

``VANILLA_DATA`` is the imported copy of the game's own 1.19.0 data (``mcbuild vanilla import``):
``MCBUILD_VANILLA`` if set, else ``build/vanilla-1.19/`` in a checkout, else the per-user data
folder (``$XDG_DATA_HOME/mcbuild/vanilla-1.19``). The repository never holds those files.

``BUILD`` is where artifacts go: ``MCBUILD_BUILD`` if set, else ``build/`` in the checkout, else
``build/`` in the current folder (an installed copy never writes into site-packages).
"""
from __future__ import annotations

import os
from pathlib import Path

_HERE = Path(__file__).resolve().parents[2]
_CHECKOUT = (_HERE / "pyproject.toml").is_file()

PACKAGES = _HERE          # where the folders of mcbuild's subpackages (compiler/, audits/, runtime/...) are
ROOT = Path(os.environ["MCBUILD_ROOT"]).resolve() if os.environ.get("MCBUILD_ROOT") else _HERE
CATALOGS = ROOT / "catalogs"
SPECS = ROOT / "specs"
BUILD = (Path(os.environ["MCBUILD_BUILD"]) if os.environ.get("MCBUILD_BUILD")
         else _HERE / "build" if _CHECKOUT else Path.cwd() / "build").resolve()

_USER_DATA = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "mcbuild"
VANILLA_DATA = Path(os.environ["MCBUILD_VANILLA"]).resolve() if os.environ.get("MCBUILD_VANILLA") else (
    _HERE / "build" / "vanilla-1.19" if _CHECKOUT else _USER_DATA / "vanilla-1.19")
