"""Runs and qrels to and from pandas frames and record iterables, in the column conventions of the ecosystem.

So that a notebook evaluates without writing a file. Three conventions (``convention=``):

============  ==========================  ==================================
convention    runs                        qrels
============  ==========================  ==================================
bayeval       ``topic, docno, score``     ``topic, docno, grade``
ir_measures   ``query_id, doc_id, score`` ``query_id, doc_id, relevance``
pyterrier     ``qid, docno, score, rank`` ``qid, docno, label``
============  ==========================  ==================================

``ir_measures`` is also ir_datasets' naming. A ``run`` column (or PyTerrier's ``name``) holds the run name
and splits a frame into several runs. Reading, the convention is recognised from the columns. A run
frame without ``score`` but with ``rank`` is ranked by rank (score ``-rank``, as MS MARCO files,
:mod:`bayeval.io.runs`). Writing, ranks are 1-based, except PyTerrier's, which start at 0 as PyTerrier's
own result frames do. Records (:func:`qrels_from_records`, :func:`runs_from_records`) are objects with
attributes ``query_id, doc_id, relevance`` (ir_datasets' ``qrels_iter()``, ir_measures' ``Qrel``) or
``query_id, doc_id, score`` (``scoreddocs_iter()``, ``ScoredDoc``), or mappings with those keys.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from bayeval.data.qrels import Qrels
from bayeval.data.run import Run, RunSet
from bayeval.errors import BayevalInputError

__all__ = ["CONVENTIONS", "qrels_from_frame", "qrels_from_records", "qrels_to_frame", "runs_from_frame",
           "runs_from_records", "runs_to_frame"]

CONVENTIONS = ("bayeval", "ir_measures", "pyterrier")
_RUN_COLS = {"bayeval": ("topic", "docno", "score"), "ir_measures": ("query_id", "doc_id", "score"),
             "pyterrier": ("qid", "docno", "score")}
_QREL_COLS = {"bayeval": ("topic", "docno", "grade"), "ir_measures": ("query_id", "doc_id", "relevance"),
              "pyterrier": ("qid", "docno", "label")}


def _convention(columns, table: dict, argument: str) -> str:
    cols = set(columns)
    for name, (t, d, _) in table.items():
        if t in cols and d in cols:
            return name
    wanted = "; ".join(", ".join(c) for c in table.values())
    raise BayevalInputError(f"{argument}: columns {sorted(map(str, cols))} match no convention ({wanted})")


def _check_convention(convention: str) -> None:
    if convention not in CONVENTIONS:
        raise BayevalInputError(f"convention: expected one of {', '.join(CONVENTIONS)}, got {convention!r}")


def runs_from_frame(frame: pd.DataFrame, name: str = "run") -> RunSet:
    """Runs from a frame in any of the conventions (module notes).

    Parameters
    ----------
    frame : pandas.DataFrame
    name : str
        The run's name when the frame has no ``run`` (or ``name``) column.

    Returns
    -------
    RunSet
        One run per distinct ``run`` value (first-appearance order), rows in trec_eval's order.

    Raises
    ------
    BayevalInputError
        Naming the column: no known columns, neither score nor rank, a score that is not a finite
        number, a document listed twice for a topic of a run.

    Examples
    --------
    >>> df = pd.DataFrame({"qid": ["1", "1"], "docno": ["d1", "d2"], "score": [0.5, 1.5]})
    >>> runs_from_frame(df, name="bm25")["bm25"].ranking("1").tolist()
    ['d2', 'd1']
    """
    if not isinstance(frame, pd.DataFrame):
        raise BayevalInputError(f"frame: expected a pandas DataFrame, got {type(frame).__name__}")
    conv = _convention(frame.columns, _RUN_COLS, "frame")
    t, d, s = _RUN_COLS[conv]
    if s in frame.columns:
        try:
            score = frame[s].to_numpy(dtype=np.float64)
        except (TypeError, ValueError):
            raise BayevalInputError(f"frame: column {s!r} is not numeric") from None
    elif "rank" in frame.columns:
        try:
            score = -frame["rank"].to_numpy(dtype=np.float64)
        except (TypeError, ValueError):
            raise BayevalInputError("frame: column 'rank' is not numeric") from None
    else:
        raise BayevalInputError(f"frame: needs a column {s!r} or 'rank'")
    if not np.all(np.isfinite(score)):
        row = int(np.flatnonzero(~np.isfinite(score))[0])
        raise BayevalInputError(f"frame: row {row} has a score that is not a finite number")
    topic = frame[t].astype(str).to_numpy(dtype=object)
    docno = frame[d].astype(str).to_numpy(dtype=object)
    run_col = "run" if "run" in frame.columns else "name" if "name" in frame.columns else None
    if run_col is None:
        return RunSet((Run.from_arrays(str(name), topic, docno, score),))
    names = frame[run_col].astype(str).to_numpy(dtype=object)
    runs = []
    for n in pd.unique(names):
        keep = names == n
        runs.append(Run.from_arrays(str(n), topic[keep], docno[keep], score[keep]))
    return RunSet(tuple(runs))


def runs_to_frame(runs: Run | RunSet | Iterable[Run], convention: str = "bayeval") -> pd.DataFrame:
    """Rows ``run``, topic, document, score and rank (trec_eval's order) in the convention's column names."""
    _check_convention(convention)
    items = [runs] if isinstance(runs, Run) else list(runs)
    frame = pd.concat([r.to_frame() for r in items], ignore_index=True) if items else \
        pd.DataFrame({"topic": [], "docno": [], "rank": [], "score": [], "run": []})
    t, d, s = _RUN_COLS[convention]
    if convention == "pyterrier":
        frame["rank"] = frame["rank"] - 1
    frame = frame.rename(columns={"topic": t, "docno": d, "score": s})
    return frame[["run", t, d, s, "rank"]]


def qrels_from_frame(frame: pd.DataFrame, relevance_level: int = 1) -> Qrels:
    """Qrels from a frame in any of the conventions (module notes); ``iteration`` columns are ignored.

    Examples
    --------
    >>> df = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["d1", "d2"], "relevance": [2, 0]})
    >>> qrels_from_frame(df).num_rel("1")
    1
    """
    if not isinstance(frame, pd.DataFrame):
        raise BayevalInputError(f"frame: expected a pandas DataFrame, got {type(frame).__name__}")
    conv = _convention(frame.columns, _QREL_COLS, "frame")
    t, d, g = _QREL_COLS[conv]
    if g not in frame.columns:
        raise BayevalInputError(f"frame: needs a column {g!r} (the relevance grade)")
    cols = {t: "topic", d: "docno", g: "grade"}
    out = frame[list(cols)].rename(columns=cols)
    if "inclusion" in frame.columns:
        out["inclusion"] = frame["inclusion"]
    return Qrels.from_frame(out, relevance_level)


def qrels_to_frame(qrels: Qrels, convention: str = "bayeval") -> pd.DataFrame:
    """Rows topic, document, grade in the convention's column names."""
    _check_convention(convention)
    t, d, g = _QREL_COLS[convention]
    return qrels.to_frame().rename(columns={"topic": t, "docno": d, "grade": g})


