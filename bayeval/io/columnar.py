"""Vectorised reading of MS MARCO-layout run files (``qid docid rank [score]``), and trec_eval's order of rows.

A run of 7,000 queries × depth 1,000 has 7 million lines. This module reads such a file with
Arrow's CSV reader, sorts it into trec_eval's order in Arrow and numpy, and never builds a Python
object per line. It reads every well-formed file, and what the readers tolerate (docs/data.md) itself: comment
and blank lines (dropped by :func:`bayeval.io._files.data_lines` first), a document listed twice for a query
(the first in ranked order kept, the others reported in ``dropped``). For anything else (mixed separators,
control characters, a field that is not an integer rank, …) it returns ``None`` and the careful line-by-line
parser of :mod:`bayeval.io.runs` decides, so an error still names file and line and the results are the same
on every file both accept.

Order (docs/data.md): the rank gives the order; equal ranks are broken by docno in descending byte
order, trec_eval's tie rule for the run's score ``-rank``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from bayeval.data.interning import repeat_mask
from bayeval.io._files import data_lines, first_line_fields, scan_lines

__all__ = ["ColumnarRun", "RankedRows", "parse_msmarco", "ranked_rows", "trec_eval_order"]

_NO_ROWS = np.zeros(0, dtype=np.int64)


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
    dropped : ndarray of int64
        Data lines (0-based, blank and comment lines not counted) dropped as repeats of a document within a query.
    repeat : tuple or None
        With ``strict``: ``(data line, earlier data line, query, docno)`` of the first repeat in file order.
    """

    layout: str
    topics: list
    starts: np.ndarray
    docnos: pa.Array
    scores: np.ndarray
    dropped: np.ndarray = field(default_factory=lambda: _NO_ROWS)
    repeat: tuple | None = None


def parse_msmarco(data: bytes, *, separator: str | None = None, strict: bool = False) -> ColumnarRun | None:
    """Parse an MS MARCO-layout run, or return ``None`` to leave the file to the careful parser.

    Parameters
    ----------
    data : bytes
        The file's content (decompressed, BOM removed).
    separator : {" ", "\\t"}, optional
        Given when ``data`` has been checked by :func:`bayeval.io._files.scan_lines` and cleaned by
        :func:`~bayeval.io._files.data_lines` already (the run reader does); otherwise both are done here.
    strict : bool
        Also find the first repeated document in file order (``repeat``), for the strict reader's error.

    Returns
    -------
    ColumnarRun or None

    Examples
    --------
    >>> r = parse_msmarco(b"q1\\td7\\t2\\nq1\\td3\\t1\\nq1\\td9\\t2\\nq2\\td1\\t1\\nq1\\td7\\t3\\n")
    >>> r.topics, r.docnos.to_pylist(), r.scores.tolist(), r.dropped.tolist()
    (['q1', 'q2'], ['d3', 'd9', 'd7', 'd1'], [-1.0, -2.0, -2.0, -1.0], [4])
    """
    if separator is None:
        separator, plain, skipped = scan_lines(data)
        if separator is None or not plain:
            return None  # control characters, mixed separators, a lone CR, an empty field: the careful parser
        if skipped:
            data = data_lines(data)
    n_cols = first_line_fields(data)
    if n_cols not in (3, 4):
        return None
    names = ["topic", "docno", "rank", "score"][:n_cols]
    # the rank as text: Arrow's integer parser takes forms Python's int() refuses ("0x1"), so it is checked first
    types = {"topic": pa.string(), "docno": pa.string(), "rank": pa.string(), "score": pa.float64()}
    try:
        table = pcsv.read_csv(
            pa.BufferReader(data),  # zero-copy, read by Arrow without the GIL
            read_options=pcsv.ReadOptions(column_names=names, use_threads=True),
            parse_options=pcsv.ParseOptions(delimiter=separator, quote_char=False, double_quote=False),
            convert_options=pcsv.ConvertOptions(column_types={k: types[k] for k in names},
                                                strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    n = table.num_rows
    if n == 0 or any(table.column(c).null_count for c in names[2:]):
        return None
    if n_cols == 4 and np.isnan(table.column("score").to_numpy()).any():
        return None  # "nan" is a number, "nan(1)" is not (docs/data.md): Arrow reads both as NaN
    topic = table.column("topic").combine_chunks()
    docno = table.column("docno").combine_chunks()
    rank_text = table.column("rank").combine_chunks()
    del table
    if not pc.all(pc.ascii_is_decimal(rank_text)).as_py():
        return None  # not ASCII digits only ("-1", "+1", "1_0"): the careful parser decides by the number rule
    try:
        rank = pc.cast(rank_text, pa.int64()).to_numpy()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # beyond int64
        return None
    if np.abs(rank).max() >= 2**53:  # -float(rank) must be exact, as the careful parser's is
        return None
    topic_enc = topic.dictionary_encode()
    topic_names = topic_enc.dictionary.to_pylist()
    scores = -rank.astype(np.float64)
    ranked = ranked_rows(topic_enc.indices.to_numpy(), scores, docno, first_repeat=strict)
    docno, scores, topics, repeat = ranked.take(docno, scores, topic_names)
    return ColumnarRun("msmarco" if n_cols == 3 else "msmarco-score", topics, ranked.starts, docno, scores,
                       ranked.dropped, repeat)


@dataclass(frozen=True)
class RankedRows:
    """The rows of a run in trec_eval's order, a document listed twice for a topic kept once (:func:`ranked_rows`).

    Attributes
    ----------
    order : ndarray of int64 or None
        The rows to take, in order (``None``: every row, as they are).
    starts : ndarray of int64
        Position (in ``order``) where each topic's group starts.
    group_codes : ndarray
        The topic code of each group.
    dropped : ndarray of int64
        Rows left out, ascending: each repeats a document of its topic ranked above it (or, at an equal score,
        earlier in the file).
    repeat : tuple or None
        When asked for and a row is dropped: ``(row, earlier row, topic code, docno)`` of the first row, in file
        order, whose document its topic listed before (what a strict reader refuses).
    """

    order: np.ndarray | None
    starts: np.ndarray
    group_codes: np.ndarray
    dropped: np.ndarray
    repeat: tuple | None = None

    def take(self, docnos: pa.Array, scores: np.ndarray, names: list) -> tuple:
        """``(docnos, scores, topics, repeat)``: the run's columns in this order, the name of each group's topic,
        and the first repeat with its topic named (``names[code]``), as both Arrow readers store them."""
        if self.order is not None:
            docnos, scores = docnos.take(self.order), scores[self.order]
        repeat = None
        if self.repeat is not None:
            row, earlier, code, doc = self.repeat
            repeat = (row, earlier, names[code], doc)
        return docnos, scores, [names[int(c)] for c in self.group_codes], repeat


def ranked_rows(tcode: np.ndarray, scores: np.ndarray, docnos: pa.Array, *, first_repeat: bool = False
                ) -> RankedRows:
    """The rows of a run in trec_eval's order: grouped by topic, score descending, equal scores by docno descending;
    a document listed twice for a topic kept at its first place in that order (docs/data.md).

    Both Arrow readers (TREC and MS MARCO layout) end here. Nothing is sorted by string except the rows whose
    score ties another of the same topic: rows already grouped and non-increasing in score (a file as
    written by a ranker) cost two passes over the integer codes and one over the tied docnos; other files
    are sorted stably by (topic code, score) in Arrow first. Then the repeats: every document listed again
    within its topic's ranked rows, found by :func:`bayeval.data.interning.repeat_mask` in one pass over the
    bytes, and left out.

    Parameters
    ----------
    tcode : ndarray of int, shape (n,)
        A code per distinct topic (any numbering).
    scores : ndarray of float64, shape (n,)
        Finite scores (``-rank`` for MS MARCO files).
    docnos : pyarrow.StringArray, length n
    first_repeat : bool
        Also find the first repeat in file order (``RankedRows.repeat``).

    Returns
    -------
    RankedRows

    Examples
    --------
    >>> r = ranked_rows(np.array([1, 0, 0, 1, 0]), np.array([1.0, 2.0, 2.0, 3.0, 5.0]),
    ...                 pa.array(["x", "a", "b", "y", "a"]), first_repeat=True)
    >>> r.order.tolist(), r.starts.tolist(), r.group_codes.tolist(), r.dropped.tolist(), r.repeat
    ([4, 2, 3, 0], [0, 2], [0, 1], [1], (4, 1, 0, 'a'))
    """
    n = len(tcode)
    tcode = np.asarray(tcode)
    codes_in_file = tcode
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
    group_codes = tcode[starts]
    repeated = repeat_mask(docnos, starts, rows=order)
    if not repeated.any():
        return RankedRows(order, starts, group_codes, _NO_ROWS)
    kept = ~repeated
    rows = np.arange(n, dtype=np.int64) if order is None else np.asarray(order, dtype=np.int64)
    group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n]))
    sizes = np.bincount(group[kept], minlength=len(starts))  # every group keeps its first row
    new_starts = np.r_[0, np.cumsum(sizes)[:-1]].astype(np.int64)
    dropped = np.sort(rows[repeated])
    repeat = _first_repeat_in_file(codes_in_file, docnos) if first_repeat else None
    return RankedRows(rows[kept], new_starts, group_codes, dropped, repeat)


