"""Summation in trec_eval's order.

trec_eval accumulates a measure one rank at a time (and a run's mean one topic at a time). ``np.cumsum``
adds in the same left-to-right order, unlike ``np.sum``'s pairwise summation, so totals computed with
these helpers are the same doubles as trec_eval's, bit for bit, and print identically.
"""

from __future__ import annotations

import numpy as np

__all__ = ["running_total", "sequential_sum"]


def running_total(terms: np.ndarray) -> np.ndarray:
    """Left-to-right cumulative sums along the last axis.

    trec_eval adds a measure's terms one rank at a time; ``np.cumsum`` adds in the same order (unlike
    ``np.sum``'s pairwise summation), so the totals are the same doubles, bit for bit.
    """
    return np.cumsum(terms, axis=-1)


def sequential_sum(terms: np.ndarray) -> np.ndarray:
    """Left-to-right sum along the last axis (0 for an empty axis); see :func:`running_total`."""
    if terms.shape[-1] == 0:
        return np.zeros(terms.shape[:-1])
    return running_total(terms)[..., -1]