def _records(records, fields: tuple[str, str, str], argument: str) -> pd.DataFrame:
    rows = []
    for i, rec in enumerate(records):
        try:
            if isinstance(rec, dict):
                rows.append(tuple(rec[f] for f in fields))
            else:
                rows.append(tuple(getattr(rec, f) for f in fields))
        except (KeyError, AttributeError):
            raise BayevalInputError(f"{argument}: record {i} lacks one of {', '.join(fields)}: {rec!r}") from None
    if not rows:
        raise BayevalInputError(f"{argument}: no records")
    return pd.DataFrame(rows, columns=list(fields))


def qrels_from_records(records: Iterable, relevance_level: int = 1) -> Qrels:
    """Qrels from records with ``query_id, doc_id, relevance`` (e.g. ir_datasets' ``dataset.qrels_iter()``).

    Examples
    --------
    >>> from collections import namedtuple
    >>> Q = namedtuple("TrecQrel", "query_id doc_id relevance iteration")
    >>> qrels_from_records([Q("1", "d1", 1, "0"), Q("1", "d2", 0, "0")]).num_judged("1")
    2
    """
    return qrels_from_frame(_records(records, _QREL_COLS["ir_measures"], "records"), relevance_level)


def runs_from_records(records: Iterable, name: str = "run") -> RunSet:
    """One run from records with ``query_id, doc_id, score`` (e.g. ir_datasets' ``scoreddocs_iter()``)."""
    return runs_from_frame(_records(records, _RUN_COLS["ir_measures"], "records"), name=name)
