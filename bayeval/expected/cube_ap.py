r"""Expected AP, its variance and P(ΔMAP<0) for every pair of systems, over thousands of topics.

The rank-cube counterpart of :func:`bayeval.expected.compare_systems` for AP: the same moments (the
delta method, or the papers' closed form; exact quadrature where the house uses it), computed for all
topics and all pairs in one numba kernel, parallel over topic blocks, with no Python loop over topics.

Model and notation (those of the per-topic path, docs/expected.md). In one topic every document i is
relevant with probability :math:`p_i` (judged documents 0 or 1), independently. A system's
:math:`AP = S/R` with :math:`R = \sum_i X_i` over *every* document of the topic (retrieved by some system,
or judged relevant) and

.. math:: S = \sum_i a_{ii} X_i + \sum_{i<j} a_{ij} X_i X_j,\qquad a_{ii} = 1/r_i,\quad a_{ij} = 1/\max(r_i, r_j)

(0 for documents the system does not retrieve). With :math:`v_i = p_i(1-p_i)` and the first-order
coefficients :math:`\phi_i = a_{ii} + \sum_{j\ne i} a_{ij} p_j`:

.. math::

    E[S] &= \sum_i a_{ii}p_i + \tfrac12\sum_i p_i(\phi_i - a_{ii}),\\
    \mathrm{Var}[S] &= \sum_i v_i\phi_i^2 + \sum_{i<j} a_{ij}^2 v_iv_j,\qquad
    \mathrm{Cov}(S, R) = \sum_i v_i\phi_i,\\
    \mathrm{Cov}(S_a, S_b) &= \underbrace{\sum_{i\in A\cap B} v_i\,\phi^a_i\phi^b_i}_{C_1}
        + \underbrace{\sum_{i<j;\ i,j\in A\cap B} a_{ij}b_{ij}\,v_iv_j}_{C_2}

(Hoeffding decomposition of the quadratic forms; :mod:`bayeval.expected._ap_kernels`). For a pair,
:math:`\Delta AP = (S_a - S_b)/R`, and the delta method (second order about :math:`\mu_R = E[R]`) needs
only :math:`E[S_a] - E[S_b]`, :math:`\mathrm{Cov}(S_a,R) - \mathrm{Cov}(S_b,R)` (per system) and
:math:`\mathrm{Var}[S_a - S_b] = \mathrm{Var}[S_a] + \mathrm{Var}[S_b] - 2\,\mathrm{Cov}(S_a, S_b)`.

Cost. Per topic, the per-system terms (:math:`\phi`, E, Var, Cov with R) cost :math:`O(S\,L)` by
prefix/suffix sums (``_ap_kernels.system_moments``). Only the covariance depends on the pair, and only
through the documents both systems retrieve *and whose relevance is uncertain* (:math:`v_i > 0`; judged
documents drop out): with the per-topic document index and the systems' rank tables, the walk down
system a's list finds those n shared documents in :math:`O(L)`; :math:`C_1` is then :math:`O(n)` and,
ordering them by their rank in a (:math:`a_{ij} = 1/r^a_j` for :math:`r^a_i < r^a_j`),

.. math:: C_2 = \sum_j v_j\,\frac{1}{r^a_j}\sum_{i:\ r^a_i < r^a_j} v_i \min\Big(\frac{1}{r^b_i},
          \frac{1}{r^b_j}\Big),

an :math:`O(n^2)` sum of contiguous arrays that the compiler vectorises — at depth 100 cheaper than the
:math:`O(n\log L)` Fenwick-tree walk of the per-topic kernel (about half the time at n ≈ 42 shared documents
of 100), which is used instead when both lists are longer than ``dense_limit`` (128) documents. A pair and topic
is thus :math:`O(L + n^2)` with no per-pair allocation.

Shapes. ``docs`` (S, T, D) int32 document codes (-1 past a list), ``p`` (S, T, D) float64 probability of each
cell (:func:`~bayeval.expected.cube.cell_probabilities`), ``rel_codes``/``rel_ptr``: the relevant judgments'
codes by topic (CSR, ``rel_ptr`` (T+1,)); per topic the kernel codes the topic's documents 0..n-1 (a slot per
global code, reset after the topic), ``ranked`` (S, D) local codes, ``pt`` (n,) their p; per system
``phi`` (S, D, 1), ``es``/``vs``/``csr`` (S, 1); ``rank_of`` (S, n) 1-based ranks, 0 when absent; outputs
``sys_e``/``sys_v`` (S, T) and per topic block c ``sum_e``/``sum_v`` (C, P), summed over blocks afterwards (a fixed
order, so the result does not depend on the threads).

Topics where the house computes differently are left to it: no relevant mass (:math:`\mu_R = 0`: every
AP is 0), or the delta method's expansion does not hold (:math:`\mathrm{Var}\,R > \mu_R^2`, no judged
relevant document and small p; :func:`bayeval.expected._engine.expansion_applies`), which the per-topic
path computes by exact quadrature: the kernel flags the latter and they go through the per-topic engine on
the same local arrays — as does every topic with ``method="exact"`` (64 quadrature nodes make each pair 64
times dearer; it has no vectorised path).

References
----------
.. [1] B. Carterette, J. Allan, R. Sitaraman. Minimal test collections for retrieval evaluation. SIGIR 2006.
.. [2] B. Carterette. Robust test collections for retrieval evaluation. SIGIR 2007, §2.1.
"""

