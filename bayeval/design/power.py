r"""Power of the paired t-test: effect sizes and the noncentral t (paper §3.2.1).

Array kernels only (numpy/scipy, no pandas): :func:`effect_size` and :func:`t_test_power`
broadcast over any number of pairs.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from bayeval.errors import BayevalInputError

__all__ = ["effect_size", "t_test_power"]


def effect_size(differences: np.ndarray, axis: int = -1) -> np.ndarray:
    r"""Standardised effect size of paired differences: mean / standard deviation.

    Parameters
    ----------
    differences : array_like
        Per-topic differences of a measure between two systems (e.g. AP_a − AP_b).
    axis : int
        The topic axis.

    Returns
    -------
    ndarray
        :math:`d = \bar{x} / s` with :math:`s` the sample standard deviation (``ddof = 1``).
        ±inf when :math:`s = 0 \ne \bar x`, 0 when every difference is 0, NaN with fewer than two
        topics.

    Notes
    -----
    This is Cohen's :math:`d_z`, the effect size of the paired t-test: the paper's "mean difference
    in average precisions divided by the standard deviation of the differences".

    References
    ----------
    .. [1] Carterette et al., SIGIR 2010, §3.2.1.
    .. [2] J. Cohen, Statistical Power Analysis for the Behavioral Sciences, 2nd ed., 1988.

    Examples
    --------
    >>> float(effect_size([1.0, 3.0, 2.0]))  # mean 2, sd 1
    2.0
    """
    x = np.asarray(differences, dtype=np.float64)
    n = x.shape[axis]
    if n < 2:
        return np.full(np.delete(x.shape, axis if axis >= 0 else x.ndim + axis), np.nan)[()]
    mean = x.mean(axis=axis)
    sd = x.std(axis=axis, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = mean / sd
    d = np.where(sd > 0, d, np.where(mean == 0, 0.0, np.copysign(np.inf, mean)))
    return d[()] if d.ndim == 0 else d


def t_test_power(effect, n, alpha: float = 0.05) -> np.ndarray:
    r"""Power of a two-sided paired (one-sample) t-test.

    Parameters
    ----------
    effect : array_like
        Effect size :math:`d` (:func:`effect_size`); its sign does not matter.
    n : array_like of int
        Number of topics (pairs of observations), broadcast against ``effect``; ``n >= 2``.
    alpha : float
        Significance level of the test, in (0, 1).

    Returns
    -------
    ndarray
        :math:`P(|T| > t_{1-\alpha/2,\,n-1})` where :math:`T` follows the noncentral t distribution
        with :math:`n - 1` degrees of freedom and noncentrality :math:`\delta = d\sqrt{n}`:

        .. math::
            \pi(d, n) = 1 - F_{n-1,\delta}(t_{1-\alpha/2,n-1}) + F_{n-1,\delta}(-t_{1-\alpha/2,n-1}).

        Equal to :math:`\alpha` at :math:`d = 0`, 1 at infinite :math:`d`, NaN where ``n < 2``.

    Notes
    -----
    The power is the probability that the test finds a significant difference over *any* sample
    of n topics from the same population; the paper uses it as the expectation that a pairwise test
    comes out significant (§3.2.1).

    References
    ----------
    .. [1] Carterette et al., SIGIR 2010, §3.2.1 (and the erratum in docs/maths.md §1: the
       power for effect 0.260 is 0.963 at n = 210 and 0.353 at n = 39; the paper rounds to 0.964
       and 0.354).

    Examples
    --------
    >>> [round(float(p), 3) for p in t_test_power(0.260, [210, 39])]
    [0.963, 0.353]
    """
    try:
        alpha = float(alpha)
    except (TypeError, ValueError):
        raise BayevalInputError(f"alpha: must be a number in (0, 1), got {alpha!r}") from None
    if not 0.0 < alpha < 1.0:
        raise BayevalInputError(f"alpha: must lie in (0, 1), got {alpha!r}")
    d = np.abs(np.asarray(effect, dtype=np.float64))
    n = np.asarray(n, dtype=np.float64)
    d, n = np.broadcast_arrays(d, n)
    out = np.full(d.shape, np.nan)
    ok = (n >= 2) & ~np.isnan(d)
    finite = ok & np.isfinite(d)
    if finite.any():  # vectors, so the tail fix-up below can index them
        df = n[finite] - 1.0
        tc = stats.t.ppf(1.0 - alpha / 2.0, df)
        nc = d[finite] * np.sqrt(n[finite])
        with np.errstate(all="ignore"):
            upper = stats.nct.sf(tc, df, nc)
            # F(-t; nc) = 1 - F(t; -nc): scipy's far lower tail of cdf can come back NaN, its sf does not
            lower = np.nan_to_num(stats.nct.sf(tc, df, -nc), nan=0.0)
        bad = np.isnan(upper)
        if bad.any():  # numerical failure far out in the tail: the normal approximation is exact enough there
            upper[bad] = stats.norm.sf(tc[bad] - nc[bad])
        out[finite] = upper + lower
    out[ok & ~np.isfinite(d)] = 1.0
    out = np.clip(out, 0.0, 1.0, where=~np.isnan(out), out=out)
    return out[()] if out.ndim == 0 else out
