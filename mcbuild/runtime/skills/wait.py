"""``wait``: the worlds are static (fixed daytime, no growth), so waiting changes nothing."""
from __future__ import annotations

from mcbuild.runtime.contract.backend import Outcome

from .primitives import Primitives


def wait(p: Primitives, args: dict) -> Outcome:
    p.wait(args["ticks"])
    return Outcome(True, f"waited {args['ticks']} ticks", None, {})
