"""collectors/ and agents/ are installed alone on site machines: they never import the central stack."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {"django", "wanmon", "celery", "rest_framework", "drf_spectacular", "django_filters"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", ["collectors", "agents"])
def test_package_does_not_import_central_stack(package):
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"{package}/ has no Python files"
    offenders = {str(f.relative_to(ROOT)): sorted(_imports(f) & FORBIDDEN) for f in files}
    assert {f: m for f, m in offenders.items() if m} == {}


def test_boundary_checker_catches_a_forbidden_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nfrom django.db import models\nimport celery.app\nfrom . import sibling\n")
    assert _imports(bad) & FORBIDDEN == {"django", "celery"}
