r"""MTC document weights: how much judging a document can move the difference in a measure.

Array kernels over the ranks of two systems (1-based, 0 for a document the system does not
retrieve), usable alone; :class:`~bayeval.selection.MTCSelector` keeps the same quantities up to
date incrementally.

For the linear measures (P@k, DCG@k) the difference is :math:`\Delta = \sum_i w_i\,g(x_i)` and the
weight :math:`w_i` is the coefficient of document i's gain. For AP the difference of the
*sum precisions* :math:`\Delta SP = \sum_i c_{ii}x_i + \sum_{i<j} c_{ij}x_ix_j`, with
:math:`c_{ij} = 1/\max(r^a_i, r^a_j) - 1/\max(r^b_i, r^b_j)` (0 terms for unretrieved documents),
gives each unjudged document a *relevant weight* (its effect on ΔSP if it is relevant and every
other unjudged document is not) and a *nonrelevant weight* (its effect if it is nonrelevant and
every other unjudged document is relevant) — Carterette, Kanoulas & Yilmaz, tutorial, "MTC for AP".
"""

from __future__ import annotations

import numpy as np

from bayeval.errors import BayevalInputError
from bayeval.selection.measure import SelectionMeasure

__all__ = [
    "ap_coefficients",
    "ap_weights",
    "gain_values",
    "inverse_ranks",
    "linear_bounds",
    "linear_weights",
    "masked_pair_sums",
]


def _ranks(ranks, argument: str, n: int | None = None) -> np.ndarray:
    try:
        r = np.asarray(ranks)
    except (TypeError, ValueError):
        raise BayevalInputError(f"{argument}: not an array of integer ranks") from None
    if r.ndim != 1 or (n is not None and len(r) != n):
        raise BayevalInputError(f"{argument}: expected a 1-D array{'' if n is None else f' of length {n}'}")
    if r.size and (not np.issubdtype(r.dtype, np.integer) or r.min() < 0):
        raise BayevalInputError(f"{argument}: ranks must be integers >= 1 (0 = not retrieved)")
    return r.astype(np.int64)


def inverse_ranks(ranks) -> np.ndarray:
    """``1 / r`` for retrieved documents, 0 for unretrieved (rank 0): :math:`a_{ij} = \\min(1/r_i, 1/r_j)`."""
    r = np.asarray(ranks)
    out = np.zeros(r.shape, dtype=np.float64)
    np.divide(1.0, r, out=out, where=r > 0)
    return out


def gain_values(grades, gain: str = "exponential") -> np.ndarray:
    """Gain of each grade: ``2**g - 1`` (``"exponential"``, the tutorial's) or ``g`` (``"linear"``); 0 for g <= 0."""
    g = np.maximum(np.asarray(grades, dtype=np.float64), 0.0)
    if gain == "exponential":
        return np.exp2(g) - 1.0
    if gain == "linear":
        return g
    raise BayevalInputError(f"gain: must be 'exponential' or 'linear', got {gain!r}")


def _linear_system_weights(ranks: np.ndarray, measure: SelectionMeasure) -> np.ndarray:
    """Per document (and system, for 2-D ``ranks``): the coefficient of its gain in the measure."""
    k = measure.k
    inside = (ranks > 0) & (ranks <= k)
    if measure.family == "P":
        return inside / float(k)
    if measure.family == "recall":
        return inside.astype(np.float64)
    if measure.family == "DCG":
        out = np.zeros(ranks.shape, dtype=np.float64)
        np.divide(1.0, np.log2(ranks + 1.0), out=out, where=inside)
        return out
    raise BayevalInputError(f"measure: {measure.name} is not linear in the gains (use ap_weights)")


