"""Set-based measures at a rank: precision@k, recall@k and R-precision (trec_eval ``P``, ``recall``, ``Rprec``)."""

from __future__ import annotations

import numpy as np

from bayeval.measures._validate import as_rank_matrix, check_counts, check_cutoff, per_row_ratio

__all__ = ["precision_at", "r_precision", "recall_at"]


def precision_at(rel: np.ndarray, k: int) -> np.ndarray:
    r"""Precision at rank ``k`` of every system for one topic.

    Parameters
    ----------
    rel : array_like of bool, shape (S, D) or (D,)
        Relevance of the document at each rank (False past the end of a list).
    k : int
        The cutoff.

    Returns
    -------
    ndarray of float64, shape (S,)

    Notes
    -----
    .. math:: P@k = \frac{1}{k} \sum_{r \le k} x_r

    The denominator is :math:`k` even when fewer than :math:`k` documents are retrieved.

    References
    ----------
    .. [1] trec_eval 9.x, ``m_P.c``.

    Examples
    --------
    >>> precision_at(np.array([[True, False, True], [False, False, False]]), 5)
    array([0.4, 0. ])
    """
    rel = as_rank_matrix(rel, "rel")
    k = check_cutoff(k, "k")
    return np.count_nonzero(rel[:, :k], axis=1) / k


def recall_at(rel: np.ndarray, num_rel, k: int) -> np.ndarray:
    r"""Recall at rank ``k`` of every system for one topic (or of every row, ``num_rel`` one per row).

    Parameters
    ----------
    rel : array_like of bool, shape (S, D) or (D,)
    num_rel : int or array_like of int, shape (S,)
        R, relevant documents of the topic, retrieved or not.
    k : int

    Notes
    -----
    .. math:: recall@k = \frac{1}{R} \sum_{r \le k} x_r, \qquad 0 \text{ when } R = 0.

    References
    ----------
    .. [1] trec_eval 9.x, ``m_recall.c``.

    Examples
    --------
    >>> recall_at(np.array([[True, False, True]]), num_rel=4, k=2)
    array([0.25])
    """
    rel = as_rank_matrix(rel, "rel")
    num_rel = check_counts(num_rel, "num_rel", rel.shape[0])
    k = check_cutoff(k, "k")
    return per_row_ratio(np.count_nonzero(rel[:, :k], axis=1), num_rel)


def r_precision(rel: np.ndarray, num_rel) -> np.ndarray:
    r"""R-precision of every system for one topic: precision at rank R (or of every row, ``num_rel`` one per row).

    Parameters
    ----------
    rel : array_like of bool, shape (S, D) or (D,)
    num_rel : int or array_like of int, shape (S,)
        R, relevant documents of the topic, retrieved or not.

    Notes
    -----
    .. math:: R\text{-prec} = \frac{1}{R} \sum_{r \le R} x_r, \qquad 0 \text{ when } R = 0.

    References
    ----------
    .. [1] trec_eval 9.x, ``m_Rprec.c``.

    Examples
    --------
    >>> r_precision(np.array([[False, True, True]]), num_rel=2)
    array([0.5])
    """
    rel = as_rank_matrix(rel, "rel")
    num_rel = check_counts(num_rel, "num_rel", rel.shape[0])
    if rel.shape[1] == 0:
        return np.zeros(rel.shape[0])
    hits = np.cumsum(rel, axis=1)  # relevant in the top r, r = 1..D; beyond D, the list's total
    top = hits[np.arange(rel.shape[0]), np.clip(num_rel, 1, rel.shape[1]) - 1]
    return per_row_ratio(np.where(num_rel > 0, top, 0), num_rel)
