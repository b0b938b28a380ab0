"""An empirical-Bayes combination of a relevance model's estimates with a random sample's (:func:`combine_differences`,
:func:`combine_means`).

The model alone is sharp and often right about the order of two runs, but its standard errors are far too small
(it trusts its own guesses about the unjudged documents); the model-assisted estimate from a random sample
(:func:`bayeval.sampling.assisted_measures`) has a standard error that holds by design, but is less sharp. Here
the sample itself says how far the model errs, and each quantity's estimate leans on the model as far as that
error allows — the estimator of Fay & Herriot (1979) and Efron & Morris (1975) for many small areas, with the
model's estimate as the synthetic one and the sample's as the direct one.

**The model.** For each quantity i (a run pair's ΔMAP, or a run's MAP) the sample gives ``y_i = θ_i + e_i`` with
``Var e_i = s_i²`` (design-based, ``s_i`` its standard error) and the model gives ``m_i``. The two are not
independent: the model is fitted on the same sample, and where the sample happened to find more relevant
documents both rise. The model's error is therefore split into the share ``ρ`` of the sampling error it
carries and an error of its own, ``u_i``, independent of ``e_i``:

    m_i = θ_i + ρ e_i + c + u_i,   Var u_i = σ_u,i²,

``c`` a shift common to every quantity (0 for differences: the orientation of a pair is arbitrary). Then

    m̃_i = (m_i - ρ y_i) / (1 - ρ) = θ_i + (c + u_i)/(1 - ρ)

is an estimate of ``θ_i`` whose error is independent of the sample's, with ``σ_i² = σ_u,i²/(1 - ρ)²``.

**The spread** ``σ_i² = k² a_i`` (``a_i = 1``: constant, ``spread="constant"``; ``a_i`` the model's own variance
of ``m_i``: ``spread="model"``) is estimated by moments from the residuals
``r_i = y_i - m̃_i = e_i - (c + u_i)/(1 - ρ)``:

- differences: ``Σ r_i² = Σ s_i² + k² Σ a_i`` (Fay & Herriot 1979, §3, with the mean of ``r²`` in place of their
  weighted equation; ``estimator="fay-herriot"`` solves theirs, ``Σ r_i²/(σ² + s_i²) = n``);
- means, with the shift ``ĉ/(1 - ρ) = -r̄``: ``Σ (r_i - r̄)² = Σ s_i² - n Var(ē) + k² (1 - 1/n) Σ a_i``, where
  ``Var(ē) = 1ᵀ C 1 / n²`` from the sample's covariance ``C`` (the runs share one sample: their errors are
  correlated, and the shift absorbs their mean).

The model's error is never taken smaller than the model's own variance says: ``σ_i² ≥ t_i²/(1 - ρ)²``, ``t_i``
the model's standard error.

**The combination.** The synthetic estimate is ``m̃_i`` (differences) or ``m̃_i + r̄`` (means; error
``f_i = (u_i - ū)/(1 - ρ) + ē``, variance ``F_i = σ_i² (1 - 2/n) + Σ_j σ_j²/n² + Var(ē)``, covariance with
``e_i`` ``κ_i = (C 1)_i / n``); for differences ``F_i = σ_i²``, ``κ_i = 0``. The estimate is the best linear
combination (Efron & Morris 1975; the BLUP of Fay & Herriot with its mean estimated, Prasad & Rao 1990):

    θ̂_i = w_i y_i + (1 - w_i) · synthetic_i,   w_i = (F_i - κ_i) / (s_i² + F_i - 2 κ_i),
    Var(θ̂_i - θ_i) = w_i² s_i² + (1 - w_i)² F_i + 2 w_i (1 - w_i) κ_i,

for differences ``w_i = σ_i²/(σ_i² + s_i²)`` and the posterior precision ``1/σ_i² + 1/s_i²``: the normal
posterior of ``θ_i`` under the prior ``θ_i ~ N(m̃_i, σ_i²)`` and the likelihood ``y_i ~ N(θ_i, s_i²)``.
``P(θ_i < 0) = Φ(-θ̂_i / sd_i)``. ``σ² → ∞`` gives the sample's estimate, ``σ² = 0`` (with ``ρ = 0``) the model's.

``ρ`` is not identified by one sample (only ``Var(y - m) = (1 - ρ)² s² + σ_u²`` is), so it is a setting: 0.5,
measured on Robust 2003 and two synthetic collections (0.50–0.63 for run pairs, docs/sampling.md). With
``ρ = 0`` (errors taken as independent) the spread is under-estimated — often to 0 at small budgets — and the
combination is over-confident.

References
----------
Fay, R. E. & Herriot, R. A. (1979). Estimates of income for small places: an application of James-Stein
procedures to census data. *JASA* 74(366), 269-277.
Efron, B. & Morris, C. (1975). Data analysis using Stein's estimator and its generalizations. *JASA* 70(350),
311-319.
Prasad, N. G. N. & Rao, J. N. K. (1990). The estimation of the mean squared error of small-area estimators.
*JASA* 85(409), 163-171.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from bayeval.errors import BayevalInputError
from bayeval.sampling._combined_kernels import fay_herriot_spread, moment_spread, weigh

__all__ = ["SHARE", "SPREADS", "CombinedEstimate", "combine_differences", "combine_means"]

#: The default share ``ρ`` of the sample's error the model's estimate carries (chosen on Robust 2003 and
#: synthetic collections, docs/sampling.md).
SHARE = 0.5
#: Forms of the model's error variance across quantities.
SPREADS = ("constant", "model")
ESTIMATORS = ("moment", "fay-herriot")


@dataclass(frozen=True)
class CombinedEstimate:
    """The combined estimates of n quantities.

    Attributes
    ----------
    mean, se : ndarray, shape (n,)
        Estimate and standard error of each quantity.
    weight : ndarray, shape (n,)
        ``w_i``, the weight of the sample's estimate (1: the sample alone, 0: the model alone).
    spread : ndarray, shape (n,)
        ``σ_i²``, the variance of the model's own error (on the decorrelated scale, see the module).
    share : float
        ``ρ``.
    shift : float
        The model's common shift ``ĉ/(1 - ρ)`` added back (0 for differences).
    """

    mean: np.ndarray
    se: np.ndarray
    weight: np.ndarray
    spread: np.ndarray
    share: float
    shift: float

    def p_less(self) -> np.ndarray:
        """``P(θ_i < 0) = Φ(-θ̂_i / sd_i)`` (0 or 1 where ``sd_i = 0``, ½ at a tie)."""
        sd = self.se
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(sd > 0, stats.norm.cdf(-self.mean / np.where(sd > 0, sd, 1.0)),
                            (self.mean < 0) + 0.5 * (self.mean == 0))

    def interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Normal ``level`` interval ``θ̂_i ± z·sd_i``."""
        if not 0 < level < 1:
            raise BayevalInputError(f"level: must lie in (0, 1), got {level!r}")
        z = stats.norm.ppf(0.5 + level / 2)
        return self.mean - z * self.se, self.mean + z * self.se


