"""Files of judgments made by people: what ``bayeval judge record`` reads.

Three layouts, chosen by the first data line: csv with a header naming ``topic``, ``docno`` and a grade column
(``grade``, ``relevance``, ``rel``, ``judgment`` or ``label``; other columns ignored), TREC qrels lines
``topic iteration docno grade``, or ``topic docno grade`` lines. The file is read as every reader of
:mod:`bayeval.io` reads (plain or gzip by its magic bytes, every gzip member, UTF-8); topic ids and docnos follow
the identifier rule and grades the qrels rule (docs/data.md). Blank lines and lines starting with ``#`` are
skipped. A csv row with an empty grade is an error (a request not yet answered).
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass

from bayeval.errors import FileFormatError
from bayeval.io._files import identifier, quoted, read_text
from bayeval.io.qrels import parse_grade

__all__ = ["GRADE_COLUMNS", "JudgmentLine", "read_judgments"]

GRADE_COLUMNS = ("grade", "relevance", "rel", "judgment", "label")


@dataclass(frozen=True)
class JudgmentLine:
    """One judgment read from a file, with the line it came from."""

    topic: str
    docno: str
    grade: int
    line: int


def read_judgments(path) -> list[JudgmentLine]:
    """Read a file of judgments: csv with a header, qrels lines, or ``topic docno grade`` lines (module notes).

    Raises
    ------
    FileFormatError
        One line naming the file and line of the first bad line.
    """
    path = os.fspath(path)
    text = read_text(path)
    lines = text.split("\n")
    first = next((k for k, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("#")), None)
    if first is None:
        return []
    if "," in lines[first]:
        return _read_csv(text, path)
    out: list[JudgmentLine] = []
    for lineno, ln in enumerate(lines, start=1):
        f = ln.encode("utf-8", "surrogatepass").split()  # ASCII whitespace separates columns, as in qrels
        if not f or f[0][:1] == b"#":
            continue
        if len(f) == 4:
            topic, docno, g = f[0], f[2], f[3]
        elif len(f) == 3:
            topic, docno, g = f
        else:
            raise FileFormatError(path, lineno, f"expected 'topic iteration docno grade' or 'topic docno grade', "
                                  f"got {len(f)} fields")
        out.append(_line(topic, docno, g, path, lineno))
    return out


def _line(topic: str | bytes, docno: str | bytes, grade: str | bytes, path: str, lineno: int) -> JudgmentLine:
    grade = grade if isinstance(grade, bytes) else grade.encode("utf-8", "surrogatepass")
    return JudgmentLine(identifier(topic, "topic", path, lineno), identifier(docno, "docno", path, lineno),
                        parse_grade(grade, path, lineno), lineno)


def _read_csv(text: str, path: str) -> list[JudgmentLine]:
    out: list[JudgmentLine] = []
    reader = csv.reader(io.StringIO(text, newline="\n"))
    header = None
    lineno = 0
    try:
        for row in reader:
            lineno = reader.line_num
            if not row or not any(c.strip() for c in row) or row[0].lstrip().startswith("#"):
                continue
            if header is None:
                header = [c.strip().lower() for c in row]
                if "topic" not in header or "docno" not in header:
                    raise FileFormatError(path, lineno, "csv header must name the columns 'topic', 'docno' and "
                                          "'grade'")
                gcol = next((header.index(n) for n in GRADE_COLUMNS if n in header), None)
                if gcol is None:
                    raise FileFormatError(path, lineno, "csv header has no 'grade' column")
                tcol, dcol = header.index("topic"), header.index("docno")
                continue
            if len(row) < len(header):
                raise FileFormatError(path, lineno, f"expected {len(header)} fields, got {len(row)}")
            g = row[gcol].strip()
            if not g:
                raise FileFormatError(path, lineno, f"no grade for document {quoted(row[dcol].strip())}"
                                      " (fill the grade column, or delete the row)")
            out.append(_line(row[tcol].strip(), row[dcol].strip(), g, path, lineno))
    except csv.Error as exc:
        raise FileFormatError(path, reader.line_num or lineno or None, f"not a csv line ({quoted(str(exc))})") \
            from None
    return out
