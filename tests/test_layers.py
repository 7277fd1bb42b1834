"""The layer rules of docs/architecture.md, checked on the source: which package may import which,
no import cycle between files (counting imports inside functions and under TYPE_CHECKING), and no
source file over 500 lines."""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

from mcbuild.compiler.core.paths import ROOT

# The source folders below mcbuild/. Module names here are relative to the mcbuild package
# (compiler.core is mcbuild.compiler.core); the CLI keeps its full name, mcbuild.cli.
PACKAGES = ("compiler", "audits", "designer_judge", "llm", "runtime", "analysis", "envs", "mcbuild")
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


# (importer prefix, the prefixes it may import within the project, why)
RULES = [
    ("compiler.core", ("compiler.core",), "core is the foundation"),
    ("compiler.rules", ("compiler.core", "compiler.rules"), "the datapack kernel imports nothing else of compiler/"),
    ("compiler.spec", ("compiler.core", "compiler.rules", "compiler.spec"), "spec models only validate"),
    ("compiler.planning", ("compiler.core", "compiler.rules", "compiler.planning"), "planning reads rules"),
    ("compiler.mirror", ("compiler.core", "compiler.rules", "compiler.spec", "compiler.mirror"), "mirror packs"),
    ("compiler.biome", ("compiler.core", "compiler.rules", "compiler.spec", "compiler.biome"), "biome packs"),
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
    ("llm", ("compiler.core", "llm"), "the LLM room stands beside the compiler, on its core only"),
    ("designer_judge", ("compiler", "designer_judge", "llm", "runtime.episode.taskcheck"),
     "designer_judge uses compiler, the one LLM client and its reply schemas and, for task designs, task check"),
    ("analysis", ("analysis", "compiler", "runtime.records", "runtime.study.design", "runtime.study.metrics",
                  "runtime.study.store", "mcbuild"),
     "analysis reads a study through the store (read-only), the plan, the records and the metrics; it runs nothing"),
    ("envs", ("envs", "compiler", "runtime.contract", "runtime.episode", "runtime.backends.registry",
              "runtime.agents.llm.prompts", "runtime.errors"),
     "the Gymnasium environment wraps an episode opened the way a study opens it, and renders the agents' text"),
]


@pytest.mark.parametrize("importer,allowed,why", RULES, ids=[r[0] for r in RULES])
def test_layer_imports(importer, allowed, why):
    bad = sorted(f"{m} imports {i}" for m, imps in IMPORTS.items() if _within(m, (importer,))
                 for i in imps if not _within(i, allowed))
    assert not bad, f"{why}: " + "; ".join(bad)


def test_only_compiler_build_imports_audits():
    assert any(_within(i, ("audits",)) for i in IMPORTS["compiler.build"])     # the imports are seen
    bad = sorted(m for m, imps in IMPORTS.items() if m.startswith("compiler.") and m != "compiler.build"
                 and any(_within(i, ("audits",)) for i in imps))
    assert not bad, f"modules of compiler/ other than compiler.build import audits: {bad}"


@pytest.mark.parametrize("importer,forbidden", [
    ("compiler", ("runtime", "designer_judge", "llm", "mcbuild", "analysis", "envs")),
    ("audits", ("runtime", "designer_judge", "llm", "mcbuild", "analysis", "envs")),
    ("llm", ("runtime", "designer_judge", "audits", "mcbuild", "analysis", "envs")),
    ("runtime", ("designer_judge", "mcbuild", "audits", "analysis", "envs")),
    ("analysis", ("mcbuild.cli", "envs", "designer_judge", "audits")),
    ("envs", ("mcbuild", "analysis", "designer_judge", "audits")),
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


def test_no_source_file_over_the_limit():
    long = sorted(f"{m} ({n} lines)" for m, p in SOURCES.items()
                  if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES)
    assert not long, f"files over {MAX_LINES} lines: {long}"