def combine_differences(sample_delta, sample_se, model_delta, model_se, *, share: float = SHARE,
                        spread: str | float = "constant", estimator: str = "moment",
                        groups=None) -> CombinedEstimate:
    """Combine the sample's and the model's estimates of run differences (e.g. ΔMAP of run pairs).

    Parameters
    ----------
    sample_delta, sample_se : array_like, shape (n,)
        The sample's (model-assisted) estimates ``y_i`` and their design-based standard errors ``s_i``.
    model_delta, model_se : array_like, shape (n,)
        The model's estimates ``m_i`` and its own standard errors ``t_i``.
    share : float in [0, 1)
        ``ρ``, the share of the sample's error the model's estimate carries (see the module).
    spread : {"constant", "model"} or float >= 0
        The form of the model's error variance ``σ_i²``: one ``σ²`` estimated for all (``"constant"``), or
        ``k² t_i²`` (``"model"``); a number fixes ``σ²`` (no estimation, no floor; ``inf``: the sample alone).
    estimator : {"moment", "fay-herriot"}
        How ``σ²`` is estimated with ``spread="constant"``: the plain moments (default) or Fay & Herriot's
        weighted equation.
    groups : array_like, shape (n,), optional
        Labels: the spread is estimated within each group (e.g. pairs with and without a manual run).

    Returns
    -------
    CombinedEstimate
        ``p_less()`` gives ``P(Δ_i < 0)``.

    Examples
    --------
    >>> import numpy as np
    >>> y, s = np.array([0.02, -0.01, 0.05]), np.array([0.01, 0.01, 0.01])
    >>> m, t = np.array([0.03, -0.02, 0.04]), np.array([0.002, 0.002, 0.002])
    >>> combine_differences(y, s, m, t, share=0.0, spread=np.inf).mean.tolist() == y.tolist()
    True
    >>> combine_differences(y, s, m, t, share=0.0, spread=0.0).mean.tolist() == m.tolist()
    True
    """
    y, s, m, t = _vectors(sample_delta=sample_delta, sample_se=sample_se, model_delta=model_delta,
                          model_se=model_se)
    share = _share(share)
    lab = _groups(groups, y.size)
    s2 = s * s
    synth = (m - share * y) / (1.0 - share)
    resid = y - synth
    sig2 = _spread(resid, s2, t, share, spread, estimator, lab, centred=False, common=0.0)
    mean, var, w = weigh(y, s2, synth, sig2, np.zeros_like(y))
    return CombinedEstimate(mean, np.sqrt(var), w, sig2, share, 0.0)


