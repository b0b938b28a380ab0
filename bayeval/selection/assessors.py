"""Assessors: who answers "is this document relevant?" — a qrels replay, or a person through files.

:class:`QrelsAssessor` replays complete judgments (a simulation). A document the qrels do not judge
is answered **nonrelevant (grade 0)**, the rule trec_eval applies to unjudged documents, and counted
in :attr:`QrelsAssessor.missing` so that a report can say how often it happened.

A human assessor works through files: :func:`write_requests` writes the documents to judge as a csv
with an empty ``grade`` column, the person fills it in, and :func:`~bayeval.io.judgments.read_judgments` reads it
back (csv with a header naming ``topic``, ``docno``, ``grade``, or TREC qrels lines ``topic iteration docno grade``,
or ``topic docno grade``; it lives in :mod:`bayeval.io` with every other reader and is re-exported here).
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable

from bayeval.data.qrels import Qrels
from bayeval.errors import BayevalInputError
from bayeval.io.judgments import JudgmentLine, read_judgments
from bayeval.selection.results import Candidate

__all__ = ["SOURCES", "JudgmentLine", "QrelsAssessor", "read_judgments", "write_requests"]

SOURCES = ("human", "qrels", "model", "initial")


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
