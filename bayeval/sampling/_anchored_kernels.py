"""Array kernel of the model-anchored AP estimate for one topic, every system at once (docs/sampling.md).

Any function of binary labels is a multilinear polynomial in ``x - p``: ``AP(x) = Σ_A f_A Π_{d∈A}(x_d - p_d)``
with ``f_∅ = E_p[AP]`` (the expectation under independent Bernoulli(p) labels), ``f_d = ∂E_q[AP]/∂q_d`` and
``f_de = ∂²E_q[AP]/∂q_d∂q_e`` at ``q = p``. Under Poisson sampling the draws are independent, so
``Π_{d∈A} I_d (x_d - p_d)/π_d`` is unbiased for ``Π_{d∈A}(x_d - p_d)``: the expansion truncated at order K, each
term estimated this way, is design-unbiased for AP up to the terms of order > K (whose mean under the model is
0). The coefficients come from the tilted form of docs/expected.md: ``E_q[S/R] = ∫₀^∞ G(t) E_u[S] ds`` with
``t = e^{-s}``, ``G = Π_k φ_k``, ``φ_k = 1 - q_k + q_k t``, ``u_k = q_k t / φ_k``; ``G E_u[S]`` is multilinear in
``q`` and its derivatives are closed forms in the same sums, so every coefficient of order ≤ 2 costs O(S D) per
quadrature node.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import roots_legendre

from bayeval.stats.quadrature import laguerre_nodes

__all__ = ["anchored_topic", "legendre_nodes"]

#: Quadrature nodes evaluated together (a block of (nodes, systems, ranks) arrays: 16 × 100 × 100 doubles is
#: 1.3 MB; Legendre's ⌈(N + 1)/2⌉ nodes of order "all" go through in blocks).
_BLOCK = 16


def _quadrature(p: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes ``t`` (m,) and weights ``W`` (m,) with ``∫₀^∞ F(e^{-s}) G(e^{-s}) ds ≈ Σ_k W_k F(t_k)``: Gauss–Laguerre
    in ``y = λ s``, ``λ = E[R | R ≥ 1]`` (the mixture of rates ``r/λ`` then clusters around 1; docs/expected.md).
    Where some ``p`` lies outside [0, 1] (corrected labels, :func:`anchored_topic` ``order="all"``) ``G`` changes
    sign and the mixture is no longer positive: Gauss–Legendre in ``t`` on (0, 1) instead, with enough nodes to
    integrate ``G(t) F(t) / t`` — a polynomial of degree < N for AP — exactly."""
    if np.any((p < 0) | (p > 1)):
        return _legendre(p, m)
    y, logw = laguerre_nodes(m)
    mu = float(p.sum())
    if mu <= 0.0:
        return np.ones(m), np.zeros(m)
    with np.errstate(divide="ignore"):
        log_p0 = float(np.sum(np.log1p(-p)))
    scale = mu / -np.expm1(log_p0)
    t = np.exp(-y / scale)
    one_minus_t = -np.expm1(-y / scale)
    arg = np.multiply.outer(one_minus_t, p)
    with np.errstate(divide="ignore"):
        direct = np.log((1.0 - p)[None, :] + np.multiply.outer(t, p))
    log_g = np.where(arg < 0.5, np.log1p(-np.minimum(arg, 0.5)), direct).sum(axis=1)
    return t, np.exp(logw + y + log_g - np.log(scale))