def combine_means(sample_mean, sample_covariance, model_mean, model_se, *, share: float = SHARE,
                  spread: str | float = "constant", estimator: str = "moment") -> CombinedEstimate:
    """Combine the sample's and the model's estimates of every run's mean (e.g. MAP), allowing the model a
    common shift (its bias, which the sample estimates).

    Parameters
    ----------
    sample_mean : array_like, shape (n,)
        The sample's estimates ``y_i``.
    sample_covariance : array_like, shape (n, n)
        Their design-based covariance ``C`` (the runs share one sample).
    model_mean, model_se : array_like, shape (n,)
        The model's estimates and its own standard errors.
    share, spread, estimator
        As in :func:`combine_differences` (``estimator="fay-herriot"`` is for differences only).

    Returns
    -------
    CombinedEstimate
        ``interval()`` gives each run's interval.
    """
    y, m, t = _vectors(sample_mean=sample_mean, model_mean=model_mean, model_se=model_se)
    c = np.asarray(sample_covariance, dtype=np.float64)
    n = y.size
    if c.shape != (n, n) or not np.all(np.isfinite(c)) or np.any(np.diag(c) < 0):
        raise BayevalInputError(f"sample_covariance: a finite ({n}, {n}) matrix with a diagonal >= 0, "
                                f"got shape {c.shape}")
    if estimator != "moment":
        raise BayevalInputError(f"estimator: only 'moment' for means, got {estimator!r}")
    if n < 3:
        raise BayevalInputError(f"sample_mean: at least 3 runs are needed to estimate the spread, got {n}")
    share = _share(share)
    s2 = np.diag(c).copy()
    common = float(c.sum()) / n ** 2
    cross = c.sum(axis=1) / n
    synth0 = (m - share * y) / (1.0 - share)
    resid = y - synth0
    shift = float(resid.mean())
    sig2 = _spread(resid, s2, t, share, spread, estimator, np.zeros(n, dtype=np.int64), centred=True,
                   common=common)
    if np.all(np.isinf(sig2)):
        f2 = sig2
    else:
        f2 = sig2 * (1.0 - 2.0 / n) + sig2.sum() / n ** 2 + common
    mean, var, w = weigh(y, s2, synth0 + shift, f2, cross)
    return CombinedEstimate(mean, np.sqrt(var), w, sig2, share, shift)


def _vectors(**arrays) -> list[np.ndarray]:
    out, n = [], None
    for name, a in arrays.items():
        v = np.asarray(a, dtype=np.float64)
        if v.ndim != 1 or not np.all(np.isfinite(v)):
            raise BayevalInputError(f"{name}: a one-dimensional array of finite numbers, got shape {v.shape}")
        if n is not None and v.size != n:
            raise BayevalInputError(f"{name}: {v.size} values where the others have {n}")
        if name.endswith("_se") and np.any(v < 0):
            raise BayevalInputError(f"{name}: standard errors must be >= 0")
        n = v.size
        out.append(v)
    return out


def _share(share: float) -> float:
    if not 0.0 <= float(share) < 1.0:
        raise BayevalInputError(f"share: must lie in [0, 1), got {share!r}")
    return float(share)


def _groups(groups, n: int) -> np.ndarray:
    if groups is None:
        return np.zeros(n, dtype=np.int64)
    lab = np.asarray(groups)
    if lab.shape != (n,):
        raise BayevalInputError(f"groups: one label per difference ({n}), got shape {lab.shape}")
    return np.unique(lab, return_inverse=True)[1]


def _spread(resid, s2, t, share, spread, estimator, groups, *, centred: bool, common: float) -> np.ndarray:
    """``σ_i²`` of the model's own error: fixed, or estimated by moments within each group and floored at the
    model's own variance on the decorrelated scale."""
    if not isinstance(spread, str):
        if not float(spread) >= 0.0:
            raise BayevalInputError(f"spread: 'constant', 'model' or a number >= 0, got {spread!r}")
        return np.full(resid.size, float(spread))
    if spread not in SPREADS:
        raise BayevalInputError(f"spread: one of {', '.join(SPREADS)} or a number >= 0, got {spread!r}")
    if estimator not in ESTIMATORS:
        raise BayevalInputError(f"estimator: one of {', '.join(ESTIMATORS)}, got {estimator!r}")
    floor = t * t / (1.0 - share) ** 2
    out = np.empty(resid.size)
    for g in np.unique(groups):
        at = groups == g
        scale = np.ones(int(at.sum())) if spread == "constant" else floor[at]
        if spread == "constant" and estimator == "fay-herriot":
            k2 = fay_herriot_spread(resid[at], s2[at])
        else:
            k2 = moment_spread(resid[at], s2[at], scale, centred=centred, common=common)
        out[at] = k2 * scale
    return np.maximum(out, floor)
