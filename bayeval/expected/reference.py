"""Naive references for tests and benchmarks: full enumeration and the papers' formula in O(n^3).

Nothing here is fast or meant for use; each function follows its equation literally so the fast
kernels can be checked against it.
"""

from __future__ import annotations

import itertools

import numpy as np
from numba import njit

from bayeval.expected import _ap_kernels as apk

__all__ = ["ap_by_precision", "ap_values", "enumerate_moments", "legendre_exact_moments", "outcome_probabilities",
           "outcomes", "paper_moments", "paper_moments_c", "paper_moments_delta", "paper_moments_delta_naive",
           "weight_matrix"]


def weight_matrix(ranks) -> np.ndarray:
    """a_ij = 1 / max(r_i, r_j) (0 if either is unretrieved: rank 0); a_ii = 1 / r_i."""
    r = np.asarray(ranks, dtype=np.float64)
    w = np.where(r > 0, 1.0 / np.where(r > 0, r, 1.0), 0.0)
    return np.minimum.outer(w, w)


def outcomes(n: int) -> np.ndarray:
    """All 2^n relevance vectors, shape (2^n, n)."""
    return np.array(list(itertools.product((0, 1), repeat=n)), dtype=np.float64).reshape(-1, n)


def outcome_probabilities(x: np.ndarray, p) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64)
    return np.prod(np.where(x == 1, p, 1.0 - p), axis=1)


def enumerate_moments(values: np.ndarray, prob: np.ndarray) -> tuple[float, float]:
    """E and Var of ``values`` (one per outcome) under outcome probabilities ``prob``."""
    e = float(np.sum(prob * values))
    return e, float(np.sum(prob * (values - e) ** 2))


def ap_values(ranks, x: np.ndarray, cutoff: int | None = None) -> np.ndarray:
    """AP of the ranking for every outcome row of x: (1/R) sum_{i<=j} a_ij X_i X_j, 0 when R = 0."""
    r = np.asarray(ranks)
    if cutoff is not None:
        r = np.where(r <= cutoff, r, 0)
    a = np.triu(weight_matrix(r))
    s = np.einsum("ki,ij,kj->k", x, a, x)
    rel = x.sum(axis=1)
    return np.where(rel > 0, s / np.where(rel > 0, rel, 1.0), 0.0)


def ap_by_precision(order, x_row, total_rel: int) -> float:
    """trec_eval's AP of one ranking (document indices in rank order) for one outcome."""
    if total_rel == 0:
        return 0.0
    hits, acc = 0, 0.0
    for r, d in enumerate(order, start=1):
        if x_row[d]:
            hits += 1
            acc += hits / r
    return acc / total_rel


def paper_moments(ranks, p) -> tuple[float, float]:
    """carterette2007 §2.1, E[AP] and Var[AP], straight from the printed sums (O(n^3))."""
    return paper_moments_c(weight_matrix(ranks), p)


def paper_moments_delta(ranks_a, ranks_b, p) -> tuple[float, float]:
    """The same formula for ΔAP with c_ij = a_ij - b_ij (carterette2007 §2.1)."""
    return paper_moments_c(weight_matrix(ranks_a) - weight_matrix(ranks_b), p)


def paper_moments_c(c: np.ndarray, p) -> tuple[float, float]:
    p = np.asarray(p, dtype=np.float64)
    q = 1.0 - p
    n = len(p)
    es = 0.0
    for i in range(n):
        es += c[i, i] * p[i]
        for j in range(i + 1, n):
            es += c[i, j] * p[i] * p[j]
    var = 0.0
    for i in range(n):
        var += c[i, i] ** 2 * p[i] * q[i]
        for j in range(i + 1, n):
            var += c[i, j] ** 2 * p[i] * p[j] * (1.0 - p[i] * p[j])
        for j in range(n):
            if j != i:
                var += 2.0 * c[i, i] * c[i, j] * p[i] * p[j] * q[i]
        for j in range(n):
            if j == i:
                continue
            for k in range(j + 1, n):
                if k != i:
                    var += 2.0 * c[i, j] * c[i, k] * p[i] * p[j] * p[k] * q[i]
    mu_r = p.sum()
    if mu_r == 0:
        return 0.0, 0.0
    return es / mu_r, var / mu_r**2


