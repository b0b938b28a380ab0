"""Binary preference (trec_eval ``bpref``)."""

from __future__ import annotations

import numpy as np

from bayeval.measures._summation import sequential_sum
from bayeval.measures._validate import as_rank_matrix, check_counts, check_same_shape, per_row_ratio

__all__ = ["bpref"]


def bpref(rel: np.ndarray, judged_nonrel: np.ndarray, num_rel, num_nonrel) -> np.ndarray:
    r"""bpref of every system for one topic, trec_eval's definition.

    Parameters
    ----------
    rel, judged_nonrel : array_like of bool, shape (S, D) or (D,)
        Whether the document at each rank is judged relevant / judged nonrelevant. Documents that
        are neither (unjudged, or listed in the qrels with a negative grade) are skipped.
    num_rel, num_nonrel : int or array_like of int, shape (S,)
        Judged relevant (R) and judged nonrelevant (N) documents of the topic, retrieved or not (one per
        row when the rows rank different topics).

    Returns
    -------
    ndarray of float64, shape (S,)

    Notes
    -----
    .. math:: bpref = \frac{1}{R} \sum_{r \text{ relevant, retrieved}}
              \left(1 - \frac{\min(n_r, R)}{\min(R, N)}\right)

    where :math:`n_r` is the number of judged nonrelevant documents ranked above :math:`r`; a
    relevant document with none above scores 1 (also when :math:`N = 0`). 0 when :math:`R = 0`.
    The :math:`\min(\cdot, R)` caps follow trec_eval, which differs from the paper's
    :math:`1 - |n \text{ ranked higher than } r| / R` when :math:`N < R`.

    References
    ----------
    .. [1] C. Buckley and E. M. Voorhees, "Retrieval Evaluation with Incomplete Information",
       SIGIR 2004.
    .. [2] trec_eval 9.x, ``m_bpref.c``.

    Examples
    --------
    R N R with R = 2, N = 3: (1 + (1 - 1/2)) / 2.

    >>> bpref(np.array([[True, False, True]]), np.array([[False, True, False]]), 2, 3)
    array([0.75])
    """
    return mean_over_relevant(rel, judged_nonrel, num_rel, num_nonrel, lambda above, r, n: np.where(
        above > 0, 1.0 - np.minimum(above, r) / np.maximum(np.minimum(r, n), 1), 1.0))


def mean_over_relevant(rel, judged_nonrel, num_rel, num_nonrel, term) -> np.ndarray:
    r""":math:`\frac1R\sum_{r \text{ relevant, retrieved}} \mathrm{term}(n_r, R, N)`, :math:`n_r` the judged
    nonrelevant documents ranked above :math:`r` (0 when :math:`R = 0`): bpref and RankEff, which differ in the term
    (called with R and N as ``(S, 1)`` columns, one per row).
    """
    rel = as_rank_matrix(rel, "rel")
    judged_nonrel = as_rank_matrix(judged_nonrel, "judged_nonrel")
    check_same_shape(judged_nonrel, rel, "judged_nonrel")
    num_rel = check_counts(num_rel, "num_rel", rel.shape[0])
    num_nonrel = check_counts(num_nonrel, "num_nonrel", rel.shape[0])
    above = np.cumsum(judged_nonrel, axis=1)  # at a relevant rank this counts strictly-above nonrelevant
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = term(above, num_rel[:, None], num_nonrel[:, None])
    return per_row_ratio(sequential_sum(np.where(rel, terms, 0.0)), num_rel)
