r"""Expected nDCG@k, its variance and P(ΔnDCG@k<0) for every pair of systems, over thousands of topics.

The rank-cube counterpart of :func:`bayeval.expected.compare_systems` for ``nDCG@k`` (exact under every
moment method): the same dynamic program (:mod:`bayeval.expected._ndcg_kernels`, whose kernels this module
calls), run for all topics and pairs in one numba kernel, parallel over topic blocks, with no Python loop over
topics.

Model (that of the per-topic path, docs/expected.md). Judged documents keep their grade as gain
(trec_eval: the grade when positive, else 0, whatever the relevance level); an unjudged document i has gain
:math:`X_i\sim\mathrm{Bernoulli}(p_i)`, independently. A system's
:math:`DCG@k = J + \sum_i d_i X_i` with J its judged part and :math:`d_i = 1/\log_2(r_i+1)` for the unjudged
documents in its top k; the ideal DCG depends on the number N of relevant unjudged documents of the topic
(every unjudged document some system retrieves, down the whole lists) only through :math:`\min(N, k)`, and
:math:`IDCG(n)` is the ideal list of the topic's positive judged gains (retrieved or not, best first) followed
by n ones, cut at k. Then

.. math::

    E[nDCG] = \sum_{n=0}^{k} \frac{E[DCG\,1\{N{=}n\}]}{IDCG(n)},\qquad
    E[nDCG^2] = \sum_{n=0}^{k} \frac{E[DCG^2\,1\{N{=}n\}]}{IDCG(n)^2},

by the Poisson-binomial recursion of :math:`(P(N{=}n), E[DCG\,1\{N{=}n\}], E[DCG^2\,1\{N{=}n\}])` over the
unjudged documents, N lumped at k (:func:`bayeval.expected._ndcg_kernels.dcg_moments`). The documents no
system has in its top k only convolve :math:`P(N{=}n)`: their pmf ("base") is computed once per topic. For a
pair, the same recursion runs on :math:`\Delta = nDCG_a - nDCG_b` with :math:`d = d^a - d^b` and
:math:`J = J^a - J^b`, so :math:`E[\Delta]` and :math:`E[\Delta^2]` are exact — the covariance of two systems
that share documents (through the shared :math:`X_i` and the shared N) is in them, not added afterwards.

Cost. Per topic the coding of its documents and the base pmf are :math:`O(S\,L + U k)` (U unjudged
documents), each system :math:`O(n_{top}\,k)` with :math:`n_{top} \le S k` the unjudged documents in some top
k. A pair needs the pmf of N over the documents outside its two top-k lists: the kernel computes once per topic
the pmf over all of them and removes the pair's (at most 2k) documents again
(:func:`~bayeval.expected._ndcg_kernels.deconvolve_pmf`), then runs the recursion over those 2k only:
:math:`O(k^2)` per pair and topic instead of the per-topic kernel's :math:`O(n_{top}\,k)`. Removing a Bernoulli
multiplies a rounding error by p/q at each state, so this is done only when every removed p is at most 1/2
(errors then grow at most linearly: the same numbers to about 1e-15); a pair with a larger p runs the per-topic
kernel's recursion over every :math:`n_{top}` document.

Shapes. ``docs`` (S, T, D) int32 codes (-1 past a list), ``p`` (S, T, D) the cells' probabilities
(:func:`~bayeval.expected.cube.cell_probabilities`), ``judged`` (S, T, D) bool and ``grades`` (S, T, D) the cells'
judgments, ``inv_idcg`` (T, k+1) :math:`1/IDCG(n)` (0 where IDCG is 0: nDCG is then 0).

References
----------
.. [1] K. Järvelin, J. Kekäläinen. Cumulated gain-based evaluation of IR techniques. ACM TOIS 20(4), 2002.
.. [2] B. Carterette, J. Allan, R. Sitaraman. Minimal test collections for retrieval evaluation. SIGIR 2006.
"""

from __future__ import annotations

import numba
import numpy as np

