"""Average precision (trec_eval ``map``, ``map_cut_k``)."""

from __future__ import annotations

import numpy as np

from bayeval.measures._summation import sequential_sum
from bayeval.measures._validate import as_rank_matrix, check_counts, check_cutoff, per_row_ratio

__all__ = ["average_precision"]


def average_precision(rel: np.ndarray, num_rel, cutoff: int | None = None) -> np.ndarray:
    r"""Average precision of every ranking (every system of one topic, or every topic of one system).

    Parameters
    ----------
    rel : array_like of bool, shape (S, D) or (D,)
        ``rel[s, r]``: the document system ``s`` ranks at ``r + 1`` is relevant (False past the end).
    num_rel : int or array_like of int, shape (S,)
        R, the number of relevant documents of the topic, retrieved or not (one per row when the rows rank
        different topics).
    cutoff : int, optional
        Count only ranks ``<= cutoff`` (trec_eval ``map_cut``); the denominator stays R.

    Returns
    -------
    ndarray of float64, shape (S,)

    Notes
    -----
    With :math:`x_r \in \{0, 1\}` the relevance of the document at rank :math:`r` and :math:`k` the
    cutoff (the list length without one),

    .. math:: AP@k = \frac{1}{R} \sum_{r \le k,\ x_r = 1} \frac{1}{r} \sum_{j \le r} x_j ,

    and 0 when :math:`R = 0`. Relevant documents that are not retrieved (or ranked below the cutoff)
    contribute precision 0. Terms are added in rank order, as trec_eval adds them, so the result is
    the same double.

    References
    ----------
    .. [1] trec_eval 9.x, ``m_map.c`` and ``m_map_cut.c`` (https://github.com/usnistgov/trec_eval).
    .. [2] E. M. Voorhees and D. K. Harman (eds.), *TREC: Experiment and Evaluation in Information
       Retrieval*, MIT Press, 2005, appendix on evaluation measures.

    Examples
    --------
    Relevant at ranks 1 and 3, three relevant documents in all: (1/1 + 2/3) / 3.

    >>> average_precision(np.array([[True, False, True]]), num_rel=3)
    array([0.55555556])
    >>> average_precision(np.array([[True, False, True]]), num_rel=3, cutoff=2)  # (1/1) / 3
    array([0.33333333])
    """
    rel = as_rank_matrix(rel, "rel")
    num_rel = check_counts(num_rel, "num_rel", rel.shape[0])
    cutoff = check_cutoff(cutoff, "cutoff", optional=True)
    if cutoff is not None:
        rel = rel[:, :cutoff]
    if rel.shape[1] == 0:
        return np.zeros(rel.shape[0])
    hits = np.cumsum(rel, axis=1, dtype=np.float64)
    prec = hits / np.arange(1, rel.shape[1] + 1)
    return per_row_ratio(sequential_sum(np.where(rel, prec, 0.0)), num_rel)
