r"""P-value adjustment for the pairwise tests between systems over one topic set.

The tests themselves are :func:`bayeval.stats.paired_pvalues`, the adjustment :func:`bayeval.stats.adjust_pvalues`
(here limited to the family-wise ones); :func:`power_alpha` gives the per-comparison level at which power should
be computed so that the expected table matches the adjusted tests.
"""

from __future__ import annotations

import numpy as np

from bayeval.errors import BayevalInputError
from bayeval.stats import adjust_pvalues as stats_adjust

__all__ = ["ADJUSTMENTS", "adjust_pvalues", "power_alpha"]

ADJUSTMENTS = ("none", "bonferroni", "holm")


def adjust_pvalues(p: np.ndarray, method: str = "none") -> np.ndarray:
    r"""Adjust a family of p-values for multiple comparisons: :func:`bayeval.stats.adjust_pvalues`, limited to the
    adjustments that control the family-wise error rate (:data:`ADJUSTMENTS`), the ones :func:`power_alpha` has a
    per-comparison level for.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03], "holm").round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    if method not in ADJUSTMENTS:
        raise BayevalInputError(f"adjust: must be one of {', '.join(ADJUSTMENTS)}, got {method!r}")
    return stats_adjust(p, method)


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
