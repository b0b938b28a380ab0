r"""Pairwise significance tests between systems over one topic set, and p-value adjustment.

Kernels on arrays: :func:`paired_pvalues` tests many pairs at once (``scipy.stats.ttest_rel`` along
the topic axis), :func:`adjust_pvalues` corrects a family of p-values for multiple comparisons, and
:func:`power_alpha` gives the per-comparison level at which power should be computed so that the
expected table matches the adjusted tests.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

from bayeval.errors import BayevalInputError

__all__ = ["ADJUSTMENTS", "TESTS", "adjust_pvalues", "paired_pvalues", "power_alpha"]

TESTS = ("t", "wilcoxon")
ADJUSTMENTS = ("none", "bonferroni", "holm")


def paired_pvalues(a: np.ndarray, b: np.ndarray, test: str = "t") -> np.ndarray:
    r"""Two-sided p-values of paired tests between the rows of ``a`` and ``b``.

    Parameters
    ----------
    a, b : ndarray, shape (P, n)
        Per-topic scores of the first and second system of each of P pairs over the same n topics.
    test : {"t", "wilcoxon"}
        ``"t"`` (default): the paired t-test, :math:`t = \bar{x}\sqrt{n}/s` with :math:`n-1` degrees
        of freedom (``scipy.stats.ttest_rel``). ``"wilcoxon"``: the Wilcoxon signed-rank test
        (``scipy.stats.wilcoxon``, zero differences dropped).

    Returns
    -------
    ndarray, shape (P,)
        NaN where the test is undefined (fewer than two topics; every difference zero). A constant
        nonzero difference gives p = 0 for the t-test.

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
    if test not in TESTS:
        raise BayevalInputError(f"test: must be one of {', '.join(TESTS)}, got {test!r}")
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
    return p


def adjust_pvalues(p: np.ndarray, method: str = "none") -> np.ndarray:
    r"""Adjust a family of p-values for multiple comparisons.

    Parameters
    ----------
    p : array_like, shape (F,)
        The family's p-values; NaN entries are left NaN and not counted in F.
    method : {"none", "bonferroni", "holm"}
        Bonferroni: :math:`\min(1, F p_i)`. Holm's step-down: with :math:`p_{(1)} \le \dots \le p_{(F)}`,
        :math:`\tilde p_{(i)} = \max_{j \le i} \min(1, (F - j + 1) p_{(j)})`; both control the
        family-wise error rate.

    Returns
    -------
    ndarray, shape (F,)

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03], "holm").round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    if method not in ADJUSTMENTS:
        raise BayevalInputError(f"adjust: must be one of {', '.join(ADJUSTMENTS)}, got {method!r}")
    p = np.array(p, dtype=np.float64)
    if method == "none" or p.size == 0:
        return p
    ok = ~np.isnan(p)
    F = int(ok.sum())
    q = p[ok]
    if method == "bonferroni":
        q = np.minimum(1.0, F * q)
    else:
        order = np.argsort(q, kind="stable")
        stepped = np.minimum(1.0, (F - np.arange(F)) * q[order])
        out = np.empty(F)
        out[order] = np.maximum.accumulate(stepped)
        q = out
    p[ok] = q
    return p


def power_alpha(alpha: float, family_size: int, method: str = "none") -> float:
    r"""The per-comparison level at which to compute power for tests adjusted by ``method``.

    ``"none"``: :math:`\alpha`. ``"bonferroni"`` and ``"holm"``: :math:`\alpha / F` (exact for
    Bonferroni; for Holm it is the level of its first, strictest step, so the expected number of
    significant results is slightly underestimated).
    """
    if method not in ADJUSTMENTS:
        raise BayevalInputError(f"adjust: must be one of {', '.join(ADJUSTMENTS)}, got {method!r}")
    if method == "none" or family_size <= 1:
        return float(alpha)
    return float(alpha) / int(family_size)
