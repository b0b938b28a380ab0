"""Dense rank arrays for collections of thousands of topics (:class:`RankCube`).

:class:`~bayeval.data.rankdata.RankData` keeps one :class:`~bayeval.data.rankdata.TopicRanks` object
per topic, which suits 50 deeply judged topics. A dev set of 7,000 queries × depth 1,000 (MS MARCO)
wants the same information as a few dense arrays, so that measures are computed over all topics at
once with numpy and no Python loop over topics. :class:`RankCube` holds, for ``S`` systems, ``T``
topics and depth ``D``:

* ``docs[s, t, r]`` — an integer code of the document system ``s`` ranks at ``r + 1`` for topic
  ``t`` (``-1`` past the end of its list). Codes are shared by all systems and topics, so two
  systems retrieve the same document of a topic when their codes are equal; the text of document
  ``c`` is ``docnos[c]``. With ``code_depth``, unjudged documents below that rank are all
  :data:`NOT_CODED` (measures need only the judged ones).
* ``grades`` and ``judged`` of the same shape — each cell's judgment.
* the judged documents of every topic (``judged_topic``, ``judged_grade``), retrieved or not, for R
  and the ideal nDCG ranking.

Runs are coded one at a time (:class:`RunCoder`; from files: :func:`bayeval.io.read_rank_cube`): a run's
text is dropped as soon as its documents are coded, so memory is the arrays above plus one run. The topics
and their order are those of :meth:`RankData.build` (topics with judgments and results from at least one
run, natural order), and the rank order is trec_eval's, the readers' (:mod:`bayeval.io.runs`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from bayeval.data.interning import StringCodes
from bayeval.data.qrels import Qrels
from bayeval.data.run import Run
from bayeval.errors import BayevalInputError

__all__ = ["NOT_CODED", "CodedRun", "RankCube", "RunCoder"]

NOT_CODED = -2
"""Code of an unjudged document ranked below a cube's ``code_depth``."""


@dataclass(frozen=True, eq=False)
class RankCube:
    """Ranks of ``S`` systems on ``T`` topics to depth ``D`` as dense arrays (module notes).

    Attributes
    ----------
    systems : tuple of str
    topics : tuple of str
    docs : ndarray of int32, shape (S, T, D)
        Document codes in rank order; ``-1`` past the end of a list.
    lengths : ndarray of int32, shape (S, T)
        Documents retrieved (after depth truncation).
    has_results : ndarray of bool, shape (S, T)
        Whether the run has any result for the topic.
    judged : ndarray of bool, shape (S, T, D)
    grades : ndarray of int16, shape (S, T, D)
        Judged grade of each cell; 0 for unjudged cells.
    judged_topic : ndarray of int32, shape (J,)
        Topic index of every judgment of the kept topics (retrieved or not).
    judged_grade : ndarray of int64, shape (J,)
    judged_doc : ndarray of int32, shape (J,)
        Document code of every judgment.
    docnos : pyarrow.StringArray
        Text of each document code.
    relevance_level : int
    depth : int or None
        The depth the runs were cut to (``None``: whole lists).
    code_depth : int or None
        Ranks below which unjudged documents are not told apart (``docs`` is :data:`NOT_CODED` there).
    """

    systems: tuple[str, ...]
    topics: tuple[str, ...]
    docs: np.ndarray
    lengths: np.ndarray
    has_results: np.ndarray
    judged: np.ndarray
    grades: np.ndarray
    judged_topic: np.ndarray
    judged_grade: np.ndarray
    judged_doc: np.ndarray
    docnos: pa.Array
    relevance_level: int = 1
    depth: int | None = None
    code_depth: int | None = None

    def __post_init__(self) -> None:
        for arr in (self.docs, self.lengths, self.has_results, self.judged, self.grades, self.judged_topic,
                    self.judged_grade, self.judged_doc):
            arr.flags.writeable = False

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.docs.shape

    @property
    def relevant(self) -> np.ndarray:
        """``(S, T, D)``: judged with a grade at least the relevance level."""
        return self.judged & (self.grades >= self.relevance_level)

    @property
    def num_rel(self) -> np.ndarray:
        """``(T,)``: relevant judged documents of each topic, retrieved or not (trec_eval's R)."""
        rel = self.judged_grade >= self.relevance_level
        return np.bincount(self.judged_topic[rel], minlength=len(self.topics)).astype(np.int64)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_runs(cls, runs: Iterable[Run], qrels: Qrels, *, depth: int | None = None,
                  code_depth: int | None = None) -> RankCube:
        """Code ``runs`` (an iterable, consumed once: a generator keeps one run in memory) against ``qrels``.

        Parameters
        ----------
        runs : iterable of Run
        qrels : Qrels
        depth : int, optional
            Keep each run's top ``depth`` documents (``None``: everything).
        code_depth : int, optional
            Give unjudged documents their own code only in the top ``code_depth`` ranks; below, an unjudged
            document is :data:`NOT_CODED` (``-2``) and a judged one keeps its code. Measures need no more;
            expected measures that tell shared unjudged documents apart (RR@k) need ``code_depth >= k``.
            Default: every rank.

        Reading files: :func:`bayeval.io.read_rank_cube`.
        """
        coder = RunCoder(qrels, depth=depth, code_depth=code_depth)
        return coder.cube([coder.code(run) for run in runs])


