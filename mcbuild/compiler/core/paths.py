"""Where the toolkit's data and artifacts live.

``PACKAGES`` is the ``mcbuild`` package's own folder (``compiler/``, ``runtime/`` and its other
subpackages). ``CHECKOUT`` is the repository holding it, or None for an installed copy.

``ROOT`` holds ``catalogs/``, ``specs/`` and ``studies/``: the repository in a checkout, or the
installed ``mcbuild`` package's folder after ``pip install .`` (the three folders ship as its
package data, beside its subpackages). ``MCBUILD_ROOT``
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

PACKAGES = Path(__file__).resolve().parents[2]      # mcbuild/ (compiler/core/paths.py sits two folders down)
CHECKOUT = PACKAGES.parent if (PACKAGES.parent / "pyproject.toml").is_file() else None
_HERE = CHECKOUT or PACKAGES

ROOT = Path(os.environ["MCBUILD_ROOT"]).resolve() if os.environ.get("MCBUILD_ROOT") else _HERE
CATALOGS = ROOT / "catalogs"
SPECS = ROOT / "specs"
BUILD = (Path(os.environ["MCBUILD_BUILD"]) if os.environ.get("MCBUILD_BUILD")
         else _HERE / "build" if CHECKOUT else Path.cwd() / "build").resolve()

_USER_DATA = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "mcbuild"
VANILLA_DATA = Path(os.environ["MCBUILD_VANILLA"]).resolve() if os.environ.get("MCBUILD_VANILLA") else (
    _HERE / "build" / "vanilla-1.19" if CHECKOUT else _USER_DATA / "vanilla-1.19")
