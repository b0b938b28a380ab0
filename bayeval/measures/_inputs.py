"""Per-topic kernel inputs in trec_eval's terms: every system's ranking as relevance codes.

trec_eval (``form_res_rels.c``) turns each ranking into a list of relevance values: the judged grade
when the document is in the qrels with a grade >= 0, ``RELVALUE_NONPOOL`` (-1) when it is not in the
qrels, and ``RELVALUE_UNJUDGED`` (-2) when it is in the qrels with a *negative* grade ("in the pool but
not judged"). Its relevance counts (``rel_levels``) only count grades >= 0. :class:`TopicInputs` holds
the same codes as an ``(S, D)`` array so that every kernel sees exactly what trec_eval's measures see.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from bayeval.data.rankdata import TopicRanks

__all__ = ["NONPOOL", "UNJUDGED", "TopicInputs"]

NONPOOL = -1
"""Code of a document absent from the qrels (and of the padding past a list's end)."""
UNJUDGED = -2
"""Code of a document listed in the qrels with a negative grade: pooled but not judged."""


@dataclass(frozen=True, eq=False)
class TopicInputs:
    """One topic's rankings of all systems as trec_eval relevance codes.

    Attributes
    ----------
    codes : ndarray of int64, shape (S, D)
        Grade (>= 0) of the document at each rank, or :data:`NONPOOL` / :data:`UNJUDGED`;
        :data:`NONPOOL` past the end of a system's list.
    lengths : ndarray of int64, shape (S,)
        Documents in each list.
    relevance_level : int
        Minimum grade counted as relevant.
    judged_grades : ndarray of int64
        The grades (>= 0) of every document judged for the topic, retrieved or not.
    """

    codes: np.ndarray
    lengths: np.ndarray
    relevance_level: int
    judged_grades: np.ndarray

    @classmethod
    def from_topic(cls, tr: TopicRanks) -> TopicInputs:
        """Codes of ``tr``'s rankings (one gather over the ``(S, D)`` rank matrix)."""
        per_doc = np.where(tr.judged, np.where(tr.grades >= 0, tr.grades, UNJUDGED), NONPOOL).astype(np.int64)
        judged_grades = tr.grades[tr.judged & (tr.grades >= 0)].astype(np.int64)
        return cls(tr.ranked_values(per_doc, fill=NONPOOL), tr.lengths.astype(np.int64), int(tr.relevance_level),
                   judged_grades)

    @cached_property
    def condensed(self) -> TopicInputs:
        """The condensed lists (trec_eval ``-J``): documents with a code < 0 removed, order kept."""
        keep = self.codes >= 0
        order = np.argsort(~keep, axis=1, kind="stable")
        codes = np.where(np.take_along_axis(keep, order, axis=1), np.take_along_axis(self.codes, order, axis=1),
                         NONPOOL)
        return TopicInputs(codes, keep.sum(axis=1), self.relevance_level, self.judged_grades)

    @property
    def n_systems(self) -> int:
        return self.codes.shape[0]

    @cached_property
    def relevant(self) -> np.ndarray:
        """``(S, D)`` bool: judged with a grade >= the relevance level."""
        return self.codes >= self.relevance_level

    @cached_property
    def nonrelevant(self) -> np.ndarray:
        """``(S, D)`` bool: judged with a grade in ``[0, relevance_level)``."""
        return (self.codes >= 0) & (self.codes < self.relevance_level)

    @cached_property
    def judged(self) -> np.ndarray:
        """``(S, D)`` bool: judged with a grade >= 0."""
        return self.codes >= 0

    @cached_property
    def pool_unjudged(self) -> np.ndarray:
        """``(S, D)`` bool: in the qrels with a negative grade."""
        return self.codes == UNJUDGED

    @cached_property
    def gains(self) -> np.ndarray:
        """``(S, D)`` float: the grade as gain (trec_eval's default), 0 for anything else."""
        return np.maximum(self.codes, 0).astype(np.float64)

    @cached_property
    def num_rel(self) -> int:
        """R: judged documents of the topic with a grade >= the relevance level."""
        return int(np.count_nonzero(self.judged_grades >= self.relevance_level))

    @cached_property
    def num_nonrel(self) -> int:
        """N: judged documents of the topic with a grade in ``[0, relevance_level)``."""
        return int(self.judged_grades.size) - self.num_rel
