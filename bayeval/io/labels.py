"""Automatic assessors' label files (:func:`read_labels`): an LLM's grades or a model's scores of (topic, docno) pairs.

Two layouts, told apart by the first data line's column count:

* four columns ``topic iteration docno value`` — TREC qrels with any grade scale (UMBRELA's labels, a crowd's
  majority grades), or mtc-eval's ``topic Q0 docno prob``; the iteration column is ignored;
* three columns ``topic docno value`` — a score per pair (a cross-encoder's logit, an LLM's P(relevant)).

Plain or gzip. Blank lines and ``#`` comment lines are skipped. Every value is a finite number; a file is read as
``"grades"`` when every value is an integer (``2.0`` counts), else as ``"scores"`` (``kind="auto"``). A pair
labelled twice with the same value is kept once, with one :class:`~bayeval.errors.DataNotice` per file; with
different values it is an error naming both lines. ``strict=True`` refuses the repeat too (as
:func:`~bayeval.io.read_qrels` does).
"""

from __future__ import annotations

import math
import os
import warnings
from pathlib import Path

import numpy as np

from bayeval.data.labels import LABEL_KINDS, AssessorLabels
from bayeval.errors import BayevalInputError, DataNotice, FileFormatError
from bayeval.io._files import identifier, quoted, read_bytes, split_lines
from bayeval.io._numbers import as_number

__all__ = ["labels_name", "read_labels"]

_LAYOUTS = {4: ("topic iteration docno value", 2, 3), 3: ("topic docno value", 1, 2)}


def labels_name(path: str | os.PathLike) -> str:
    """The default name of a label file: its file name without ``.gz`` and one extension
    (``labels-umbrela.txt.gz`` → ``labels-umbrela``)."""
    name = Path(path).name
    if name.endswith(".gz"):
        name = name[:-3]
    stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
    return stem or name


def read_labels(path: str | os.PathLike, *, name: str | None = None, kind: str = "auto",
                strict: bool = False) -> AssessorLabels:
    """Read an automatic assessor's labels (plain or gzip; the layouts in the module notes).

    Parameters
    ----------
    path : path-like
    name : str, optional
        The assessor's name (default :func:`labels_name` of the path).
    kind : {"auto", "grades", "scores"}
        ``"auto"``: ``"grades"`` when every value is an integer, else ``"scores"``. ``"grades"`` refuses a
        fractional value (naming its line); ``"scores"`` reads integers as numbers.
    strict : bool, default False
        Refuse a pair labelled twice with the same value (otherwise kept once, with a notice).

    Returns
    -------
    AssessorLabels

    Raises
    ------
    FileFormatError
        Naming file and line: a column count other than 3 or 4 (or than the first line's), a value that is not a
        finite number (or, for ``"grades"``, not an integer), a pair labelled twice with different values; an
        empty file.
    BayevalInputError
        On an unknown ``kind``.
    """
    if kind not in ("auto", *LABEL_KINDS):
        raise BayevalInputError(f"kind: one of 'auto', {', '.join(map(repr, LABEL_KINDS))}, got {kind!r}")
    path = str(path)
    per_topic: dict[str, tuple[list, list, dict]] = {}
    width = first = None
    repeats: list[int] = []
    integral = True
    for lineno, raw in enumerate(split_lines(read_bytes(path, strict=strict)), start=1):
        fields = raw.split()
        if not fields or fields[0][:1] == b"#":  # blank or comment line
            continue
        if width is None:
            if len(fields) not in _LAYOUTS:
                raise FileFormatError(path, lineno, "expected 4 columns 'topic iteration docno value' or 3 columns "
                                                    f"'topic docno value', found {len(fields)}")
            width, first = len(fields), lineno
            layout, docno_col, value_col = _LAYOUTS[width]
        elif len(fields) != width:
            raise FileFormatError(path, lineno, f"expected {width} columns '{layout}' as on line {first}, "
                                                f"found {len(fields)}")
        topic = identifier(fields[0], "topic", path, lineno)
        docno = identifier(fields[docno_col], "docno", path, lineno)
        value = as_number(fields[value_col])
        if value is None or not math.isfinite(value):
            raise FileFormatError(path, lineno, f"label {quoted(fields[value_col])} is not a finite number")
        if not value.is_integer():
            if kind == "grades":
                raise FileFormatError(path, lineno, f"grade {quoted(fields[value_col])} is not an integer "
                                                    "(kind='grades')")
            integral = False
        docs, values, seen = per_topic.setdefault(topic, ([], [], {}))
        k = seen.get(docno)
        if k is not None:
            if values[k][0] != value or strict:
                what = f"with label {values[k][1]}" if values[k][0] != value else "(strict)"
                raise FileFormatError(path, lineno, f"document {quoted(docno)} already labelled for topic "
                                                    f"{quoted(topic)} on line {values[k][2]} {what}")
            repeats.append(lineno)
            continue
        seen[docno] = len(docs)
        docs.append(docno)
        values.append((value, fields[value_col].decode("ascii"), lineno))
    if not per_topic:
        raise FileFormatError(path, None, "empty file: no labels")
    if repeats:
        warnings.warn(f"{path}:{repeats[0]}: {len(repeats)} repeated label(s) with the same value; kept one of each",
                      DataNotice, stacklevel=2)
    if kind == "auto":
        kind = "grades" if integral else "scores"
    return AssessorLabels(labels_name(path) if name is None else name, kind,
                          {t: (np.array(d, dtype=object), np.array([v[0] for v in vals], dtype=np.float64))
                           for t, (d, vals, _) in per_topic.items()})