from bayeval.data.rankcube import RankCube
from bayeval.defaults import CLOSED_FORM_DRAWS
from bayeval.expected import _engine as eng
from bayeval.expected import _ndcg_kernels as ndk
from bayeval.expected._cube_pairs import (
    CubePairMoments,
    check_cube,
    check_cutoff,
    combine_draws,
    draw_rows,
    pair_indices,
    run_topic_task,
)
from bayeval.expected.cube import cell_probabilities

__all__ = ["expected_ndcg_pairs", "ideal_dcg_by_topic"]

_STABLE_P = 0.5  # a pair's documents are removed from N's pmf when all have p <= this (deconvolve_pmf is stable)


def ideal_dcg_by_topic(cube: RankCube, k: int) -> np.ndarray:
    """``(T, k+1)`` IDCG@k of each topic with n = 0..k relevant unjudged documents (gain 1 each).

    The ideal list is the topic's positive judged gains (every judgment of the topic, retrieved or not),
    largest first, then n ones, cut at k: the table of :func:`bayeval.expected._engine.ideal_dcg_table` for
    every topic at once.
    """
    n_t = len(cube.topics)
    keep = cube.judged_grade > 0
    topic = cube.judged_topic[keep].astype(np.int64)
    gain = cube.judged_grade[keep].astype(np.float64)
    order = np.lexsort((-gain, topic))  # by topic, largest gain first
    topic, gain = topic[order], gain[order]
    ptr = np.concatenate([[0], np.cumsum(np.bincount(topic, minlength=n_t))])
    place = np.arange(len(topic)) - ptr[topic]
    top = place < k
    best = np.zeros((n_t, k))
    best[topic[top], place[top]] = gain[top]
    disc = eng.discounts(k)
    count = np.minimum(np.diff(ptr), k)
    csum = np.concatenate([np.zeros((n_t, 1)), np.cumsum(best * disc, axis=1)], axis=1)
    judged_part = csum[np.arange(n_t), count]
    ones = np.concatenate([[0.0], np.cumsum(disc)])
    ends = np.minimum(count[:, None] + np.arange(k + 1)[None, :], k)
    return judged_part[:, None] + ones[ends] - ones[count][:, None]


