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

Runs are read one file at a time (:meth:`RankCube.from_files`): a file's text is dropped as soon as its
documents are coded, so memory is the arrays above plus one run. The topics and their order are those
of :meth:`RankData.build` (topics with judgments and results from at least one run, natural order), and
the rank order is trec_eval's, the readers' (:mod:`bayeval.io.runs`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from bayeval.data.interning import StringCodes
from bayeval.data.qrels import Qrels
from bayeval.data.run import Run
from bayeval.errors import BayevalInputError

__all__ = ["NOT_CODED", "RankCube"]

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
        """
        if code_depth is not None and (not isinstance(code_depth, (int, np.integer)) or code_depth < 0):
            raise BayevalInputError(f"code_depth: must be a non-negative integer, got {code_depth!r}")
        if depth is not None and (not isinstance(depth, (int, np.integer)) or depth < 1):
            raise BayevalInputError(f"depth: must be a positive integer, got {depth!r}")
        q_topics = list(qrels.topics)
        t_index = {t: i for i, t in enumerate(q_topics)}
        jt, jd, jg = [], [], []
        for i, t in enumerate(q_topics):
            tj = qrels.topic_judgments[t]
            jt.append(np.full(len(tj), i, dtype=np.int32))
            jd.append(np.asarray(tj.docnos, dtype=object))
            jg.append(np.asarray(tj.grades, dtype=np.int64))
        j_topic = np.concatenate(jt) if jt else np.zeros(0, np.int32)
        j_grade = np.concatenate(jg) if jg else np.zeros(0, np.int64)
        codes_of = StringCodes()  # judged documents first: codes < n_qdocs
        j_doc = codes_of.code(pa.array(np.concatenate(jd) if jd else np.zeros(0, object), type=pa.string()))
        j_doc = j_doc.astype(np.int32)
        n_qdocs = len(codes_of)
        j_key = j_topic.astype(np.int64) * max(n_qdocs, 1) + j_doc
        j_order = np.argsort(j_key)
        j_key_sorted = j_key[j_order]

        names, mats, lens, hass, grades_l, judged_l = [], [], [], [], [], []
        for run in runs:
            if not isinstance(run, Run):
                raise BayevalInputError(f"runs: expected Run objects, got {type(run).__name__}")
            names.append(run.name)
            # each list of a topic the qrels know, cut to depth, coded straight into its row
            counts = np.diff(run.offsets)
            tix = np.array([t_index.get(t, -1) for t in run.topics], dtype=np.int64)
            ok = tix >= 0
            kept = counts[ok] if depth is None else np.minimum(counts[ok], depth)
            width = int(kept.max()) if len(kept) else 0
            mat = np.full((len(q_topics), width), -1, dtype=np.int32)
            # judged documents (codes < n_qdocs) are told apart everywhere, unjudged ones above code_depth
            codes_of.code_lists(run.docno_array, run.offsets[:-1], tix, mat, code_depth=code_depth, known=n_qdocs,
                                other=NOT_CODED)
            if len(codes_of) >= 2**31:
                raise BayevalInputError("runs: more than 2**31 distinct documents")
            length = np.zeros(len(q_topics), dtype=np.int32)
            length[tix[ok]] = kept
            has = np.zeros(len(q_topics), dtype=bool)
            has[tix[ok]] = True
            # judgments of the coded cells
            g = np.zeros(mat.shape, dtype=np.int16)
            jmask = np.zeros(mat.shape, dtype=bool)
            cr, cp = np.nonzero((mat >= 0) & (mat < n_qdocs))
            if len(cr) and len(j_key_sorted):
                key = cr * max(n_qdocs, 1) + mat[cr, cp]
                at = np.minimum(np.searchsorted(j_key_sorted, key), len(j_key_sorted) - 1)
                hit = j_key_sorted[at] == key
                g[cr[hit], cp[hit]] = j_grade[j_order[at[hit]]]
                jmask[cr[hit], cp[hit]] = True
            mats.append(mat)
            lens.append(length)
            hass.append(has)
            grades_l.append(g)
            judged_l.append(jmask)
        if not names:
            raise BayevalInputError("runs: at least one run is needed")
        if len(set(names)) != len(names):
            raise BayevalInputError("runs: run names must be unique")
        has = np.stack(hass)
        keep_t = np.flatnonzero(has.any(axis=0))
        if not len(keep_t):
            raise BayevalInputError("topics: the runs and the qrels have no topic in common")
        width = max(m.shape[1] for m in mats)
        docs = np.full((len(names), len(keep_t), width), -1, dtype=np.int32)
        grades = np.zeros(docs.shape, dtype=np.int16)
        judged = np.zeros(docs.shape, dtype=bool)
        for s in range(len(names)):
            w = mats[s].shape[1]
            docs[s, :, :w] = mats[s][keep_t]
            grades[s, :, :w] = grades_l[s][keep_t]
            judged[s, :, :w] = judged_l[s][keep_t]
            mats[s] = grades_l[s] = judged_l[s] = None  # free as we go
        new_index = np.full(len(q_topics), -1, dtype=np.int64)
        new_index[keep_t] = np.arange(len(keep_t))
        jkeep = new_index[j_topic] >= 0
        return cls(tuple(names), tuple(q_topics[i] for i in keep_t), docs, np.stack(lens)[:, keep_t],
                   has[:, keep_t], judged, grades, new_index[j_topic[jkeep]].astype(np.int32), j_grade[jkeep],
                   j_doc[jkeep], codes_of.strings(), int(qrels.relevance_level), depth, code_depth)

    @classmethod
    def from_files(cls, paths: Sequence[str | os.PathLike], qrels: Qrels, *, depth: int | None = None,
                   code_depth: int | None = None, run_names: str = "file", prefetch: bool = True) -> RankCube:
        """Read run files one at a time (:func:`bayeval.io.runs.read_run`) and code them (:meth:`from_runs`).

        ``run_names``: ``"file"`` names each run by its file (:func:`bayeval.io.runs.run_name_from_file`),
        ``"tag"`` by its TREC tag. ``prefetch``: read the next file on a second thread while this one is coded
        (the readers' work is in Arrow and numba, outside the GIL; memory: one more run's text).
        """
        from concurrent.futures import ThreadPoolExecutor

        from bayeval.io.runs import read_run, run_name_from_file

        if run_names not in ("file", "tag"):
            raise BayevalInputError(f"run_names: expected 'file' or 'tag', got {run_names!r}")
        paths = list(paths)

        def read(p):
            return read_run(p, run_name_from_file(p) if run_names == "file" else None)

        def runs():
            if not prefetch:
                yield from (read(p) for p in paths)
                return
            with ThreadPoolExecutor(max_workers=1) as pool:
                ahead = pool.submit(read, paths[0]) if paths else None
                for i in range(len(paths)):
                    run = ahead.result()
                    ahead = pool.submit(read, paths[i + 1]) if i + 1 < len(paths) else None
                    yield run

        return cls.from_runs(runs(), qrels, depth=depth, code_depth=code_depth)
