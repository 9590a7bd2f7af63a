"""The architecture holds: the apps are layered (.importlinter), the site agent imports nothing of the centre,
and no module imports another that imports it back, directly or through others (docs/architecture.md#layers)."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import importlinter.cli
import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("wanmon", "collectors", "agents")

# Cycles still to break, each with its way out. A cycle not listed here fails the test.
KNOWN_CYCLES: dict[frozenset[str], str] = {}


def import_cycles(graph: grimp.ImportGraph) -> list[frozenset[str]]:
    """Groups of modules that import each other in a circle (strongly connected components above one module)."""
    imports = {module: graph.find_modules_directly_imported_by(module) for module in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[frozenset[str]] = []
    for root in sorted(imports):
        if root in index:
            continue
        # Tarjan's algorithm, iterative: the import graph is deep enough to exhaust Python's recursion.
        work = [(root, iter(sorted(imports[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imports.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(frozenset(component))
    return cycles


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    # Imports under `if TYPE_CHECKING:` never run, so they cannot close a cycle.
    return grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True, cache_dir=None)


def test_the_apps_keep_their_layers_and_the_agent_stands_alone(capsys, monkeypatch):
    # import-linter's CLI configures logging with dictConfig, which disables every logger that already exists
    # (the agent's, the collectors'): later tests would capture no log record at all.
    monkeypatch.setattr(importlinter.cli, "_configure_logging", lambda verbose: None)
    code = lint_imports(config_filename=str(ROOT / ".importlinter"), no_cache=True, no_logo=True)
    assert code == 0, capsys.readouterr().out


def test_no_module_imports_another_that_imports_it_back(graph):
    cycles = import_cycles(graph)
    unknown = sorted(sorted(c) for c in cycles if c not in KNOWN_CYCLES)
    assert unknown == [], "import cycles:\n" + "\n".join(" <-> ".join(c) for c in unknown)
    for cycle in KNOWN_CYCLES:
        if cycle not in cycles:
            print(f"gone, remove it from KNOWN_CYCLES: {sorted(cycle)}")


def test_the_cycle_finder_sees_a_cycle_through_three_modules(tmp_path, monkeypatch):
    package = tmp_path / "loop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from loop import b\n")
    (package / "b.py").write_text("def f():\n    from loop import c  # a lazy import closes a cycle too\n")
    (package / "c.py").write_text("import loop.a\n")
    (package / "d.py").write_text("import loop.a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cycles = import_cycles(grimp.build_graph("loop", cache_dir=None))
    assert cycles == [frozenset({"loop.a", "loop.b", "loop.c"})]


def test_the_scenario_generators_compute_with_their_own_physics_not_the_engines():
    """The corpora and the demo are built on the physics oracle (tests/scenarios/noise/physics.py), written apart
    from the diagnosis on purpose: a generator that asked the engine would agree with it by construction."""
    generators = [ROOT / "scripts" / "generate_demo.py", ROOT / "tests" / "scenarios" / "generate.py",
                  ROOT / "tests" / "scenarios" / "noise" / "physics.py",
                  *sorted((ROOT / "tests" / "scenarios" / "regression").glob("*.py"))]
    offenders = {}
    for path in generators:
        bad = sorted(name for name in imported_modules(path) if name == "wanmon" or name.startswith("wanmon."))
        if bad:
            offenders[path.relative_to(ROOT).as_posix()] = bad
    assert offenders == {}


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth of its code (the file need not be importable)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def private_imports(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> list[str]:
    """``from module import _name`` anywhere in the shipped code: a module's private name used by another."""
    found = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.ImportFrom) and node.module:
                    found += [
                        f"{path.relative_to(root)}:{node.lineno}: from {node.module} import {alias.name}"
                        for alias in node.names
                        if alias.name.startswith("_") and not alias.name.startswith("__")
                    ]
    return found


def test_no_module_imports_another_modules_private_names():
    """A name with a leading underscore is its module's own: another module that needs it needs a public name
    (or the code belongs in the same module)."""
    assert private_imports() == []


def test_the_private_import_check_sees_one(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text("def _helper():\n    return 1\n")
    (package / "b.py").write_text("from pkg.a import _helper\n")
    assert private_imports(tmp_path, ("pkg",)) == ["pkg/b.py:1: from pkg.a import _helper"]
