"""Every pointer into the documentation resolves (docs/architecture.md; the dated records of the user
pages live in docs/notes/, docs/notes/house-third-pass.md).

- A relative markdown link in docs/ (notes included), README.md and examples/ names a file that exists and, with
  ``#anchor``, a heading of it (GitHub's anchors: lower case, punctuation dropped, spaces to hyphens).
- A citation of a section in the code, the studies, the benchmarks, the examples, the tests, the model
  configurations, README.md and the user pages of docs/ (not the dated records of docs/notes/, which cite the
  pages as they stood) —
  ``docs/PAGE.md, "Section"``, ``docs/PAGE.md ("Section")``, ``docs/PAGE.md "Section"`` or ``docs/PAGE.md, revision N``
  — names a heading of that page, or the bold lead of one of its paragraphs (the quoted words within it, case and
  backticks ignored).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
CITE = re.compile(r"(docs/[\w./-]+\.md)(?:,\s*|\s*\(|\s+)(?:\"([^\"]+)\"|“([^”]+)”|(?:\(?)([Rr]evisions?\s+\d+))")
FENCE = re.compile(r"^(```|~~~)")


def _headings(path: Path) -> list[str]:
    out, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            out.append(line.lstrip("#").strip())
        elif not fenced and (lead := re.match(r"\*\*([^*]+?)\.?\*\*", line)):
            out.append("\0" + lead.group(1))  # a paragraph's bold lead ("**Reading the output.**") names a section
    return out


def _anchor(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.lower().replace("`", ""))
    return text.replace(" ", "-")


def _markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "examples").rglob("*.md"))]


def _broken_links(path: Path) -> list[str]:
    broken = []
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    for match in LINK.finditer(text):
        target = match.group(1) or match.group(2)
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            broken.append(f"{path.relative_to(ROOT)}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in {_anchor(h) for h in _headings(dest)}:
            broken.append(f"{path.relative_to(ROOT)}: {target} (no such heading)")
    return broken


def _citations(path: Path) -> list[tuple[str, str]]:
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"\s*\n\s*(?:#+\s*)?", " ", text)  # a citation may run across lines of a docstring or comment
    return [(m.group(1), m.group(2) or m.group(3) or m.group(4)) for m in CITE.finditer(text)]


def _cited_missing(page: str, section: str) -> bool:
    dest = ROOT / page
    if not dest.exists():
        return True
    want = re.sub(r"\s+", " ", section.replace("`", "")).strip().lower().rstrip(".")
    number = re.fullmatch(r"revisions?\s+(\d+)", want)
    heads = [re.sub(r"\s+", " ", h.replace("`", "")).lower() for h in _headings(dest)]
    if number:
        return not any(re.match(rf"revision {number.group(1)}\b", h) for h in heads)
    # within a heading; a bold lead only from its start (its sentence may go on to mention anything)
    return not any(h[1:].startswith(want) if h.startswith("\0") else want in h for h in heads)


def _sources() -> list[Path]:
    files = []
    for folder in ("bayeval", "studies", "benchmarks", "examples", "tests"):
        files += [p for p in sorted((ROOT / folder).rglob("*.py")) if p.name != "test_doc_links.py"]
    files += sorted((ROOT / "models").rglob("*.toml"))
    return files + [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]  # not docs/notes/: dated records


def test_relative_links_in_the_docs_resolve():
    broken = [b for path in _markdown_files() for b in _broken_links(path)]
    assert not broken, "\n".join(broken)


def test_sections_cited_by_the_code_are_headings_of_their_page():
    missing = sorted({f"{p.relative_to(ROOT)}: {page}, {section!r}" for p in _sources()
                      for page, section in _citations(p) if _cited_missing(page, section)})
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize(("text", "found"), [("[a](docs/README.md)", True), ("[a](docs/no-such-page.md)", False),
                                             ("[a](docs/README.md#no-such-heading)", False)])
def test_the_link_check_fails_on_a_broken_link(tmp_path, text, found):
    path = ROOT / "tests" / "_doc_links_probe.md"
    path.write_text(text.replace("docs/", "../docs/"), encoding="utf-8")
    try:
        assert (not _broken_links(path)) is found
    finally:
        path.unlink()


def test_the_citation_check_fails_on_a_section_that_is_not_there():
    assert not _cited_missing("docs/calibration.md", "Where p goes wrong")
    assert _cited_missing("docs/calibration.md", "No such section")
    assert _cited_missing("docs/calibration.md", "revision 99")
    assert _cited_missing("docs/notes/calibration-record.md", "the default stays Normal")  # mid-sentence of a lead
