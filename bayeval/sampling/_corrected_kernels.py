"""Array kernel of bias-corrected statAP for one topic, every system at once.

statAP is a ratio ``AP̂ = N̂ / R̂`` of two Horvitz-Thompson estimates from a Poisson sample: unbiased numerator
and denominator, a ratio biased to order ``1/n`` (``n`` the sampled relevant documents). The kernel returns the
plain ratio, its second-order (Taylor) bias correction, and each sampled relevant document's jackknife
influence on both (formulas: docs/notes/sampling-record.md, "Bias-corrected statAP").
"""

from __future__ import annotations

import numpy as np

from bayeval.sampling._stat_kernels import ap_slopes, ap_sums

__all__ = ["corrected_topic"]


def _corrected(theta: np.ndarray, b: np.ndarray, weight: np.ndarray, r_hat: float) -> np.ndarray:
    """``θ̂ - Σ_e w_e (θ̂ - b_e) / R̂²`` with ``w_e = (1 - π_e) δ_e²`` (one column of ``b`` per document)."""
    return theta - np.sum(weight[None, :] * (theta[:, None] - b), axis=1) / (r_hat * r_hat)


def corrected_topic(z_ranked: np.ndarray, rank_of_sampled: np.ndarray, delta: np.ndarray,
                    pi: np.ndarray) -> dict[str, np.ndarray]:
    """statAP, its bias-corrected version and their jackknife influences for every system of one topic.

    Parameters
    ----------
    z_ranked : ndarray, shape (S, D)
        ``1/π_d`` at each sampled relevant document in each system's rank order, 0 elsewhere.
    rank_of_sampled : ndarray of int, shape (S, n)
        1-based rank of each sampled relevant document in each system, 0 where not retrieved.
    delta : ndarray, shape (n,)
        ``δ_e = 1/π_e`` of each sampled relevant document (its term of ``R̂``).
    pi : ndarray, shape (n,)
        Their inclusion probabilities.

    Returns
    -------
    dict
        ``R`` (0-d, ``R̂ = Σ_e δ_e``); ``AP`` (statAP) and ``corrected``, shape (S,); ``g`` and
        ``g_corrected``, shape (S, n): influences ``√(1 - π_e) (θ̂ - θ̂₍ₑ₎)`` of each estimate, ``θ̂₍ₑ₎`` the same
        estimate recomputed with e's draw undone, whose sums of squares are the Poisson delete-one jackknife
        variances (for statAP, the same as :func:`bayeval.sampling.assisted_measures` at weight 0).

    Notes
    -----
    ``N̂`` is linear in each ``z_e`` alone, with slope ``b_e = ∂N̂/∂z_e = (1 + Σ_{above e} z)/r_e +
    Σ_{d below e} z_d/r_d`` (0 for a document the run does not retrieve). The ratio's second-order bias under
    Poisson sampling is ``E[N̂/R̂] - N/R ≈ (θ Var R̂ - Cov(N̂, R̂)) / R² = Σ_d x_d (1 - π_d)/π_d · (θ - b_d) / R²``
    (independent draws: only each document's own variance enters), estimated term by term over the sample:
    ``B̂ = Σ_{e ∈ S} (1 - π_e) δ_e² (θ̂ - b_e) / R̂²``, and ``corrected = θ̂ - B̂`` (the bias of the ratio
    estimate, Cochran 1977, ch. 6, here for a ratio of Horvitz-Thompson totals under Poisson sampling). With
    one sampled relevant document ``B̂ = 0``.
    """
    S = z_ranked.shape[0]
    n = len(delta)
    r_hat = float(np.sum(delta))
    if n == 0 or r_hat <= 0:
        zero = np.zeros(S)
        return {"R": np.array(r_hat), "AP": zero, "corrected": zero, "g": np.zeros((S, 0)),
                "g_corrected": np.zeros((S, 0))}
    rank, _, above, below, num = ap_sums(z_ranked)
    got = rank_of_sampled > 0
    r_e = np.maximum(rank_of_sampled, 1)
    b = ap_slopes(rank, above, below, rank_of_sampled)                        # ∂N/∂z_e, (S, n)
    weight = (1.0 - pi) * delta * delta
    theta = num / r_hat
    corrected = _corrected(theta, b, weight, r_hat)
    g = np.zeros((S, n))
    g_c = np.zeros((S, n))
    root = np.sqrt(1.0 - pi)
    for e in range(n):
        r_d = r_hat - delta[e]
        if r_d <= 0:                     # e was the only sampled relevant document: nothing left to estimate
            theta_d = corrected_d = np.zeros(S)
        else:
            theta_d = (num - delta[e] * b[:, e]) / r_d
            # the others' slopes with e's draw undone: e above e' leaves e''s precision, e below e' leaves
            # the sum over documents below e'
            both = got & got[:, [e]]
            e_above = rank_of_sampled[:, [e]] < rank_of_sampled
            b_d = b - np.where(both & e_above, delta[e] / r_e, 0.0) \
                - np.where(both & ~e_above, delta[e] / r_e[:, [e]], 0.0)
            keep = np.arange(n) != e
            corrected_d = _corrected(theta_d, b_d[:, keep], weight[keep], r_d)
        g[:, e] = root[e] * (theta - theta_d)
        g_c[:, e] = root[e] * (corrected - corrected_d)
    return {"R": np.array(r_hat), "AP": theta, "corrected": corrected, "g": g, "g_corrected": g_c}
