"""Binary preference (trec_eval ``bpref``)."""

from __future__ import annotations

import numpy as np

__all__ = ["bpref"]


def bpref(rel: np.ndarray, judged_nonrel: np.ndarray, num_rel: int, num_nonrel: int) -> np.ndarray:
    r"""bpref of every system for one topic, trec_eval's definition.

    Parameters
    ----------
    rel, judged_nonrel : ndarray of bool, shape (S, D)
        Whether the document at each rank is judged relevant / judged nonrelevant (unjudged
        documents are neither and are skipped).
    num_rel, num_nonrel : int
        Judged relevant (R) and judged nonrelevant (N) documents of the topic.

    Notes
    -----
    .. math:: bpref = \frac{1}{R} \sum_{r \text{ relevant, retrieved}}
              \left(1 - \frac{\min(n_r, R)}{\min(R, N)}\right)

    where :math:`n_r` is the number of judged nonrelevant documents ranked above :math:`r` (a relevant
    document with none above scores 1, even when :math:`N = 0`).

    References
    ----------
    Buckley & Voorhees (2004), SIGIR; trec_eval ``m_bpref.c``.

    >>> # R N R with R = 2, N = 3: (1 + (1 - 1/2)) / 2
    >>> bpref(np.array([[True, False, True]]), np.array([[False, True, False]]), 2, 3)
    array([0.75])
    """
    rel = np.asarray(rel, dtype=bool)
    if num_rel <= 0:
        return np.zeros(rel.shape[0])
    above = np.cumsum(judged_nonrel, axis=1)  # at a relevant rank this counts strictly-above nonrelevant
    denom = max(min(num_rel, num_nonrel), 1)
    term = np.where(above > 0, 1.0 - np.minimum(above, num_rel) / denom, 1.0)
    return np.where(rel, term, 0.0).sum(axis=1) / num_rel