@numba.njit(cache=True, parallel=True)
def _ndcg_kernel(docs, p, judged, grades, lengths, inv_idcg, n_codes, ia, ib, k, disc,
                 sys_e, sys_v, sum_e, sum_v):  # pragma: no cover - compiled
    """Per system and topic E, Var of nDCG@k; per topic block and pair the sums of E[Δ_t], Var[Δ_t] (module notes)."""
    n_s, n_t, width = docs.shape
    n_blocks = sum_e.shape[0]
    n_pairs = ia.shape[0]
    cap = n_s * width
    cap_top = n_s * min(k, width)
    for c in numba.prange(n_blocks):
        lo = c * n_t // n_blocks
        hi = (c + 1) * n_t // n_blocks
        slot = np.full(n_codes, -1, dtype=np.int32)
        ranked = np.empty((n_s, width), dtype=np.int32)
        lens_k = np.empty(n_s, dtype=np.int32)
        pt = np.empty(cap)
        jd = np.empty(cap, dtype=np.bool_)
        gn = np.empty(cap)
        spec_index = np.empty(cap, dtype=np.int64)
        spec_p = np.empty(cap_top)
        rest = np.empty(cap)
        dsys = np.zeros((n_s, cap_top))
        jsys = np.empty(n_s)
        dd = np.empty(cap_top)
        base = np.empty(k + 1)
        full = np.empty(k + 1)
        rest_pmf = np.empty(k + 1)
        mark = np.full(cap_top, -1, dtype=np.int64)
        ep = np.empty(2 * min(k, width))
        ed = np.empty(2 * min(k, width))
        for t in range(lo, hi):
            n = 0
            for s in range(n_s):
                length = min(lengths[s, t], width)
                lens_k[s] = min(length, k)
                for r in range(length):
                    code = docs[s, t, r]
                    j = slot[code]
                    if j < 0:
                        j = n
                        slot[code] = n
                        pt[n] = p[s, t, r]
                        jd[n] = judged[s, t, r]
                        g = grades[s, t, r]
                        gn[n] = g if jd[n] and g > 0 else 0.0
                        spec_index[n] = -1
                        n += 1
                    ranked[s, r] = j
                for r in range(length, width):
                    ranked[s, r] = -1
            for s in range(n_s):
                for r in range(min(lengths[s, t], width)):
                    slot[docs[s, t, r]] = -1
            n_spec = 0  # unjudged documents in some top k
            for s in range(n_s):
                for r in range(lens_k[s]):
                    j = ranked[s, r]
                    if not jd[j] and spec_index[j] < 0:
                        spec_index[j] = n_spec
                        spec_p[n_spec] = pt[j]
                        n_spec += 1
            m = 0
            for j in range(n):
                if not jd[j] and spec_index[j] < 0:
                    rest[m] = pt[j]
                    m += 1
            base[:] = 0.0
            base[0] = 1.0
            ndk.convolve_pmf(base, rest[:m])
            inv = inv_idcg[t]
            sp = spec_p[:n_spec]
            for s in range(n_s):
                dsys[s, :n_spec] = 0.0
                jsys[s] = ndk._system_d(ranked, lens_k, s, spec_index, jd, gn, disc, dsys[s])
                e1, e2 = ndk.dcg_moments(base, sp, dsys[s, :n_spec], jsys[s], inv)
                sys_e[s, t] = e1
                sys_v[s, t] = max(e2 - e1 * e1, 0.0)
            full[:] = base
            ndk.convolve_pmf(full, sp)  # N over every unjudged document of the topic
            for i in range(n_pairs):
                a, b = ia[i], ib[i]
                # the unjudged documents of a's and b's top k; the others only convolve N's pmf
                m = 0
                stable = True
                for x in (a, b):
                    for r in range(lens_k[x]):
                        j = spec_index[ranked[x, r]]
                        if j >= 0 and mark[j] != i:
                            mark[j] = i
                            ep[m] = spec_p[j]
                            ed[m] = dsys[a, j] - dsys[b, j]
                            stable = stable and spec_p[j] <= _STABLE_P
                            m += 1
                if stable:  # N's pmf without the pair's documents: removed from the topic's (module notes)
                    rest_pmf[:] = full
                    ndk.deconvolve_pmf(rest_pmf, ep[:m])
                    e1, e2 = ndk.dcg_moments(rest_pmf, ep[:m], ed[:m], jsys[a] - jsys[b], inv)
                else:  # the per-topic kernel's way: every unjudged document of the top lists in the recursion
                    for j in range(n_spec):
                        dd[j] = dsys[a, j] - dsys[b, j]
                    e1, e2 = ndk.dcg_moments(base, sp, dd[:n_spec], jsys[a] - jsys[b], inv)
                sum_e[c, i] += e1
                sum_v[c, i] += max(e2 - e1 * e1, 0.0)
            for j in range(n_spec):
                mark[j] = -1


def _topic_block_sums(docs, p, judged, grades, lengths, inv_idcg, n_codes, ia, ib, k):
    """Per system and topic E, Var of nDCG@k and per pair the sums over these topics (a Dask task, or the cube)."""
    n_s, n_t, width = docs.shape
    sys_e, sys_v = np.zeros((n_s, n_t)), np.zeros((n_s, n_t))
    n_blocks = max(1, min(n_t, 4 * numba.get_num_threads()))
    sum_e, sum_v = np.zeros((n_blocks, len(ia))), np.zeros((n_blocks, len(ia)))
    if n_t and width:
        _ndcg_kernel(docs, p, judged, grades, lengths, np.ascontiguousarray(inv_idcg), n_codes, ia, ib, k,
                     eng.discounts(width), sys_e, sys_v, sum_e, sum_v)
    return sys_e, sys_v, sum_e.sum(axis=0), sum_v.sum(axis=0), 0