def linear_weights(ranks_a, ranks_b, measure) -> np.ndarray:
    r"""Weights of the documents in the difference of a linear measure (P@k, DCG@k) or in recall's numerator.

    Parameters
    ----------
    ranks_a, ranks_b : array of int, shape (n,)
        Rank of each document in system a and in system b (0: not retrieved).
    measure : str or SelectionMeasure
        ``"P@k"``, ``"DCG@k"`` or ``"recall@k"``.

    Returns
    -------
    ndarray, shape (n,)
        :math:`w_i` with :math:`\Delta = \sum_i w_i g(x_i)` (recall: the numerator of Δrecall, to be divided
        by R).

    Notes
    -----
    P@k: :math:`w_i = (I(r^a_i \le k) - I(r^b_i \le k))/k`; DCG@k: :math:`w_i = I(r^a_i\le k)/\log_2(r^a_i+1)
    - I(r^b_i\le k)/\log_2(r^b_i+1)`; recall@k: :math:`w_i = I(r^a_i \le k) - I(r^b_i \le k)`.

    References
    ----------
    .. [1] B. Carterette, E. Kanoulas, E. Yilmaz. Advances on the development of evaluation measures
       (tutorial), "MTC for prec@k", "MTC for DCG@k", "MTC for recall".

    Examples
    --------
    The tutorial's example: system 1 ranks A B C D E F G H, system 2 ranks G E C A H D F B, documents
    x1..x8 = E B D H A G F C.

    >>> r1 = [5, 2, 4, 8, 1, 7, 6, 3]
    >>> r2 = [2, 8, 6, 5, 4, 1, 7, 3]
    >>> (5 * linear_weights(r1, r2, "P@5")).astype(int).tolist()
    [0, 1, 1, -1, 0, -1, 0, 0]
    >>> [round(float(w), 3) for w in linear_weights(r1, r2, "DCG@5")]
    [-0.244, 0.631, 0.431, -0.387, 0.569, -1.0, 0.0, 0.0]
    """
    m = SelectionMeasure.parse(measure)
    ra = _ranks(ranks_a, "ranks_a")
    rb = _ranks(ranks_b, "ranks_b", len(ra))
    return _linear_system_weights(ra, m) - _linear_system_weights(rb, m)


def linear_bounds(weights, judged, gains, max_gain: float = 1.0) -> tuple[float, float]:
    r"""Lower and upper bounds of a linear difference :math:`\sum_i w_i g(x_i)` given some judgments.

    Unjudged documents take the gain 0 or ``max_gain``, whichever lowers (raises) the difference.

    .. math::
        \underline\Delta = \sum_{i\ \mathrm{judged}} w_i g(x_i) + g_{\max}\sum_{i\ \mathrm{unjudged},\,w_i<0} w_i,\quad
        \overline\Delta = \sum_{i\ \mathrm{judged}} w_i g(x_i) + g_{\max}\sum_{i\ \mathrm{unjudged},\,w_i>0} w_i

    Examples
    --------
    DCG@5 of the tutorial with nothing judged (the slide prints -0.631 for the lower bound, a typo):

    >>> w = linear_weights([5, 2, 4, 8, 1, 7, 6, 3], [2, 8, 6, 5, 4, 1, 7, 3], "DCG@5")
    >>> [round(b, 3) for b in linear_bounds(w, [False] * 8, [0.0] * 8)]
    [-1.631, 1.631]
    """
    w = np.asarray(weights, dtype=np.float64)
    j = np.asarray(judged, dtype=bool)
    g = np.asarray(gains, dtype=np.float64)
    if w.shape != j.shape or w.shape != g.shape or w.ndim != 1:
        raise BayevalInputError("weights, judged, gains: expected 1-D arrays of one length")
    if not np.isfinite(max_gain) or max_gain < 0:
        raise BayevalInputError(f"max_gain: must be a finite number >= 0, got {max_gain!r}")
    base = float(np.sum(w[j] * g[j]))
    u = w[~j]
    return base + max_gain * float(u[u < 0].sum()), base + max_gain * float(u[u > 0].sum())


def ap_coefficients(ranks_a, ranks_b) -> np.ndarray:
    r"""The matrix :math:`c_{ij} = a_{ij} - b_{ij}`, :math:`a_{ij} = 1/\max(r^a_i, r^a_j)` (0 if either is unretrieved).

    :math:`\Delta SP = \sum_i c_{ii}x_i + \sum_{i<j} c_{ij}x_ix_j` is AP·R of system a minus that of b.
    O(n²) memory: for small cases and checks (the selectors never form it).
    """
    ia = inverse_ranks(_ranks(ranks_a, "ranks_a"))
    ib = inverse_ranks(_ranks(ranks_b, "ranks_b", len(ia)))
    return np.minimum.outer(ia, ia) - np.minimum.outer(ib, ib)


def masked_pair_sums(inv: np.ndarray, ranked: np.ndarray, lengths: np.ndarray, mask: np.ndarray) -> np.ndarray:
    r"""Per document i and system s: :math:`\sum_{j \ne i,\ j \in \mathrm{mask}} \min(1/r^s_i, 1/r^s_j)`.

    O(n) per system after the ranking: for a retrieved i it is
    :math:`(1/r_i)\,\#\{j\in\mathrm{mask}: r_j<r_i\} + \sum_{j\in\mathrm{mask}: r_j>r_i} 1/r_j`.

    Parameters
    ----------
    inv : ndarray, shape (n, S)
        Inverse ranks (0 unretrieved).
    ranked : ndarray of int, shape (S, D)
        Document index at each rank position (``TopicRanks.ranked``; -1 past the end).
    lengths : ndarray of int, shape (S,)
    mask : ndarray of bool, shape (n,)
    """
    n, n_sys = inv.shape
    out = np.zeros((n, n_sys))
    m = np.asarray(mask, dtype=np.float64)
    for s in range(n_sys):
        docs = ranked[s, : int(lengths[s])]
        if not len(docs):
            continue
        ms = m[docs]
        before = np.cumsum(ms) - ms  # masked documents strictly above
        val = ms / np.arange(1, len(docs) + 1)
        after = np.cumsum(val[::-1])[::-1] - val  # sum of 1/r_j over masked documents strictly below
        out[docs, s] = before / np.arange(1, len(docs) + 1) + after
    return out


