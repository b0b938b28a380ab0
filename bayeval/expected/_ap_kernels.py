"""Numba kernels: moments of the numerator S of AP-like measures, for every system and every pair.

Notation (docs/expected.md): one topic, documents i with independent relevance X_i ~ Bernoulli(u_i), a system's
weights a_ij = off(max(r_i, r_j)) for i != j (``off(r) = 1/r`` for AP; 0 for linear measures) and
a_ii = diag(r_i) (``1/r`` for AP, 1 for recall, 1/k for P@k), 0 for documents the system does not
retrieve. S = sum_i a_ii X_i + sum_{i<j} a_ij X_i X_j.

With v_i = u_i (1 - u_i) and the first-order coefficients phi_i = a_ii + alpha_i,
alpha_i = sum_{j != i} a_ij u_j, the moments are (Hoeffding decomposition of the quadratic form)::

    E[S]        = sum_i a_ii u_i + 1/2 sum_i u_i alpha_i
    Var[S]      = sum_i v_i phi_i^2 + sum_{i<j} a_ij^2 v_i v_j
    Cov(S, R)   = sum_i v_i phi_i
    Cov(Sa, Sb) = sum_i v_i phi^a_i phi^b_i + sum_{i<j} a_ij b_ij v_i v_j

Var[S] equals the four-term variance of carterette2007 §2.1 term by term (see docs/expected.md).
In rank order alpha_r = off_r * sum_{s<r} u_s + sum_{s>r} off_s u_s, and
sum_{i<j} a_ij^2 v_i v_j = sum_r v_r off_r^2 sum_{s<r} v_s: O(L) per system after the ranking.
The cross term sum_{i<j} a_ij b_ij v_i v_j of a pair is a 2-D dominance sum over the documents both
systems retrieve: walk system a's ranking, keep a Fenwick tree over system b's ranks: O(k log L).

Every kernel works on m "nodes" at once (u and v have shape (n, m)): m = 1 with u = p for the
closed forms, m quadrature nodes with the tilted u(t_k) for the exact method.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__: list[str] = []


@njit(cache=True)
def rank_lookup(ranked, lengths, n_docs):
    """``out[s, d]`` = 1-based rank of document d in system s (within ``lengths[s]``), 0 if absent."""
    n_sys = ranked.shape[0]
    out = np.zeros((n_sys, n_docs), dtype=np.int32)
    for s in range(n_sys):
        for r in range(lengths[s]):
            out[s, ranked[s, r]] = r + 1
    return out


@njit(cache=True)
def system_moments(ranked, lengths, diag, off, quad, u, v, phi, es, vs, csr):
    """Per system s and node k: E[S], Var[S], Cov(S, R) and the first-order coefficients phi.

    Parameters
    ----------
    ranked : int32 (S, D)   document indices in rank order
    lengths : int32 (S,)    list lengths (already cut at the measure's cutoff)
    diag, off : float64 (D,) weights by rank position (0-based)
    quad : bool             whether off-diagonal terms exist (AP) or not (recall, P@k)
    u, v : float64 (n, m)   probabilities of relevance and their Bernoulli variances, per node
    phi : float64 (S, D, m) output, phi[s, r, k] for the document at rank r + 1
    es, vs, csr : float64 (S, m) outputs
    """
    n_sys = ranked.shape[0]
    m = u.shape[1]
    suf = np.empty(m)
    pre = np.empty(m)
    prev = np.empty(m)
    for s in range(n_sys):
        length = lengths[s]
        for k in range(m):
            es[s, k] = 0.0
            vs[s, k] = 0.0
            csr[s, k] = 0.0
            suf[k] = 0.0
            pre[k] = 0.0
            prev[k] = 0.0
        if quad:
            for r in range(length - 1, -1, -1):
                d = ranked[s, r]
                w = off[r]
                for k in range(m):
                    phi[s, r, k] = suf[k]
                    suf[k] += u[d, k] * w
        for r in range(length):
            d = ranked[s, r]
            a = diag[r]
            w = off[r]
            w2 = w * w
            for k in range(m):
                uk = u[d, k]
                vk = v[d, k]
                alpha = w * pre[k] + phi[s, r, k] if quad else 0.0
                f = a + alpha
                phi[s, r, k] = f
                es[s, k] += a * uk + 0.5 * uk * alpha
                vs[s, k] += vk * f * f
                if quad:
                    vs[s, k] += vk * w2 * prev[k]
                csr[s, k] += vk * f
                pre[k] += uk
                prev[k] += vk


@njit(cache=True)
def _pair_cov_one(a, b, ranked, lengths, rank_of, off, quad, v, phi, bit, tot, q0, q1, acc, used):
    """Cov_u(S_a, S_b) at every node into ``acc``.

    Scratch: bit (D+1, 2, m), all zero on entry and left all zero on exit (only the entries a walk
    touched are cleared, so a pair costs O(k log L m), not O(L m)); tot, q0, q1 (m,); used (D,).
    """
    m = v.shape[1]
    len_a = lengths[a]
    len_b = lengths[b]
    n_used = 0
    for k in range(m):
        acc[k] = 0.0
        tot[k] = 0.0
    for r in range(len_a):
        d = ranked[a, r]
        rb = rank_of[b, d]
        if rb == 0:
            continue
        rb0 = rb - 1
        for k in range(m):
            acc[k] += v[d, k] * phi[a, r, k] * phi[b, rb0, k]
        if not quad:
            continue
        wa = off[r]
        wb = off[rb0]
        # Documents already walked have a-rank < r + 1, so a_ij = wa; b_ij = wb if their b-rank is
        # smaller, else their own b weight: query the prefix (b-rank < rb) of both sums.
        for k in range(m):
            q0[k] = 0.0
            q1[k] = 0.0
        j = rb - 1
        while j > 0:
            for k in range(m):
                q0[k] += bit[j, 0, k]
                q1[k] += bit[j, 1, k]
            j -= j & (-j)
        for k in range(m):
            vk = v[d, k]
            acc[k] += vk * wa * (wb * q0[k] + (tot[k] - q1[k]))
        j = rb
        while j <= len_b:
            for k in range(m):
                vk = v[d, k]
                bit[j, 0, k] += vk
                bit[j, 1, k] += wb * vk
            j += j & (-j)
        used[n_used] = rb
        n_used += 1
        for k in range(m):
            vk = v[d, k]
            tot[k] += wb * vk
    for i in range(n_used):
        j = used[i]
        while j <= len_b:
            for k in range(m):
                bit[j, 0, k] = 0.0
                bit[j, 1, k] = 0.0
            j += j & (-j)


@njit(cache=True)
def _pair_chunk(c, n_chunks, pa, pb, ranked, lengths, rank_of, off, quad, v, phi, out):
    """The pairs c, c + n_chunks, c + 2 n_chunks, ... of :func:`pair_covariances`, with one Fenwick tree."""
    m = v.shape[1]
    width = ranked.shape[1]
    bit = np.zeros((width + 1, 2, m))
    tot = np.zeros(m)
    q0 = np.zeros(m)
    q1 = np.zeros(m)
    acc = np.zeros(m)
    used = np.zeros(width, dtype=np.int64)
    for p in range(c, pa.shape[0], n_chunks):
        a = pa[p]
        b = pb[p]
        if lengths[a] > lengths[b]:  # walk the shorter list; the result is symmetric
            a, b = b, a
        _pair_cov_one(a, b, ranked, lengths, rank_of, off, quad, v, phi, bit, tot, q0, q1, acc, used)
        for k in range(m):
            out[p, k] = acc[k]


@njit(cache=True, parallel=True)
def pair_covariances(pa, pb, ranked, lengths, rank_of, off, quad, v, phi, out, n_chunks):
    """``out[p, k]`` = Cov_u(S_a, S_b) at node k for every pair (pa[p], pb[p]); parallel over pairs.

    The pairs are dealt round-robin to ``n_chunks`` tasks (each with its own Fenwick tree).
    """
    n_chunks = max(1, min(pa.shape[0], n_chunks))
    for c in prange(n_chunks):
        _pair_chunk(c, n_chunks, pa, pb, ranked, lengths, rank_of, off, quad, v, phi, out)


@njit(cache=True)
def pair_covariances_serial(pa, pb, ranked, lengths, rank_of, off, quad, v, phi, out):
    """:func:`pair_covariances` in the calling thread: for small problems (one topic of a selector), where
    starting the thread pool costs more than the work (0.3 ms against 0.06 ms for 45 pairs of 100
    documents on a busy 2-core machine)."""
    _pair_chunk(0, 1, pa, pb, ranked, lengths, rank_of, off, quad, v, phi, out)
