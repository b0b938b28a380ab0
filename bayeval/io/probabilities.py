"""Probability files in mtc-eval's format: ``topic Q0 docno prob``."""

from __future__ import annotations

import os

from bayeval.data.probabilities import RelevanceProbabilities
from bayeval.errors import FileFormatError
from bayeval.io._files import identifier, quoted, read_bytes, split_lines
from bayeval.io._numbers import as_number

__all__ = ["read_probabilities", "write_probabilities"]


def read_probabilities(path: str | os.PathLike) -> RelevanceProbabilities:
    """Read ``topic Q0 docno prob`` lines (plain or gzip); each prob must lie in [0, 1]; ``#`` lines are skipped.

    Raises
    ------
    FileFormatError
        Naming file and line: wrong column count, a value that is not a probability, or a
        document listed twice for one topic.
    """
    path = str(path)
    out: dict[str, dict[str, float]] = {}
    for lineno, raw in enumerate(split_lines(read_bytes(path)), start=1):
        fields = raw.split()
        if not fields or fields[0][:1] == b"#":  # blank or comment line
            continue
        if len(fields) != 4:
            raise FileFormatError(path, lineno, f"expected 4 columns 'topic Q0 docno prob', found {len(fields)}")
        topic = identifier(fields[0], "topic", path, lineno)
        docno = identifier(fields[2], "docno", path, lineno)
        p = as_number(fields[3])
        if p is None or not (0.0 <= p <= 1.0):
            raise FileFormatError(path, lineno, f"probability {quoted(fields[3])} is not a number in [0, 1]")
        docs = out.setdefault(topic, {})
        if docno in docs:
            raise FileFormatError(path, lineno, f"document {quoted(docno)} listed twice for topic {quoted(topic)}")
        docs[docno] = p
    if not out:
        raise FileFormatError(path, None, "empty file: no probabilities")
    return RelevanceProbabilities(out)


def write_probabilities(probs: RelevanceProbabilities, path: str | os.PathLike) -> None:
    """Write mtc-eval's ``topic Q0 docno prob`` format."""
    with open(path, "w", encoding="utf-8") as fh:
        for t in probs.topics:
            for d, p in probs.by_topic[t].items():
                fh.write(f"{t} Q0 {d} {p:.10g}\n")
