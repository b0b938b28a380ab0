"""Kernel inputs in trec_eval's terms: rankings as relevance codes, one row per ranking.

trec_eval (``form_res_rels.c``) turns each ranking into a list of relevance values: the judged grade
when the document is in the qrels with a grade >= 0, ``RELVALUE_NONPOOL`` (-1) when it is not in the
qrels, and ``RELVALUE_UNJUDGED`` (-2) when it is in the qrels with a *negative* grade ("in the pool but
not judged"). Its relevance counts (``rel_levels``) only count grades >= 0. :class:`RankingInputs` holds
the same codes as an ``(R, D)`` array so that every kernel sees exactly what trec_eval's measures see.

A row is one ranking: every system of one topic (:meth:`RankingInputs.from_topic`, what
:func:`~bayeval.measures.evaluate` walks) or every topic of one system (:meth:`RankingInputs.from_cube`, the
rank cube's layout at thousands of topics). The kernels score each row on its own, in rank order, so a
ranking gets the same double whichever layout holds it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from bayeval.data.rankdata import TopicRanks
from bayeval.measures._summation import sequential_sum

__all__ = ["NONPOOL", "UNJUDGED", "RankingInputs", "RowJudgments", "codes_of"]

NONPOOL = -1
"""Code of a document absent from the qrels (and of the padding past a list's end)."""
UNJUDGED = -2
"""Code of a document listed in the qrels with a negative grade: pooled but not judged."""


def codes_of(judged: np.ndarray, grades: np.ndarray) -> np.ndarray:
    """trec_eval's code of each cell from its judged flag and grade (int64, same shape)."""
    return np.where(judged, np.where(grades >= 0, grades, UNJUDGED), NONPOOL).astype(np.int64)


@dataclass(frozen=True, eq=False)
class RowJudgments:
    """The judgments of the topic each row of :class:`RankingInputs` ranks: what R, N and the ideal nDCG
    ranking count, computed once per relevance level and cutoff and shared by every run on the same rows.

    Attributes
    ----------
    grades : ndarray of int64, shape (J,)
        The grades (>= 0) of every judged document, retrieved or not.
    row : ndarray of int64, shape (J,), or None
        The row whose topic each grade belongs to; ``None``: every row ranks the same topic.
    n_rows : int
    """

    grades: np.ndarray
    row: np.ndarray | None
    n_rows: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "_cache", {})

    def _cached(self, key, compute):
        cache = self._cache  # type: ignore[attr-defined]
        if key not in cache:
            cache[key] = compute()
        return cache[key]

    def _per_row(self, mask: np.ndarray) -> np.ndarray:
        if self.row is None:
            return np.full(self.n_rows, int(np.count_nonzero(mask)), dtype=np.int64)
        return np.bincount(self.row[mask], minlength=self.n_rows).astype(np.int64)

    def num_rel(self, level: int) -> np.ndarray:
        """``(R,)`` judged documents of each row's topic with a grade >= ``level``."""
        return self._cached(("rel", level), lambda: self._per_row(self.grades >= level))

    def num_nonrel(self, level: int) -> np.ndarray:
        """``(R,)`` judged documents of each row's topic with a grade in ``[0, level)``."""
        return self._cached(("nonrel", level), lambda: self._per_row(self.grades < level))

    def ideal_dcg(self, cutoff: int | None) -> np.ndarray:
        r"""``(R,)`` the DCG of each row's topic's positive grades in decreasing order, to ``cutoff``:
        :math:`\sum_{r\le k} g^*_r/\log_2(r+1)`, added in rank order (trec_eval's arithmetic; the zeros that pad
        a shorter ideal list add nothing)."""
        return self._cached(("idcg", cutoff), lambda: self._ideal_dcg(cutoff))

    def _ideal_dcg(self, cutoff: int | None) -> np.ndarray:
        positive = self.grades > 0
        gains = self.grades[positive].astype(np.float64)
        row = np.zeros(len(gains), dtype=np.int64) if self.row is None else self.row[positive]
        order = np.lexsort((-gains, row))
        row, gains = row[order], gains[order]
        pos = np.arange(len(row)) - np.searchsorted(row, row, side="left")  # rank within the row's ideal list
        width = int(pos.max()) + 1 if len(pos) else 0
        width = width if cutoff is None else min(width, int(cutoff))
        table = np.zeros((1 if self.row is None else self.n_rows, width))
        keep = pos < width
        table[row[keep], pos[keep]] = gains[keep]
        idcg = sequential_sum(table / np.log2(np.arange(2, width + 2, dtype=np.float64)))
        return np.broadcast_to(idcg, (self.n_rows,)) if self.row is None else idcg


