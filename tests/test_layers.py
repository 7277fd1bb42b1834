"""The layer rules of docs/architecture.md, checked on the source: which area may import which (every
module falls under a rule), no folder importing a folder that imports it back, no import cycle
between files (imports inside functions and under TYPE_CHECKING count everywhere), and no source file
over 500 lines.

The checks are functions of an import map, so the tests at the end can show that they fail: an
agent that imports the body (``runtime.agents -> runtime.body``) breaks the agents' rule, and a study
folder that imports one importing it back (``store`` importing ``run``, even inside a function) is a
folder cycle. Done on the real source (an import of ``mcbuild.runtime.body.policy`` added inside a
function of ``runtime/agents/scripted/planners.py``; one of ``mcbuild.runtime.study.run.runner``
inside a function of ``runtime/study/store/results.py``), ``test_layer_imports[runtime.agents]`` and
``test_no_folder_imports_one_that_imports_it_back`` fail.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx
import pytest

from mcbuild.compiler.core.paths import ROOT

# The source folders below mcbuild/. Module names here are relative to the mcbuild package
# (compiler.core is mcbuild.compiler.core); the CLI keeps its full name, mcbuild.cli.
PACKAGES = ("compiler", "audits", "pipeline", "designer_judge", "llm", "runtime", "analysis", "envs", "mcbuild")
MAX_LINES = 500


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return _short(".".join(parts[:-1] if parts[-1] == "__init__" else parts))


def _sources() -> dict[str, Path]:
    return {_module(p): p for p in sorted((ROOT / "mcbuild").rglob("*.py")) if "node_modules" not in p.parts}


def _short(name: str) -> str:
    """An imported module's name as this file writes it: ``mcbuild.compiler.x`` is ``compiler.x``."""
    head, _, rest = name.partition(".")
    return rest if head == "mcbuild" and rest.split(".")[0] in PACKAGES else name


SOURCES = _sources()


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and isinstance(test, (ast.Name, ast.Attribute)) and \
        getattr(test, "id", getattr(test, "attr", "")) == "TYPE_CHECKING"


