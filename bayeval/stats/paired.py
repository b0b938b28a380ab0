r"""Paired tests between two systems (or methods) over the same topics (or trials), many pairs at once.

References: Student (1908), *The probable error of a mean*, Biometrika 6; F. Wilcoxon (1945), *Individual
comparisons by ranking methods*, Biometrics Bulletin 1(6).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

from bayeval.errors import BayevalInputError

__all__ = ["PAIRED_TESTS", "paired_pvalues"]

PAIRED_TESTS = ("t", "wilcoxon")
"""The paired tests :func:`paired_pvalues` runs."""


def paired_pvalues(a, b, test: str = "t", mask=None) -> np.ndarray:
    r"""Two-sided p-values of paired tests between the rows of ``a`` and ``b``.

    Parameters
    ----------
    a, b : ndarray, shape (P, n)
        Per-topic scores of the first and second system of each of P pairs over the same n topics.
    test : {"t", "wilcoxon"}
        ``"t"`` (default): the paired t-test :math:`t = \bar d\sqrt n/s_d` on :math:`n-1` degrees of freedom,
        :math:`d = a - b` (``scipy.stats.ttest_rel``). ``"wilcoxon"``: the Wilcoxon signed-rank test
        (``scipy.stats.wilcoxon``, zero differences dropped).
    mask : ndarray of bool, shape (P, n), optional
        The topics each pair is tested on (default all).

    Returns
    -------
    ndarray, shape (P,)
        NaN where the test is undefined (fewer than two topics; every difference zero). A constant
        nonzero difference gives p = 0 for the t-test (whose answer would otherwise depend on rounding).

    Examples
    --------
    >>> a = np.array([[0.3, 0.5, 0.4, 0.6]]); b = a - np.array([[0.1, 0.2, 0.05, 0.15]])
    >>> round(float(paired_pvalues(a, b)[0]), 4)
    0.0305
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2:
        raise BayevalInputError(f"a, b: expected two arrays of the same shape (pairs, topics), got {a.shape}, "
                                f"{b.shape}")
    if test not in PAIRED_TESTS:
        raise BayevalInputError(f"test: must be one of {', '.join(PAIRED_TESTS)}, got {test!r}")
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != a.shape:
            raise BayevalInputError(f"mask: expected shape {a.shape}, got {mask.shape}")
        return np.array([paired_pvalues(a[i, m][None], b[i, m][None], test)[0] for i, m in enumerate(mask)])
    P, n = a.shape
    if P == 0:
        return np.empty(0)
    if n < 2:
        return np.full(P, np.nan)
    d = a - b
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if test == "t":
            p = np.asarray(stats.ttest_rel(a, b, axis=1).pvalue, dtype=np.float64)
            const = np.all(d == d[:, :1], axis=1)  # zero variance: ttest_rel's answer depends on rounding
            p[const] = np.where(d[const, 0] == 0.0, np.nan, 0.0)
        else:
            p = np.full(P, np.nan)
            nz = np.any(d != 0, axis=1)
            for i in np.flatnonzero(nz):
                p[i] = stats.wilcoxon(d[i], zero_method="wilcox").pvalue
    return np.atleast_1d(p)