from __future__ import annotations

import numba
import numpy as np

from bayeval.data.rankcube import RankCube
from bayeval.defaults import CLOSED_FORM_DRAWS
from bayeval.errors import BayevalInputError
from bayeval.expected import _ap_kernels as apk
from bayeval.expected import _engine as eng
from bayeval.expected._cube_pairs import (
    CubePairMoments,
    check_cube,
    combine_draws,
    csr_by_topic,
    draw_rows,
    pair_indices,
    run_topic_task,
)
from bayeval.expected.cube import cell_probabilities
from bayeval.measures import Measure

__all__ = ["CUBE_AP_METHODS", "CubeAveragePrecision", "expected_ap_pairs"]

CUBE_AP_METHODS = ("delta", "paper", "exact")
"""Moment methods of :func:`expected_ap_pairs` (those of :func:`bayeval.expected.compare_systems` but Monte Carlo)."""

_DELTA, _PAPER, _EXACT = 0, 1, 2
_DENSE_LIMIT = 128  # shared uncertain documents up to which C2 is the vectorised O(n²) sum

_delta_method = numba.njit(cache=True)(eng._delta_method)  # the house's formula, compiled for the kernel


CubeAveragePrecision = CubePairMoments
"""The result of :func:`expected_ap_pairs` (:class:`~bayeval.expected._cube_pairs.CubePairMoments`: E, Var per
system and topic; E, Var, P(Δ<0) of ΔMAP per pair; ``exact_topics`` computed by the per-topic engine)."""
_AP = Measure("AP")


# ---------------------------------------------------------------------------------------------- kernels
@numba.njit(cache=True, nogil=True)
def _topic_local(docs, p, lengths, t, rel_codes, rel_ptr, slot, ranked, lens, pt):  # pragma: no cover
    """Code topic t's documents 0..n-1 into ``ranked`` (S, D), ``lens`` (S,), ``pt`` (n,); returns n.

    Relevant judged documents no system retrieves are appended with p = 1 (they count in R). ``slot``
    (global code -> local code, all -1) is left all -1.
    """
    n_s, _, width = docs.shape
    n = 0
    for s in range(n_s):
        length = min(lengths[s, t], width)
        lens[s] = length
        for r in range(length):
            c = docs[s, t, r]
            j = slot[c]
            if j < 0:
                j = n
                slot[c] = n
                pt[n] = p[s, t, r]
                n += 1
            ranked[s, r] = j
        for r in range(length, width):
            ranked[s, r] = -1
    for i in range(rel_ptr[t], rel_ptr[t + 1]):
        c = rel_codes[i]
        if slot[c] < 0:
            slot[c] = n
            pt[n] = 1.0
            n += 1
    for s in range(n_s):
        for r in range(lens[s]):
            slot[docs[s, t, r]] = -1
    for i in range(rel_ptr[t], rel_ptr[t + 1]):
        slot[rel_codes[i]] = -1
    return n


