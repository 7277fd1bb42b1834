"""The wheel's package layout (everything else is in pyproject.toml): one import package, ``mcbuild``.

``mcbuild/`` holds the package and its CLI; each top-level folder below becomes ``mcbuild.<folder>``
through ``package_dir``. Its subpackages are listed here because pyproject's ``packages.find`` cannot
put them under a prefix.
"""
import warnings

from setuptools import find_namespace_packages, setup

# An editable install maps these folders with a finder and notes that a folder named like the
# package may shadow it; here that folder, mcbuild/, is the package itself, so the note is noise.
warnings.filterwarnings("ignore", message=r"[\s\S]*name as your package as they may take precedence")

FOLDERS = ("compiler", "audits", "designer_judge", "runtime", "catalogs", "specs", "studies")
SKIP = ["*node_modules*", "*__pycache__*"]

packages = ["mcbuild", *(f"mcbuild.{p}" for p in find_namespace_packages("mcbuild", exclude=SKIP))]
for folder in FOLDERS:
    packages += [f"mcbuild.{p}" for p in find_namespace_packages(".", include=[folder, f"{folder}.*"], exclude=SKIP)]

setup(packages=packages, package_dir={f"mcbuild.{folder}": folder for folder in FOLDERS})
