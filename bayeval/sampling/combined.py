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

**The synthetic estimate** of a difference is ``β̂ m̃_i``, ``β̂ = Σ y m̃ / Σ m̃²`` the least-squares slope of
the sample's estimates on the model's — Fay & Herriot's regression synthetic, with the model's estimate as the
covariate: a model that compresses the differences between runs (a hierarchical model does) is rescaled by the
sample (``slope=False``: ``β = 1``). Of a run's mean it is ``m̃_i + r̄``: the model's shift ``c`` is estimated
by the mean residual ``r̄``, ``r_i = y_i - m̃_i``.

**The spread** ``σ_i² = k² a_i`` (``a_i`` the model's own variance of the synthetic estimate,
``β̂² t_i²/(1 - ρ)²``: ``spread="model"``, default; ``a_i = 1``: ``spread="constant"``) is estimated by moments
from the residuals ``r_i`` (of the regression for differences):

- differences: ``Σ r_i² = Σ s_i² - Σ x_i² s_i²/Σ x² + k² (Σ a_i - Σ x_i² a_i/Σ x²)``, ``x = m̃`` (Fay & Herriot
  1979, §3, with the plain sum of squares in place of their weighted equation; the ``x`` terms are the degree
  of freedom the slope takes, none without it; ``estimator="fay-herriot"`` solves their
  ``Σ r_i²/(σ² + s_i²) = n`` for a constant spread without a slope);
- means, with the shift ``ĉ/(1 - ρ) = -r̄``: ``Σ (r_i - r̄)² = Σ s_i² - n Var(ē) + k² (1 - 1/n) Σ a_i``, where
  ``Var(ē) = 1ᵀ C 1 / n²`` from the sample's covariance ``C`` (the runs share one sample: their errors are
  correlated, and the shift absorbs their mean).

The model's error is never taken smaller than the model's own variance says: ``σ_i² ≥ a_i`` for
``spread="model"`` (``k² ≥ 1``), ``σ_i² ≥ β̂² t_i²/(1 - ρ)²`` in general, ``t_i`` the model's standard error.

**The combination.** The synthetic estimate's error ``f_i`` has variance ``F_i`` and covariance ``κ_i`` with
``e_i``: for differences ``F_i = σ_i² + x_i² Σ_j x_j² (σ_j² + s_j²)/(Σ x²)²`` (the slope's own error, Prasad &
Rao 1990) and ``κ_i = x_i² s_i²/Σ x²``; for means ``f_i = (u_i - ū)/(1 - ρ) + ē``,
``F_i = σ_i² (1 - 2/n) + Σ_j σ_j²/n² + Var(ē)``, ``κ_i = (C 1)_i / n``. The estimate is the best linear
combination (Efron & Morris 1975; the BLUP of Fay & Herriot with its coefficients estimated):

    θ̂_i = w_i y_i + (1 - w_i) · synthetic_i,   w_i = (F_i - κ_i) / (s_i² + F_i - 2 κ_i),
    Var(θ̂_i - θ_i) = w_i² s_i² + (1 - w_i)² F_i + 2 w_i (1 - w_i) κ_i;

with ``F_i = σ_i²`` and ``κ_i = 0`` this is ``w_i = σ_i²/(σ_i² + s_i²)`` and the posterior precision
``1/σ_i² + 1/s_i²``: the normal posterior of ``θ_i`` under the prior ``θ_i ~ N(synthetic_i, σ_i²)`` and the
likelihood ``y_i ~ N(θ_i, s_i²)``. ``P(θ_i < 0) = Φ(-θ̂_i / sd_i)``. ``σ² → ∞`` gives the sample's estimate,
``σ² = 0`` (with ``ρ = 0`` and no slope) the model's.

``ρ`` is not identified by one sample (only ``Var(y - m) = (1 - ρ)² s² + σ_u²`` is), so it is a setting: 0.5,
chosen on Robust 2003 and two synthetic collections, where the measured share for run pairs was 0.43–0.62
(0.23–0.69 over all three; docs/sampling.md). With
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
from bayeval.sampling._combined_kernels import (
    fay_herriot_spread,
    group_shift_terms,
    grouped_moment_spread,
    moment_spread,
    slope_spread,
    weigh,
)

