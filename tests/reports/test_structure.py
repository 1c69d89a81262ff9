"""The reports app's modules import one another in one direction only, and each one
imports on its own in a fresh interpreter (STYLE: the house)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "reports"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """The ``reports`` modules that ``path`` imports, at module level or inside a
    function (a deferred import is a dependency all the same)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from . import jobs`` names a module; ``from .jobs import x`` names a value.
            names = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        found.update(name for name in names if name.split(".")[0] == "reports")
    return found


def _graph() -> dict[str, set[str]]:
    modules = {
        _module_name(path): path
        for path in PACKAGE.rglob("*.py")
        if "migrations" not in path.parts and "management" not in path.parts
    }
    return {
        name: {other for other in _imports(path) if other in modules and other != name}
        for name, path in modules.items()
    }


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph, or None. A package's ``__init__`` importing its own
    modules is no cycle: Python imports the package first whatever is asked for."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for other in sorted(graph[node]):
            if node.startswith(other + "."):  # a module and the package that holds it
                continue
            if state.get(other) == 1:
                return [*stack[stack.index(other) :], other]
            if other not in state and (found := visit(other)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_graph_sees_the_imports_it_must():
    graph = _graph()
    assert {"reports.jobs", "reports.models"} <= graph["reports.tasks"]
    assert "reports.stats.arrays" in graph["reports.stats.labels"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_reports_module_imports_one_that_imports_it_back():
    assert _cycle(_graph()) is None


def test_the_jobs_never_import_the_tasks_and_the_statistics_no_django():
    graph = _graph()
    assert "reports.tasks" not in graph["reports.jobs"]
    for name, imported in graph.items():
        if name.startswith("reports.stats"):
            assert all(other.startswith("reports.stats") for other in imported), name


def _fresh_import(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_test"}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )


@pytest.mark.parametrize("module", ["reports.tasks", "reports.jobs", "reports.apis"])
def test_each_entry_point_imports_alone_in_a_fresh_interpreter(module):
    result = _fresh_import(f"import django; django.setup(); import {module}")
    assert result.returncode == 0, result.stderr[-3000:]


def test_the_statistics_import_without_django():
    result = _fresh_import(
        "import sys, reports.stats; assert 'django' not in sys.modules, 'django loaded'"
    )
    assert result.returncode == 0, result.stderr[-3000:]
