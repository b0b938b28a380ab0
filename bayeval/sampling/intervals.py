"""Intervals for a mean in [0, 1] whose standard error grows with its estimate: normal on a power scale.

A ratio estimate from a random sample (statAP and its bias-corrected form) errs together with its own
standard error: a sample that finds few relevant documents gives a low estimate *and* a small standard error,
so the symmetric interval ``m ± z·se`` misses the truth above it far more often than below it. When the
standard error grows like a power of the estimate, ``se ∝ m^α``, the delta method makes ``m^γ`` with
``γ = 1 - α`` the variance-stabilising scale (``γ → 0``: the logarithm): the normal interval there, mapped
back, is not symmetric around ``m`` and no longer leans on a standard error that is small exactly when the
estimate is. :func:`power_exponent` estimates ``α`` from the runs of one evaluation (they share the sample);
:func:`power_interval` and :func:`power_bounds` give the interval. Chosen on Robust 2003 and synthetic
collections, formulas and figures: docs/sampling.md.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from bayeval.errors import BayevalInputError

__all__ = ["power_bounds", "power_exponent", "power_interval"]

#: Below this exponent the logarithm is used (``m^γ`` and ``log m`` differ by < 1% of the interval there).
_LOG_BELOW = 0.02


def power_exponent(mean: np.ndarray, se: np.ndarray) -> float:
    """The variance-stabilising exponent ``γ = 1 - α̂`` of the runs' estimates, ``α̂`` the least-squares slope of
    ``log se`` on ``log m`` over the runs, clipped to [0, 1].

    Parameters
    ----------
    mean, se : ndarray, shape (S,)
        Each run's estimate and standard error from one sample (runs with ``m ≤ 0`` or ``se ≤ 0`` are left out).

    Returns
    -------
    float
        ``γ`` in [0, 1]: 1 is the identity (the normal interval), 1/2 the square root, 0 the logarithm. 1 when
        fewer than 3 runs, or fewer than 2 distinct estimates, are usable.

    Notes
    -----
    If ``se(m) = c·m^α``, then ``Var(m^γ) ≈ γ² m^{2γ-2} c² m^{2α}`` (delta method), constant in ``m`` when
    ``γ = 1 - α`` (the variance-stabilising transformation; Bartlett 1947, *Biometrics* 3:39-52). ``α`` is
    estimated across the runs evaluated on the same sample: their standard errors come from the same design, and
    the runs span a range of estimates.
    """
    m = np.asarray(mean, dtype=np.float64)
    s = np.asarray(se, dtype=np.float64)
    if m.shape != s.shape or m.ndim != 1:
        raise BayevalInputError(f"mean, se: two arrays of one shape (S,), got {m.shape} and {s.shape}")
    ok = np.isfinite(m) & np.isfinite(s) & (m > 0) & (s > 0)
    if ok.sum() < 3 or np.ptp(np.log(m[ok])) <= 0:
        return 1.0
    x, y = np.log(m[ok]), np.log(s[ok])
    x = x - x.mean()
    alpha = float(np.sum(x * (y - y.mean())) / np.sum(x * x))
    return float(np.clip(1.0 - alpha, 0.0, 1.0))


def power_bounds(mean: np.ndarray, se: np.ndarray, exponent: np.ndarray | float,
                 level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of the ``level`` interval of each estimate, normal on the scale ``m^γ`` (``log m`` for ``γ`` = 0),
    mapped back and kept in [0, 1].

    Parameters
    ----------
    mean, se : array_like
        Estimates in [0, 1] and their standard errors (any shape, broadcast together).
    exponent : array_like or float
        ``γ`` in [0, 1] for each estimate (1: ``m ± z·se``).
    level : float in (0, 1)

    Returns
    -------
    lower, upper : ndarray

    Notes
    -----
    With ``z = Φ⁻¹(1/2 + level/2)``, ``u = m^γ`` and ``h = z·γ·m^{γ-1}·se`` (``γ > 0``):
    ``[max(u - h, 0)^{1/γ}, (u + h)^{1/γ}]``;
    ``γ = 0``: ``m·exp(∓z·se/m)`` (the log interval). The delta method carries ``se`` to the new scale. An
    estimate ``m ≤ 0`` (no scale to transform) keeps ``m ± z·se``. Bounds are clipped to [0, 1], the range of
    the measures estimated.
    """
    if not 0 < level < 1:
        raise BayevalInputError(f"level: must lie in (0, 1), got {level!r}")
    m, s, g = np.broadcast_arrays(np.asarray(mean, dtype=np.float64), np.asarray(se, dtype=np.float64),
                                  np.asarray(exponent, dtype=np.float64))
    if np.any(~((g >= 0) & (g <= 1))):
        raise BayevalInputError("exponent: must lie in [0, 1]")
    z = stats.norm.ppf(0.5 + level / 2)
    lo, hi = m - z * s, m + z * s
    pos = m > 0
    mp = np.where(pos, m, 1.0)
    log = pos & (g < _LOG_BELOW)
    half = z * s / mp
    lo = np.where(log, mp * np.exp(-half), lo)
    hi = np.where(log, mp * np.exp(np.minimum(half, 700.0)), hi)
    pw = pos & ~log
    gs = np.where(pw, g, 1.0)
    u = mp ** gs
    du = z * gs * mp ** (gs - 1.0) * s
    lo = np.where(pw, np.maximum(u - du, 0.0) ** (1.0 / gs), lo)
    hi = np.where(pw, (u + du) ** (1.0 / gs), hi)
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


def power_interval(mean: np.ndarray, variance: np.ndarray, level: float = 0.95,
                   exponent: float | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """The ``level`` interval of every run's mean on the power scale its standard errors call for.

    Parameters
    ----------
    mean, variance : ndarray, shape (S,)
        Each run's estimate and variance estimate, e.g. ``evaluation.mean("AP")`` of
        :func:`bayeval.sampling.corrected_measures`.
    level : float in (0, 1)
    exponent : float in [0, 1], optional
        ``γ``; default :func:`power_exponent` of the runs.

    Returns
    -------
    lower, upper : ndarray, shape (S,)
    exponent : float
        The ``γ`` used.

    Examples
    --------
    >>> import numpy as np
    >>> m = np.array([0.1, 0.2, 0.4])
    >>> lo, hi, g = power_interval(m, (0.05 * np.sqrt(m / 0.1)) ** 2)
    >>> round(g, 3), bool(np.all(hi - m > m - lo))
    (0.5, True)
    """
    m = np.asarray(mean, dtype=np.float64)
    v = np.asarray(variance, dtype=np.float64)
    if m.shape != v.shape:
        raise BayevalInputError(f"mean, variance: one shape, got {m.shape} and {v.shape}")
    if np.any(v < 0):
        raise BayevalInputError("variance: must be >= 0")
    se = np.sqrt(v)
    g = power_exponent(m, se) if exponent is None else float(exponent)
    lo, hi = power_bounds(m, se, g, level)
    return lo, hi, g
