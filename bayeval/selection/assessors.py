"""Assessors: who answers "is this document relevant?" — a qrels replay, or a person through files.

:class:`QrelsAssessor` replays complete judgments (a simulation). A document the qrels do not judge
is answered **nonrelevant (grade 0)**, the rule trec_eval applies to unjudged documents, and counted
in :attr:`QrelsAssessor.missing` so that a report can say how often it happened.

A human assessor works through files: :func:`write_requests` writes the documents to judge as a csv
with an empty ``grade`` column, the person fills it in, and :func:`read_judgments` reads it back (csv
with a header naming ``topic``, ``docno``, ``grade``, or TREC qrels lines ``topic iteration docno grade``,
or ``topic docno grade``).
"""

from __future__ import annotations

import csv
import gzip
import io
import os
from collections.abc import Iterable
from dataclasses import dataclass

from bayeval.data.qrels import Qrels
from bayeval.errors import BayevalInputError, FileFormatError
from bayeval.selection.results import Candidate

__all__ = ["SOURCES", "JudgmentLine", "QrelsAssessor", "read_judgments", "write_requests"]

SOURCES = ("human", "qrels", "model", "initial")
_GRADE_NAMES = ("grade", "relevance", "rel", "judgment", "label")


@dataclass(frozen=True)
class JudgmentLine:
    """One judgment read from a file, with the line it came from."""

    topic: str
    docno: str
    grade: int
    line: int


class QrelsAssessor:
    """Answers from a qrels (simulated assessor).

    Parameters
    ----------
    qrels : Qrels
        The complete judgments.

    Attributes
    ----------
    missing : int
        Documents asked about that the qrels do not judge (answered 0, nonrelevant).
    asked : int

    Examples
    --------
    >>> import pandas as pd
    >>> q = Qrels.from_frame(pd.DataFrame({"topic": ["1"], "docno": ["a"], "grade": [2]}))
    >>> a = QrelsAssessor(q)
    >>> a.judge("1", "a"), a.judge("1", "b"), a.missing
    (2, 0, 1)
    """

    source = "qrels"

    def __init__(self, qrels: Qrels) -> None:
        if not isinstance(qrels, Qrels):
            raise BayevalInputError(f"qrels: expected a Qrels, got {type(qrels).__name__}")
        self.qrels = qrels
        self._lookup = {t: dict(zip(tj.docnos.tolist(), tj.grades.tolist(), strict=True))
                        for t, tj in qrels.topic_judgments.items()}
        self.missing = 0
        self.asked = 0

    def judge(self, topic: str, docno: str) -> int:
        """The grade of ``docno`` for ``topic`` (0, counted as missing, when the qrels lack it)."""
        self.asked += 1
        g = self._lookup.get(str(topic), {}).get(str(docno))
        if g is None:
            self.missing += 1
            return 0
        return int(g)


def write_requests(candidates: Iterable[Candidate], out) -> int:
    """Write documents to judge as csv ``topic,docno,grade,score,run_a,run_b`` (grade left empty).

    ``out`` is a path or a text stream; returns the number of rows.
    """
    close = False
    if isinstance(out, (str, os.PathLike)):
        out = open(out, "w", encoding="utf-8", newline="")
        close = True
    try:
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["topic", "docno", "grade", "score", "run_a", "run_b"])
        n = 0
        for c in candidates:
            w.writerow([c.topic, c.docno, "", f"{c.score:.6g}", c.run_a or "", c.run_b or ""])
            n += 1
        return n
    finally:
        if close:
            out.close()


def _grade(text: str, path: str, line: int) -> int:
    try:
        return int(text)
    except ValueError:
        try:
            f = float(text)
        except ValueError:
            f = None
        if f is not None and f.is_integer():
            return int(f)
        raise FileFormatError(path, line, f"grade {text!r} is not an integer") from None


def read_judgments(path) -> list[JudgmentLine]:
    """Read a file of judgments: csv with a header, qrels lines, or ``topic docno grade`` lines.

    Blank lines and lines starting with ``#`` are skipped. A csv row with an empty grade is an error
    (a request not yet answered). Raises :class:`~bayeval.errors.FileFormatError` naming the line.
    """
    path = os.fspath(path)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        text = fh.read()
    lines = text.splitlines()
    first = next((k for k, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("#")), None)
    if first is None:
        return []
    out: list[JudgmentLine] = []
    if "," in lines[first]:
        reader = csv.reader(io.StringIO(text))
        header = None
        for lineno, row in enumerate(reader, start=1):
            if not row or not any(c.strip() for c in row) or row[0].lstrip().startswith("#"):
                continue
            if header is None:
                header = [c.strip().lower() for c in row]
                if "topic" not in header or "docno" not in header:
                    raise FileFormatError(path, lineno, "csv header must name the columns 'topic', 'docno' and "
                                          "'grade'")
                gcol = next((header.index(n) for n in _GRADE_NAMES if n in header), None)
                if gcol is None:
                    raise FileFormatError(path, lineno, "csv header has no 'grade' column")
                tcol, dcol = header.index("topic"), header.index("docno")
                continue
            if len(row) < len(header):
                raise FileFormatError(path, lineno, f"expected {len(header)} fields, got {len(row)}")
            g = row[gcol].strip()
            if not g:
                raise FileFormatError(path, lineno, f"no grade for document {row[dcol].strip()!r} (fill the grade "
                                      "column, or delete the row to leave the document for later)")
            out.append(JudgmentLine(row[tcol].strip(), row[dcol].strip(), _grade(g, path, lineno), lineno))
        return out
    for lineno, ln in enumerate(lines, start=1):
        f = ln.split()
        if not f or f[0].startswith("#"):
            continue
        if len(f) == 4:
            topic, docno, g = f[0], f[2], f[3]
        elif len(f) == 3:
            topic, docno, g = f
        else:
            raise FileFormatError(path, lineno, f"expected 'topic iteration docno grade' or 'topic docno grade', "
                                  f"got {len(f)} fields")
        out.append(JudgmentLine(topic, docno, _grade(g, path, lineno), lineno))
    return out
