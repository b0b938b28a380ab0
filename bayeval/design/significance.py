r"""P-value adjustment for the pairwise tests between systems over one topic set.

The tests themselves are :func:`bayeval.stats.paired_pvalues`. Kernels on arrays: :func:`adjust_pvalues`
corrects a family of p-values for multiple comparisons, and
:func:`power_alpha` gives the per-comparison level at which power should be computed so that the
expected table matches the adjusted tests.
"""

from __future__ import annotations

import numpy as np

from bayeval.errors import BayevalInputError

__all__ = ["ADJUSTMENTS", "adjust_pvalues", "power_alpha"]

ADJUSTMENTS = ("none", "bonferroni", "holm")


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
