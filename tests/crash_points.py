"""Run the ``mcbuild`` command line in a process that SIGKILLs itself at a chosen point:

    python tests/crash_points.py os.replace:2 -- compile --all --build B

kills the process as it makes its second ``os.replace`` call (before the call runs). A point is
``<module>.<attribute>:<n>`` (``pathlib.Path.write_bytes:40``, ``shutil.copyfile:3``, or a function
of the project looked up when it is called). If the point is never reached the command ends
normally, so a test can tell (exit code 0 rather than -9).
"""
from __future__ import annotations

import importlib
import os
import signal
import sys
from typing import Any, Callable


def arm(point: str) -> None:
    """Wrap the function ``point`` names so that its ``n``-th call kills this process."""
    where, _, count = point.rpartition(":")
    names = where.split(".")
    for i in range(len(names) - 1, 0, -1):      # the longest importable module prefix
        try:
            owner: Any = importlib.import_module(".".join(names[:i]))
        except ImportError:
            continue
        parts = names[i:]
        break
    else:
        raise ValueError(f"no module in {where!r}")
    for part in parts[:-1]:
        owner = getattr(owner, part)
    real: Callable[..., Any] = getattr(owner, parts[-1])
    calls = 0
    n = int(count)

    def hooked(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == n:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)

    setattr(owner, parts[-1], hooked)


if __name__ == "__main__":
    point, sep, *command = sys.argv[1:]
    assert sep == "--", "usage: crash_points.py POINT -- mcbuild arguments"
    arm(point)
    from mcbuild.cli import main

    sys.argv = ["mcbuild", *command]
    main()