@dataclass(frozen=True, eq=False)
class CodedRun:
    """One run coded against a qrels (:meth:`RunCoder.code`): a row for every topic of the qrels.

    Attributes
    ----------
    name : str
    docs : ndarray of int32, shape (Tq, w)
        Document codes in rank order (``-1`` past the end of a list), w the run's longest kept list.
    lengths : ndarray of int32, shape (Tq,)
    has_results : ndarray of bool, shape (Tq,)
    judged : ndarray of bool, shape (Tq, w)
    grades : ndarray of int16, shape (Tq, w)
    """

    name: str
    docs: np.ndarray
    lengths: np.ndarray
    has_results: np.ndarray
    judged: np.ndarray
    grades: np.ndarray


class RunCoder:
    """Codes runs against one qrels, one run at a time: the qrels' documents are coded once, and each run
    becomes a :class:`CodedRun` whose text can be dropped. :meth:`cube` stacks coded runs into a
    :class:`RankCube`; a caller that needs one run at a time (trec_eval's measures of each run,
    :func:`bayeval.measures.cube.evaluate_runs`) keeps only the run at hand, so memory does not grow with
    the number of runs.

    Parameters
    ----------
    qrels : Qrels
    depth, code_depth : int, optional
        As :meth:`RankCube.from_runs`.

    Attributes
    ----------
    topics : tuple of str
        The qrels' topics, the rows of every :class:`CodedRun`.
    judged_topic, judged_grade, judged_doc : ndarray
        Every judgment: its row, grade and document code.
    relevance_level : int
    """

    def __init__(self, qrels: Qrels, *, depth: int | None = None, code_depth: int | None = None) -> None:
        if code_depth is not None and (not isinstance(code_depth, (int, np.integer)) or code_depth < 0):
            raise BayevalInputError(f"code_depth: must be a non-negative integer, got {code_depth!r}")
        if depth is not None and (not isinstance(depth, (int, np.integer)) or depth < 1):
            raise BayevalInputError(f"depth: must be a positive integer, got {depth!r}")
        if not isinstance(qrels, Qrels):
            raise BayevalInputError(f"qrels: expected a Qrels, got {type(qrels).__name__}")
        self.depth, self.code_depth = depth, code_depth
        self.relevance_level = int(qrels.relevance_level)
        self.topics = tuple(qrels.topics)
        self._t_index = {t: i for i, t in enumerate(self.topics)}
        jt, jd, jg = [], [], []
        for i, t in enumerate(self.topics):
            tj = qrels.topic_judgments[t]
            jt.append(np.full(len(tj), i, dtype=np.int32))
            jd.append(np.asarray(tj.docnos, dtype=object))
            jg.append(np.asarray(tj.grades, dtype=np.int64))
        self.judged_topic = np.concatenate(jt) if jt else np.zeros(0, np.int32)
        self.judged_grade = np.concatenate(jg) if jg else np.zeros(0, np.int64)
        self._codes = StringCodes()  # judged documents first: codes < n_qdocs
        docnos = np.concatenate(jd) if jd else np.zeros(0, object)
        self.judged_doc = self._codes.code(pa.array(docnos, type=pa.string())).astype(np.int32)
        self._n_qdocs = len(self._codes)
        j_key = self.judged_topic.astype(np.int64) * max(self._n_qdocs, 1) + self.judged_doc
        self._j_order = np.argsort(j_key)
        self._j_key_sorted = j_key[self._j_order]

    def code(self, run: Run) -> CodedRun:
        """``run``'s lists of the qrels' topics, cut to ``depth``, coded straight into their rows, with the
        judgment of every cell."""
        if not isinstance(run, Run):
            raise BayevalInputError(f"runs: expected Run objects, got {type(run).__name__}")
        T, n_qdocs = len(self.topics), self._n_qdocs
        counts = np.diff(run.offsets)
        tix = np.array([self._t_index.get(t, -1) for t in run.topics], dtype=np.int64)
        ok = tix >= 0
        kept = counts[ok] if self.depth is None else np.minimum(counts[ok], self.depth)
        width = int(kept.max()) if len(kept) else 0
        mat = np.full((T, width), -1, dtype=np.int32)
        # judged documents (codes < n_qdocs) are told apart everywhere, unjudged ones above code_depth
        self._codes.code_lists(run.docno_array, run.offsets[:-1], tix, mat, code_depth=self.code_depth,
                               known=n_qdocs, other=NOT_CODED)
        if len(self._codes) >= 2**31:
            raise BayevalInputError("runs: more than 2**31 distinct documents")
        length = np.zeros(T, dtype=np.int32)
        length[tix[ok]] = kept
        has = np.zeros(T, dtype=bool)
        has[tix[ok]] = True
        # judgments of the coded cells
        g = np.zeros(mat.shape, dtype=np.int16)
        jmask = np.zeros(mat.shape, dtype=bool)
        cr, cp = np.nonzero((mat >= 0) & (mat < n_qdocs))
        if len(cr) and len(self._j_key_sorted):
            key = cr * max(n_qdocs, 1) + mat[cr, cp]
            at = np.minimum(np.searchsorted(self._j_key_sorted, key), len(self._j_key_sorted) - 1)
            hit = self._j_key_sorted[at] == key
            g[cr[hit], cp[hit]] = self.judged_grade[self._j_order[at[hit]]]
            jmask[cr[hit], cp[hit]] = True
        return CodedRun(run.name, mat, length, has, jmask, g)

    def cube(self, coded: list[CodedRun]) -> RankCube:
        """The :class:`RankCube` of ``coded`` (emptied as it is stacked): the topics some run has results for."""
        names = [c.name for c in coded]
        if not names:
            raise BayevalInputError("runs: at least one run is needed")
        if len(set(names)) != len(names):
            raise BayevalInputError("runs: run names must be unique")
        has = np.stack([c.has_results for c in coded])
        keep_t = np.flatnonzero(has.any(axis=0))
        if not len(keep_t):
            raise BayevalInputError("topics: the runs and the qrels have no topic in common")
        width = max(c.docs.shape[1] for c in coded)
        docs = np.full((len(names), len(keep_t), width), -1, dtype=np.int32)
        grades = np.zeros(docs.shape, dtype=np.int16)
        judged = np.zeros(docs.shape, dtype=bool)
        lengths = np.stack([c.lengths for c in coded])[:, keep_t]
        for s in range(len(names)):
            c = coded[s]
            w = c.docs.shape[1]
            docs[s, :, :w] = c.docs[keep_t]
            grades[s, :, :w] = c.grades[keep_t]
            judged[s, :, :w] = c.judged[keep_t]
            coded[s] = None  # free as we go
        new_index = np.full(len(self.topics), -1, dtype=np.int64)
        new_index[keep_t] = np.arange(len(keep_t))
        jkeep = new_index[self.judged_topic] >= 0
        return RankCube(tuple(names), tuple(self.topics[i] for i in keep_t), docs, lengths, has[:, keep_t], judged,
                        grades, new_index[self.judged_topic[jkeep]].astype(np.int32), self.judged_grade[jkeep],
                        self.judged_doc[jkeep], self._codes.strings(), self.relevance_level, self.depth,
                        self.code_depth)