@numba.njit(cache=True, nogil=True, fastmath=True)
def _shared_sums(n, wa, wb, vv, fa, fb, quad):  # pragma: no cover - compiled
    """C1 + C2 of the n shared documents in a's rank order (module notes): ``vv`` their v, ``wa``/``wb`` their
    weights 1/r in a and b, ``fa``/``fb`` their phi in a and b; C2 only for a quadratic numerator (``quad``).

    C1 = sum_j vv_j fa_j fb_j and C2 = sum_j vv_j wa_j sum_{i<j} vv_i min(wb_i, wb_j), as sums of contiguous
    arrays that the compiler vectorises (the order of the additions is free: ``fastmath``).
    """
    c1 = 0.0
    for j in range(n):
        c1 += vv[j] * fa[j] * fb[j]
    if not quad:
        return c1
    c2 = 0.0
    for j in range(1, n):
        wbj = wb[j]
        acc = 0.0
        for i in range(j):
            acc += vv[i] * min(wb[i], wbj)
        c2 += vv[j] * wa[j] * acc
    return c1 + c2


@numba.njit(cache=True, nogil=True)
def _pair_cov(a, b, ranked, lens, rank_of, off, quad, v, phi, wa, wb, vv, fa, fb):  # pragma: no cover - compiled
    """Cov(S_a, S_b) = C1 + C2 over the documents a and b share (module notes).

    Branch-free walk down a's list: every document is written to the scratch arrays and kept (the count
    advances) only when b retrieves it; shared judged documents (v = 0) add nothing.
    """
    n = 0
    for r in range(lens[a]):
        d = ranked[a, r]
        rb = rank_of[b, d]
        rb0 = rb - 1 if rb > 0 else 0
        wa[n] = off[r]
        wb[n] = off[rb0]
        vv[n] = v[d, 0]
        fa[n] = phi[a, r, 0]
        fb[n] = phi[b, rb0, 0]
        n += 1 if rb > 0 else 0
    return _shared_sums(n, wa, wb, vv, fa, fb, quad)


