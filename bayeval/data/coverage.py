r"""What the judgments cover of each ranking: judged prefixes, judged shares, contributing runs.

Every question here is asked of one topic's :class:`~bayeval.data.rankdata.TopicRanks` (or of a whole
:class:`~bayeval.data.rankdata.RankData`) and answered from its ranks and its judged mask alone, so the
relevance models (:mod:`bayeval.relevance`) and the expected measures (:mod:`bayeval.expected`) ask them of one
module below both.

- :func:`complete_prefix`: per run, the depth :math:`c_s` of its completely judged prefix, ranks
  :math:`1..c_s` all judged (the rank-coefficient model's observed cells, the judged depth of a topic);
- :func:`run_coverage`: per run, the judged share of its top ``depth`` documents averaged over the topics;
- :func:`contributing_runs`: a set C of runs that together retrieve every judged document, the most densely
  judged first (the runs that account for the judgments: a pool's runs, or the runs a selection chose from);
- :func:`retrieved_by`, :func:`target_documents`, :func:`beyond_judged_runs`: documents retrieved by some of
  given runs; unjudged and retrieved by none of C; unjudged and retrieved by no run whose top ``depth`` is
  completely judged.

Examples
--------
>>> from bayeval.data.rankdata import RankData
>>> from bayeval.synthetic import make_collection
>>> col = make_collection(n_topics=2, n_systems=4, n_docs=60, depth=20, judged_depth=5, seed=3)
>>> data = RankData.build(col.runs, col.judgments)
>>> bool((complete_prefix(data[0]) >= 5).all())  # a depth-5 pool judges every run's top 5
True
>>> float(run_coverage(data, depth=5).min())
1.0
"""

from __future__ import annotations

import numpy as np

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError

__all__ = [
    "beyond_judged_runs",
    "complete_prefix",
    "contributing_runs",
    "retrieved_by",
    "run_coverage",
    "target_documents",
]


def complete_prefix(tr) -> np.ndarray:
    """Per system, the depth of its completely judged prefix in topic ``tr`` (ranks 1..c all judged)."""
    jr = np.append(tr.judged, False)[tr.ranked]  # (S, D); padding (-1) → False
    unj = ~jr
    has = unj.any(axis=1)
    first = np.where(has, unj.argmax(axis=1), jr.shape[1])
    return np.minimum(first, tr.lengths).astype(np.int64)


def run_coverage(data: RankData, depth: int = 10) -> np.ndarray:
    """Per run, the share of its top ``depth`` documents that is judged, averaged over the topics where it
    retrieves something (0 for a run that retrieves nothing)."""
    S = len(data.systems)
    tot, cnt = np.zeros(S), np.zeros(S)
    for tr in data:
        k = np.minimum(tr.lengths, depth)
        jr = np.append(tr.judged, False)[tr.ranked[:, :depth]] if tr.ranked.shape[1] else np.zeros((S, 0), bool)
        has = k > 0
        tot[has] += jr[has].sum(axis=1) / k[has]
        cnt[has] += 1
    return np.divide(tot, cnt, out=np.zeros(S), where=cnt > 0)


def retrieved_by(tr, runs) -> np.ndarray:
    """Per document of topic ``tr``: retrieved (within the data's depth) by one of ``runs`` (indices)?"""
    runs = np.asarray(runs, dtype=np.int64)
    if runs.size == 0:
        return np.zeros(tr.n_docs, dtype=bool)
    return (np.asarray(tr.ranks)[:, runs] > 0).any(axis=1)


def contributing_runs(data: RankData, depth: int = 10) -> np.ndarray:
    """Indices of the runs that account for the judgments: a set cover of the judged documents.

    The runs are taken in decreasing order of the judged share of their top ``depth`` documents
    (:func:`run_coverage`; ties in the order of ``data.systems``), each kept when it retrieves a judged document
    that the runs kept before it do not, until every judged document some run retrieves is covered. Judgments
    made by selection on c runs cover those runs' top ranks densely, so C is those runs; with a pool C is the
    pooled runs needed to account for it.
    """
    S = len(data.systems)
    covers = [np.asarray(tr.ranks)[np.asarray(tr.judged)] > 0 for tr in data]  # per topic (n_judged_t, S)
    M = np.concatenate(covers, axis=0) if covers else np.zeros((0, S), dtype=bool)
    left = M.any(axis=1)
    chosen = []
    for s in np.argsort(-run_coverage(data, depth), kind="stable"):
        if not left.any():
            break
        if (M[left, s]).any():
            chosen.append(int(s))
            left &= ~M[:, s]
    return np.asarray(chosen, dtype=np.int64)


def target_documents(tr, runs, target: str = "held_out") -> np.ndarray:
    """Documents of topic ``tr`` the map applies to: unjudged and retrieved by none of ``runs`` (the
    contributing runs; ``target="held_out"``) or every unjudged document (``"unjudged"``)."""
    unj = ~np.asarray(tr.judged)
    if target == "unjudged":
        return unj
    if target != "held_out":
        raise BayevalInputError(f"target: must be 'held_out' or 'unjudged', got {target!r}")
    return unj & ~retrieved_by(tr, runs)


def beyond_judged_runs(tr, depth: int) -> np.ndarray:
    """Per document of topic ``tr``: unjudged and retrieved by no run whose top ``depth`` is completely judged."""
    judged_runs = complete_prefix(tr) >= np.minimum(depth, tr.lengths)
    judged_runs &= tr.lengths > 0
    seen = np.zeros(tr.n_docs + 1, dtype=bool)  # last slot: the padding index -1
    seen[tr.ranked[judged_runs].ravel()] = True
    return ~tr.judged & ~seen[:-1]
