r"""Exact moments of nDCG@k under independent Bernoulli relevance (numba kernels).

Judged documents keep their grade as gain (trec_eval: gain = grade when grade > 0); an unjudged
document i has gain X_i ~ Bernoulli(p_i). DCG@k = J + sum_i d_i X_i with J the judged part and
d_i = 1/log2(r_i + 1) for unjudged documents in the top k (trec_eval 9.x, as in the official
TREC-8 output). The ideal DCG depends only on
N = number of relevant unjudged documents, and only through min(N, k) (the ideal list of k slots is
full once N >= k); IDCG(n) is tabulated for n = 0..k.

E[nDCG] = sum_n E[DCG 1{N=n}] / IDCG(n) and E[nDCG^2] = sum_n E[DCG^2 1{N=n}] / IDCG(n)^2, with the
three vectors P[n] = P(N=n), A[n] = E[DCG 1{N=n}], B[n] = E[DCG^2 1{N=n}] built by a dynamic program
over the unjudged documents (the Poisson-binomial recursion of N, carried along with DCG): adding
document j (p, d) maps n -> min(n + 1, k) with probability p and

    P'[n] = q P[n] + p P[n-1]
    A'[n] = q A[n] + p (A[n-1] + d P[n-1])
    B'[n] = q B[n] + p (B[n-1] + 2 d A[n-1] + d^2 P[n-1]).

Every term is non-negative (for d >= 0), so the recursion is stable; no deconvolution is needed.
Documents with d = 0 only convolve P (A = J P and B = J^2 P stay proportional), so the shared part
(unjudged documents in nobody's top k) is computed once per topic. For a difference of two systems
the same recursion runs with d = d_a - d_b and J = J_a - J_b.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__: list[str] = []


@njit(cache=True)
def convolve_pmf(pmf, probs):
    """Add independent Bernoulli(probs) to the lumped pmf (last state = ">= len - 1"); in place."""
    top = pmf.shape[0] - 1
    for j in range(probs.shape[0]):
        p = probs[j]
        q = 1.0 - p
        if top == 0:
            continue
        pmf[top] += p * pmf[top - 1]
        for n in range(top - 1, 0, -1):
            pmf[n] = q * pmf[n] + p * pmf[n - 1]
        pmf[0] = q * pmf[0]


@njit(cache=True)
def deconvolve_pmf(pmf, probs):
    """Remove independent Bernoulli(probs) from the lumped pmf (the inverse of :func:`convolve_pmf`); in place.

    From :math:`P[0] = qQ[0]`, :math:`P[n] = qQ[n] + pQ[n-1]` below the top state and
    :math:`P[top] = Q[top] + pQ[top-1]`: :math:`Q[n] = (P[n] - pQ[n-1])/q` upwards and
    :math:`Q[top] = P[top] - pQ[top-1]`. A rounding error is multiplied by :math:`p/q` at each state, so this is
    stable only for :math:`p \\le 1/2` (the caller's condition; it then grows at most linearly).
    """
    top = pmf.shape[0] - 1
    if top == 0:
        return
    for j in range(probs.shape[0]):
        p = probs[j]
        q = 1.0 - p
        prev = pmf[0] / q
        pmf[0] = prev
        for n in range(1, top):
            cur = (pmf[n] - p * prev) / q
            pmf[n] = cur
            prev = cur
        pmf[top] = pmf[top] - p * prev


@njit(cache=True)
def dcg_moments(base, spec_p, spec_d, j_const, inv_idcg):
    """E[DCG/IDCG] and E[(DCG/IDCG)^2] given the shared pmf ``base`` and the special documents."""
    top = base.shape[0] - 1
    n_spec = spec_p.shape[0]
    pm = base.copy()
    # documents with d == 0 first: they only convolve the pmf
    for j in range(n_spec):
        if spec_d[j] == 0.0:
            p = spec_p[j]
            q = 1.0 - p
            if top > 0:
                pm[top] += p * pm[top - 1]
                for n in range(top - 1, 0, -1):
                    pm[n] = q * pm[n] + p * pm[n - 1]
                pm[0] = q * pm[0]
    a = j_const * pm
    b = j_const * j_const * pm
    for j in range(n_spec):
        d = spec_d[j]
        if d == 0.0:
            continue
        p = spec_p[j]
        q = 1.0 - p
        if top == 0:
            # N is lumped in one state: every outcome stays there
            b[0] = b[0] + p * (2.0 * d * a[0] + d * d * pm[0])
            a[0] = a[0] + p * d * pm[0]
            continue
        # top state: X = 0 or 1 both stay; from top - 1 with X = 1
        b[top] = (b[top] + p * (2.0 * d * a[top] + d * d * pm[top])
                  + p * (b[top - 1] + 2.0 * d * a[top - 1] + d * d * pm[top - 1]))
        a[top] = a[top] + p * d * pm[top] + p * (a[top - 1] + d * pm[top - 1])
        pm[top] = pm[top] + p * pm[top - 1]
        for n in range(top - 1, 0, -1):
            b[n] = q * b[n] + p * (b[n - 1] + 2.0 * d * a[n - 1] + d * d * pm[n - 1])
            a[n] = q * a[n] + p * (a[n - 1] + d * pm[n - 1])
            pm[n] = q * pm[n] + p * pm[n - 1]
        b[0] = q * b[0]
        a[0] = q * a[0]
        pm[0] = q * pm[0]
    e1 = 0.0
    e2 = 0.0
    for n in range(top + 1):
        e1 += a[n] * inv_idcg[n]
        e2 += b[n] * inv_idcg[n] * inv_idcg[n]
    return e1, e2


@njit(cache=True)
def _system_d(ranked, lengths, s, spec_index, judged, gains, disc, d_out):
    """Fill d_out[spec] with system s's discount at special documents; return its judged part J."""
    j_const = 0.0
    for r in range(lengths[s]):
        doc = ranked[s, r]
        if judged[doc]:
            j_const += gains[doc] * disc[r]
        else:
            d_out[spec_index[doc]] += disc[r]
    return j_const


@njit(cache=True)
def ndcg_systems(ranked, lengths, judged, gains, disc, spec_docs, spec_index, p, base, inv_idcg, es, e2):
    """E[nDCG] and E[nDCG^2] for every system of the topic."""
    n_spec = spec_docs.shape[0]
    spec_p = np.empty(n_spec)
    for j in range(n_spec):
        spec_p[j] = p[spec_docs[j]]
    d = np.zeros(n_spec)
    for s in range(ranked.shape[0]):
        d[:] = 0.0
        j_const = _system_d(ranked, lengths, s, spec_index, judged, gains, disc, d)
        es[s], e2[s] = dcg_moments(base, spec_p, d, j_const, inv_idcg)


@njit(cache=True, parallel=True)
def ndcg_pairs(pa, pb, ranked, lengths, judged, gains, disc, spec_docs, spec_index, p, base, inv_idcg,
               ed, e2):
    """E[nDCG_a - nDCG_b] and E[(nDCG_a - nDCG_b)^2] for every pair."""
    n_spec = spec_docs.shape[0]
    spec_p = np.empty(n_spec)
    for j in range(n_spec):
        spec_p[j] = p[spec_docs[j]]
    for i in prange(pa.shape[0]):
        da = np.zeros(n_spec)
        db = np.zeros(n_spec)
        ja = _system_d(ranked, lengths, pa[i], spec_index, judged, gains, disc, da)
        jb = _system_d(ranked, lengths, pb[i], spec_index, judged, gains, disc, db)
        ed[i], e2[i] = dcg_moments(base, spec_p, da - db, ja - jb, inv_idcg)