@numba.njit(cache=True, parallel=True)
def _ratio_kernel(docs, p, lengths, rel_codes, rel_ptr, n_codes, ia, ib, method, dense_limit, diag, off, quad, cut,
                  sys_e, sys_v, flagged, sum_e, sum_v):  # pragma: no cover - compiled
    """Per system and topic E, Var of S/R; per topic block and pair the sums of E[Δ_t], Var[Δ_t].

    ``diag``/``off`` (D,) are the numerator's weights by rank (AP: 1/r and 1/r; recall: 1 and 0, ``quad``
    False), ``cut`` the cutoff of the lists (R counts every document of the topic, down the whole lists).
    ``flagged[t]`` is set for the topics left to the per-topic engine (module notes); they add nothing.
    """
    n_s, n_t, width = docs.shape
    n_blocks = sum_e.shape[0]
    n_pairs = ia.shape[0]
    max_rel = 0
    for t in range(n_t):
        max_rel = max(max_rel, rel_ptr[t + 1] - rel_ptr[t])
    cap = n_s * width + max_rel
    for c in numba.prange(n_blocks):
        lo = c * n_t // n_blocks
        hi = (c + 1) * n_t // n_blocks
        slot = np.full(n_codes, -1, dtype=np.int32)
        ranked = np.empty((n_s, width), dtype=np.int32)
        lens = np.empty(n_s, dtype=np.int32)
        lens_k = np.empty(n_s, dtype=np.int32)
        pt = np.empty(cap)
        u = np.empty((cap, 1))
        v = np.empty((cap, 1))
        phi = np.zeros((n_s, width, 1))
        es = np.empty((n_s, 1))
        vs = np.empty((n_s, 1))
        csr = np.empty((n_s, 1))
        wa = np.empty(width)
        wb = np.empty(width)
        vv = np.empty(width)
        fa = np.empty(width)
        fb = np.empty(width)
        bit = np.zeros((width + 1, 2, 1))
        tot = np.zeros(1)
        q0 = np.zeros(1)
        q1 = np.zeros(1)
        acc = np.zeros(1)
        used = np.zeros(width, dtype=np.int64)
        for t in range(lo, hi):
            n = _topic_local(docs, p, lengths, t, rel_codes, rel_ptr, slot, ranked, lens, pt)
            for s in range(n_s):
                lens_k[s] = min(lens[s], cut)
            mu_r = 0.0
            var_r = 0.0
            for i in range(n):
                mu_r += pt[i]
                var_r += pt[i] * (1.0 - pt[i])
            if mu_r <= 0.0:  # no document can be relevant: the measure is 0
                for s in range(n_s):
                    sys_e[s, t] = 0.0
                    sys_v[s, t] = 0.0
                continue
            if method == _EXACT or (method == _DELTA and not var_r <= mu_r * mu_r):
                flagged[t] = True
                continue
            for i in range(n):
                u[i, 0] = pt[i]
                v[i, 0] = pt[i] * (1.0 - pt[i])
            apk.system_moments(ranked, lens_k, diag, off, quad, u, v, phi, es, vs, csr)
            for s in range(n_s):
                if method == _DELTA:
                    e, var = _delta_method(es[s, 0], vs[s, 0], csr[s, 0], mu_r, var_r)
                    sys_e[s, t] = e
                    sys_v[s, t] = max(var, 0.0)
                else:
                    sys_e[s, t] = es[s, 0] / mu_r
                    sys_v[s, t] = vs[s, 0] / mu_r**2
            rank_of = apk.rank_lookup(ranked, lens_k, n)
            for i in range(n_pairs):
                a, b = ia[i], ib[i]
                if min(lens_k[a], lens_k[b]) > dense_limit:
                    x, y = (a, b) if lens_k[a] <= lens_k[b] else (b, a)
                    apk._pair_cov_one(x, y, ranked, lens_k, rank_of, off, quad, v, phi, bit, tot, q0, q1, acc,
                                      used)
                    cov = acc[0]
                else:
                    cov = _pair_cov(a, b, ranked, lens_k, rank_of, off, quad, v, phi, wa, wb, vv, fa, fb)
                var_d = vs[a, 0] + vs[b, 0] - 2.0 * cov
                mu_d = es[a, 0] - es[b, 0]
                if method == _DELTA:
                    e, var = _delta_method(mu_d, var_d, csr[a, 0] - csr[b, 0], mu_r, var_r)
                    sum_e[c, i] += e
                    sum_v[c, i] += max(var, 0.0)
                else:
                    sum_e[c, i] += mu_d / mu_r
                    sum_v[c, i] += max(var_d, 0.0) / mu_r**2


# ---------------------------------------------------------------------------------------------- drivers
def _relevant_by_topic(cube: RankCube) -> tuple[np.ndarray, np.ndarray]:
    """Codes of each topic's relevant judgments (CSR by topic): they count in R even when unretrieved."""
    rel = cube.judged_grade >= cube.relevance_level
    return csr_by_topic(cube.judged_topic[rel], cube.judged_doc[rel].astype(np.int32), len(cube.topics))


def _weights(spec: Measure, width: int) -> tuple[np.ndarray, np.ndarray, bool, int]:
    """The numerator's weights by rank, whether it is quadratic, and the cutoff of the lists (module notes)."""
    r = np.arange(1, width + 1, dtype=np.float64)
    cut = width if spec.cutoff is None else min(spec.cutoff, width)
    if spec.name == "AP":
        return 1.0 / r, 1.0 / r, True, cut
    if spec.name == "recall":
        return np.ones(width), np.zeros(width), False, cut
    raise AssertionError(spec)


