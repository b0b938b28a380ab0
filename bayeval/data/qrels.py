"""Relevance judgments (:class:`Qrels`), graded, per topic."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayeval.data.topics import TopicMapping, sort_topics
from bayeval.errors import BayevalInputError

__all__ = ["Qrels", "TopicJudgments", "pool_qrels"]


@dataclass(frozen=True, eq=False)
class TopicJudgments:
    """Judgments of one topic: parallel arrays of docnos and integer grades.

    ``inclusion`` holds the sampling (inclusion) probability of each judged document when the
    judgments come from a Million Query ``prels`` file, else ``None``.
    """

    docnos: np.ndarray
    grades: np.ndarray
    inclusion: np.ndarray | None = None

    def __post_init__(self) -> None:
        for arr in (self.docnos, self.grades, self.inclusion):
            if arr is not None:
                arr.flags.writeable = False

    def __len__(self) -> int:
        return len(self.docnos)


@dataclass(frozen=True, eq=False)
class Qrels(TopicMapping):
    """Graded relevance judgments for a set of topics.

    A document is *relevant* when its grade is at least ``relevance_level`` (trec_eval's ``-l``,
    default 1); every other judged document, negative grades included, is judged nonrelevant.

    Examples
    --------
    >>> q = Qrels.from_frame(pd.DataFrame({"topic": ["1", "1", "2"], "docno": ["a", "b", "a"],
    ...                                    "grade": [2, 0, -1]}))
    >>> q.num_rel("1"), q.num_rel("2"), q.num_judged("2")
    (1, 0, 1)
    """

    topic_judgments: Mapping[str, TopicJudgments]
    relevance_level: int = 1
    _topics: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if int(self.relevance_level) < 1:
            raise BayevalInputError("relevance_level: must be >= 1")
        object.__setattr__(self, "_topics", tuple(sort_topics(self.topic_judgments)))
        object.__setattr__(self, "topic_judgments", dict(self.topic_judgments))

    # construction -----------------------------------------------------------------
    @classmethod
    def from_frame(cls, frame: pd.DataFrame, relevance_level: int = 1) -> Qrels:
        """Build from columns ``topic``, ``docno``, ``grade`` (and optionally ``inclusion``).

        Raises
        ------
        BayevalInputError
            On a missing column, a non-integer grade or a document judged twice for a topic.
        """
        missing = {"topic", "docno", "grade"} - set(frame.columns)
        if missing:
            raise BayevalInputError(f"frame: missing column(s) {sorted(missing)}")
        f = pd.DataFrame({"topic": frame["topic"].astype(str), "docno": frame["docno"].astype(str)})
        try:
            grades = frame["grade"].to_numpy()
            if grades.dtype.kind == "f" and not np.all(np.mod(grades, 1) == 0):
                raise ValueError("fractional grade")
            f["grade"] = grades.astype(np.int64)
        except (TypeError, ValueError) as exc:
            raise BayevalInputError(f"frame: column 'grade' must hold integers ({exc})") from exc
        has_incl = "inclusion" in frame.columns
        if has_incl:
            f["inclusion"] = frame["inclusion"].to_numpy(dtype=np.float64)
        dup = f.duplicated(["topic", "docno"])
        if dup.any():
            row = f[dup].iloc[0]
            raise BayevalInputError(f"qrels: document {row.docno!r} judged twice for topic {row.topic!r}")
        out = {}
        for topic, g in f.groupby("topic", sort=False):
            out[str(topic)] = TopicJudgments(
                g["docno"].to_numpy(dtype=object), g["grade"].to_numpy(dtype=np.int64),
                g["inclusion"].to_numpy(dtype=np.float64) if has_incl else None)
        return cls(out, relevance_level)

    # mapping protocol ---------------------------------------------------------------
    def __getitem__(self, topic: str) -> TopicJudgments:
        return self.topic_judgments[str(topic)]

    # queries ------------------------------------------------------------------------
    def num_rel(self, topic: str) -> int:
        """Number of relevant documents (grade >= relevance_level); 0 for unknown topics."""
        tj = self.topic_judgments.get(str(topic))
        return 0 if tj is None else int(np.count_nonzero(tj.grades >= self.relevance_level))

    def num_judged(self, topic: str) -> int:
        tj = self.topic_judgments.get(str(topic))
        return 0 if tj is None else len(tj)

    def grade_of(self, topic: str, docno: str) -> int | None:
        """The grade of one document, ``None`` if unjudged."""
        tj = self.topic_judgments.get(str(topic))
        if tj is None:
            return None
        hit = np.flatnonzero(tj.docnos == docno)
        return int(tj.grades[hit[0]]) if len(hit) else None

    def with_relevance_level(self, level: int) -> Qrels:
        return Qrels(self.topic_judgments, level)

    def restrict(self, keep: Mapping[str, np.ndarray]) -> Qrels:
        """A copy keeping, per topic, only the judgments whose boolean mask is true."""
        out = {}
        for t, tj in self.topic_judgments.items():
            m = keep.get(t)
            if m is None:
                out[t] = tj
            else:
                m = np.asarray(m, dtype=bool)
                out[t] = TopicJudgments(tj.docnos[m], tj.grades[m],
                                        None if tj.inclusion is None else tj.inclusion[m])
        return Qrels(out, self.relevance_level)

    def to_frame(self) -> pd.DataFrame:
        """Columns ``topic, docno, grade`` (+ ``inclusion`` for prels), topics in natural order."""
        parts = []
        for t in self._topics:
            tj = self.topic_judgments[t]
            d = {"topic": t, "docno": tj.docnos, "grade": tj.grades}
            if tj.inclusion is not None:
                d["inclusion"] = tj.inclusion
            parts.append(pd.DataFrame(d))
        if not parts:
            return pd.DataFrame({"topic": [], "docno": [], "grade": []})
        return pd.concat(parts, ignore_index=True)

    def __repr__(self) -> str:
        n = sum(len(tj) for tj in self.topic_judgments.values())
        return f"Qrels(topics={len(self)}, judgments={n}, relevance_level={self.relevance_level})"


def pool_qrels(runs, qrels: Qrels, depth: int) -> Qrels:
    """The judgments of ``qrels`` restricted to a depth-``depth`` pool of ``runs`` (a RunSet or runs).

    Documents in the pool that ``qrels`` does not judge stay unjudged.
    """
    if not isinstance(depth, (int, np.integer)) or depth < 1:
        raise BayevalInputError(f"depth: must be a positive integer, got {depth!r}")
    keep = {}
    for t in qrels.topics:
        pool = set()
        for run in runs:
            pool.update(run.ranking(t)[:depth].tolist())
        tj = qrels[t]
        keep[t] = np.fromiter((d in pool for d in tj.docnos), dtype=bool, count=len(tj))
    restricted = qrels.restrict(keep)
    return Qrels({t: tj for t, tj in restricted.topic_judgments.items() if len(tj)}, qrels.relevance_level)
