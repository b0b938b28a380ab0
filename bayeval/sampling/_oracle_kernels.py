"""Array kernels of the design variance of model-assisted AP when the truth is known (the oracle bound).

Under Poisson sampling the corrected labels ``z_d = λ p_d + I_d (x_d - λ p_d)/π_d`` are independent with
``Var z_d = (1 - π_d)/π_d · (x_d - λ p_d)²``, so the linearised estimator of a smooth measure θ(z) has the
design variance ``V(λ) = Σ_d (1 - π_d)/π_d · (x_d - λ p_d)² · (∂θ/∂x_d)²``, derivatives at the truth
(Särndal, Swensson & Wretman 1992, §6.6 and §5.5). For AP = N/R (N = Σ_d x_d prec@r(d)):
``∂AP/∂x_d = (∂N/∂x_d - AP)/R`` with ``∂N/∂x_d = (1 + Σ_{above d} x)/r_d + Σ_{d' below d} x_{d'}/r_{d'}``
(0 when the run does not retrieve d). docs/notes/sampling-record.md, "how narrow can the model-assisted interval be?".
"""

from __future__ import annotations

import numpy as np

from bayeval.sampling._stat_kernels import ap_slopes, ap_sums

__all__ = ["ap_derivatives", "best_weight", "variance_terms"]


def ap_derivatives(x_ranked: np.ndarray, rank_of_pool: np.ndarray, relevant: float
                   ) -> tuple[np.ndarray, np.ndarray]:
    """AP of every system and ``∂AP/∂x_d`` of the given documents, at the labels ``x`` (the truth, or any
    real-valued stand-in for it such as a model's predictions).

    Parameters
    ----------
    x_ranked : ndarray, shape (S, D)
        Labels in each system's rank order, 0 past the end of a list.
    rank_of_pool : ndarray of int, shape (S, n)
        1-based rank of each document whose derivative is wanted in each system, 0 where not retrieved.
    relevant : float
        ``R = Σ_d x_d`` over the pool.

    Returns
    -------
    ap : ndarray, shape (S,)
        ``N / R`` (0 when ``R = 0``).
    slopes : ndarray, shape (S, n)
        ``(∂N/∂x_d - AP) / R`` (0 when ``R = 0``: a topic without relevant documents has no AP to move).
    """
    S, n = rank_of_pool.shape
    if relevant <= 0:
        return np.zeros(S), np.zeros((S, n))
    rank, _, above, below, num = ap_sums(np.asarray(x_ranked, dtype=np.float64))
    ap = num / relevant
    return ap, (ap_slopes(rank, above, below, rank_of_pool) - ap[:, None]) / relevant


def variance_terms(x: np.ndarray, p: np.ndarray, pi: np.ndarray, lam: float, slopes: np.ndarray) -> np.ndarray:
    """Each pooled document's share of every system's design variance, ``(1 - π)/π · (x - λ p)² · slope²``,
    shape (S, n); ``π`` in (0, 1] (0 where ``π = 1``: a document always drawn adds nothing)."""
    pi = np.asarray(pi, dtype=np.float64)
    return ((1.0 - pi) / pi * (x - lam * p) ** 2)[None, :] * slopes**2


def best_weight(x: np.ndarray, p: np.ndarray, pi: np.ndarray, spread: np.ndarray) -> float:
    """The λ minimising ``Σ_d (1 - π_d)/π_d (x_d - λ p_d)² spread_d`` (``spread_d = Σ_s slope_sd²``, the systems'
    summed squared derivatives): ``λ* = Σ c x p spread / Σ c p² spread``, not clipped (a regression coefficient;
    0 when every ``c p² spread`` is 0)."""
    pi = np.asarray(pi, dtype=np.float64)
    c = (1.0 - pi) / pi
    den = float(np.sum(c * p * p * spread))
    return float(np.sum(c * x * p * spread) / den) if den > 0 else 0.0
