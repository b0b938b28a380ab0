"""Array kernels of the model-assisted (prediction-powered) estimates of AP and P@k for one topic.

Every document of the pool gets a *corrected label* ``z_d = λ p_d + I_d (x_d - λ p_d) / π_d`` (``p_d`` the
model's prediction, ``I_d`` whether it was sampled, ``π_d`` its inclusion probability): under Poisson sampling
the ``z_d`` are independent with ``E z_d = x_d``, so any measure's numerator that is multilinear in the labels
(precision at k, AP's ``Σ_d x_d prec@r(d)``, R) evaluated at ``z`` is unbiased. Variances by linearisation
(docs/sampling.md).
"""

from __future__ import annotations

import numpy as np

from bayeval.sampling._stat_kernels import ap_slopes, ap_sums

__all__ = ["assisted_topic", "tuned_weight"]


def assisted_topic(z_ranked: np.ndarray, lengths: np.ndarray, rank_of_sampled: np.ndarray, resid: np.ndarray,
                   coef: np.ndarray, r_hat: float, cutoffs: tuple[int, ...], z_own: np.ndarray,
                   x_own: np.ndarray, r_floor: float = 0.0, drop: np.ndarray | None = None,
                   at_z: bool = False) -> dict[str, np.ndarray]:
    """Estimates and per-document influences of every system for one topic.

    Parameters
    ----------
    z_ranked : ndarray, shape (S, D)
        Corrected labels in each system's rank order (0 past the end of a list and for unpooled documents).
    lengths : ndarray of int, shape (S,)
    rank_of_sampled : ndarray of int, shape (S, n)
        1-based rank of each sampled document in each system, 0 where not retrieved (within depth).
    resid : ndarray, shape (n,)
        ``x_e - λ p_e`` of each sampled document.
    coef : ndarray, shape (n,)
        ``(1 - π_e) / π_e²``.
    r_hat : float
        ``R̂ = Σ_{d ∈ pool} z_d``.
    cutoffs : tuple of int
    z_own, x_own : ndarray, shape (n,)
        Each sampled document's corrected label ``z_e`` and label ``x_e``: its AP derivative is evaluated with
        ``z_e`` put back to ``x_e`` (docs/sampling.md, "Model-assisted").
    r_floor : float
        A known lower bound of R (the sampled relevant documents' count): ``R̂`` is taken as
        ``max(R̂, r_floor)``, for the estimate and its derivatives.
    drop : ndarray, shape (n,), optional
        Each sampled document's draw term ``δ_e = (x_e - λ p_e)/π_e``. When given, AP's influences are the
        delete-one Poisson jackknife's, ``g_se = √(1 - π_e) · (AP_s - AP_s(e))`` with ``AP_s(e)`` the exact
        estimate with e's draw undone (``z_e → λ p_e``): for a statistic linear in the labels this is the
        Horvitz-Thompson variance estimate ``Σ_e (1 - π_e) y_e²/π_e²`` of Poisson sampling, and for AP's
        ratio it needs no derivative (docs/sampling.md). ``resid · √coef = √(1 - π_e) · δ_e`` either way.
    at_z : bool
        When ``drop`` is not given: AP's derivatives taken at the corrected labels ``z`` themselves (the
        textbook linearisation, ``∂AP/∂x_e = (∂N/∂z_e - AP)/R̂``) instead of with e's own label put back.

    Returns
    -------
    dict: ``AP`` and ``P{k}``, shape (S,); ``R``, the ``R̂`` used (0-d); ``AP_g`` and ``P{k}_g``, shape (S, n),
    the influences ``g_se = √coef_e · resid_e · ∂θ_s/∂x_e``, whose products give the variance and covariance estimates
    ``Cov̂(θ_s, θ_s') = Σ_e g_se g_s'e``.
    """
    S, D = z_ranked.shape
    r_raw = float(r_hat)
    r_hat = max(r_raw, float(r_floor))
    rank, cum, above, below, num = ap_sums(z_ranked)
    ap = num / r_hat if r_hat > 0 else np.zeros(S)
    dnum_e = ap_slopes(rank, above, below, rank_of_sampled)             # ∂N/∂x_e, (S, n)
    w = np.sqrt(coef) * resid
    out: dict[str, np.ndarray] = {"AP": ap, "R": np.array(r_hat)}
    # Each sampled document's derivative is taken with its own label at its value x_e instead of its
    # corrected label z_e = x_e + δ_e: AP is linear in z_e alone (N - δ_e ∂N/∂z_e, R̂ - δ_e), and evaluating
    # at z_e would shrink the derivative exactly for the documents whose weight 1/π_e inflates R̂.
    delta = z_own - x_own                                               # (n,)
    r_own = np.maximum(r_raw - delta, r_floor)
    with np.errstate(divide="ignore", invalid="ignore"):
        if drop is None and at_z:
            out["AP_g"] = (w[None, :] * (dnum_e - ap[:, None]) / r_hat if r_hat > 0
                           else np.zeros((S, len(resid))))
        elif drop is None:
            ap_own = np.where(r_own > 0, (num[:, None] - delta[None, :] * dnum_e) / r_own[None, :], 0.0)
            out["AP_g"] = np.where(r_own > 0, w[None, :] * (dnum_e - ap_own) / r_own[None, :], 0.0)
        else:
            # N is linear in z_e alone, so N - δ_e ∂N/∂z_e is N with e's draw undone; R̂ loses δ_e and the
            # floor loses e's own relevant label
            r_del = np.maximum(r_raw - drop, r_floor - x_own)
            ap_del = np.where(r_del > 0, (num[:, None] - drop[None, :] * dnum_e) / r_del[None, :], 0.0)
            scale = np.where(drop != 0, w / np.where(drop != 0, drop, 1.0), 0.0)   # √(1 - π_e)
            out["AP_g"] = scale[None, :] * (ap[:, None] - ap_del)
    rows = np.arange(S)
    for k in cutoffs:
        last = np.clip(np.minimum(lengths, k) - 1, 0, None)
        out[f"P{k}"] = np.where(lengths > 0, cum[rows, last], 0.0) / k if D else np.zeros(S)
        out[f"P{k}_g"] = w[None, :] * ((rank_of_sampled > 0) & (rank_of_sampled <= k)) / k
    return out


def tuned_weight(x: np.ndarray, p: np.ndarray, coef: np.ndarray, spread: np.ndarray) -> float:
    """The weight ``λ ∈ [0, 1]`` minimising the estimated variance ``Σ_e coef_e (x_e - λ p_e)² spread_e``
    (summed over systems through ``spread_e = Σ_s (∂θ_s/∂x_e)²``): ``λ = Σ coef x p spread / Σ coef p² spread``,
    the design-based analogue of PPI++'s power tuning (Angelopoulos, Duchi & Zrnic 2023)."""
    den = float(np.sum(coef * p * p * spread))
    if den <= 0:
        return 0.0
    return float(np.clip(np.sum(coef * x * p * spread) / den, 0.0, 1.0))
