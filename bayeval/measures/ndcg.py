"""Normalised discounted cumulative gain (trec_eval ``ndcg``, ``ndcg_cut_k``)."""

from __future__ import annotations

import numpy as np

from bayeval.measures._summation import sequential_sum
from bayeval.measures._validate import as_rank_matrix, check_cutoff

__all__ = ["dcg_discounts", "ndcg", "ndcg_from_ideal"]


def dcg_discounts(depth: int) -> np.ndarray:
    """``1 / log2(r + 1)`` for ranks ``r = 1..depth``.

    >>> np.round(dcg_discounts(3), 4).tolist()
    [1.0, 0.6309, 0.5]
    """
    return 1.0 / np.log2(np.arange(2, int(depth) + 2, dtype=np.float64))


def ndcg(gains: np.ndarray, judged_gains: np.ndarray, cutoff: int | None = None) -> np.ndarray:
    r"""nDCG of every system for one topic, as trec_eval computes it.

    Parameters
    ----------
    gains : array_like of float, shape (S, D) or (D,)
        Gain of the document at each rank: its grade when judged with a positive grade, else 0
        (0 past the end of a list).
    judged_gains : array_like of float, shape (n_judged,)
        Grades of all judged documents of the topic, retrieved or not (the ideal ranking orders the
        positive ones; others are ignored).
    cutoff : int, optional
        Rank cutoff k, applied to the ranking and to the ideal ranking (trec_eval ``ndcg_cut_k``);
        without it the whole list and the whole ideal ranking count (trec_eval ``ndcg``).

    Returns
    -------
    ndarray of float64, shape (S,)

    Notes
    -----
    .. math:: nDCG@k = \frac{\sum_{r \le k} g_r / \log_2(r + 1)}{\sum_{r \le k} g^*_r / \log_2(r + 1)}

    with :math:`g^*` the positive judged gains in decreasing order; 0 when the ideal DCG is 0. The gain
    is the grade itself (trec_eval's default, no gain parameters), not :math:`2^g - 1`; negative and
    zero grades give gain 0. The relevance level does not enter: a grade-1 document has gain 1 even
    when only grade 2 counts as relevant (as in trec_eval ``-l2``).

    References
    ----------
    .. [1] K. Järvelin and J. Kekäläinen, "Cumulated Gain-Based Evaluation of IR Techniques",
       ACM TOIS 20(4), 2002.
    .. [2] trec_eval 9.x, ``m_ndcg.c`` and ``m_ndcg_cut.c``.

    Examples
    --------
    One relevant document, ranked second: (1 / log2 3) / 1.

    >>> round(float(ndcg(np.array([[0.0, 1.0]]), np.array([1.0, 0.0]))[0]), 4)
    0.6309
    """
    gains = as_rank_matrix(gains, "gains", dtype=np.float64)
    judged_gains = np.asarray(judged_gains, dtype=np.float64).ravel()
    cutoff = check_cutoff(cutoff, "cutoff", optional=True)
    ideal = -np.sort(-judged_gains[judged_gains > 0])
    if cutoff is not None:
        ideal = ideal[:cutoff]
    # gain / log2(r + 1), added in rank order: trec_eval's arithmetic, so the same doubles
    idcg = float(sequential_sum(ideal / _log2_rank_plus_one(len(ideal)))) if len(ideal) else 0.0
    return ndcg_from_ideal(gains, np.full(gains.shape[0], idcg), cutoff)


def ndcg_from_ideal(gains: np.ndarray, ideal_dcg: np.ndarray, cutoff: int | None = None) -> np.ndarray:
    r"""nDCG of every ranking given the DCG of its ideal ranking (:func:`ndcg` once the ideal is known; one
    ideal per row when the rows rank different topics).

    Parameters
    ----------
    gains : array_like of float, shape (S, D) or (D,)
        Gain of the document at each rank (non-positive gains count 0).
    ideal_dcg : array_like of float, shape (S,)
        DCG of each row's ideal ranking to the same cutoff; a row with 0 scores 0.
    cutoff : int, optional

    Examples
    --------
    >>> round(float(ndcg_from_ideal(np.array([[0.0, 1.0]]), np.array([1.0]))[0]), 4)
    0.6309
    """
    gains = as_rank_matrix(gains, "gains", dtype=np.float64)
    cutoff = check_cutoff(cutoff, "cutoff", optional=True)
    ideal_dcg = np.asarray(ideal_dcg, dtype=np.float64)
    gains = np.where(gains > 0, gains, 0.0)
    if cutoff is not None:
        gains = gains[:, :cutoff]
    dcg = sequential_sum(gains / _log2_rank_plus_one(gains.shape[1]))
    return np.divide(dcg, ideal_dcg, out=np.zeros(len(dcg)), where=ideal_dcg > 0)


def _log2_rank_plus_one(depth: int) -> np.ndarray:
    return np.log2(np.arange(2, depth + 2, dtype=np.float64))