def _topic_block_sums(docs, p, lengths, rel_codes, rel_ptr, n_codes, ia, ib, method: str, nodes: int,
                      spec: Measure = _AP, dense_limit: int = _DENSE_LIMIT):
    """Per system and topic E, Var of the ratio measure and per pair the sums over these topics of E, Var of Δ_t.

    A Dask task, or the whole cube. Topics the kernel flags go through the per-topic engine
    (:func:`bayeval.expected._engine.numerator_state`) on the same local arrays.
    """
    n_s, n_t, width = docs.shape
    sys_e, sys_v = np.zeros((n_s, n_t)), np.zeros((n_s, n_t))
    flagged = np.zeros(n_t, dtype=bool)
    n_blocks = max(1, min(n_t, 4 * numba.get_num_threads()))
    sum_e, sum_v = np.zeros((n_blocks, len(ia))), np.zeros((n_blocks, len(ia)))
    code = {"delta": _DELTA, "paper": _PAPER, "exact": _EXACT}[method]
    diag, off, quad, cut = _weights(spec, max(width, 1))
    if n_t and width:
        _ratio_kernel(docs, p, lengths, rel_codes, rel_ptr, n_codes, ia, ib, code, dense_limit, diag, off, quad, cut,
                      sys_e, sys_v, flagged, sum_e, sum_v)
    out_e, out_v = sum_e.sum(axis=0), sum_v.sum(axis=0)
    if flagged.any():
        slot = np.full(n_codes, -1, dtype=np.int32)
        ranked = np.empty((n_s, width), dtype=np.int32)
        lens = np.empty(n_s, dtype=np.int32)
        pt = np.empty(n_s * width + int(np.diff(rel_ptr).max(initial=0)))
        for t in np.flatnonzero(flagged):  # rare with "delta": no relevant judgment and small p
            n = _topic_local(docs, p, lengths, t, rel_codes, rel_ptr, slot, ranked, lens, pt)
            st = eng.numerator_state(ranked.copy(), lens.copy(), pt[:n].copy(), spec, method, nodes)
            sys_e[:, t], sys_v[:, t] = eng.state_system_moments(st)
            e, v = eng.state_pair_moments(st, ia, ib)
            out_e += e
            out_v += v
    return sys_e, sys_v, out_e, out_v, int(flagged.sum())


def _check(method, nodes):
    if method not in CUBE_AP_METHODS:
        raise BayevalInputError(f"method: must be one of {', '.join(map(repr, CUBE_AP_METHODS))}, got {method!r}")
    if isinstance(nodes, bool) or not isinstance(nodes, (int, np.integer)) or not 1 <= nodes <= 2048:
        raise BayevalInputError(f"nodes: must be an integer in [1, 2048], got {nodes!r}")


def ratio_pairs(cube: RankCube, p_unjudged, spec: Measure, *, method: str, pairs, nodes: int, scheduler, chunks,
                connect_timeout: float, closed_form_draws: int) -> CubePairMoments:
    """The driver of :func:`expected_ap_pairs` for any ratio measure S/R of :func:`_weights` (AP, recall@k)."""
    check_cube(cube, str(spec))
    _check(method, nodes)
    n_s = cube.docs.shape[0]
    ia, ib = pair_indices(pairs, n_s)
    rel_codes, rel_ptr = _relevant_by_topic(cube)
    docs = np.ascontiguousarray(cube.docs)
    lengths = np.ascontiguousarray(cube.lengths, dtype=np.int32)
    n_codes = max(len(cube.docnos), 1)
    rows, drawn = draw_rows(cube, p_unjudged, closed_form_draws)
    parts = [run_topic_task(_topic_block_sums, (docs, cell_probabilities(cube, row), lengths),
                            ((rel_codes, rel_ptr),), (), (n_codes, ia, ib, method, int(nodes), spec),
                            scheduler=scheduler, chunks=chunks, timeout=connect_timeout)
             for row in rows]
    return combine_draws(parts, drawn, cube, ia, ib, method, str(spec))


