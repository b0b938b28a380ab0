"""Array kernels of the empirical-Bayes combination of a model's estimates with a random sample's.

Each piece on plain arrays (the API and its formulas: :mod:`bayeval.sampling.combined`): the moment estimate
of the spread of the model's error (:func:`moment_spread`, :func:`slope_spread`, :func:`fay_herriot_spread`,
and :func:`grouped_moment_spread` with a shift per group), the per-group shift and its sampling terms
(:func:`group_shift_terms`), and the precision-weighted combination of two correlated estimates of one quantity
(:func:`weigh`).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

__all__ = ["fay_herriot_spread", "group_shift_terms", "grouped_moment_spread", "moment_spread", "slope_spread",
           "weigh"]


def moment_spread(resid: np.ndarray, s2: np.ndarray, scale: np.ndarray, *, centred: bool,
                  common: float = 0.0) -> float:
    """The factor ``k²`` of the model's error variances ``k² · scale_i``, by the method of moments.

    Without centring (differences), ``E Σ r_i² = Σ s_i² + k² Σ scale_i``; centred (means, whose common shift
    is estimated by ``r̄``), ``E Σ (r_i - r̄)² = Σ s_i² - n·common + k² (1 - 1/n) Σ scale_i``, ``common`` the
    variance of the mean sampling error ``ē``. Negative estimates are returned as 0 (the caller floors).
    """
    n = resid.size
    if centred:
        num = float(np.sum((resid - resid.mean()) ** 2) - np.sum(s2) + n * common)
        den = float((1.0 - 1.0 / n) * np.sum(scale))
    else:
        num = float(np.sum(resid ** 2) - np.sum(s2))
        den = float(np.sum(scale))
    return max(num / den, 0.0) if den > 0 else 0.0


def group_shift_terms(resid: np.ndarray, c: np.ndarray, groups: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per quantity i in group g (``n_g`` members): the group's mean residual ``r̄_g``, the variance of its mean
    sampling error ``Var(ē_g) = 1_gᵀ C 1_g / n_g²``, the covariance ``Cov(ē_g, e_i) = (C 1_g)_i / n_g`` and
    ``n_g``, each as an array over the quantities (``groups``: integer labels 0..G-1)."""
    shift, common, cross, size = (np.empty(resid.size) for _ in range(4))
    for g in np.unique(groups):
        at = np.flatnonzero(groups == g)
        n = at.size
        block = c if n == resid.size else c[np.ix_(at, at)]            # one group: no copy of C
        shift[at] = resid[at].mean()
        common[at] = float(block.sum()) / n ** 2
        cross[at] = block.sum(axis=1) / n
        size[at] = n
    return shift, common, cross, size


def grouped_moment_spread(resid: np.ndarray, s2: np.ndarray, scale: np.ndarray, groups: np.ndarray,
                          common: np.ndarray) -> float:
    """``k²`` of the model's error variances ``k² · scale_i`` when each group's shift is estimated by its mean
    residual: ``E Σ_g Σ_{i∈g} (r_i - r̄_g)² = Σ s_i² - Σ_g n_g Var(ē_g) + k² Σ_g (1 - 1/n_g) Σ_{i∈g} scale_i``
    (:func:`moment_spread` centred, summed over the groups; ``common`` as from :func:`group_shift_terms`). One
    ``k²`` for all groups: a group of one run says nothing of it. Negative estimates are returned as 0."""
    num = den = 0.0
    for g in np.unique(groups):
        at = groups == g
        n = int(at.sum())
        r = resid[at]
        num += float(np.sum((r - r.mean()) ** 2) - np.sum(s2[at]) + n * common[at][0])
        den += float((1.0 - 1.0 / n) * np.sum(scale[at]))
    return max(num / den, 0.0) if den > 0 else 0.0


def slope_spread(resid: np.ndarray, s2: np.ndarray, scale: np.ndarray, x: np.ndarray) -> float:
    """``k²`` as :func:`moment_spread` (not centred) when the residuals are those of a least-squares fit
    ``y ≈ β x`` without intercept: with ``M = I - x xᵀ/xᵀx``, ``E rᵀr = tr(M S M) + k² tr(M A M)`` for the
    diagonal ``S = diag(s²)``, ``A = diag(scale)``, and ``tr(M D M) = Σ d - Σ x² d / xᵀx``."""
    xx = float(np.sum(x * x))
    if xx <= 0:
        return moment_spread(resid, s2, scale, centred=False)
    num = float(np.sum(resid ** 2) - np.sum(s2) + np.sum(x * x * s2) / xx)
    den = float(np.sum(scale) - np.sum(x * x * scale) / xx)
    return max(num / den, 0.0) if den > 0 else 0.0


def fay_herriot_spread(resid: np.ndarray, s2: np.ndarray) -> float:
    """Fay & Herriot's (1979) moment estimate of a constant error variance ``σ²``: the root of
    ``Σ r_i² / (σ² + s_i²) = n`` (no covariate fitted), 0 when ``Σ r_i² / s_i² ≤ n``."""
    n = resid.size
    r2 = resid * resid

    def excess(v: float) -> float:
        return float(np.sum(r2 / (v + s2))) - n

    if n == 0 or not np.all(s2 > 0) or excess(0.0) <= 0:
        return 0.0
    hi = max(float(np.mean(r2)), 1e-12)
    while excess(hi) > 0:
        hi *= 2.0
    return float(optimize.brentq(excess, 0.0, hi))


def weigh(direct: np.ndarray, s2: np.ndarray, synthetic: np.ndarray, f2: np.ndarray,
          cross: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The best linear combination ``w·direct + (1 - w)·synthetic`` of two estimates of one quantity whose
    errors have variances ``s2`` and ``f2`` and covariance ``cross``: ``w = (f2 - cross)/(s2 + f2 - 2 cross)``
    (clipped to [0, 1]) and its error variance ``w² s2 + (1 - w)² f2 + 2 w (1 - w) cross``.

    Returns ``(mean, variance, w)``. With ``cross = 0`` this is the precision-weighted mean, variance
    ``1/(1/s2 + 1/f2)``; ``f2 = 0`` gives the synthetic estimate, ``f2 → ∞`` the direct one.
    """
    s2, f2, cross = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (s2, f2, cross)))
    endless = np.isinf(f2)                                   # no information in the synthetic estimate
    f2 = np.where(endless, 0.0, f2)
    cross = np.where(endless, 0.0, cross)
    den = s2 + f2 - 2.0 * cross
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(den > 0, (f2 - cross) / np.where(den > 0, den, 1.0), 1.0)
    w = np.where(endless, 1.0, np.clip(w, 0.0, 1.0))
    var = w * w * s2 + (1.0 - w) ** 2 * f2 + 2.0 * w * (1.0 - w) * cross
    return w * direct + (1.0 - w) * synthetic, np.maximum(var, 0.0), w