__all__ = ["SHARE", "SPREADS", "CombinedEstimate", "combine_differences", "combine_means", "weigh"]

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
    slope : float
        ``β̂``, the factor of the model's (decorrelated) estimate in the synthetic estimate (1 without a slope).
    group_shift : ndarray, shape (n,), optional
        The shift added back to each quantity: its group's ``-ĉ_g/(1 - ρ)`` with run groups
        (:func:`combine_means`), else ``shift`` for every quantity (None where not given).
    """

    mean: np.ndarray
    se: np.ndarray
    weight: np.ndarray
    spread: np.ndarray
    share: float
    shift: float
    slope: float
    group_shift: np.ndarray | None = None

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
                        spread: str | float = "model", slope: bool = True, estimator: str = "moment",
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
    spread : {"model", "constant"} or float >= 0
        The form of the model's error variance ``σ_i²``: ``k² t_i²`` (``"model"``, default: the model's error
        grows with its own uncertainty) or one ``σ²`` for all (``"constant"``); a number fixes ``σ²`` (no
        estimation, no floor; ``inf``: the sample alone).
    slope : bool
        Regress on the model (default): the synthetic estimate is ``β̂ m̃_i``, ``β̂ = Σ y m̃ / Σ m̃²`` — Fay &
        Herriot's regression with the model's estimate as the covariate (a model that compresses or stretches
        the differences is rescaled by the sample); ``False``: ``β = 1``.
    estimator : {"moment", "fay-herriot"}
        How ``σ²`` is estimated with ``spread="constant"`` and ``slope=False``: the plain moments (default) or
        Fay & Herriot's weighted equation.
    groups : array_like, shape (n,), optional
        Labels: the spread is estimated within each group (e.g. pairs with and without a manual run).

    Returns
    -------
    CombinedEstimate
        ``p_less()`` gives ``P(Δ_i < 0)``.

    Notes
    -----
    With the slope, the synthetic estimate's error carries the error of ``β̂`` (Prasad & Rao 1990's second
    term): ``F_i = σ_i² + x_i² Σ_j x_j² (σ_j² + s_j²) / (Σ x²)²`` and ``κ_i = x_i² s_i² / Σ x²``
    (``x = m̃``, ``y_i`` is part of ``β̂``), and the spread's moment equation counts the degree of freedom the
    fit takes (``tr(M D M) = Σ d - Σ x² d / Σ x²``, ``M`` the residual projection).

    Examples
    --------
    >>> import numpy as np
    >>> y, s = np.array([0.02, -0.01, 0.05]), np.array([0.01, 0.01, 0.01])
    >>> m, t = np.array([0.03, -0.02, 0.04]), np.array([0.002, 0.002, 0.002])
    >>> combine_differences(y, s, m, t, share=0.0, spread=np.inf).mean.tolist() == y.tolist()
    True
    >>> combine_differences(y, s, m, t, share=0.0, spread=0.0, slope=False).mean.tolist() == m.tolist()
    True
    """
    y, s, m, t = _vectors(sample_delta=sample_delta, sample_se=sample_se, model_delta=model_delta,
                          model_se=model_se)
    share = _share(share)
    lab = _groups(groups, y.size)
    s2 = s * s
    x = (m - share * y) / (1.0 - share)
    xx = float(np.sum(x * x))
    beta = float(np.sum(y * x) / xx) if slope and xx > 0 else 1.0
    resid = y - beta * x
    floor = (beta * t / (1.0 - share)) ** 2
    sig2 = _spread(resid, s2, floor, spread, estimator, lab, centred=False, common=0.0,
                   covariate=x if slope and xx > 0 else None)
    f2, cross = sig2, np.zeros_like(y)
    if slope and xx > 0 and not np.all(np.isinf(sig2)):
        f2 = sig2 + x * x * float(np.sum(x * x * (sig2 + s2))) / xx ** 2
        cross = x * x * s2 / xx
    mean, var, w = weigh(y, s2, beta * x, f2, cross)
    return CombinedEstimate(mean, np.sqrt(var), w, sig2, share, 0.0, beta)