def _first_repeat_in_file(tcode: np.ndarray, docnos: pa.Array) -> tuple[int, int, int, str]:
    """``(row, earlier row, topic code, docno)``: the first row in file order whose topic listed its document
    before (there is one), and that earlier row (the only one: a second would be an earlier repeat)."""
    by_topic = np.argsort(tcode, kind="stable").astype(np.int64)  # each topic's rows in file order
    t = tcode[by_topic]
    starts = np.flatnonzero(np.r_[True, t[1:] != t[:-1]]).astype(np.int64)
    row = int(by_topic[repeat_mask(docnos, starts, rows=by_topic)].min())
    doc = docnos[row].as_py()
    before = np.flatnonzero(tcode[:row] == tcode[row])
    earlier = int(before[np.flatnonzero(pc.equal(docnos.take(pa.array(before)), doc).to_numpy(
        zero_copy_only=False))[0]])
    return row, earlier, int(tcode[row]), doc


def trec_eval_order(tcode: np.ndarray, scores: np.ndarray, docnos: pa.Array
                    ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray] | None:
    """:func:`ranked_rows` for a run with no document listed twice: ``(order, starts, group_codes)``, or ``None``
    when a topic lists a document twice.

    Examples
    --------
    >>> order, starts, codes = trec_eval_order(np.array([1, 0, 0, 1]), np.array([1.0, 2.0, 2.0, 3.0]),
    ...                                        pa.array(["x", "a", "b", "y"]))
    >>> order.tolist(), starts.tolist(), codes.tolist()
    ([2, 1, 3, 0], [0, 2], [0, 1])
    >>> trec_eval_order(np.array([0, 0]), np.array([1.0, 2.0]), pa.array(["a", "a"])) is None
    True
    """
    r = ranked_rows(tcode, scores, docnos)
    return None if len(r.dropped) else (r.order, r.starts, r.group_codes)
