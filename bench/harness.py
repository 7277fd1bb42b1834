"""What every benchmark shares, so that none can measure the wrong thing.

* **Trees.** A bench measures this checkout and each ``--baseline REF``: a folder, or a commit of this
  repository (exported with ``git archive``). Each REF runs in an environment of its own, made by pip
  from REF's own ``pyproject.toml`` (an editable install of REF, so its code stays in REF's folder) and
  cached under ``build/bench/envs/<commit>/`` (a folder's under ``dir-<hash of its path>``; made again
  when its ``pyproject.toml`` or ``setup.py`` change). A baseline never runs in this checkout's venv.
* **Provenance.** Every tree's rows come from a child process (``run``), this checkout's too. The child
  reports what it imported (``mcbuild.__file__``, the runtime package's path, and any module of the
  project from outside its tree) with each row, and once before it measures (``probe``); the parent
  refuses a row whose code is not its tree's (``Refused``, exit 1): run with another tree's venv, a
  baseline would silently measure the same code twice.
* **The machine.** The CPU model, the CPUs this process may use and the load average are printed with
  the rows (each row records the load at its start and end); ``workers`` picks the worker count for
  every tree the same way (``mcbuild.compiler.core.cpus``) and says why.
* **Ratios and the summary.** ``ratio_line`` prints same-run ratios against each baseline; ``summary``
  adds a bench's one-line result to ``$MCBUILD_BENCH_SUMMARY``, which ``make bench`` prints as one
  table at the end (``python bench/harness.py summary FILE BENCH...``).

A child gets ``MCBUILD_BENCH_CHILD`` (its tree's folder), no ``PYTHONPATH``, its tree's folder as the
working directory and this checkout's game data (``MCBUILD_VANILLA``; a baseline refusing it: its own import). This
module imports nothing of the project at import time: a child imports its own tree's code.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

HERE = Path(__file__).resolve().parent.parent      # this checkout
CHILD = "MCBUILD_BENCH_CHILD"                     # set in a child: the folder of the tree it runs
SUMMARY = "MCBUILD_BENCH_SUMMARY"                 # make bench: where each bench appends its summary line
PREFIX = "@bench "                                # a child's protocol lines on stdout; others pass through
PROJECT = ("mcbuild", "compiler", "runtime", "audits", "designer_judge")   # top-level names, old layouts too
STAMP = ".mcbuild-bench-env"
CLI = "import sys; from mcbuild.cli import main; sys.argv[0] = 'mcbuild'; sys.exit(main())"   # a tree's mcbuild
#: modules that moved, new name -> older names, for trees before the move
MOVED = {
    "mcbuild.llm.testing": ("mcbuild.runtime.agents.llm.testing",),
    "mcbuild.llm.client": ("mcbuild.runtime.agents.llm.client",),
    "mcbuild.llm.schemas": ("mcbuild.runtime.agents.llm.schemas",),
    "mcbuild.llm.wire": ("mcbuild.runtime.agents.llm.wire",),
    "mcbuild.runtime.agents.llm.reply_schemas": ("mcbuild.runtime.agents.llm.schemas",),
    "mcbuild.runtime.study.design.config": ("runtime.study.config",),
    "mcbuild.runtime.study.run.runner": ("runtime.study.runner",),
    "mcbuild.runtime.study.store.results": ("runtime.study.store",),
    "mcbuild.runtime.study.design.plan": ("runtime.study.plan",),
    "mcbuild.runtime.study.outcome": ("mcbuild.runtime.study.run.outcome", "runtime.study.executor"),
    "mcbuild.runtime.study.estimate": ("mcbuild.runtime.study.design.estimate", "runtime.study.estimate"),
    "mcbuild.pipeline.build": ("mcbuild.compiler.build", "compiler.build"),
    "mcbuild.pipeline.worlds": ("mcbuild.compiler.worlds.build", "compiler.worlds.build"),
    "mcbuild.runtime.study.run.schedulers.local": ("runtime.study.scheduler",),
    "mcbuild.runtime.study.run.schedulers.ray": ("runtime.study.ray_scheduler",),
}

if not os.environ.get(CHILD) and str(HERE) not in sys.path:
    sys.path.insert(1, str(HERE))                 # the parent runs this checkout's code (after bench/)


class Refused(Exception):
    """A tree whose child ran code that is not the tree's own, or a baseline that cannot be made."""


