"""Import rules between the project's layers, read from the source with ``ast``."""
from __future__ import annotations

import ast
from importlib.util import resolve_name
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth (function-level imports included)."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = resolve_name("." * node.level + (node.module or ""), package) if node.level else node.module
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def test_runtime_never_imports_designer_judge():
    offenders = {str(path.relative_to(ROOT)): sorted(m for m in imported_modules(path)
                                                     if m == "designer_judge" or m.startswith("designer_judge."))
                 for path in sorted((ROOT / "runtime").rglob("*.py"))}
    assert {k: v for k, v in offenders.items() if v} == {}
