"""Statistics of a biased-pool experiment: rank changes, RMS error, paired t-tests, Kendall's τ."""

from __future__ import annotations

import numpy as np
from scipy import stats

from bayeval.errors import BayevalInputError

__all__ = ["kendall_tau", "paired_t_pvalues", "rank_among", "ranks", "rms_error"]


def ranks(scores: np.ndarray) -> np.ndarray:
    r"""1-based rank of every score, best first: :math:`1 + \#\{u : x_u > x_s\}` (ties share the better rank).

    Examples
    --------
    >>> ranks(np.array([0.3, 0.5, 0.3, 0.1])).tolist()
    [2, 1, 2, 4]
    """
    x = np.asarray(scores, dtype=np.float64)
    return 1 + (x[None, :] > x[:, None]).sum(axis=1)


def rank_among(new: np.ndarray, reference: np.ndarray) -> np.ndarray:
    r"""Rank of each run's ``new`` score among the *other* runs' ``reference`` scores.

    :math:`1 + \#\{u \ne s : \mathrm{ref}_u > \mathrm{new}_s\}` — the rank a left-out run gets when it is
    scored on the reduced qrels and every other run keeps its published score.

    Examples
    --------
    >>> rank_among(np.array([0.2, 0.5, 0.4]), np.array([0.3, 0.5, 0.4])).tolist()
    [3, 1, 2]
    """
    new = np.asarray(new, dtype=np.float64)
    ref = np.asarray(reference, dtype=np.float64)
    if new.shape != ref.shape or new.ndim != 1:
        raise BayevalInputError("new, reference: expected two 1-D arrays of the same length")
    above = ref[None, :] > new[:, None]
    np.fill_diagonal(above, False)
    return 1 + above.sum(axis=1)


def rms_error(original: np.ndarray, new: np.ndarray) -> float:
    r"""Root mean square error :math:`\sqrt{\frac1N\sum_i (o_i - n_i)^2}` (Büttcher et al. 2007, eq. 3).

    Examples
    --------
    >>> round(rms_error(np.array([0.5, 0.2]), np.array([0.4, 0.2])), 12)  # sqrt(0.1² / 2)
    0.070710678119
    """
    o = np.asarray(original, dtype=np.float64)
    n = np.asarray(new, dtype=np.float64)
    if o.shape != n.shape or o.size == 0:
        raise BayevalInputError("original, new: expected non-empty arrays of the same shape")
    return float(np.sqrt(np.mean((o - n) ** 2)))


def kendall_tau(a: np.ndarray, b: np.ndarray) -> float:
    r"""Kendall's τ between two scorings of the same runs, ties counted as agreeing (the paper's rule).

    .. math:: \tau = 1 - \frac{2\,I}{\binom{n}{2}}, \qquad
              I = \#\{i < j : (a_i - a_j)(b_i - b_j) < 0\}

    Büttcher et al. (2007, §4) "do not pay special attention to the case where two systems are tied …
    it is assumed that the two entries are ranked in the correct order". Without ties this is τ-a
    (= τ-b).

    References
    ----------
    .. [1] M. G. Kendall, "A new measure of rank correlation", Biometrika 30, 1938.

    Examples
    --------
    One inversion among 3 pairs: 1 − 2/3.

    >>> round(kendall_tau(np.array([3.0, 2.0, 1.0]), np.array([3.0, 1.0, 2.0])), 6)
    0.333333
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise BayevalInputError("a, b: expected two 1-D arrays of the same length")
    n = a.size
    if n < 2:
        raise BayevalInputError("a, b: Kendall's tau needs at least two runs")
    i, j = np.triu_indices(n, k=1)
    inversions = np.count_nonzero((a[i] - a[j]) * (b[i] - b[j]) < 0)
    return float(1.0 - 2.0 * inversions / (n * (n - 1) / 2))


def paired_t_pvalues(original: np.ndarray, new: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    r"""Two-sided p-value of a paired t-test over topics, per run.

    For run s with per-topic differences :math:`d_t = n_{st} - o_{st}` over its T topics,
    :math:`t = \bar d / (s_d/\sqrt{T})` on T − 1 degrees of freedom. A run whose differences are all
    0 gets p = 1 (no change); one whose differences are all equal and non-zero gets p = 0.

    Parameters
    ----------
    original, new : ndarray, shape (S, T)
    mask : ndarray of bool, shape (S, T), optional
        Topics to use per run (default all).

    Examples
    --------
    >>> o = np.array([[0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4]])
    >>> n = np.array([[0.1, 0.2, 0.3, 0.4], [0.2, 0.25, 0.45, 0.5]])
    >>> p = paired_t_pvalues(o, n)
    >>> float(p[0]), bool(p[1] < 0.05)
    (1.0, True)
    """
    o = np.asarray(original, dtype=np.float64)
    n = np.asarray(new, dtype=np.float64)
    if o.shape != n.shape or o.ndim != 2:
        raise BayevalInputError("original, new: expected (runs, topics) arrays of the same shape")
    mask = np.ones(o.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    out = np.ones(o.shape[0])
    for s in range(o.shape[0]):
        d = (n[s] - o[s])[mask[s]]
        if d.size < 2 or np.all(d == 0):
            continue
        if np.all(d == d[0]):
            out[s] = 0.0
            continue
        out[s] = float(stats.ttest_1samp(d, 0.0).pvalue)
    return out
