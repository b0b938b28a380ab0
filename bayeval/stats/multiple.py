r"""Multiple comparisons: adjusting a family of p-values (all pairs of many runs) for the number of tests.

References: C. E. Bonferroni (1936); S. Holm (1979), *A simple sequentially rejective multiple test procedure*,
Scandinavian Journal of Statistics 6(2); Y. Benjamini, Y. Hochberg (1995), *Controlling the false discovery rate*,
JRSS B 57(1). ranx's ``compare`` offers the same three.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from bayeval.errors import BayevalInputError
from bayeval.methods import ADJUSTMENTS

__all__ = ["ADJUSTMENTS", "adjust_pvalues"]

def adjust_pvalues(p, method: str = "none") -> np.ndarray:
    r"""Adjust a family of p-values for multiple comparisons.

    Parameters
    ----------
    p : array_like, shape (F,)
        The family's p-values; NaN entries are left NaN and not counted in F.
    method : {"none", "bonferroni", "holm", "bh"}
        Bonferroni: :math:`\min(1, F p_i)`. Holm's step-down: with :math:`p_{(1)} \le \dots \le p_{(F)}`,
        :math:`\tilde p_{(i)} = \max_{j \le i} \min(1, (F - j + 1) p_{(j)})`; both control the family-wise error
        rate. ``"bh"``: Benjamini–Hochberg's step-up,
        :math:`\tilde p_{(i)} = \min_{j \ge i} \min(1, F p_{(j)} / j)` (``scipy.stats.false_discovery_control``),
        which controls the false discovery rate of independent or positively dependent tests.

    Returns
    -------
    ndarray, shape (F,)

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03], "holm").round(3).tolist()
    [0.03, 0.06, 0.06]
    >>> adjust_pvalues([0.01, 0.04, 0.03], "bh").round(3).tolist()
    [0.03, 0.04, 0.04]
    """
    if method not in ADJUSTMENTS:
        raise BayevalInputError(f"adjust: must be one of {', '.join(ADJUSTMENTS)}, got {method!r}")
    p = np.array(p, dtype=np.float64)
    if method == "none" or p.size == 0:
        return p
    ok = ~np.isnan(p)
    F = int(ok.sum())
    if F == 0:
        return p
    q = p[ok]
    if method == "bonferroni":
        q = np.minimum(1.0, F * q)
    elif method == "bh":
        q = stats.false_discovery_control(q, method="bh")
    else:
        order = np.argsort(q, kind="stable")
        stepped = np.minimum(1.0, (F - np.arange(F)) * q[order])
        out = np.empty(F)
        out[order] = np.maximum.accumulate(stepped)
        q = out
    p[ok] = q
    return p
