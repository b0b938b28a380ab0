"""Average precision (trec_eval ``map``, ``map_cut_k``)."""

from __future__ import annotations

import numpy as np

__all__ = ["average_precision"]


def average_precision(rel: np.ndarray, num_rel: int, cutoff: int | None = None) -> np.ndarray:
    r"""Average precision of every system for one topic.

    Parameters
    ----------
    rel : ndarray of bool, shape (S, D)
        ``rel[s, r]``: the document system ``s`` ranks at ``r + 1`` is relevant (False past the end).
    num_rel : int
        Number of relevant documents of the topic, retrieved or not.
    cutoff : int, optional
        Count only ranks ``<= cutoff`` (trec_eval ``map_cut``); the denominator stays ``num_rel``.

    Returns
    -------
    ndarray of float, shape (S,)

    Notes
    -----
    .. math:: AP = \frac{1}{R} \sum_{r:\, x_r = 1} \frac{1}{r} \sum_{j \le r} x_j,

    with :math:`R` = ``num_rel``; 0 when :math:`R = 0`.

    References
    ----------
    trec_eval ``m_map.c``, ``m_map_cut.c``.

    Examples
    --------
    Relevant at ranks 1 and 3, three relevant documents in all: (1/1 + 2/3) / 3.

    >>> average_precision(np.array([[True, False, True]]), num_rel=3)
    array([0.55555556])
    """
    rel = np.asarray(rel, dtype=bool)
    if cutoff is not None:
        rel = rel[:, :cutoff]
    if num_rel <= 0 or rel.shape[1] == 0:
        return np.zeros(rel.shape[0])
    hits = np.cumsum(rel, axis=1)
    prec = hits / np.arange(1, rel.shape[1] + 1)
    return np.where(rel, prec, 0.0).sum(axis=1) / num_rel