@dataclass(frozen=True)
class Tree:
    """A tree a bench measures: label, code folder, environment's Python, game data (None: this checkout's)."""

    label: str
    root: Path
    python: Path
    vanilla: Path | None = None

    @property
    def here(self) -> bool:
        return self.root == HERE


# ------------------------------------------------------------------ arguments


def parser(doc: str | None, baseline: bool = True) -> argparse.ArgumentParser:
    """The bench's parser: its docstring as help, and ``--baseline REF`` (repeatable) when it compares."""
    text = (doc or "").strip()
    ap = argparse.ArgumentParser(description=text, formatter_class=argparse.RawDescriptionHelpFormatter)
    if baseline:
        ap.add_argument("--baseline", action="append", default=[], metavar="REF",
                        help="a folder or a commit to measure in the same run, in its own environment built from "
                             "its own pyproject.toml (cached under build/bench/envs/)")
    return ap


def build_option(ap: argparse.ArgumentParser, holding: str = "the worlds") -> None:
    """``--build DIR``: the build folder the bench reads (None: the tree's own)."""
    ap.add_argument("--build", type=Path, default=None, help=f"build folder with {holding} (default: this tree's)")


def forward(argv: list[str]) -> list[str]:
    """``argv`` without its ``--baseline`` options: what every tree's child is given."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--baseline":
            skip = True
        elif not arg.startswith("--baseline="):
            out.append(arg)
    return out


def in_child() -> bool:
    return bool(os.environ.get(CHILD))


def module(name: str) -> Any:
    """``name`` in the running tree's layout: its current name, else the names it had before it moved
    (``MOVED``), else without the ``mcbuild.`` prefix (the layout before the ``mcbuild`` package)."""
    import importlib

    tried = [name, *MOVED.get(name, ()), name.removeprefix("mcbuild.")]
    for candidate in dict.fromkeys(tried):
        try:
            return importlib.import_module(candidate)
        except ModuleNotFoundError as exc:
            if exc.name is None or not candidate.startswith(exc.name):
                raise                               # the module exists but imports something missing
    raise ModuleNotFoundError(f"none of {', '.join(dict.fromkeys(tried))} in this tree")


# ------------------------------------------------------------------ the machine


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or "unknown CPU"


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def load_text(values: Iterable[float]) -> str:
    return "/".join(f"{x:.1f}" for x in values)


def machine() -> str:
    """One line: CPU model, usable CPUs (affinity and cgroup quota), load average."""
    from mcbuild.compiler.core.cpus import usable

    _, how = usable()
    return f"machine: {cpu_model()}, {how}, load {load_text(load())} (1/5/15 min)"


def workers(requested: int | None, limit: int | None = None) -> int:
    """The worker count every tree of a bench runs with: ``requested``, with a warning line when it
    exceeds the usable CPUs, or else the machine's choice (``auto_workers``), printed with its reason."""
    from mcbuild.compiler.core.cpus import auto_workers, oversubscribed

    if requested is not None:
        warning = oversubscribed(requested, "--workers")
        if warning:
            print(warning, flush=True)
        return requested
    choice = auto_workers(limit)
    print(choice.line(), flush=True)
    return choice.workers


# ------------------------------------------------------------------ provenance


def _under(path: str | os.PathLike[str], root: Path) -> bool:
    p = Path(path).resolve()
    return p == root or root in p.parents


def provenance() -> dict[str, Any]:
    """What this process imported of the project: ``mcbuild.__file__``, the runtime package's path,
    how many project modules, and those from outside this child's tree (at most 5)."""
    import importlib

    root = Path(os.environ.get(CHILD) or HERE).resolve()
    mcbuild = importlib.import_module("mcbuild")
    try:
        runtime = importlib.import_module("mcbuild.runtime")
    except ModuleNotFoundError:
        runtime = importlib.import_module("runtime")          # the layout before the mcbuild package
    files = {f for name, m in list(sys.modules.items())
             if name.split(".")[0] in PROJECT and (f := getattr(m, "__file__", None))}
    outside = sorted(f for f in files if not _under(f, root))
    return {"mcbuild": mcbuild.__file__, "runtime": [str(p) for p in runtime.__path__], "modules": len(files),
            "outside": outside[:5], "python": sys.executable}


