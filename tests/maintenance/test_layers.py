"""The maintenance app stands below the diagnosis and alerting: it imports neither, and its modules form no cycle."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "wanmon" / "maintenance"
ABOVE = ("wanmon.diagnosis", "wanmon.alerts", "wanmon.dashboard")
MAX_LINES = 600


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at the top or inside functions (a lazy import is still a dependency)."""
    names: set[str] = set()
    package = _module(path).rpartition(".")[0] if path.name != "__init__.py" else _module(path)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            names.add(base)
            names |= {f"{base}.{alias.name}" for alias in node.names}
    return names


def _sources() -> dict[str, Path]:
    return {_module(p): p for p in APP.rglob("*.py") if "migrations" not in p.parts}


def test_maintenance_imports_nothing_above_it():
    offenders = {
        name: sorted(i for i in _imports(path) if i.startswith(ABOVE))
        for name, path in _sources().items()
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_no_import_cycle_inside_maintenance():
    modules = _sources()
    graph = {name: {i for i in _imports(path) if i in modules and i != name} for name, path in modules.items()}
    cycles = []

    def visit(node: str, stack: list[str]) -> None:
        for nxt in graph[node]:
            if nxt in stack:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in done:
                visit(nxt, [*stack, nxt])
        done.add(node)

    done: set[str] = set()
    for name in sorted(graph):
        if name not in done:
            visit(name, [name])
    assert cycles == []


def test_modules_stay_small():
    sizes = {name: len(path.read_text().splitlines()) for name, path in _sources().items()}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}
