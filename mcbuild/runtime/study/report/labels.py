"""How table cells and labels read: display names and number formats (``n<k`` for small cells)."""
from __future__ import annotations

from mcbuild.runtime.study.metrics import MilestoneRates, ScoreSR
from mcbuild.runtime.study.metrics.stats import Estimate

EM = "–"

CONFIG_NAMES = {
    "direct": "Direct LLM", "react": "ReAct", "reflexion": "Reflexion", "voyager": "Voyager",
    "xenon": "XENON", "adam": "ADAM", "react_rules": "ReAct w/rules",
    "vanilla-planner": "Vanilla planner (scripted)", "adaptive-planner": "Adaptive planner (scripted)",
}

#: Display names of models; ``none`` is the model name of scripted agents.
MODEL_NAMES = {"none": "scripted (no LLM)"}


def suite_title(suite: str) -> str:
    """The ``title`` of the suite's rule manifest in ``specs/`` (blank for a suite without one)."""
    from mcbuild.compiler.core.paths import SPECS
    from mcbuild.compiler.spec.base import read_yaml

    path = SPECS / f"{suite}.yaml"
    return str(read_yaml(path).get("title", "")) if path.is_file() else ""


def task_title(task: str) -> str:
    from mcbuild.compiler.spec.task import tasks

    return tasks()[task].title if task in tasks() else task


def cname(c: str) -> str:
    """Display name of a configuration."""
    return CONFIG_NAMES.get(c, c)


def mname(m: str) -> str:
    """Display name of a model (``none`` -> ``scripted (no LLM)``)."""
    return MODEL_NAMES.get(m, m)


def model_columns(models: list[str], columns: list[str]) -> list[str]:
    """Column headers for per-model groups; a single model's name goes in the caption instead."""
    if len(models) == 1:
        return list(columns)
    return [f"{mname(mo)}: {c}" for mo in models for c in columns]


def models_note(models: list[str]) -> str:
    """The caption sentence naming the study's model(s)."""
    return f"Model: {mname(models[0])}." if len(models) == 1 else f"Models: {', '.join(mname(m) for m in models)}."


def with_n(text: str, n: int | None) -> str:
    """A cell with its count: ``90.0 (n=30)``; ``n<k`` cells stay as they are."""
    return text if n is None or text.startswith("n<") else f"{text} (n={n})"


def sname(s: str) -> str:
    """Display name of a condition (``m01`` -> ``M01``)."""
    return s.upper() if s.startswith("m") else s


def bname(b: str) -> str:
    """Display name of a biome."""
    return b.replace("_", " ").title()


def num(x: float | None, k: int, digits: int = 1) -> str:
    return f"n<{k}" if x is None else f"{x:.{digits}f}"


def signed(x: float | None, k: int, digits: int = 1) -> str:
    """``x`` with its sign (``+1.5``, ``-0.3``; ``0.0`` when it rounds to zero)."""
    if x is None:
        return f"n<{k}"
    v = round(x, digits)
    return f"{0.0:.{digits}f}" if v == 0 else f"{v:+.{digits}f}"


def pm(e: Estimate | None, k: int) -> str:
    """An estimate as ``value ± half width``."""
    if e is None:
        return f"n<{k}"
    return f"{signed(e.value, k)} ± {e.half_width:.1f}"


def ss(cell: ScoreSR | None, k: int) -> str:
    """A cell as ``Score / SR (n=episodes)``."""
    return f"n<{k}" if cell is None else f"{cell.score:.1f} / {cell.sr:.1f} (n={cell.n})"


def msr_cell(cell: MilestoneRates | None, k: int) -> str:
    """A cell as ``Score / SR / MSR / TSR (n=episodes)``."""
    return f"n<{k}" if cell is None else f"{cell.score:.1f} / {cell.sr:.1f} / {cell.msr:.1f} / {cell.tsr:.1f} (n={cell.n})"


def pct_interval(lo: float, hi: float) -> str:
    """A 0..1 interval in percent: ``[88.6, 100.0]``."""
    return f"[{100 * lo:.1f}, {100 * hi:.1f}]"
