"""mcbuild, the MirrorCraft toolkit: the project's one import package.

Its subpackages are the design's code components, ``mcbuild.compiler``, ``mcbuild.audits``,
``mcbuild.designer_judge`` and ``mcbuild.runtime``, plus ``mcbuild.cli``, the ``mcbuild`` command.
The data folders ``catalogs/``, ``specs/`` and ``studies/`` stay at the top of a checkout and ship
inside the package in a wheel (``setup.py`` maps them there; ``mcbuild.compiler.core.paths`` finds
them either way).
"""

__version__ = "0.2.0"     # the one place of the version: pyproject reads it, CHANGELOG.md's newest entry names it
