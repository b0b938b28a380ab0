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

import io
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from bayeval.io._files import single_separator

__all__ = ["ColumnarRun", "parse_msmarco"]

_WHITESPACE = (b"\x0b", b"\x0c")


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
    if not data or data[:1] in (b" ", b"\t", b"#", b"\n", b"\r") or any(w in data for w in _WHITESPACE):
        return None
    delim = single_separator(data)  # None: mixed separators or a lone CR, for the careful parser
    n_cols = _first_line_fields(data)
    if delim is None or n_cols not in (3, 4):
        return None
    names = ["topic", "docno", "rank", "score"][:n_cols]
    types = {"topic": pa.string(), "docno": pa.string(), "rank": pa.int64(), "score": pa.float64()}
    try:
        table = pcsv.read_csv(
            io.BytesIO(data),
            read_options=pcsv.ReadOptions(column_names=names, use_threads=False),
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
    if pc.min(pc.utf8_length(topic)).as_py() == 0 or pc.min(pc.utf8_length(docno)).as_py() == 0:
        return None  # an empty field: two separators in a row
    rank = table.column("rank").to_numpy()
    if np.abs(rank).max() >= 2**53:  # -float(rank) must be exact, as the careful parser's is
        return None
    topic_enc = topic.dictionary_encode()
    topic_names = topic_enc.dictionary.to_pylist()
    if any(t[0] == "#" for t in topic_names):  # a comment line read as a row
        return None
    tcode = topic_enc.indices.to_numpy().astype(np.int64)
    doc_enc = docno.dictionary_encode()
    dcode = doc_enc.indices.to_numpy().astype(np.int64)
    key = np.sort(tcode * len(doc_enc.dictionary) + dcode)
    if np.any(key[1:] == key[:-1]):  # a document twice for one query: the careful parser keeps the first
        return None
    starts = np.flatnonzero(np.r_[True, tcode[1:] != tcode[:-1]]).astype(np.int64)
    if len(starts) != len(topic_names) or not _in_order(tcode, rank, docno):
        # group by query (any group order), rank ascending, docno descending
        order = pc.sort_indices(pa.table({"t": tcode, "r": rank, "d": docno}),
                                sort_keys=[("t", "ascending"), ("r", "ascending"), ("d", "descending")])
        docno = docno.take(order)
        order = order.to_numpy()
        tcode, rank = tcode[order], rank[order]
        starts = np.flatnonzero(np.r_[True, tcode[1:] != tcode[:-1]]).astype(np.int64)
    group_codes = tcode[starts]
    topics = [topic_names[int(c)] for c in group_codes]
    return ColumnarRun("msmarco" if n_cols == 3 else "msmarco-score", topics, starts, docno,
                       -rank.astype(np.float64))


def _in_order(tcode: np.ndarray, rank: np.ndarray, docno: pa.Array) -> bool:
    """Whether, inside each run of equal query codes, ranks ascend and equal ranks have docnos descending."""
    same = tcode[1:] == tcode[:-1]
    if np.any(same & (rank[1:] < rank[:-1])):
        return False
    ties = np.flatnonzero(same & (rank[1:] == rank[:-1]))
    if len(ties) == 0:
        return True
    return bool(pc.all(pc.greater(docno.take(pa.array(ties)), docno.take(pa.array(ties + 1)))).as_py())
