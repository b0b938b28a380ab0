"""The expected reciprocal rank in closed form (documents independent)."""

from __future__ import annotations

import numpy as np

from bayeval.errors import BayevalInputError

__all__ = ["expected_reciprocal_rank"]


def expected_reciprocal_rank(p_ranked: np.ndarray) -> np.ndarray:
    r"""Exact E[RR] of every system from the probabilities of relevance in rank order.

    .. math:: E[RR] = \sum_{r \ge 1} \frac{1}{r}\, p_r \prod_{s < r} (1 - p_s)

    (the first relevant document is at rank r with probability :math:`p_r\prod_{s<r}(1-p_s)`;
    documents independent). Judged documents enter with p = 1 or 0.

    Parameters
    ----------
    p_ranked : ndarray, shape (S, D)
        ``p_ranked[s, r]``: probability that system s's document at rank r + 1 is relevant (0 past
        the end of the list).

    Examples
    --------
    Ranking with p = 0.5, 1: E[RR] = 0.5 · 1 + 0.5 · 1/2.

    >>> expected_reciprocal_rank(np.array([[0.5, 1.0]]))
    array([0.75])
    """
    p = np.asarray(p_ranked, dtype=np.float64)
    if p.ndim != 2:
        raise BayevalInputError("p_ranked: expected an (systems, ranks) array")
    none_above = np.cumprod(np.concatenate([np.ones((p.shape[0], 1)), 1.0 - p[:, :-1]], axis=1), axis=1)
    return (p * none_above / np.arange(1, p.shape[1] + 1)).sum(axis=1)