@dataclass(frozen=True, eq=False)
class RankingInputs:
    """Rankings as trec_eval relevance codes, one row each, and the judgments of each row's topic.

    Attributes
    ----------
    codes : ndarray of int64, shape (R, D)
        Grade (>= 0) of the document at each rank, or :data:`NONPOOL` / :data:`UNJUDGED`;
        :data:`NONPOOL` past the end of a list.
    lengths : ndarray of int64, shape (R,)
        Documents in each list.
    relevance_level : int
        Minimum grade counted as relevant.
    judgments : RowJudgments
        The judgments of each row's topic.
    """

    codes: np.ndarray
    lengths: np.ndarray
    relevance_level: int
    judgments: RowJudgments

    @classmethod
    def from_topic(cls, tr: TopicRanks) -> RankingInputs:
        """Every system's ranking of the topic ``tr`` (one gather over the ``(S, D)`` rank matrix)."""
        per_doc = codes_of(tr.judged, tr.grades)
        judged_grades = tr.grades[tr.judged & (tr.grades >= 0)].astype(np.int64)
        codes = tr.ranked_values(per_doc, fill=NONPOOL)
        return cls(codes, tr.lengths.astype(np.int64), int(tr.relevance_level),
                   RowJudgments(judged_grades, None, codes.shape[0]))

    @classmethod
    def from_cube(cls, judged: np.ndarray, grades: np.ndarray, lengths: np.ndarray, judgments: RowJudgments,
                  relevance_level: int) -> RankingInputs:
        """Every topic's ranking by one system: the ``(T, D)`` cells of a rank cube
        (:class:`~bayeval.data.rankcube.RankCube`) and the judgments of the T topics
        (:meth:`topic_judgments`)."""
        return cls(codes_of(judged, grades), np.asarray(lengths, dtype=np.int64), int(relevance_level), judgments)

    @staticmethod
    def topic_judgments(judged_topic: np.ndarray, judged_grade: np.ndarray, n_topics: int) -> RowJudgments:
        """The judgments of a cube's topics (row t = topic t), negative grades (pooled, unjudged) left out."""
        keep = np.asarray(judged_grade) >= 0
        return RowJudgments(np.asarray(judged_grade, dtype=np.int64)[keep],
                            np.asarray(judged_topic, dtype=np.int64)[keep], int(n_topics))

    def at_level(self, level: int | None) -> RankingInputs:
        """The same rankings with another relevance level (``None``: this one)."""
        if level is None or level == self.relevance_level:
            return self
        return dataclasses.replace(self, relevance_level=int(level))

    @cached_property
    def condensed(self) -> RankingInputs:
        """The condensed lists (trec_eval ``-J``): documents with a code < 0 removed, order kept."""
        keep = self.codes >= 0
        order = np.argsort(~keep, axis=1, kind="stable")
        codes = np.where(np.take_along_axis(keep, order, axis=1), np.take_along_axis(self.codes, order, axis=1),
                         NONPOOL)
        return dataclasses.replace(self, codes=codes, lengths=keep.sum(axis=1))

    @cached_property
    def relevant(self) -> np.ndarray:
        """``(R, D)`` bool: judged with a grade >= the relevance level."""
        return self.codes >= self.relevance_level

    @cached_property
    def nonrelevant(self) -> np.ndarray:
        """``(R, D)`` bool: judged with a grade in ``[0, relevance_level)``."""
        return (self.codes >= 0) & (self.codes < self.relevance_level)

    @cached_property
    def judged(self) -> np.ndarray:
        """``(R, D)`` bool: judged with a grade >= 0."""
        return self.codes >= 0

    @cached_property
    def pool_unjudged(self) -> np.ndarray:
        """``(R, D)`` bool: in the qrels with a negative grade."""
        return self.codes == UNJUDGED

    @cached_property
    def gains(self) -> np.ndarray:
        """``(R, D)`` float: the grade as gain (trec_eval's default), 0 for anything else."""
        return np.maximum(self.codes, 0).astype(np.float64)

    @property
    def num_rel(self) -> np.ndarray:
        """``(R,)`` R of each row's topic: judged documents with a grade >= the relevance level."""
        return self.judgments.num_rel(self.relevance_level)

    @property
    def num_nonrel(self) -> np.ndarray:
        """``(R,)`` N of each row's topic: judged documents with a grade in ``[0, relevance_level)``."""
        return self.judgments.num_nonrel(self.relevance_level)

    def ideal_dcg(self, cutoff: int | None) -> np.ndarray:
        """``(R,)`` the ideal DCG of each row's topic to ``cutoff`` (:meth:`RowJudgments.ideal_dcg`)."""
        return self.judgments.ideal_dcg(cutoff)
