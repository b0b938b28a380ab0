"""Set-based measures at a rank: precision@k, recall@k and R-precision (trec_eval ``P``, ``recall``, ``Rprec``)."""

from __future__ import annotations

import numpy as np

__all__ = ["precision_at", "r_precision", "recall_at"]


def precision_at(rel: np.ndarray, k: int) -> np.ndarray:
    r"""Precision at rank ``k``: :math:`\frac{1}{k}\sum_{r \le k} x_r` (divides by ``k`` even for shorter lists).

    ``rel`` is the ``(S, D)`` boolean relevance of each system's ranking (False past the end).

    >>> precision_at(np.array([[True, False, True], [False, False, False]]), 5)
    array([0.4, 0. ])
    """
    rel = np.asarray(rel, dtype=bool)
    return rel[:, :k].sum(axis=1) / k


def recall_at(rel: np.ndarray, num_rel: int, k: int) -> np.ndarray:
    r"""Recall at rank ``k``: :math:`\frac{1}{R}\sum_{r \le k} x_r`; 0 when :math:`R = 0`.

    >>> recall_at(np.array([[True, False, True]]), num_rel=4, k=2)
    array([0.25])
    """
    rel = np.asarray(rel, dtype=bool)
    if num_rel <= 0:
        return np.zeros(rel.shape[0])
    return rel[:, :k].sum(axis=1) / num_rel


def r_precision(rel: np.ndarray, num_rel: int) -> np.ndarray:
    r"""R-precision: precision at rank :math:`R` = ``num_rel``; 0 when :math:`R = 0`.

    References
    ----------
    trec_eval ``m_Rprec.c``.

    >>> r_precision(np.array([[False, True, True]]), num_rel=2)
    array([0.5])
    """
    rel = np.asarray(rel, dtype=bool)
    if num_rel <= 0:
        return np.zeros(rel.shape[0])
    return rel[:, :num_rel].sum(axis=1) / num_rel
