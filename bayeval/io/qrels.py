"""Reading and writing relevance judgments.

* TREC qrels: ``topic iteration docno grade`` (the iteration column is ignored). Grades are
  integers; negative grades are kept and count as judged nonrelevant.
* Million Query prels: ``topic docno grade algorithm probability`` — the last column is the
  document's inclusion probability under the sampling that chose it.

Blank lines and ``#`` comment lines are skipped. A qrels line may carry a fifth column (a timestamp,
a judge id): it is ignored, with one :class:`~bayeval.errors.DataNotice` per file. A document judged
twice for one topic with the same grade is kept once, with one notice per file; with different
grades it is an error (no meaning can be given to it), and so is a prels document listed twice with different
inclusion probabilities. ``strict=True`` refuses both tolerances.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from bayeval.data.qrels import Qrels, TopicJudgments
from bayeval.errors import BayevalInputError, DataNotice, FileFormatError
from bayeval.io._files import first_data_line, identifier, quoted, read_bytes, split_lines
from bayeval.io._numbers import as_grade, as_integer, as_number

__all__ = ["is_qrels_file", "parse_grade", "read_prels", "read_qrels", "write_qrels"]


def parse_grade(field: bytes, path: str, lineno: int) -> int:
    """A relevance grade: an integer (``2.0`` accepted) of magnitude below 2**62, or an error naming ``path:lineno``."""
    grade = as_grade(field)
    if grade is None:
        raise FileFormatError(path, lineno, f"relevance grade {quoted(field)} is not an integer")
    if abs(grade) >= 2**62:
        raise FileFormatError(path, lineno, f"relevance grade {quoted(field, 20)} is out of range")
    return grade


def _read_table(path, ncols: int, layout: str, docno_col: int, grade_col: int, prob_col: int | None,
                relevance_level: int, strict: bool = False, extra_ok: bool = False) -> Qrels:
    path = str(path)
    data = read_bytes(path, strict=strict)
    per_topic: dict[str, tuple[list, list, list, dict]] = {}
    width = first = None
    repeats: list[int] = []
    for lineno, raw in enumerate(split_lines(data), start=1):
        fields = raw.split()
        if not fields or fields[0][:1] == b"#":  # blank or comment line
            continue
        if width is None:
            width, first = len(fields), lineno
            if width != ncols and not (extra_ok and width == ncols + 1 and not strict):
                raise FileFormatError(path, lineno, f"expected {ncols} columns '{layout}', found {len(fields)}")
        elif len(fields) != width:
            raise FileFormatError(path, lineno, f"expected {width} columns as on line {first}, found {len(fields)}")
        topic = identifier(fields[0], "topic", path, lineno)
        docno = identifier(fields[docno_col], "docno", path, lineno)
        grade = parse_grade(fields[grade_col], path, lineno)
        p = None
        if prob_col is not None:
            p = as_number(fields[prob_col])
            if p is None or not (0.0 < p <= 1.0):
                raise FileFormatError(path, lineno, f"inclusion probability {quoted(fields[prob_col])} "
                                                    "is not in (0, 1]")
        docs, grades, probs, seen = per_topic.setdefault(topic, ([], [], [], {}))
        if docno in seen:
            before, k = seen[docno], docs.index(docno)  # rare: a linear search is fine
            if grades[k] != grade:
                what = f"with grade {grades[k]}"
            elif p is not None and probs[k] != p:
                what = f"with inclusion probability {probs[k]:.10g}"  # which π is right cannot be chosen
            else:
                what = "(strict)" if strict else None
            if what is not None:
                raise FileFormatError(path, lineno, f"document {quoted(docno)} already judged for topic "
                                                    f"{quoted(topic)} on line {before} {what}")
            repeats.append(lineno)
            continue
        seen[docno] = lineno
        if p is not None:
            probs.append(p)
        docs.append(docno)
        grades.append(grade)
    if not per_topic:
        raise FileFormatError(path, None, "empty file: no judgments")
    if width == ncols + 1 and extra_ok:
        warnings.warn(f"{path}:{first}: {width} columns; read as '{layout}' and ignored the last column",
                      DataNotice, stacklevel=3)
    if repeats:
        same = "the same grade" if prob_col is None else "the same grade and inclusion probability"
        warnings.warn(f"{path}:{repeats[0]}: {len(repeats)} repeated judgment(s) with {same}; kept one of each",
                      DataNotice, stacklevel=3)
    return Qrels({t: TopicJudgments(np.array(d, dtype=object), np.array(g, dtype=np.int64),
                                    np.array(p, dtype=np.float64) if prob_col is not None else None)
                  for t, (d, g, p, _) in per_topic.items()}, relevance_level)


def read_qrels(path: str | os.PathLike, relevance_level: int = 1, *, strict: bool = False) -> Qrels:
    """Read a TREC qrels file (plain or gzip): ``topic iteration docno grade``.

    Parameters
    ----------
    path : path-like
    relevance_level : int, default 1
        Minimum grade counted as relevant (trec_eval ``-l``).
    strict : bool, default False
        Refuse what is otherwise tolerated with a notice: a fifth column, a judgment repeated with the
        same grade.

    Raises
    ------
    FileFormatError
        Naming file and line: wrong column count, non-integer grade, a document judged twice with
        different grades.
    """
    return _read_table(path, 4, "topic iteration docno grade", 2, 3, None, relevance_level, strict, extra_ok=True)


def read_prels(path: str | os.PathLike, relevance_level: int = 1, *, strict: bool = False) -> Qrels:
    """Read a Million Query prels file: ``topic docno grade algorithm probability``.

    The returned :class:`Qrels` carries the inclusion probabilities (``qrels[t].inclusion``).
    """
    return _read_table(path, 5, "topic docno grade algorithm probability", 1, 2, 4, relevance_level, strict)


def is_qrels_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` looks like TREC qrels (reads its first data line only): four columns, the second an
    iteration (an integer or ``Q0``) and the fourth an integer grade — a TREC run has six columns, and an
    MS MARCO run ``qid docid rank score`` has a score, not a grade, last. A directory or missing file is not."""
    if not os.path.isfile(path):
        return False
    try:
        fields = first_data_line(path).split()
    except BayevalInputError:
        return False
    if len(fields) != 4:
        return False
    return as_integer(fields[3]) is not None and (fields[1] == b"Q0" or as_integer(fields[1]) is not None)


def write_qrels(qrels: Qrels, path: str | os.PathLike) -> None:
    """Write ``qrels`` in TREC format (iteration column ``0``)."""
    with open(path, "w", encoding="utf-8") as fh:
        for t in qrels.topics:
            tj = qrels[t]
            for d, g in zip(tj.docnos, tj.grades, strict=True):
                fh.write(f"{t} 0 {d} {int(g)}\n")