def expected_ap_pairs(cube: RankCube, p_unjudged=0.0, *, method: str = "delta", pairs: str | np.ndarray = "all",
                      nodes: int = 64, scheduler=None, chunks: int | None = None, connect_timeout: float = 30.0,
                      closed_form_draws: int = CLOSED_FORM_DRAWS) -> CubeAveragePrecision:
    r"""E, Var of AP per system and topic; E, Var and P(Δ<0) of ΔMAP for pairs of systems (module notes).

    The same moments as :func:`bayeval.expected.compare_systems` with ``measure="AP"`` and the same
    ``method`` on the same runs and probabilities (to rounding), without a Python loop over topics.

    Parameters
    ----------
    cube : RankCube
        Built with ``code_depth=None`` (every unjudged document told apart down the lists).
    p_unjudged : float or ndarray (S, T, D) or (draws, S, T, D)
        Probability of relevance of unjudged ranked documents
        (:func:`~bayeval.expected.cube.cell_probabilities`); with a leading axis, posterior draws of it (the
        same draw in every topic; :func:`~bayeval.expected.cube.cells_from_rankdata` lays a relevance
        estimate's ``draws`` on the cube). Judged documents keep their judgment; relevant judged documents
        that no run retrieves count in R.
    method : {"delta", "paper", "exact"}, default "delta"
        As in :func:`~bayeval.expected.compare_systems`. ``"delta"`` (the cheaper choice for all pairs of
        many runs, :data:`bayeval.defaults.DEFAULT_MOMENT_METHOD`) and ``"paper"`` run in the vectorised
        kernel; ``"exact"`` (quadrature) runs the per-topic engine topic by topic (slow at this scale).
    pairs : "all" or ndarray of shape (P, 2)
        Pairs of system indices; default every a < b.
    nodes : int
        Quadrature nodes where exact quadrature is used (64, as :func:`~bayeval.expected.compare_systems`).
    scheduler : str or distributed.Client, optional
        A Dask scheduler or client: topics are split into ``chunks`` parts (default four per worker), one task
        each; the same numbers as locally to 1e-12 (the sums over topics are taken in another order).
    chunks : int, optional
    connect_timeout : float
        Seconds to wait for the Dask scheduler.
    closed_form_draws : int
        With posterior draws, how many evenly spaced ones are combined
        (:func:`bayeval.data.probabilities.thin_draws`); each is one pass of the kernel (locally or on Dask).

    Returns
    -------
    CubeAveragePrecision

    Notes
    -----
    Topics are independent given p: :math:`E[\Delta MAP] = \frac1T\sum_t E[\Delta AP_t]`,
    :math:`\mathrm{Var}[\Delta MAP] = \frac1{T^2}\sum_t \mathrm{Var}[\Delta AP_t]`, and
    :math:`P(\Delta<0) = \Phi(-E/\sqrt{V})` (:func:`~bayeval.expected.p_less_normal`). With D posterior
    draws, per draw d the sums :math:`S^E_d`, :math:`S^V_d` over topics, and (law of total variance; the draw
    is shared by every topic)

    .. math:: E = \frac1D\sum_d \frac{S^E_d}{T},\qquad
              \mathrm{Var} = \frac1D\sum_d \frac{S^V_d}{T^2} + \mathrm{var}_d\Big(\frac{S^E_d}{T}\Big),

    as :func:`~bayeval.expected.compare_systems` combines them.

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=5, n_systems=3, n_docs=60, depth=20, judged_depth=3, seed=1)
    >>> res = expected_ap_pairs(RankCube.from_runs(col.runs, col.judgments), 0.1)
    >>> res.p_less.shape, res.expected.shape
    ((3,), (3, 5))
    """
    return ratio_pairs(cube, p_unjudged, _AP, method=method, pairs=pairs, nodes=nodes, scheduler=scheduler,
                       chunks=chunks, connect_timeout=connect_timeout, closed_form_draws=closed_form_draws)
