"""Every citation of the form ``docs/<file>.md §<section>`` points at a file and a heading that exist.

Code, tests and the README cite the contract and the platform notes by section, so renumbering a
heading or deleting a file breaks them silently unless something checks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".json", ".toml", ".html", ".js", ".css", ".txt", ".asl"}
SKIPPED_DIRS = {"node_modules", "__pycache__", ".venv", ".venv-sam", ".git", "cdk.out"}

SECTION = r"§(?:[0-9]+(?:\.[0-9]+)*|[A-Z])"
CITATION = re.compile(
    r"docs/(?P<file>[\w./-]+?\.md)(?P<sections>(?:[ \t]*(?:,|-|and)?[ \t]*" + SECTION + r")*)"
)
HEADING = re.compile(r"^#{1,6}[ \t]+(?:Appendix[ \t]+)?(?P<number>[0-9]+(?:\.[0-9]+)*|[A-Z])\.?[ \t]", re.M)
# A citation in the style the documents replaced: a bare "spec"/"reference" followed by a section.
OLD_STYLE = re.compile(
    r"\b(?:spec|reference)[ \t]+(?:``platform-api\.md``[ \t]+)?"
    r"(?:§|sections?[ \t]+[0-9]|[0-9]+(?:\.[0-9]+)*\b(?!\.[0-9])|appendix\b)",
    re.I,
)


@dataclass(frozen=True)
class Citation:
    source: str
    line: int
    document: str
    sections: tuple[str, ...]


def citations_in(text: str, source: str = "<text>") -> list[Citation]:
    """Every ``docs/...`` citation in ``text``, with the sections it names (none for a bare path)."""
    found = []
    for match in CITATION.finditer(text):
        sections = tuple(s.lstrip("§") for s in re.findall(SECTION, match["sections"]))
        line = text.count("\n", 0, match.start()) + 1
        found.append(Citation(source, line, match["file"], sections))
    return found


@cache
def headings_of(document: str) -> frozenset[str]:
    """Section numbers of the headings of ``document`` (``## 8. Limits`` -> 8, ``## Appendix A`` -> A)."""
    return frozenset(m["number"] for m in HEADING.finditer((ROOT / "docs" / document).read_text()))


def broken(citation: Citation) -> list[str]:
    """What is wrong with ``citation``: a missing document, or sections it has no heading for."""
    if not (ROOT / "docs" / citation.document).is_file():
        return [f"docs/{citation.document} does not exist"]
    known = headings_of(citation.document)
    return [f"docs/{citation.document} has no heading §{s}" for s in citation.sections if s not in known]


def scanned_files() -> list[Path]:
    """The repository's text files, except this one (its examples are broken on purpose)."""
    files = []
    for path in ROOT.rglob("*"):
        relative = path.relative_to(ROOT)
        if any(part in SKIPPED_DIRS or part.startswith(".") for part in relative.parts):
            continue
        if path.is_file() and path.suffix in SCANNED_SUFFIXES and path != Path(__file__).resolve():
            files.append(path)
    return files


def repository_citations() -> list[Citation]:
    citations = []
    for path in scanned_files():
        citations += citations_in(path.read_text(errors="replace"), str(path.relative_to(ROOT)))
    return citations


def test_every_docs_citation_in_the_repository_points_at_an_existing_heading() -> None:
    # Given every docs/... citation in code, tests, templates and documents
    citations = repository_citations()

    # When each is checked against the cited document's headings
    problems = [f"{c.source}:{c.line}: {problem}" for c in citations for problem in broken(c)]

    # Then none is broken, and there are enough of them that the scan is known to have looked
    assert problems == []
    assert sum(len(c.sections) for c in citations) > 50


def test_no_citation_uses_the_old_unresolvable_style() -> None:
    # Given every scanned file
    # When it is searched for citations of a section without a docs/ path
    stale = [
        f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r}"
        for path in scanned_files()
        for text in [path.read_text(errors="replace")]
        for m in OLD_STYLE.finditer(text)
    ]

    # Then there are none: a reader could not tell which document they mean
    assert stale == []


def test_a_citation_names_each_section_of_a_list_or_range() -> None:
    # Given a comment citing a list, a range and an appendix
    text = "# see docs/platform-notes.md §1.7, §6.2-§6.4 and docs/service-contract.md §A."

    # When its citations are read
    citations = citations_in(text)

    # Then each document comes with every section named after it
    assert [(c.document, c.sections) for c in citations] == [
        ("platform-notes.md", ("1.7", "6.2", "6.4")),
        ("service-contract.md", ("A",)),
    ]


def test_a_citation_of_a_missing_heading_or_document_is_reported() -> None:
    # Given citations of a section the notes do not have, and of a document that does not exist
    wrong_section = citations_in("docs/platform-notes.md §99.1")[0]
    wrong_document = citations_in("docs/no-such-notes.md §1")[0]

    # When they are checked
    # Then each is reported with what is wrong
    assert broken(wrong_section) == ["docs/platform-notes.md has no heading §99.1"]
    assert broken(wrong_document) == ["docs/no-such-notes.md does not exist"]


def test_the_old_style_check_recognises_a_bare_section_citation() -> None:
    # Given the forms the documents replaced, and prose that only looks similar
    old = ["(spec 4.3)", "(reference §8.2)", "reference sections 2-4", "reference Appendix A"]
    prose = ["(reference TRACE)", "a drift reference per feature", "lookalike_spec = 1"]

    # When each is searched
    # Then only the old citations are found
    assert [bool(OLD_STYLE.search(s)) for s in old] == [True] * len(old)
    assert [bool(OLD_STYLE.search(s)) for s in prose] == [False] * len(prose)