def expected_ndcg_pairs(cube: RankCube, p_unjudged=0.0, *, cutoff: int = 10, pairs: str | np.ndarray = "all",
                        scheduler=None, chunks: int | None = None, connect_timeout: float = 30.0,
                        closed_form_draws: int = CLOSED_FORM_DRAWS) -> CubePairMoments:
    r"""E, Var of nDCG@k per system and topic; E, Var and P(Δ<0) of ΔnDCG@k (mean over topics) for pairs.

    The same moments as :func:`bayeval.expected.compare_systems` with ``measure=f"nDCG@{cutoff}"`` (any
    analytic method: nDCG@k is exact under each) on the same runs and probabilities, to rounding (module notes).

    Parameters
    ----------
    cube : RankCube
        Built with ``code_depth=None``: N counts every unjudged document down the lists, not only the top k.
    p_unjudged : float or ndarray (S, T, D) or (draws, S, T, D)
        Probability of relevance (gain 1) of unjudged ranked documents
        (:func:`~bayeval.expected.cube.cell_probabilities`); with a leading axis, posterior draws of it (the same
        draw in every topic; :func:`~bayeval.expected.cube.cells_from_rankdata` lays a relevance estimate's
        ``draws`` on the cube). Judged documents keep their grade as gain.
    cutoff : int, default 10
        k of nDCG@k.
    pairs : "all" or ndarray of shape (P, 2)
        Pairs of system indices; default every a < b.
    scheduler : str or distributed.Client, optional
        A Dask scheduler or client: topics are split into ``chunks`` parts (default four per worker), one task
        each; the same numbers as locally to 1e-12.
    chunks : int, optional
    connect_timeout : float
        Seconds to wait for the Dask scheduler.
    closed_form_draws : int
        With posterior draws, how many evenly spaced ones are combined
        (:func:`bayeval.data.probabilities.thin_draws`); each is one pass of the kernel.

    Returns
    -------
    CubePairMoments
        ``method`` is ``"exact"``, ``measure`` ``"nDCG@k"``.

    Notes
    -----
    Over T independent topics :math:`E[\Delta] = \frac1T\sum_t E[\Delta_t]`,
    :math:`\mathrm{Var}[\Delta] = \frac1{T^2}\sum_t \mathrm{Var}[\Delta_t]`, :math:`P(\Delta<0) =
    \Phi(-E/\sqrt{V})`; with D posterior draws the per-draw sums are combined by the law of total variance
    (:func:`~bayeval.expected.cube_ap.expected_ap_pairs`), as :func:`~bayeval.expected.compare_systems` does.

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=5, n_systems=3, n_docs=60, depth=20, judged_depth=3, seed=1)
    >>> res = expected_ndcg_pairs(RankCube.from_runs(col.runs, col.judgments), 0.1, cutoff=10)
    >>> res.measure, res.p_less.shape, res.expected.shape
    ('nDCG@10', (3,), (3, 5))
    """
    check_cube(cube, "nDCG@k")
    k = check_cutoff(cutoff)
    ia, ib = pair_indices(pairs, cube.docs.shape[0])
    docs = np.ascontiguousarray(cube.docs)
    judged = np.ascontiguousarray(cube.judged)
    grades = np.ascontiguousarray(cube.grades)
    lengths = np.ascontiguousarray(cube.lengths, dtype=np.int32)
    with np.errstate(divide="ignore"):
        idcg = ideal_dcg_by_topic(cube, k)
        inv_idcg = np.where(idcg > 0, 1.0 / idcg, 0.0)
    n_codes = max(len(cube.docnos), 1)
    rows, drawn = draw_rows(cube, p_unjudged, closed_form_draws)
    parts = [run_topic_task(_topic_block_sums, (docs, cell_probabilities(cube, row), judged, grades, lengths), (),
                            (inv_idcg,), (n_codes, ia, ib, k), scheduler=scheduler, chunks=chunks,
                            timeout=connect_timeout)
             for row in rows]
    return combine_draws(parts, drawn, cube, ia, ib, "exact", f"nDCG@{k}")
