"""Reciprocal rank of the first relevant document (trec_eval ``recip_rank``; with a cutoff MS MARCO's RR@10)."""

from __future__ import annotations

import numpy as np

from bayeval.measures._validate import as_rank_matrix, check_cutoff

__all__ = ["reciprocal_rank"]


def reciprocal_rank(rel: np.ndarray, cutoff: int | None = None) -> np.ndarray:
    r"""Reciprocal rank of every system for one topic.

    Parameters
    ----------
    rel : array_like of bool, shape (S, D) or (D,)
        Relevance of the document at each rank (False past the end of a list).
    cutoff : int, optional
        Look only at the top ``cutoff`` ranks (``RR@10``: 0 when the first relevant document is lower).

    Returns
    -------
    ndarray of float64, shape (S,)

    Notes
    -----
    .. math:: RR@k = 1 / r_1, \qquad r_1 = \min\{r \le k : x_r = 1\},

    and 0 when no relevant document is retrieved in the top k (k: the whole list without a cutoff).

    References
    ----------
    .. [1] trec_eval 9.x, ``m_recip_rank.c``.
    .. [2] E. M. Voorhees, "The TREC-8 Question Answering Track Report", TREC 1999.

    Examples
    --------
    >>> reciprocal_rank(np.array([[False, False, True], [False, False, False]]))
    array([0.33333333, 0.        ])
    >>> reciprocal_rank(np.array([[False, False, True]]), cutoff=2)
    array([0.])
    """
    rel = as_rank_matrix(rel, "rel")
    cutoff = check_cutoff(cutoff, "cutoff", optional=True)
    if cutoff is not None:
        rel = rel[:, :cutoff]
    if rel.shape[1] == 0:
        return np.zeros(rel.shape[0])
    first = np.argmax(rel, axis=1)
    return np.where(rel.any(axis=1), 1.0 / (first + 1), 0.0)