def check(tree: Tree, code: Mapping[str, Any]) -> None:
    """Refuse a child's report unless all the project code it imported lies in ``tree``'s folder."""
    wrong = [p for p in [code.get("mcbuild") or "?", *(code.get("runtime") or ["?"])] if not _under(p, tree.root)]
    wrong += list(code.get("outside") or ())
    if wrong:
        raise Refused(f"refused: {tree.label}'s child (python {code.get('python')}) imported {wrong[0]}, which is "
                      f"not in {tree.root}: its rows would measure other code than {tree.label}'s")


# ------------------------------------------------------------------ a tree's environment


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(HERE), *args], capture_output=True, text=True, check=False).stdout.strip()


def _envs() -> Path:
    from mcbuild.compiler.core.paths import BUILD

    return BUILD / "bench" / "envs"


def _export(commit: str, dest: Path) -> None:
    """The files of ``commit`` into ``dest`` (written beside it, then renamed)."""
    if dest.is_dir():
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=dest.parent))
    try:
        data = subprocess.run(["git", "-C", str(HERE), "archive", "--format=tar", commit], capture_output=True,
                              check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(tmp, filter="data")
        tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _stamp(root: Path) -> str:
    h = hashlib.sha256(str(root).encode())
    for name in ("pyproject.toml", "setup.py"):
        f = root / name
        h.update(f.read_bytes() if f.is_file() else b"-")
    return h.hexdigest()


def _environment(root: Path, venv: Path, label: str) -> Path:
    """``venv``'s Python with ``root`` installed (editable) from its own pyproject.toml; made once."""
    python, stamp = venv / "bin" / "python", _stamp(root)
    if python.exists() and (venv / STAMP).is_file() and (venv / STAMP).read_text() == stamp:
        return python
    print(f"{label}: making its environment ({venv}; pip install -e {root}, once per commit)", flush=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".venv-", dir=venv.parent))
    try:
        subprocess.run([sys.executable, "-m", "venv", str(tmp)], check=True)
        done = subprocess.run([str(tmp / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                               "-e", str(root)], cwd=str(root), capture_output=True, text=True)
        if done.returncode:
            raise Refused(f"error: --baseline {label}: pip install -e {root} failed: "
                          f"{(done.stderr.strip().splitlines() or ['?'])[-1]}")
        (tmp / STAMP).write_text(stamp)
        shutil.rmtree(venv, ignore_errors=True)         # an older environment of ours, never anything else
        tmp.rename(venv)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return python


def baseline(ref: str) -> Tree:
    """The tree of ``--baseline REF``: a folder, or a commit of this repository; its environment ready."""
    folder = Path(ref).expanduser()
    if folder.is_dir():
        root = folder.resolve()
        venv = env_folder(root)
    else:
        commit = _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        if not commit:
            raise Refused(f"error: --baseline {ref}: neither a folder nor a commit of {HERE}")
        root, venv = _envs() / commit / "tree", _envs() / commit / "venv"
        _export(commit, root)
    if not (root / "pyproject.toml").is_file():
        raise Refused(f"error: --baseline {ref}: {root} has no pyproject.toml to build its environment from")
    return Tree(ref, root, _environment(root, venv, ref))


def _with_game_data(tree: Tree) -> Tree:
    """``tree`` probed (its code first), reading this checkout's game data if its ``vanilla verify`` accepts
    it, else its own import of it beside its environment (made once: an old tree refuses ``.mcbuild.json``)."""
    from mcbuild.compiler.core.paths import VANILLA_DATA
    probe(tree)
    def cli(data: Path, *args: str) -> subprocess.CompletedProcess:     # by its Python: an entry script names a temp venv
        return subprocess.run([str(tree.python), "-c", CLI, *args], cwd=str(tree.root), capture_output=True,
                              text=True, env={**_env(tree), "MCBUILD_VANILLA": str(data)})
    own = tree.python.parent.parent.parent / "vanilla-1.19"
    for data, found in ((VANILLA_DATA, None), (own, own)):
        if data.is_dir() and cli(data, "vanilla", "verify").returncode == 0:
            return replace(tree, vanilla=found)
    print(f"{tree.label}: its check refuses {VANILLA_DATA}; importing its own copy into {own}", flush=True)
    shutil.rmtree(own, ignore_errors=True)      # an earlier copy of ours that no longer verifies
    done = cli(own, "vanilla", "import", str(VANILLA_DATA))
    if done.returncode:
        raise Refused(f"error: --baseline {tree.label}: importing the game's data failed: {done.stderr.strip()[-200:]}")
    return replace(tree, vanilla=own)


def env_folder(root: Path) -> Path:
    """Where the environment of the baseline folder ``root`` is kept."""
    return _envs() / ("dir-" + hashlib.sha256(str(root).encode()).hexdigest()[:16]) / "venv"


def trees(refs: Iterable[str], warm: Path | None = None) -> list[Tree]:
    """This checkout and each baseline, each probed: a tree whose child would not run its own code is
    refused before anything is measured. With ``warm`` (a build folder) each fills its caches first."""
    out = [Tree("this tree", HERE, Path(sys.executable))] + [_with_game_data(baseline(r)) for r in refs]
    for tree in out:
        probe(tree, warm)
    return out


# ------------------------------------------------------------------ children


def _env(tree: Tree, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    from mcbuild.compiler.core.paths import VANILLA_DATA

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    env.update({CHILD: str(tree.root), "MCBUILD_VANILLA": str(tree.vanilla or VANILLA_DATA), "PYTHONNOUSERSITE": "1"})
    if not tree.here:
        env.pop("MCBUILD_BUILD", None)          # a baseline's caches go to its own build/, never to this one's
    env.update(extra or {})
    return env


def probe(tree: Tree, build: Path | None = None) -> dict[str, Any]:
    """Import ``tree``'s package in its environment, as a bench script does, and check where it came
    from. With ``build``, the tree also fills its own caches first (the game's data and the simulator's
    reading of every built world), so that no tree's first measured run pays for them."""
    done = subprocess.run([str(tree.python), __file__, "probe", *([str(build)] if build else [])], env=_env(tree),
                          cwd=str(tree.root), capture_output=True, text=True)
    lines = [json.loads(x[len(PREFIX):]) for x in done.stdout.splitlines() if x.startswith(PREFIX)]
    if done.returncode or not lines:
        raise Refused(f"error: {tree.label}: its package does not import in {tree.python}: "
                      f"{(done.stderr.strip().splitlines() or ['?'])[-1]}")
    check(tree, lines[0]["code"])
    return lines[0]["code"]


def _warm(build: Path) -> None:
    """In a child: fill this tree's caches of the game's data and of every built world's save."""
    module("mcbuild.compiler.rules.catalog").load()
    factory = module("mcbuild.runtime.backends.registry").factory("sim")
    for save in sorted((build / "worlds").glob("*/vanilla/level.dat")):
        factory.world(save.parent)


def run(tree: Tree, script: str | Path, argv: list[str], extra_env: Mapping[str, str] | None = None) -> Iterator[dict]:
    """The rows of ``script argv`` run by ``tree``'s Python, as they come, each checked (``Refused``
    stops the child). Its other output goes to stderr."""
    child = subprocess.Popen([str(tree.python), str(script), *argv], env=_env(tree, extra_env), cwd=str(tree.root),
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if not line.startswith(PREFIX):
                sys.stderr.write(line)
                continue
            row = json.loads(line[len(PREFIX):])
            check(tree, row.pop("code"))
            yield row
        if child.wait():
            raise Refused(f"error: {tree.label}: {Path(script).name} failed (exit {child.returncode})")
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()


def rows_of_each(refs: Iterable[str], script: str | Path, extra: Iterable[str] = ()) -> dict[str, list[dict]]:
    """Every tree's rows of ``script`` (run with this process's arguments, less ``--baseline``, plus
    ``extra``), by label."""
    argv = forward(sys.argv[1:]) + list(extra)
    return {t.label: list(run(t, script, argv)) for t in trees(refs)}


def row_of_each(refs: Iterable[str], script: str | Path, extra: Iterable[str] = ()) -> dict[str, dict]:
    """The one row of ``script`` of every tree, by label."""
    return {label: rows[0] for label, rows in rows_of_each(refs, script, extra).items()}


def emit(row: Mapping[str, Any], load_start: float) -> None:
    """In a child: one row for the parent, with the 1-minute load average at its start and now, and
    this process's provenance."""
    print(PREFIX + json.dumps({**row, "load": [round(load_start, 2), load()[0]], "code": provenance()}), flush=True)


def load_cell(row: Mapping[str, Any]) -> str:
    """A row's load average (1 minute) at its start and end, as 'start-end'."""
    start, end = row["load"]
    return f"{start:.1f}-{end:.1f}"


def dispatch(measure: Callable[[], Mapping[str, Any]], parent: Callable[[], int]) -> int:
    """A one-row bench's main: in a child, emit ``measure()``'s row; in the parent, run ``parent()``."""
    if in_child():
        start = load()[0]
        emit(measure(), start)
        return 0
    return main_guard(parent)


def main_guard(body: Callable[[], int]) -> int:
    """Run a bench's parent ``body()``, turning a refusal into one line and exit 1."""
    try:
        return body()
    except Refused as exc:
        print(exc, file=sys.stderr)
        summary_line(Path(sys.argv[0]).stem, str(exc), ok=False)
        return 1


# ------------------------------------------------------------------ ratios and the summary


def ratio(here: float, other: float, higher_is_better: bool) -> float:
    """How many times better this tree's ``here`` is than ``other`` (above 1: better)."""
    if not here or not other:
        return float("nan")
    return here / other if higher_is_better else other / here


def ratio_line(label: str, here: Mapping[str, float], other: Mapping[str, float], metrics: Mapping[str, bool]) -> str:
    """'this tree vs LABEL: metric 1.23x, ...' over ``metrics`` (name -> higher is better)."""
    parts = [f"{k} {ratio(here[k], other[k], up):.2f}x" for k, up in metrics.items() if k in here and k in other]
    return f"this tree vs {label}: " + ", ".join(parts) + " (above 1: this tree is better)"


def table(results: Mapping[str, Mapping[str, Any]], columns: Iterable[tuple[str, str, str]],
          metrics: Mapping[str, bool]) -> list[str]:
    """Print one line per tree (its label, each column's value by (header, key, format) and its load),
    then the ratios over ``metrics``; returns those ratio lines."""
    columns = list(columns)
    widths = [max(len(header), 8) + 2 for header, _, _ in columns]
    print(f"{'tree':<24}" + "".join(f"{h:>{w}}" for (h, _, _), w in zip(columns, widths)) + "  load")
    for label, r in results.items():
        print(f"{label[-24:]:<24}" + "".join(f"{r[key]:>{w}{fmt}}" for (_, key, fmt), w in zip(columns, widths))
              + f"  {load_cell(r)}")
    ratios = ratio_lines(results, metrics)
    print("\n".join(ratios))
    return ratios


def ratio_lines(results: Mapping[str, Mapping[str, float]], metrics: Mapping[str, bool]) -> list[str]:
    """``ratio_line`` of this tree against every other tree of ``results`` (label -> figures)."""
    here = results["this tree"]
    return [ratio_line(label, here, r, metrics) for label, r in results.items() if label != "this tree"]


def summary_line(bench: str, result: str, ratios: str = "", ok: bool = True) -> None:
    """Add one bench's result to the ``make bench`` summary (when ``$MCBUILD_BENCH_SUMMARY`` is set)."""
    path = os.environ.get(SUMMARY)
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({"bench": bench, "result": result, "ratios": ratios, "ok": ok,
                            "load": load_text(load()), "time": time.strftime("%H:%M:%S")}) + "\n")


def print_summary(path: Path, benches: list[str]) -> int:
    """The closing table of ``make bench`` over ``benches`` (a bench without a line failed before it
    wrote one); exit 1 when one failed."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    rows = {r["bench"]: r for r in map(json.loads, filter(str.strip, lines))}
    print(f"\nmake bench summary ({cpu_model()}, {os.cpu_count()} CPUs; load 1/5/15 min when each bench ended)")
    print(f"{'bench':<22} {'ok':<4} {'load':<15} result")
    for bench in benches or list(rows):
        r = rows.get(bench, {"ok": False, "load": "-", "result": "no result: it failed or printed why above"})
        print(f"{bench:<22} {'yes' if r['ok'] else 'NO':<4} {r['load']:<15} {r['result']}"
              + (f"\n{'':<43}{r['ratios']}" if r.get("ratios") else ""))
    return 0 if all(rows.get(b, {}).get("ok") for b in benches or list(rows)) else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["probe"] and in_child():
        if sys.argv[2:]:
            _warm(Path(sys.argv[2]))
        print(PREFIX + json.dumps({"code": provenance()}), flush=True)
        sys.exit(0)
    if len(sys.argv) >= 3 and sys.argv[1] == "summary":
        sys.exit(print_summary(Path(sys.argv[2]), sys.argv[3:]))
    print("usage: python bench/harness.py summary FILE [BENCH...]   (the closing table of make bench)", file=sys.stderr)
    sys.exit(2)