def combine_means(sample_mean, sample_covariance, model_mean, model_se, *, share: float = SHARE,
                  spread: str | float = "model", estimator: str = "moment", groups=None) -> CombinedEstimate:
    """Combine the sample's and the model's estimates of every run's mean (e.g. MAP), allowing the model a
    common shift (its bias, which the sample estimates), or one shift per run group.

    Parameters
    ----------
    sample_mean : array_like, shape (n,)
        The sample's estimates ``y_i``.
    sample_covariance : array_like, shape (n, n)
        Their design-based covariance ``C`` (the runs share one sample).
    model_mean, model_se : array_like, shape (n,)
        The model's estimates and its own standard errors.
    share, spread, estimator
        As in :func:`combine_differences` (``estimator="fay-herriot"`` is for differences only). No slope: the
        model's error of a run's mean is mostly a shift common to all runs, estimated here (chosen on Robust
        2003 and synthetic collections against a regression on the model, docs/sampling.md).
    groups : array_like, shape (n,), optional
        A label per run (e.g. TREC's run type, automatic or manual): the model gets one shift per group,
        each estimated from its own runs (below). ``None`` or a single label: one common shift (the default,
        bit-identical to leaving it out).

    Returns
    -------
    CombinedEstimate
        ``interval()`` gives each run's interval; ``group_shift`` each run's shift.

    Notes
    -----
    **A shift per run group.** With groups, the model's error is ``m_i = θ_i + ρ e_i + c_g + u_i`` for run i
    in group g (``n_g`` runs): a relevance model can miss one kind of run more than another (on TREC-8 it
    under-estimates manual runs' MAP more than automatic ones'). Each group's shift is estimated by its own
    mean residual ``r̄_g`` and the synthetic estimate is ``m̃_i + r̄_g``; everything of the one-shift form holds
    within the group, the group's mean sampling error ``ē_g`` in place of ``ē``:

    - spread, one ``k²`` for all groups: ``Σ_g Σ_{i∈g} (r_i - r̄_g)² = Σ s_i² - Σ_g n_g Var(ē_g)
      + k² Σ_g (1 - 1/n_g) Σ_{i∈g} a_i``, ``Var(ē_g) = 1_gᵀ C 1_g / n_g²``;
    - the synthetic estimate's error ``f_i = (u_i - ū_g)/(1 - ρ) + ē_g``:
      ``F_i = σ_i² (1 - 2/n_g) + Σ_{j∈g} σ_j²/n_g² + Var(ē_g)``, ``κ_i = (C 1_g)_i / n_g``.

    The uncertainty of a group's shift is thus carried into every interval of the group: a small group's
    shift is uncertain (``Var(ē_g)`` and ``Σ σ_j²/n_g²`` are large), its synthetic estimate weighs less and the
    interval leans on the sample; a group of one run gets the sample's estimate and standard error
    (``F_i = κ_i = s_i²``). The shifts are not shrunk toward a common one: a wrong shrinkage would bring back
    the bias the groups remove, and the carried error already keeps a small group from an over-confident
    shift.
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
    lab = _groups(groups, n, "run")
    s2 = np.diag(c).copy()
    synth0 = (m - share * y) / (1.0 - share)
    resid = y - synth0
    shift, common, cross, size = group_shift_terms(resid, c, lab)          # one group: the common shift
    floor = (t / (1.0 - share)) ** 2
    if isinstance(spread, str):
        _check_spread(spread, estimator)
        scale = np.ones(n) if spread == "constant" else floor
        sig2 = np.maximum(grouped_moment_spread(resid, s2, scale, lab, common) * scale, floor)
    else:
        sig2 = _spread(resid, s2, floor, spread, estimator, lab, centred=True, common=0.0)
    if np.all(np.isinf(sig2)):
        f2 = sig2
    else:
        group_sum = np.zeros(n)
        for g in np.unique(lab):
            group_sum[lab == g] = sig2[lab == g].sum()
        f2 = sig2 * (1.0 - 2.0 / size) + group_sum / size ** 2 + common
    mean, var, w = weigh(y, s2, synth0 + shift, f2, cross)
    return CombinedEstimate(mean, np.sqrt(var), w, sig2, share, float(resid.mean()), 1.0, shift)


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


def _groups(groups, n: int, what: str = "difference") -> np.ndarray:
    if groups is None:
        return np.zeros(n, dtype=np.int64)
    lab = np.asarray(groups)
    if lab.shape != (n,):
        raise BayevalInputError(f"groups: one label per {what} ({n}), got shape {lab.shape}")
    try:
        return np.unique(lab, return_inverse=True)[1].reshape(n)
    except TypeError as exc:
        raise BayevalInputError(f"groups: labels of one comparable kind (e.g. all strings), got {exc}") from None


def _check_spread(spread: str, estimator: str) -> None:
    if spread not in SPREADS:
        raise BayevalInputError(f"spread: one of {', '.join(SPREADS)} or a number >= 0, got {spread!r}")
    if estimator not in ESTIMATORS:
        raise BayevalInputError(f"estimator: one of {', '.join(ESTIMATORS)}, got {estimator!r}")


def _spread(resid, s2, floor, spread, estimator, groups, *, centred: bool, common: float,
            covariate=None) -> np.ndarray:
    """``σ_i²`` of the model's own error: fixed, or estimated by moments within each group and floored at the
    model's own variance on the synthetic estimate's scale (``floor``)."""
    if not isinstance(spread, str):
        if not float(spread) >= 0.0:
            raise BayevalInputError(f"spread: 'constant', 'model' or a number >= 0, got {spread!r}")
        return np.full(resid.size, float(spread))
    _check_spread(spread, estimator)
    out = np.empty(resid.size)
    for g in np.unique(groups):
        at = groups == g
        scale = np.ones(int(at.sum())) if spread == "constant" else floor[at]
        if spread == "constant" and estimator == "fay-herriot" and covariate is None:
            k2 = fay_herriot_spread(resid[at], s2[at])
        elif covariate is not None:
            k2 = slope_spread(resid[at], s2[at], scale, covariate[at])
        else:
            k2 = moment_spread(resid[at], s2[at], scale, centred=centred, common=common)
        out[at] = k2 * scale
    return np.maximum(out, floor)