def _imports(module: str, path: Path, *, top_level_only: bool) -> set[str]:
    """Project modules imported by ``module`` (anywhere, or only when the module is first imported)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if top_level_only and (_type_checking(node) or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))):
            return
        if isinstance(node, ast.Import):
            found.update(_short(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = _short(node.module or "")
            names = [f"{base}.{alias.name}" for alias in node.names]
            found.update(n if n in SOURCES else base for n in names)     # a module, or a name in ``base``
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {m for m in found if m.split(".")[0] in PACKAGES}


IMPORTS = {m: _imports(m, p, top_level_only=False) for m, p in SOURCES.items()}


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


# (importer prefix, the prefixes it may import within the project, why). Every rule whose prefix
# holds a module applies to it; every module falls under at least one (test_every_module_has_a_rule).
STUDY = "runtime.study"
RULES = [
    ("compiler.core", ("compiler.core",), "core is the foundation"),
    ("compiler.rules", ("compiler.core", "compiler.rules"), "the datapack kernel imports nothing else of compiler/"),
    ("compiler.spec", ("compiler.core", "compiler.rules", "compiler.spec"), "spec models only validate"),
    ("compiler.planning", ("compiler.core", "compiler.rules", "compiler.planning"), "planning reads rules"),
    ("compiler.mirror", ("compiler.core", "compiler.rules", "compiler.spec", "compiler.mirror"), "mirror packs"),
    ("compiler.biome", ("compiler.core", "compiler.rules", "compiler.spec", "compiler.biome"), "biome packs"),
    ("compiler.worlds", ("compiler",), "the saves' parts stand on the compiler; their builder, which runs the "
     "audits, is pipeline.worlds"),
    ("compiler", ("compiler",), "the compiler imports nothing above it"),
    ("audits", ("audits", "compiler.core", "compiler.rules", "compiler.spec", "compiler.biome.files",
                "compiler.biome.layout", "compiler.mirror.resolve"),
     "audits take resolved data and tracer reports in; they never run the pipeline"),
    ("runtime.contract", ("compiler", "runtime.contract", "runtime.records", "runtime.errors"),
     "the contract imports no backend"),
    ("runtime.body", ("compiler", "runtime.contract", "runtime.body"), "body policy is backend-independent"),
    ("runtime.skills", ("compiler", "runtime.contract", "runtime.body", "runtime.skills"),
     "the skills are written once, over the primitives every backend supplies"),
    ("runtime.backends", ("compiler", "runtime.contract", "runtime.body", "runtime.skills", "runtime.backends",
                          "runtime.errors", "runtime.records"), "backends sit below episodes, agents and studies"),
    ("runtime.records", ("compiler", "runtime.records"), "records are plain data"),
    ("runtime.errors", (), "the shared error classes stand alone"),
    ("runtime.agents", ("compiler", "llm", "runtime.contract", "runtime.records", "runtime.errors", "runtime.agents"),
     "agents see the game through the contract's observations only: no body, skills, backend, episode or study"),
    ("runtime.episode", ("compiler", "runtime.contract", "runtime.body", "runtime.skills", "runtime.backends",
                         "runtime.records", "runtime.errors", "runtime.agents", "runtime.episode"),
     "an episode runs an agent on a backend; it knows no study"),
    ("runtime", ("compiler", "llm", "runtime"), "the runtime stands on the compiler and the LLM room only"),
    (f"{STUDY}.outcome", ("runtime.records", f"{STUDY}.outcome"), "an episode's outcome is the record plus data"),
    (f"{STUDY}.design", ("compiler", "llm", "runtime.records", "runtime.agents", "runtime.backends",
                         f"{STUDY}.design"), "a study's design checks names against the registries only"),
    (f"{STUDY}.store", ("compiler", "llm", "runtime.records", "runtime.errors", f"{STUDY}.design",
                        f"{STUDY}.outcome", f"{STUDY}.store"), "the store keeps planned entries and outcomes"),
    (f"{STUDY}.run", ("compiler", "llm", "runtime.records", "runtime.errors", "runtime.agents", "runtime.backends",
                      "runtime.episode", f"{STUDY}.design", f"{STUDY}.outcome", f"{STUDY}.store", f"{STUDY}.run"),
     "the runner runs the plan into the store"),
    (f"{STUDY}.estimate", ("compiler", "llm", "runtime.records", "runtime.agents", "runtime.episode",
                           f"{STUDY}.design", f"{STUDY}.store", f"{STUDY}.run", f"{STUDY}.estimate"),
     "the estimate reads a design, a pilot store and first prompts"),
    (f"{STUDY}.metrics", ("runtime.records", f"{STUDY}.metrics"), "metrics are pure functions over records"),
    (f"{STUDY}.report", ("compiler", "llm", "runtime.records", "runtime.agents", f"{STUDY}.design", f"{STUDY}.store",
                         f"{STUDY}.metrics", f"{STUDY}.report"),
     "the report reads a store (and, for how each model was called, its provider profiles); it never imports the viewer"),
    (f"{STUDY}.viewer", ("compiler", "runtime.records", "runtime.errors", "runtime.backends", "runtime.episode",
                         f"{STUDY}.store", f"{STUDY}.report", f"{STUDY}.viewer"),
     "the viewer reads a study as the report does and replays paths on a backend"),
    (f"{STUDY}.watch", ("compiler", f"{STUDY}.design", f"{STUDY}.run", f"{STUDY}.store", f"{STUDY}.viewer",
                        f"{STUDY}.watch"), "the watcher reads a live store and live logs"),
    ("llm", ("compiler.core", "llm"), "the LLM room stands beside the compiler, on its core only"),
    ("pipeline", ("compiler", "audits", "pipeline"), "the pipeline floor runs the compiler and the audits"),
    ("designer_judge", ("compiler", "pipeline", "designer_judge", "llm", "runtime.episode.taskcheck"),
     "designer_judge uses compiler, the pipeline, the one LLM client and its reply schemas and, for task designs, "
     "task check"),
    ("analysis", ("analysis", "compiler", "runtime.records", "runtime.study.design", "runtime.study.metrics",
                  "runtime.study.store", "mcbuild"),
     "analysis reads a study through the store (read-only), the plan, the records and the metrics; it runs nothing"),
    ("envs", ("envs", "compiler", "runtime.contract", "runtime.episode", "runtime.backends.registry",
              "runtime.agents.llm.rendering", "runtime.errors"),
     "the Gymnasium environment wraps an episode opened the way a study opens it, and renders the agents' text"),
    ("mcbuild", ("compiler", "pipeline", "llm", "designer_judge", "runtime", "analysis", "envs", "mcbuild"),
     "the CLI wires the stages; it runs the audits only through the pipeline"),
]


def violations(imports: dict[str, set[str]], importer: str, allowed: tuple[str, ...]) -> list[str]:
    """Imports of modules below ``importer`` outside ``allowed``."""
    return sorted(f"{m} imports {i}" for m, imps in imports.items() if _within(m, (importer,))
                  for i in imps if not _within(i, allowed))


def _child(parent: str, module: str) -> str | None:
    """The direct child of package ``parent`` (``""``: the top) that holds ``module``, if any."""
    if parent and not module.startswith(parent + "."):
        return None
    if not parent and module == "mcbuild":
        return "mcbuild.__init__"       # the version and the checkout test: a leaf of its own, not the CLI's
    rest = module[len(parent) + 1:] if parent else module
    return (f"{parent}." if parent else "") + rest.split(".")[0]


def folder_cycles(imports: dict[str, set[str]]) -> list[list[str]]:
    """Cycles among the children (folders and modules) of each package: a folder importing a folder
    that imports it back, directly or round a longer loop."""
    modules = set(imports)
    packages = {""} | {m for m in modules if any(o.startswith(m + ".") for o in modules)}
    found = []
    for parent in sorted(packages):
        graph = nx.DiGraph()
        for module, imps in imports.items():
            a = _child(parent, module)
            for b in (_child(parent, i) for i in imps):
                if a is not None and b is not None and a != b:
                    graph.add_edge(a, b)
        found += [sorted(c) for c in nx.simple_cycles(graph)]
    return sorted(found)


@pytest.mark.parametrize("importer,allowed,why", RULES, ids=[r[0] for r in RULES])
def test_layer_imports(importer, allowed, why):
    assert any(_within(m, (importer,)) for m in IMPORTS), f"no module of {importer}: a stale rule"
    bad = violations(IMPORTS, importer, allowed)
    assert not bad, f"{why}: " + "; ".join(bad)


def test_every_module_has_a_rule():
    loose = sorted(m for m in IMPORTS if not any(_within(m, (importer,)) for importer, _, _ in RULES))
    assert not loose, f"modules no layer rule covers: {loose}"


def test_no_folder_imports_one_that_imports_it_back():
    """Within each package, its folders and modules import each other one way (imports inside
    functions count): compiler/audits, study store/run, design/run, report/viewer were such pairs."""
    cycles = folder_cycles(IMPORTS)
    assert not cycles, f"folders that import each other: {cycles}"


def test_only_the_pipeline_runs_the_audits():
    assert any(_within(i, ("audits",)) for i in IMPORTS["pipeline.build"])     # the imports are seen
    bad = sorted(m for m, imps in IMPORTS.items() if not _within(m, ("audits", "pipeline"))
                 and any(_within(i, ("audits",)) for i in imps))
    assert not bad, f"modules outside pipeline/ import audits: {bad}"


@pytest.mark.parametrize("importer,forbidden", [
    ("compiler", ("pipeline", "runtime", "designer_judge", "llm", "mcbuild", "analysis", "envs")),
    ("audits", ("pipeline", "runtime", "designer_judge", "llm", "mcbuild", "analysis", "envs")),
    ("pipeline", ("runtime", "designer_judge", "llm", "mcbuild", "analysis", "envs")),
    ("llm", ("pipeline", "runtime", "designer_judge", "audits", "mcbuild", "analysis", "envs")),
    ("runtime", ("pipeline", "designer_judge", "mcbuild", "audits", "analysis", "envs")),
    ("designer_judge", ("mcbuild",)),
    ("analysis", ("mcbuild.cli", "envs", "designer_judge", "audits", "pipeline")),
    ("envs", ("mcbuild", "analysis", "designer_judge", "audits", "pipeline")),
])
def test_lower_layers_never_import_upper_ones(importer, forbidden):
    bad = sorted(f"{m} imports {i}" for m, imps in IMPORTS.items() if _within(m, (importer,))
                 for i in imps if _within(i, forbidden))
    assert not bad, "; ".join(bad)


def test_no_module_level_import_cycles():
    graph = nx.DiGraph()
    for module, path in SOURCES.items():
        for target in _imports(module, path, top_level_only=True):
            if target in SOURCES and target != module:
                graph.add_edge(module, target)
    cycles = sorted(sorted(c) for c in nx.simple_cycles(graph) if len(c) > 1)
    assert not cycles, f"module-level import cycles: {cycles[:5]}"


def test_no_import_cycles_counting_every_import():
    """No cycle between files even when imports inside functions and under TYPE_CHECKING count."""
    graph = nx.DiGraph()
    graph.add_edges_from((module, target) for module, imps in IMPORTS.items() for target in imps
                         if target in SOURCES and target != module)
    found = sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)
    assert not found, f"import cycles (imports inside functions and under TYPE_CHECKING count): {found}"


def test_the_rules_fail_when_an_agent_imports_the_body():
    agent = "runtime.agents.scripted.planners"
    imports = {**IMPORTS, agent: IMPORTS[agent] | {"runtime.body.policy"}}
    rule = next(r for r in RULES if r[0] == "runtime.agents")
    assert not violations(IMPORTS, *rule[:2])
    assert violations(imports, *rule[:2]) == [f"{agent} imports runtime.body.policy"]


def test_the_folder_check_fails_when_a_study_folder_imports_one_that_imports_it_back(tmp_path):
    """``run`` imports ``store``; an import of ``run`` by ``store`` inside a function closes the loop."""
    source = tmp_path / "results.py"
    source.write_text("def later():\n    from mcbuild.runtime.study.run.runner import run_study\n", encoding="utf-8")
    store = "runtime.study.store.results"
    seen = _imports(store, source, top_level_only=False)
    assert seen == {"runtime.study.run.runner"}                         # counted although inside a function
    assert not folder_cycles(IMPORTS)
    assert ["runtime.study.run", "runtime.study.store"] in folder_cycles({**IMPORTS, store: IMPORTS[store] | seen})


def test_architecture_names_every_module():
    """docs/architecture.md names every module (in a code span, outside the diagram)."""
    doc = re.sub(r"```.*?```", "", (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"), flags=re.S)
    named = {w for span in re.findall(r"`([^`]+)`", doc) for w in re.split(r"[\s,/().:]+", span)}
    missing = sorted(m for m in SOURCES if m.rpartition(".")[2] not in named | {"__main__"})
    assert not missing, f"modules docs/architecture.md does not name: {missing}"


def test_no_source_file_over_the_limit():
    long = sorted(f"{m} ({n} lines)" for m, p in SOURCES.items()
                  if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES)
    assert not long, f"files over {MAX_LINES} lines: {long}"
