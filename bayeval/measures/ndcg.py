"""Normalised discounted cumulative gain (trec_eval ``ndcg``, ``ndcg_cut_k``)."""

from __future__ import annotations

import numpy as np

__all__ = ["dcg_discounts", "ndcg"]


def dcg_discounts(depth: int) -> np.ndarray:
    """``1 / log2(r + 1)`` for ranks ``r = 1..depth``."""
    return 1.0 / np.log2(np.arange(2, depth + 2, dtype=np.float64))


def ndcg(gains: np.ndarray, judged_gains: np.ndarray, cutoff: int | None = None) -> np.ndarray:
    r"""nDCG of every system for one topic, as trec_eval computes it.

    Parameters
    ----------
    gains : ndarray, shape (S, D)
        Gain of the document at each rank: its relevance grade if judged and positive, else 0
        (0 past the end of a list).
    judged_gains : ndarray, shape (n_judged,)
        Gains of all judged documents of the topic (for the ideal ranking).
    cutoff : int, optional
        Rank cutoff applied to both the ranking and the ideal ranking.

    Notes
    -----
    .. math:: nDCG@k = \frac{\sum_{r \le k} g_r / \log_2(r + 1)}{\sum_{r \le k} g^*_r / \log_2(r + 1)}

    with :math:`g^*` the judged gains sorted in decreasing order; 0 when the ideal DCG is 0. The gain is
    the grade itself (trec_eval's default, no gain file), not :math:`2^g - 1`.

    References
    ----------
    Järvelin & Kekäläinen (2002), TOIS 20(4); trec_eval ``m_ndcg.c``, ``m_ndcg_cut.c``.

    >>> round(float(ndcg(np.array([[0.0, 1.0]]), np.array([1.0, 0.0]))[0]), 4)  # 1/log2(3)
    0.6309
    """
    gains = np.asarray(gains, dtype=np.float64)
    ideal = np.sort(np.asarray(judged_gains, dtype=np.float64)[judged_gains > 0])[::-1]
    if cutoff is not None:
        gains = gains[:, :cutoff]
        ideal = ideal[:cutoff]
    if len(ideal) == 0:
        return np.zeros(gains.shape[0])
    idcg = float(ideal @ dcg_discounts(len(ideal)))
    return gains @ dcg_discounts(gains.shape[1]) / idcg