@lru_cache(maxsize=64)
def legendre_nodes(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Legendre nodes and weights on (0, 1) (read-only)."""
    x, w = roots_legendre(k)
    t, w = 0.5 * (x + 1.0), 0.5 * w
    t.flags.writeable = False
    w.flags.writeable = False
    return t, w


def _legendre(q: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Legendre nodes on (0, 1) and the weights ``w_k G(t_k) / t_k`` (G signed), ``max(m, ⌈(N + 1)/2⌉)``
    nodes for N documents (exact for the polynomial ``G E_u[S] / t`` of degree < N)."""
    t, w = legendre_nodes(max(int(m), (len(q) + 2) // 2))
    phi = 1.0 - np.multiply.outer(1.0 - t, q)                                # (k, N)
    sign = np.prod(np.sign(phi), axis=1)
    with np.errstate(divide="ignore"):
        log_g = np.sum(np.log(np.abs(phi)), axis=1)
    return t, sign * np.exp(log_g) * w / t


def _suffix(values: np.ndarray) -> np.ndarray:
    """``Σ_{r' > r} values_{r'}`` along the last axis."""
    return np.cumsum(values[..., ::-1], axis=-1)[..., ::-1] - values


def anchored_topic(p_ranked: np.ndarray, p_pool: np.ndarray, rank_of_sampled: np.ndarray, delta: np.ndarray,
                   pi: np.ndarray, sampled_pool: np.ndarray, order: int = 2, nodes: int = 32
                   ) -> dict[str, np.ndarray]:
    """AP anchored at the model's p and corrected by the sample to ``order`` 1 or 2, with jackknife influences.

    Parameters
    ----------
    p_ranked : ndarray, shape (S, D)
        The model's p at each rank of each system (0 past the end of a list).
    p_pool : ndarray, shape (N,)
        p of every pooled document (the documents R counts).
    rank_of_sampled : ndarray of int, shape (S, n)
        1-based rank of each sampled document in each system, 0 where not retrieved.
    delta : ndarray, shape (n,)
        ``δ_e = (x_e - p_e) / π_e`` of each sampled document.
    pi : ndarray, shape (n,)
        Their inclusion probabilities.
    sampled_pool : ndarray of int, shape (n,)
        Each sampled document's index in ``p_pool``.
    order : {1, 2, "all"}
        The terms of the expansion kept; ``"all"``: every term, i.e. the model's expected-AP formula evaluated at
        the corrected labels ``z = p + I δ`` (AP's multilinear extension at ``z``: exactly design-unbiased, the
        terms of every order estimated from the sample), with influences ``√(1 - π_e) δ_e ∂/∂q_e`` at ``z``.
    nodes : int
        Quadrature nodes (at least ⌈(N + 1)/2⌉ Gauss–Legendre nodes with ``"all"``).

    Returns
    -------
    dict
        ``AP`` (S,): ``f_∅ + Σ_e δ_e f_e`` (+ ``½ Σ_e δ_e Q_e``, ``Q_e = Σ_{d ≠ e} f_de δ_d``, at order 2);
        ``model`` (S,): ``f_∅ = E_p[AP]``; ``AP_g`` (S, n): the Poisson delete-one jackknife influences
        ``√(1 - π_e) δ_e (f_e + Q_e)`` (the estimate with e's draw undone loses exactly ``δ_e (f_e + Q_e)``).

    Notes
    -----
    With ``H(t) = G(t) E_u[S]``, ``c_e = ∂E_u[S]/∂u_e`` (AP's numerator's slope in document e, 0 where the
    system does not retrieve it) and ``a_de = 1/max(r_d, r_e)``:
    ``f_e = ∫ (G/φ_e) [(t - 1)(E_u[S] - u_e c_e) + t c_e] ds`` and
    ``f_de = ∫ (G/(φ_d φ_e)) [(t - 1)² E_u[S_{-de}] + t (t - 1)(c_d + c_e - a_de (u_d + u_e)) + t² a_de] ds``,
    ``E_u[S_{-de}] = E_u[S] - u_d c_d - u_e c_e + u_d u_e a_de``; summed against ``w_d = δ_d / φ_d`` they need
    only the totals of ``w``, ``w c``, ``w u c`` over the sample and the rank-ordered sums
    ``A_e = Σ_d w_d a_de``, ``AU_e = Σ_d w_d u_d a_de`` (prefix and suffix sums).
    """
    S, D = p_ranked.shape
    n = len(delta)
    if order == "all":   # the expansion's every term: the expected-AP formula at the corrected labels
        p_ranked, p_pool = _corrected_labels(p_ranked, p_pool, rank_of_sampled, delta, sampled_pool)
    t_all, weights = _kept_nodes(p_pool, int(nodes))
    rank = np.arange(1, D + 1, dtype=np.float64)
    got = rank_of_sampled > 0
    idx = np.maximum(rank_of_sampled - 1, 0)
    rows = np.arange(S)[:, None]
    f0 = np.zeros(S)
    f1 = np.zeros((S, n))
    q = np.zeros((S, n))
    p_s = p_pool[sampled_pool]
    sr, se = np.nonzero(got)
    # the nodes in blocks (a leading axis k of at most _BLOCK nodes): a few array operations a block, not a node
    for lo in range(0, len(t_all), _BLOCK):
        t = t_all[lo:lo + _BLOCK]
        wk = weights[lo:lo + _BLOCK]
        t3 = t[:, None, None]
        phi_r = 1.0 - p_ranked[None] + p_ranked[None] * t3                      # (k, S, D)
        u_r = np.where(phi_r != 0, p_ranked[None] * t3 / np.where(phi_r != 0, phi_r, 1.0), 0.0)
        above = np.cumsum(u_r, axis=2) - u_r
        es = np.sum(u_r * (1.0 + above) / rank, axis=2)                       # E_u[S], (k, S)
        f0 += wk @ es
        if n == 0:
            continue
        slope = (1.0 + above) / rank + _suffix(u_r / rank)                   # c at each rank, (k, S, D)
        phi_e = 1.0 - p_s[None] + p_s[None] * t[:, None]                      # (k, n)
        u_e = np.where(phi_e != 0, p_s[None] * t[:, None] / np.where(phi_e != 0, phi_e, 1.0), 0.0)
        c_e = np.where(got[None], slope[:, rows, idx], 0.0)                  # (k, S, n)
        ue3 = u_e[:, None, :]
        core = es[:, :, None] - ue3 * c_e
        f1 += np.einsum("k,ksn->sn", wk, ((t3 - 1.0) * core + t3 * c_e) / phi_e[:, None, :])
        if order != 2:
            continue
        q += _second_order(t, wk, delta, phi_e, u_e, c_e, core, got, idx, sr, se, rank)
    if order == "all":
        est = f0
    else:
        est = f0 + f1 @ delta
    if order == 2:
        est = est + 0.5 * (q @ delta)
    g = np.sqrt(1.0 - pi)[None, :] * delta[None, :] * (f1 + q)
    return {"AP": est, "model": f0, "AP_g": g}


def _corrected_labels(p_ranked: np.ndarray, p_pool: np.ndarray, rank_of_sampled: np.ndarray, delta: np.ndarray,
                      sampled_pool: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(p_ranked, p_pool)`` at the corrected labels ``z = p + I δ`` (copies; order ``"all"``)."""
    p_pool = p_pool.copy()
    p_pool[sampled_pool] += delta
    p_ranked = p_ranked.copy()
    sr_e, se_e = np.nonzero(rank_of_sampled > 0)
    p_ranked[sr_e, rank_of_sampled[sr_e, se_e] - 1] += delta[se_e]
    return p_ranked, p_pool


def _kept_nodes(p_pool: np.ndarray, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """The quadrature's nodes ``t`` and weights, less those that cannot move the sum.

    Gauss-Laguerre's weights are positive; those below 1e-16 of the largest add less than a rounding error of
    the sum (in a dense pool G(t) ~ Π(1 - p) makes about a fifth of them so): skipped. Legendre's are signed
    (order "all"): only nodes of weight 0 are skipped.
    """
    t_all, weights = _quadrature(p_pool, nodes)
    negligible = 1e-16 * float(np.max(weights)) if len(weights) and np.all(weights >= 0) else 0.0
    keep = np.abs(weights) > negligible
    return t_all[keep], weights[keep]


def _second_order(t: np.ndarray, wk: np.ndarray, delta: np.ndarray, phi_e: np.ndarray, u_e: np.ndarray,
                  c_e: np.ndarray, core: np.ndarray, got: np.ndarray, idx: np.ndarray, sr: np.ndarray,
                  se: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """One block of nodes' share of ``Q_e = Σ_{d ≠ e} f_de δ_d``, shape (S, n).

    ``f_de``'s integrand summed against ``w_d = δ_d / φ_d`` needs the totals of ``w``, ``w c``, ``w u c`` over the
    other sampled documents and the rank-ordered sums ``A_e = Σ_d w_d a_de``, ``AU_e = Σ_d w_d u_d a_de``
    (:func:`anchored_topic`, Notes); ``core = E_u[S] - u_e c_e``.
    """
    k, S, D = len(t), got.shape[0], len(rank)
    rows = np.arange(S)[:, None]
    t3 = t[:, None, None]
    ue3 = u_e[:, None, :]
    w = delta[None] / phi_e                                               # (k, n)
    wc = w[:, None, :] * c_e                                              # (k, S, n)
    wuc = wc * ue3
    # w and w·u laid out in each system's rank order (sampled documents only), for A_e and AU_e
    w_r = np.zeros((k, S, D))
    wu_r = np.zeros((k, S, D))
    w_r[:, sr, idx[sr, se]] = w[:, se]
    wu_r[:, sr, idx[sr, se]] = (w * u_e)[:, se]
    a_e = np.where(got[None], ((np.cumsum(w_r, axis=2) - w_r) / rank + _suffix(w_r / rank))[:, rows, idx], 0.0)
    au_e = np.where(got[None], ((np.cumsum(wu_r, axis=2) - wu_r) / rank + _suffix(wu_r / rank))[:, rows, idx],
                    0.0)
    w_m = w.sum(axis=1)[:, None, None] - w[:, None, :]
    wc_m = wc.sum(axis=2, keepdims=True) - wc
    wuc_m = wuc.sum(axis=2, keepdims=True) - wuc
    inner = ((t3 - 1.0) ** 2 * (w_m * core - wuc_m + ue3 * au_e)
             + t3 * (t3 - 1.0) * (wc_m - ue3 * a_e + w_m * c_e - au_e) + t3 * t3 * a_e)
    return np.einsum("k,ksn->sn", wk, inner / phi_e[:, None, :])