@njit(cache=True)
def paper_moments_delta_naive(wa, wb, p):
    """Compiled O(n^3) version of :func:`paper_moments_delta` for benchmarks.

    ``wa``, ``wb``: 1/rank of each document in systems a and b (0 if unretrieved); only documents one
    of the systems retrieves need be passed (c_ij = 0 otherwise) -- ``mu_r`` is then given apart.
    Returns E[D] and Var[D] (divide by E[R] and E[R]^2 for the paper's ΔAP moments).
    """
    n = p.shape[0]
    es = 0.0
    var = 0.0
    for i in range(n):
        qi = 1.0 - p[i]
        cii = wa[i] - wb[i]
        es += cii * p[i]
        var += cii * cii * p[i] * qi
        for j in range(n):
            if j == i:
                continue
            cij = min(wa[i], wa[j]) - min(wb[i], wb[j])
            if j > i:
                es += cij * p[i] * p[j]
                var += cij * cij * p[i] * p[j] * (1.0 - p[i] * p[j])
            var += 2.0 * cii * cij * p[i] * p[j] * qi
            for k in range(j + 1, n):
                if k != i:
                    cik = min(wa[i], wa[k]) - min(wb[i], wb[k])
                    var += 2.0 * cij * cik * p[i] * p[j] * p[k] * qi
    return es, var


def legendre_exact_moments(ranks, p, n_nodes: int | None = None) -> tuple[float, float]:
    r"""E[AP] and Var[AP] by Gauss–Legendre quadrature in t that is exact for polynomials.

    E[S t^R] = G(t) E_{u(t)}[S] is a polynomial of degree <= n in t that vanishes at 0, so
    E[AP] = \int_0^1 G E_u[S] / t dt integrates a polynomial of degree n - 1: Gauss–Legendre with
    ceil(n / 2) + 1 nodes is exact. For E[AP^2] = \int_0^1 (-ln t) f(t) dt with f = G E_u[S^2] / t,
    write -ln t = \int_t^1 dv / v: E[AP^2] = \int_0^1 (1/v) \int_0^v f(t) dt dv, both integrands
    polynomials of degree n - 1 -- a nested Gauss–Legendre rule (M^2 points) is exact.
    Costs O(n M^2); a reference for moderate n, independent of the Laguerre substitution.
    """
    p = np.asarray(p, dtype=np.float64)
    r = np.asarray(ranks)
    n = len(p)
    m = n_nodes or (n // 2 + 2)
    x, w = np.polynomial.legendre.leggauss(m)
    x01, w01 = (x + 1.0) / 2.0, w / 2.0
    # outer nodes v, inner nodes t = v * x01: all points at once
    t_all = np.concatenate([x01, np.outer(x01, x01).ravel()])
    q = 1.0 - p
    den = q[:, None] + p[:, None] * t_all[None, :]
    u = p[:, None] * t_all[None, :] / den
    v = u * (1.0 - u)
    log_g = np.log(den).sum(axis=0)
    retrieved = np.flatnonzero(r > 0)
    order = retrieved[np.argsort(r[retrieved])].astype(np.int32)
    ranked = order[None, :]
    lengths = np.array([len(order)], dtype=np.int32)
    width = max(len(order), 1)
    wts = 1.0 / np.arange(1, width + 1)
    phi = np.zeros((1, width, len(t_all)))
    es = np.empty((1, len(t_all)))
    vs = np.empty((1, len(t_all)))
    csr = np.empty((1, len(t_all)))
    ranked_full = np.full((1, width), -1, dtype=np.int32)
    ranked_full[0, : len(order)] = ranked
    apk.system_moments(ranked_full, lengths, wts, wts, True, np.ascontiguousarray(u), np.ascontiguousarray(v),
                       phi, es, vs, csr)
    g = np.exp(log_g)
    f1 = g * es[0] / t_all
    f2 = g * (vs[0] + es[0] ** 2) / t_all
    e1 = float(np.sum(w01 * f1[:m]))
    inner = f2[m:].reshape(m, m)  # inner[i, j] = f2(x01[i] * x01[j])
    # \int_0^v f dt = v * sum_j w01[j] f(v x01[j]); divided by v: sum_j w01[j] f(v x01[j])
    e2 = float(np.sum(w01[:, None] * w01[None, :] * inner))
    return e1, e2 - e1 * e1
