"""The house's shape, checked on the source with the standard library's ``ast``: imports point one way (no
import loops, annotation-only imports counted too) and modules stay small."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "lichessbot"
#: Lines a module may have (the house's "about 400").
MAX_LINES = 420


def _modules() -> dict[str, Path]:
    mods = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        mods[name] = path
    return mods


def import_graph() -> dict[str, set[str]]:
    """module -> the project modules it imports anywhere in its file (top level, functions, TYPE_CHECKING).
    ``from package import submodule`` is an edge to the submodule, not to the package."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            graph[name].update(t for t in targets if t in mods and t != name)
    return graph


def import_loop(graph: dict[str, set[str]]) -> list[str]:
    """One import loop (its modules, the first repeated at the end), or [] when there is none: the
    standard library's topological sort (``graphlib``) finds it."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as err:
        return list(err.args[1])
    return []


def test_a_loop_in_a_graph_is_found():
    assert set(import_loop({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})) == {"a", "b", "c"}
    assert import_loop({"a": {"b"}, "b": set()}) == []


def test_no_import_loops_in_the_package():
    graph = import_graph()
    assert "lichessbot.engine.evaluator" in graph["lichessbot.wiring"]  # the graph sees real edges
    assert import_loop(graph) == []


def test_no_module_is_over_the_size_limit():
    sizes = {str(p.relative_to(PACKAGE.parent)): len(p.read_text(encoding="utf-8").splitlines())
             for p in PACKAGE.rglob("*.py")}
    assert {p: n for p, n in sizes.items() if n > MAX_LINES} == {}
