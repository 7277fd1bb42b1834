"""``python -m mcbuild``: the ``mcbuild`` command."""
from mcbuild.cli import main

main()
