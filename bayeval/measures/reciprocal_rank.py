"""Reciprocal rank of the first relevant document (trec_eval ``recip_rank``)."""

from __future__ import annotations

import numpy as np

__all__ = ["reciprocal_rank"]


def reciprocal_rank(rel: np.ndarray) -> np.ndarray:
    r""":math:`1/r_1` with :math:`r_1` the rank of the first relevant document; 0 if none is retrieved.

    >>> reciprocal_rank(np.array([[False, False, True], [False, False, False]]))
    array([0.33333333, 0.        ])
    """
    rel = np.asarray(rel, dtype=bool)
    if rel.shape[1] == 0:
        return np.zeros(rel.shape[0])
    first = np.argmax(rel, axis=1)
    return np.where(rel.any(axis=1), 1.0 / (first + 1), 0.0)
