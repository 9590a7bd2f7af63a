"""Every document the repository cites exists in the repository, with the heading an anchor names.

The project documents itself under docs/: a citation of a file that only exists beside a checkout
(a specification directory, a design note) sends a reader of a plain clone nowhere. Test code that
reads third-party data beside the repository on purpose (``shared_fixture``) is the one exception.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIPPED_DIRS = {".git", ".venv", "var", "node_modules", "__pycache__", ".pytest_cache", ".ruff_cache",
                ".hypothesis"}
SKIPPED_PREFIXES = ("static/vendor/",)

# `docs/agent.md` or `docs/contracts.md#ingest-api` anywhere in code or text.
DOC_CITATION = re.compile(r"(?<![\w./-])(docs/[\w.-]+\.md)(?:#([\w-]+))?")
# A file of the repository named by its path, such as `wanmon/measurements/models.py` (the suffixes of the files
# the tree holds; `module.Class` references and folders are left alone; agent.toml.example is not agent.toml).
REPO_FILE = re.compile(
    r"(?<![\w./-])((?:wanmon|collectors|agents|scripts|tests|deploy|static|templates)/[\w./-]*?"
    r"\.(?:py|md|ya?ml|toml|html|sh|js|css|json|txt|cfg|conf|service|example))(?!\.?[\w-])"
)
# Markdown links and images: [text](target) with a relative target.
MARKDOWN_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~)")
# Documents that do not exist in the repository, and the directory beside it.
FOREIGN = re.compile(
    r"CONTRACTS(?:\.md)?\s*(?:§|section)|\bCONTRACTS\.md|\bDIAGNOSIS\.md|(?<![\w-])FORMAT\.md|\bDESIGN\.md"
    r"|\bSTYLE\.md|\.\./shared/"
)


def _sources() -> list[Path]:
    files = []
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT)
        if path.suffix not in (".py", ".md") or not path.is_file():
            continue
        if SKIPPED_DIRS & set(rel.parts) or any(p.endswith(".egg-info") for p in rel.parts):
            continue
        if rel.as_posix().startswith(SKIPPED_PREFIXES):
            continue
        files.append(path)
    return files


def slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading keeps its text
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    """Anchors of a Markdown file's headings (a repeated heading gets -1, -2, ... as on GitHub)."""
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if fenced or not match:
            continue
        base = slug(match[1])
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return frozenset(out)


def _markdown_links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of the links outside code fences and inline code."""
    links = []
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for match in MARKDOWN_LINK.finditer(re.sub(r"`[^`]*`", "", line)):
            links.append((number, match[1]))
    return links


def _check_target(target: Path, anchor: str | None) -> str | None:
    if not target.exists():
        return "no such file"
    if anchor and target.suffix == ".md" and anchor not in anchors(target):
        return f"no heading with anchor #{anchor}"
    return None


def broken_citations(path: Path) -> list[str]:
    """Citations in one file that lead nowhere, as 'file:line: citation: why'."""
    rel = path.relative_to(ROOT).as_posix()
    text = path.read_text(encoding="utf-8")
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        for match in DOC_CITATION.finditer(line):
            why = _check_target(ROOT / match[1], match[2])
            if why:
                problems.append(f"{rel}:{number}: {match[0]}: {why}")
        for match in REPO_FILE.finditer(line):
            if not (ROOT / match[1]).exists():
                problems.append(f"{rel}:{number}: {match[1]}: no such file")
    if path.suffix == ".md":
        for number, target in _markdown_links(text):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: ...
                continue
            file_part, _, anchor = target.partition("#")
            resolved = (path.parent / file_part).resolve() if file_part else path
            if file_part and ROOT not in resolved.parents:
                problems.append(f"{rel}:{number}: {target}: outside the repository")
                continue
            why = _check_target(resolved, anchor or None)
            if why:
                problems.append(f"{rel}:{number}: {target}: {why}")
    return sorted(set(problems))  # a Markdown link to docs/ is also a plain citation: report it once


def foreign_citations(path: Path) -> list[str]:
    """Mentions of documents that are not in the repository, as 'file:line: text'."""
    rel = path.relative_to(ROOT).as_posix()
    in_tests = rel.startswith("tests/")
    problems = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for match in FOREIGN.finditer(line):
            if in_tests and ("shared_fixture(" in line or "../shared/fixtures" in line):
                continue  # tests (and their notes) that read the third-party data beside the repository on purpose
            if path == Path(__file__).resolve():
                continue
            problems.append(f"{rel}:{number}: {match[0]!r} in: {line.strip()[:100]}")
    return problems


def test_the_scan_sees_the_documentation_and_the_code():
    names = {p.relative_to(ROOT).as_posix() for p in _sources()}

    assert {"README.md", "docs/architecture.md", "docs/contracts.md", "docs/diagnosis.md",
            "docs/scenario-format.md", "wanmon/settings.py", "collectors/records/__init__.py"} <= names
    assert not any(n.startswith((".venv/", "var/")) for n in names)


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Ingest API", "ingest-api"),
        ("Selectors other apps use (`wanmon/inventory/selectors.py`)",
         "selectors-other-apps-use-wanmoninventoryselectorspy"),
        ("perfSONAR archive (planned)", "perfsonar-archive-planned"),
        ("MAINTENANCE_EXPLAINED", "maintenance_explained"),
    ],
)
def test_anchors_are_those_github_makes(heading, anchor):
    assert slug(heading) == anchor


def test_a_broken_citation_is_reported(tmp_path, monkeypatch):
    # given: a file citing a missing document, a missing heading and a foreign document
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\n## Real heading\n")
    source = tmp_path / "x.md"
    source.write_text(
        "see [a](docs/a.md#real-heading), [b](docs/b.md), docs/a.md#no-such and DIAGNOSIS.md\n"
        "```\n[not a link](nowhere.md)\n```\n"
        "made by `wanmon/app/migrations/0001_gone.py`, not wanmon/app/models.Thing\n"
    )

    # when / then
    assert broken_citations(source) == [
        "x.md:1: docs/a.md#no-such: no heading with anchor #no-such",
        "x.md:1: docs/b.md: no such file",
        "x.md:5: wanmon/app/migrations/0001_gone.py: no such file",
    ]
    assert foreign_citations(source) == ["x.md:1: 'DIAGNOSIS.md' in: see [a](docs/a.md#real-heading), "
                                         "[b](docs/b.md), docs/a.md#no-such and DIAGNOSIS.md"]


def test_every_citation_resolves_inside_the_repository():
    this_file = Path(__file__).resolve()  # its own examples cite documents that do not exist
    problems = [p for path in _sources() if path != this_file for p in broken_citations(path)]

    assert problems == [], "\n".join(problems)


def test_no_document_outside_the_repository_is_cited():
    problems = [p for path in _sources() for p in foreign_citations(path)]

    assert problems == [], "\n".join(problems)


def test_every_constant_docs_diagnosis_names_exists():
    # docs/diagnosis.md cites thresholds as `k.NAME` (wanmon/diagnosis/constants.py) so that it can be checked.
    from wanmon.diagnosis import constants

    text = (ROOT / "docs" / "diagnosis.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`k\.([A-Z][A-Z0-9_]*)", text)) - {"NAME"}

    assert len(named) > 50
    assert sorted(n for n in named if not hasattr(constants, n)) == []