def ap_weights(ranks_a, ranks_b, judged=None, relevant=None) -> tuple[np.ndarray, np.ndarray]:
    r"""Relevant and nonrelevant weights of every document for ΔSP (AP·R) of two systems.

    Parameters
    ----------
    ranks_a, ranks_b : array of int, shape (n,)
        Ranks in the two systems (0: not retrieved).
    judged, relevant : array of bool, shape (n,), optional
        Documents judged so far and which of them are relevant (default: nothing judged).

    Returns
    -------
    (w_rel, w_nonrel) : two ndarrays, shape (n,)
        :math:`w^R_i = c_{ii} + \sum_{j\ \mathrm{judged}} c_{ij}x_j` and
        :math:`w^N_i = w^R_i + \sum_{j \ne i\ \mathrm{unjudged}} c_{ij}`. MTC judges the unjudged document
        with the largest :math:`\max(|w^R_i|, |w^N_i|)`.

    Notes
    -----
    :math:`w^R_i` is the change of ΔSP when i is judged relevant while every other unjudged document
    is nonrelevant; :math:`w^N_i` is the drop of ΔSP when i is judged nonrelevant while every other
    unjudged document is relevant. Both are computed in O(n) per system after sorting by rank.

    References
    ----------
    .. [1] B. Carterette, J. Allan, R. Sitaraman. Minimal test collections for retrieval evaluation.
       SIGIR 2006.
    .. [2] B. Carterette, E. Kanoulas, E. Yilmaz. Tutorial, "MTC for AP", "Updating document weights".

    Examples
    --------
    The tutorial's ΔSP of judging one document relevant when all others are nonrelevant:

    >>> r1 = [5, 2, 4, 8, 1, 7, 6, 3]
    >>> r2 = [2, 8, 6, 5, 4, 1, 7, 3]
    >>> w_rel, w_non = ap_weights(r1, r2)
    >>> [round(float(w), 3) for w in w_rel]
    [-0.3, 0.375, 0.083, -0.075, 0.75, -0.857, 0.024, 0.0]
    """
    ra = _ranks(ranks_a, "ranks_a")
    rb = _ranks(ranks_b, "ranks_b", len(ra))
    n = len(ra)
    judged = np.zeros(n, bool) if judged is None else np.asarray(judged, dtype=bool)
    relevant = np.zeros(n, bool) if relevant is None else np.asarray(relevant, dtype=bool)
    if judged.shape != (n,) or relevant.shape != (n,):
        raise BayevalInputError(f"judged, relevant: expected boolean arrays of length {n}")
    if np.any(relevant & ~judged):
        raise BayevalInputError("relevant: a document is relevant but not judged")
    ranks = np.column_stack([ra, rb])
    inv = inverse_ranks(ranks)
    ranked, lengths = _ranked_from_ranks(ranks)
    sj = masked_pair_sums(inv, ranked, lengths, relevant)
    su = masked_pair_sums(inv, ranked, lengths, ~judged)
    w_rel = (inv[:, 0] - inv[:, 1]) + (sj[:, 0] - sj[:, 1])
    return w_rel, w_rel + (su[:, 0] - su[:, 1])


def _ranked_from_ranks(ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(S, D) document index per rank position from an (n, S) rank matrix (ranks must be 1..L)."""
    n, n_sys = ranks.shape
    lengths = np.array([int(np.count_nonzero(ranks[:, s])) for s in range(n_sys)], dtype=np.int64)
    width = int(lengths.max()) if n_sys else 0
    ranked = np.full((n_sys, width), -1, dtype=np.int64)
    for s in range(n_sys):
        docs = np.flatnonzero(ranks[:, s])
        order = docs[np.argsort(ranks[docs, s], kind="stable")]
        if not np.array_equal(ranks[order, s], np.arange(1, len(order) + 1)):
            raise BayevalInputError(f"ranks_{'ab'[s] if n_sys == 2 else s}: positive ranks must be 1..L without "
                                    "gaps or repeats")
        ranked[s, : len(order)] = order
    return ranked, lengths
