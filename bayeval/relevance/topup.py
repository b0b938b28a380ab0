r"""A top-up: documents drawn at random from held-out runs' own unjudged documents, and their judgments.

Under pure reuse nothing the judgments give says how relevant a held-out run's own documents are
(docs/notes/calibration-record.md, revision 7); a few judged at random say it (50 per run: a within-trial correlation
of +0.72 with the true level on Robust 2003). :class:`TopUpSample` holds such a draw — which run drew each document, in
which round, with which inclusion probability, and its grade once judged — as the judging campaign
(:meth:`bayeval.selection.Campaign.draw_topup`) and the robustness study
(:func:`bayeval.selection.topup.draw_topup`) make it. A model given it
(:func:`bayeval.relevance.estimate_probabilities` ``topup=``) is fitted on the other judgments
(:meth:`TopUpSample.without`) and learns the held-out runs' levels from the judged draws
(:mod:`bayeval.relevance.reuse_prior`); the judged draws then count as judged documents like any other.

File format (``bayeval judge export --topup``; :func:`read_topup`, :meth:`TopUpSample.write`): one line per drawn
document, ``topic docno grade run round inclusion`` (grade −1: not judged yet), ``#`` comments allowed.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.data.qrels import Qrels
from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError, FileFormatError

__all__ = ["COLUMNS", "TopUpSample", "read_topup"]

#: The columns of a top-up's frame (and of its file, in this order).
COLUMNS = ("topic", "docno", "grade", "run", "round", "inclusion")


@dataclass(frozen=True, eq=False)
class TopUpSample:
    """A top-up draw (module docstring).

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per drawn document: ``topic, docno, grade`` (−1 while not judged), ``run`` (the run whose own
        documents it was drawn from), ``round`` (1, 2, … : the draws of one run and topic, in order) and
        ``inclusion`` (its probability of being drawn in that round, given the earlier rounds).
    relevance_level : int
        The least grade counted relevant.

    Examples
    --------
    >>> f = pd.DataFrame({"topic": ["1", "1"], "docno": ["d3", "d7"], "grade": [1, -1], "run": ["b", "b"],
    ...                   "round": [1, 2], "inclusion": [0.2, 0.25]})
    >>> s = TopUpSample(f)
    >>> s.runs, len(s.judged()), s.qrels().grade_of("1", "d3")
    (('b',), 1, 1)
    """

    frame: pd.DataFrame
    relevance_level: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.frame, pd.DataFrame):
            raise BayevalInputError(f"frame: expected a pandas DataFrame, got {type(self.frame).__name__}")
        missing = [c for c in COLUMNS if c not in self.frame.columns]
        if missing:
            raise BayevalInputError(f"frame: missing column(s) {missing}")
        f = self.frame[list(COLUMNS)].copy()
        f["topic"], f["docno"], f["run"] = f["topic"].astype(str), f["docno"].astype(str), f["run"].astype(str)
        f["grade"], f["round"] = f["grade"].astype(np.int64), f["round"].astype(np.int64)
        f["inclusion"] = f["inclusion"].astype(np.float64)
        bad = ~((f["inclusion"] > 0) & (f["inclusion"] <= 1))
        if bad.any():
            raise BayevalInputError(f"frame: inclusion probability {f['inclusion'][bad].iloc[0]!r} of document "
                                    f"{f['docno'][bad].iloc[0]!r} is not in (0, 1]")
        if f.duplicated(["topic", "docno"]).any():
            d = f[f.duplicated(["topic", "docno"])].iloc[0]
            raise BayevalInputError(f"frame: document {d.docno!r} of topic {d.topic!r} is drawn twice")
        object.__setattr__(self, "frame", f.reset_index(drop=True))
        if isinstance(self.relevance_level, bool) or not isinstance(self.relevance_level, (int, np.integer)):
            raise BayevalInputError(f"relevance_level: an integer, got {self.relevance_level!r}")

    @property
    def runs(self) -> tuple[str, ...]:
        """The runs topped up, in order of appearance."""
        return tuple(dict.fromkeys(self.frame["run"]))

    def judged(self) -> pd.DataFrame:
        """The rows whose document is judged."""
        return self.frame[self.frame["grade"] >= 0]

    def qrels(self) -> Qrels:
        """The judged draws as qrels."""
        j = self.judged()
        return Qrels.from_frame(pd.DataFrame({"topic": j["topic"], "docno": j["docno"], "grade": j["grade"]}),
                                relevance_level=int(self.relevance_level))

    def positions(self, data: RankData) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per topic of ``data``: (indices of the judged draws among its documents, their relevance 0/1 by the
        top-up's grades). Draws the data do not hold are left out."""
        j = self.judged()
        by_topic = {t: (g["docno"].to_numpy(), g["grade"].to_numpy()) for t, g in j.groupby("topic")}
        out = []
        for tr in data:
            docs, grades = by_topic.get(tr.topic, (np.zeros(0, dtype=object), np.zeros(0, np.int64)))
            pos = pd.Index(tr.docnos).get_indexer(docs)
            keep = pos >= 0
            out.append((pos[keep].astype(np.int64), (grades[keep] >= int(self.relevance_level)).astype(np.float64)))
        return out

    def check(self, data: RankData) -> None:
        """Raise unless every judged draw is judged in ``data`` with the same relevance."""
        for tr, (idx, y) in zip(data, self.positions(data), strict=True):
            bad = ~np.asarray(tr.judged)[idx] | (np.asarray(tr.relevant)[idx] != (y > 0))
            if bad.any():
                d = str(tr.docnos[idx[bad][0]])
                what = "not judged" if not tr.judged[idx[bad][0]] else "judged otherwise"
                raise BayevalInputError(f"topup: document {d!r} of topic {tr.topic!r} is judged in the top-up "
                                        f"and {what} in the judgments (give the campaign's export of both)")

    def without(self, data: RankData) -> RankData:
        """``data`` with the judgments of this top-up's judged draws removed (what a model is fitted on)."""
        per = []
        for tr, (idx, _) in zip(data, self.positions(data), strict=True):
            if len(idx):
                judged = np.array(tr.judged, copy=True)
                judged[idx] = False
                grades = np.array(tr.grades, copy=True)
                grades[idx] = 0
                tr = dataclasses.replace(tr, judged=judged, grades=grades)
            per.append(tr)
        return RankData(data.systems, data.topics, tuple(per), data.depth)

    def summary(self) -> pd.DataFrame:
        """Per run: documents ``drawn``, ``judged``, ``relevant`` (grade ≥ the relevance level)."""
        f = self.frame.assign(judged=self.frame["grade"] >= 0,
                              relevant=self.frame["grade"] >= int(self.relevance_level))
        return (f.groupby("run", sort=False).agg(drawn=("docno", "size"), judged=("judged", "sum"),
                                                   relevant=("relevant", "sum")).reset_index())

    def write(self, path) -> int:
        """Write the file of the module docstring; returns the line count."""
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("# topic docno grade run round inclusion (bayeval top-up; grade -1: not judged yet)\n")
            for r in self.frame.itertuples(index=False):
                fh.write(f"{r.topic} {r.docno} {int(r.grade)} {r.run} {int(r.round)} {r.inclusion:.10g}\n")
        return len(self.frame)


def read_topup(path, *, relevance_level: int = 1) -> TopUpSample:
    """Read a top-up file (module docstring), naming the file and line of a malformed line."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise BayevalInputError(f"topup: {path} does not exist")
    rows = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split()
            if len(parts) != 6:
                raise FileFormatError(path, n, f"expected 6 fields 'topic docno grade run round inclusion', "
                                               f"got {len(parts)}")
            try:
                grade, rnd, pi = int(parts[2]), int(parts[4]), float(parts[5])
            except ValueError:
                raise FileFormatError(path, n, "grade and round must be integers, inclusion a number") from None
            if not 0 < pi <= 1:
                raise FileFormatError(path, n, f"inclusion probability {pi!r} is not in (0, 1]")
            rows.append((parts[0], parts[1], grade, parts[3], rnd, pi))
    if not rows:
        raise BayevalInputError(f"topup: {path} holds no drawn document")
    try:
        return TopUpSample(pd.DataFrame(rows, columns=list(COLUMNS)), relevance_level)
    except BayevalInputError as exc:
        raise BayevalInputError(f"topup: {path}: {exc.reason}") from None
