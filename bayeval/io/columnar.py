"""Vectorised reading of MS MARCO-layout run files (``qid docid rank [score]``).

A run of 7,000 queries × depth 1,000 has 7 million lines. This module reads such a file with
Arrow's CSV reader, sorts it into trec_eval's order in Arrow and numpy, and never builds a Python
object per line. It accepts only plainly well-formed files; for anything else (comments, mixed
separators, a document listed twice for a query, a field that is not an integer rank, …) it returns
``None`` and the careful line-by-line parser of :mod:`bayeval.io.runs` decides, so an error still
names file and line and the results are the same on every file both accept.

Order (docs/data.md): the rank gives the order; equal ranks are broken by docno in descending byte
order, trec_eval's tie rule for the run's score ``-rank``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from bayeval.data.interning import repeats_within_groups
from bayeval.io._files import scan_fields

__all__ = ["ColumnarRun", "parse_msmarco", "trec_eval_order"]

@dataclass(frozen=True)
class ColumnarRun:
    """Rows of one MS MARCO-layout run grouped by query, each group in trec_eval order.

    Attributes
    ----------
    layout : str
        ``"msmarco"`` (three columns) or ``"msmarco-score"`` (four).
    topics : list of str
        Query ids, one per group, in the order of the groups.
    starts : ndarray of int64
        Row where each group starts.
    docnos : pyarrow.StringArray
        Document ids in order.
    scores : ndarray of float64
        ``-rank`` of each row (the score trec_eval's order needs).
    """

    layout: str
    topics: list
    starts: np.ndarray
    docnos: pa.Array
    scores: np.ndarray


def _first_line_fields(data: bytes) -> int:
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        fields = data[start:end].split()
        if fields:
            return len(fields)
        start = end + 1
    return 0


def parse_msmarco(data: bytes) -> ColumnarRun | None:
    """Parse a well-formed MS MARCO-layout run, or return ``None`` to leave the file to the careful parser.

    Parameters
    ----------
    data : bytes
        The file's content (decompressed, BOM removed).

    Returns
    -------
    ColumnarRun or None

    Examples
    --------
    >>> r = parse_msmarco(b"q1\\td7\\t2\\nq1\\td3\\t1\\nq1\\td9\\t2\\nq2\\td1\\t1\\n")
    >>> r.topics, r.docnos.to_pylist(), r.scores.tolist()
    (['q1', 'q2'], ['d3', 'd9', 'd7', 'd1'], [-1.0, -2.0, -2.0, -1.0])
    """
    if not data or data[:1] in (b"#", b"\n", b"\r"):
        return None
    # control characters (\v and \f too, whitespace to the careful parser), mixed separators, a lone CR, an
    # empty field: for the careful parser
    delim, plain = scan_fields(data)
    n_cols = _first_line_fields(data)
    if delim is None or not plain or n_cols not in (3, 4):
        return None
    names = ["topic", "docno", "rank", "score"][:n_cols]
    # the rank as text: Arrow's integer parser takes forms Python's int() refuses ("0x1"), so it is checked first
    types = {"topic": pa.string(), "docno": pa.string(), "rank": pa.string(), "score": pa.float64()}
    try:
        table = pcsv.read_csv(
            pa.BufferReader(data),  # zero-copy, read by Arrow without the GIL
            read_options=pcsv.ReadOptions(column_names=names, use_threads=True),
            parse_options=pcsv.ParseOptions(delimiter=delim, quote_char=False, double_quote=False),
            convert_options=pcsv.ConvertOptions(column_types={k: types[k] for k in names},
                                                strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    n = table.num_rows
    if n == 0 or any(table.column(c).null_count for c in names[2:]):
        return None
    topic = table.column("topic").combine_chunks()
    docno = table.column("docno").combine_chunks()
    rank_text = table.column("rank").combine_chunks()
    if not pc.all(pc.ascii_is_decimal(rank_text)).as_py():
        return None  # not ASCII digits only ("-1", "+1", "1_0"): the careful parser decides, as Python's int() does
    try:
        rank = pc.cast(rank_text, pa.int64()).to_numpy()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # beyond int64
        return None
    if np.abs(rank).max() >= 2**53:  # -float(rank) must be exact, as the careful parser's is
        return None
    topic_enc = topic.dictionary_encode()
    topic_names = topic_enc.dictionary.to_pylist()
    if any(t[0] == "#" for t in topic_names):  # a comment line read as a row
        return None
    scores = -rank.astype(np.float64)
    grouped = trec_eval_order(topic_enc.indices.to_numpy(), scores, docno)
    if grouped is None:  # a document twice for one query: the careful parser keeps the first
        return None
    order, starts, group_codes = grouped
    if order is not None:
        docno, scores = docno.take(order), scores[order]
    topics = [topic_names[int(c)] for c in group_codes]
    return ColumnarRun("msmarco" if n_cols == 3 else "msmarco-score", topics, starts, docno, scores)


def trec_eval_order(tcode: np.ndarray, scores: np.ndarray, docnos: pa.Array
                    ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray] | None:
    """The rows of a run in trec_eval's order: grouped by topic, score descending, equal scores by docno descending.

    Both Arrow readers (TREC and MS MARCO layout) end here. Nothing is sorted by string except the rows whose
    score ties another of the same topic: rows already grouped and non-increasing in score (a file as
    written by a ranker) cost two passes over the integer codes and one over the tied docnos; other files
    are sorted stably by (topic code, score) in Arrow first. Then the duplicate check: a document listed twice
    for one topic, found by :func:`bayeval.data.interning.repeats_within_groups` in one pass over the bytes.

    Parameters
    ----------
    tcode : ndarray of int, shape (n,)
        A code per distinct topic (any numbering).
    scores : ndarray of float64, shape (n,)
        Finite scores (``-rank`` for MS MARCO files).
    docnos : pyarrow.StringArray, length n

    Returns
    -------
    (order, starts, group_codes) or None
        ``order``: the permutation of the rows (``None`` when the rows are already in order); ``starts``:
        int64 row (after ``order``) where each topic's group starts; ``group_codes``: the topic code of each
        group. ``None`` when a topic lists a document twice (the careful parser then decides, with lines).

    Examples
    --------
    >>> order, starts, codes = trec_eval_order(np.array([1, 0, 0, 1]), np.array([1.0, 2.0, 2.0, 3.0]),
    ...                                        pa.array(["x", "a", "b", "y"]))
    >>> order.tolist(), starts.tolist(), codes.tolist()
    ([2, 1, 3, 0], [0, 2], [0, 1])
    >>> trec_eval_order(np.array([0, 0]), np.array([1.0, 2.0]), pa.array(["a", "a"])) is None
    True
    """
    n = len(tcode)
    tcode = np.asarray(tcode)
    order = None
    same = tcode[1:] == tcode[:-1]
    starts = np.flatnonzero(np.r_[True, ~same]).astype(np.int64)
    contiguous = len(np.unique(tcode[starts])) == len(starts)
    if not contiguous or np.any(same & (scores[1:] > scores[:-1])):
        order = pc.sort_indices(pa.table({"t": tcode, "s": scores}),  # stable: equal rows keep file order
                                sort_keys=[("t", "ascending"), ("s", "descending")]).to_numpy()
        tcode, scores = tcode[order], scores[order]
        same = tcode[1:] == tcode[:-1]
        starts = np.flatnonzero(np.r_[True, ~same]).astype(np.int64)
    ties = np.flatnonzero(same & (scores[1:] == scores[:-1]))
    if len(ties):
        linked = np.zeros(n, dtype=bool)  # row i ties row i - 1
        linked[ties + 1] = True
        pos = np.flatnonzero(linked | np.r_[linked[1:], False])  # every row of a run of tied rows
        segment = np.cumsum(~linked[pos])
        rows = pos if order is None else order[pos]
        sub = pc.sort_indices(pa.table({"g": segment, "d": docnos.take(pa.array(rows))}),
                              sort_keys=[("g", "ascending"), ("d", "descending")]).to_numpy()
        if np.any(sub != np.arange(len(pos))):
            order = np.arange(n, dtype=np.int64) if order is None else order.copy()  # Arrow's is read-only
            order[pos] = rows[sub]
    if repeats_within_groups(docnos, starts, rows=order) >= 0:
        return None
    return order, starts, tcode[starts]
