r"""Expected reciprocal rank at a cutoff, its variance and P(Δ<0) for every pair, over thousands of topics.

For a :class:`~bayeval.data.rankcube.RankCube` (dense ranks of S systems on T topics) and a probability
of relevance for each ranked document — 1 or 0 for judged documents, documents independent — this module
computes, with no Python loop over topics:

* per system and topic, :math:`E[RR@k]` and :math:`\mathrm{Var}[RR@k]` in closed form;
* per pair of systems and topic, :math:`E[\Delta]` and :math:`\mathrm{Var}[\Delta] = V_a + V_b - 2\,
  \mathrm{Cov}(RR_a, RR_b)`, where the covariance is exact: the two systems share documents;
* for the difference of the means over topics (ΔMRR@k), :math:`E` and :math:`\mathrm{Var}` summed over
  independent topics and :math:`P(\Delta < 0) = \Phi(-E/\sqrt{V})` (docs/expected.md);
* with posterior draws :math:`p^{(d)}` of the probabilities (shape ``(draws, S, T, D)``), the same per draw,
  combined by the law of total variance as :func:`bayeval.expected.compare_systems` combines them (the draw is
  shared by every topic, so the between-draw variance is that of the per-draw mean over topics).

Derivation. Let :math:`F^a_r = X_{a_r}\prod_{j<r}(1 - X_{a_j})` be the event "system a's first relevant
document is at rank r", so :math:`RR_a = \sum_{r\le k} F^a_r / r`. Then
:math:`E[F^a_r] = p_{a_r}\prod_{j<r} q_{a_j}` (:math:`q = 1 - p`) and, writing :math:`A_{<r}`,
:math:`B_{<s}` for the documents above rank r in a and above rank s in b,

.. math::

    E[F^a_r F^b_s] = \begin{cases}
      0 & a_r \in B_{<s} \text{ or } b_s \in A_{<r},\\
      p_{a_r} \prod_{d \in A_{<r}\cup B_{<s}} q_d & a_r = b_s,\\
      p_{a_r}\,p_{b_s} \prod_{d \in A_{<r}\cup B_{<s}} q_d & \text{otherwise,}
    \end{cases}

so :math:`E[RR_a RR_b] = \sum_{r,s\le k} E[F^a_r F^b_s]/(rs)`: :math:`O(k^2)` per pair and topic.
"""

from __future__ import annotations

import numba
import numpy as np

from bayeval.data.rankcube import RankCube
from bayeval.data.rankdata import RankData
from bayeval.defaults import CLOSED_FORM_DRAWS
from bayeval.errors import BayevalInputError
from bayeval.expected._cube_pairs import (
    CubePairMoments,
    check_cutoff,
    combine_draws,
    draw_rows,
    locked,
    pair_indices,
    run_topic_task,
)

__all__ = [
    "CubeReciprocalRank", "cell_probabilities", "cells_from_rankdata", "expected_reciprocal_rank_pairs",
]


def cell_probabilities(cube: RankCube, p_unjudged, k: int | None = None) -> np.ndarray:
    """``(S, T, k)`` probability of relevance of each ranked cell: 1/0 if judged, else ``p_unjudged``; 0 past a list.

    Parameters
    ----------
    cube : RankCube
    p_unjudged : float or ndarray of shape (S, T, D)
        Probability of each unjudged cell. An array must give the same value to a document wherever it
        appears in a topic (the probability is the document's, not the rank's).
    k : int, optional
        Keep the top k ranks.
    """
    width = cube.docs.shape[2] if k is None else min(int(k), cube.docs.shape[2])
    if cube.code_depth is not None and width > cube.code_depth:
        raise BayevalInputError(f"cutoff: {width} is deeper than the cube's code_depth {cube.code_depth}: "
                                "unjudged documents there are not told apart")
    if np.ndim(p_unjudged) == 0:
        p = float(p_unjudged)
        if not 0.0 <= p <= 1.0:
            raise BayevalInputError("p_unjudged: must lie in [0, 1]")
        out = np.full(cube.docs[:, :, :width].shape, p)
    else:
        arr = np.asarray(p_unjudged, dtype=np.float64)
        if arr.shape != cube.docs.shape:
            raise BayevalInputError(f"p_unjudged: expected shape {cube.docs.shape}, got {arr.shape}")
        if not np.all((arr >= 0) & (arr <= 1)):
            raise BayevalInputError("p_unjudged: probabilities must lie in [0, 1]")
        out = arr[:, :, :width].copy()
    judged = cube.judged[:, :, :width]
    out[judged] = (cube.grades[:, :, :width][judged] >= cube.relevance_level).astype(np.float64)
    out[cube.docs[:, :, :width] == -1] = 0.0
    return out


CubeReciprocalRank = CubePairMoments
"""The result of :func:`expected_reciprocal_rank_pairs` (:class:`~bayeval.expected._cube_pairs.CubePairMoments`:
E, Var of RR@k per system and topic; E, Var, P(Δ<0) of ΔMRR@k per pair; ``measure`` is ``"RR@k"``, ``method``
``"exact"``: the moments are closed forms)."""


def _system_moments(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """E[RR], E[RR²] along the last axis of ``p`` (ranks)."""
    k = p.shape[-1]
    none_above = np.cumprod(np.concatenate([np.ones(p.shape[:-1] + (1,)), 1.0 - p[..., :-1]], axis=-1), axis=-1)
    first = p * none_above
    r = np.arange(1, k + 1, dtype=np.float64)
    return first @ (1.0 / r), first @ (1.0 / r**2)


@numba.njit(cache=True, nogil=True)
def _pair_topic_cross(da, db, pa_, pb_, k):  # pragma: no cover - compiled
    """E[RR_a RR_b] for one topic: docs and probabilities of a and b in rank order (module notes)."""
    # position in the other list (k when absent; -1 docs never match)
    pos_in_b = np.full(k, k, dtype=np.int64)
    pos_in_a = np.full(k, k, dtype=np.int64)
    for r in range(k):
        if da[r] < 0:
            continue
        for s in range(k):
            if db[s] == da[r]:
                pos_in_b[r] = s
                pos_in_a[s] = r
    total = 0.0
    prod_a = 1.0  # prod of q over A_{<r}
    for r in range(k):
        if da[r] < 0 or pa_[r] == 0.0:
            prod_a *= 1.0 - pa_[r]
            if prod_a == 0.0:
                break
            continue
        prod_u = prod_a  # prod of q over A_{<r} ∪ B_{<s}
        for s in range(k):
            if db[s] < 0:
                break
            if pos_in_b[r] < s:  # a_r in B_{<s}: a's first relevant can no longer be a_r
                break
            if prod_u == 0.0:
                break
            if pos_in_b[r] == s:
                joint = pa_[r] * prod_u
            elif pos_in_a[s] < r:  # b_s in A_{<r}
                joint = 0.0
            else:
                joint = pa_[r] * pb_[s] * prod_u
            total += joint / ((r + 1.0) * (s + 1.0))
            if pos_in_a[s] >= r:  # b_s not yet in the union
                prod_u *= 1.0 - pb_[s]
        prod_a *= 1.0 - pa_[r]
        if prod_a == 0.0:
            break
    return total


@numba.njit(parallel=True, cache=True)
def _pair_sums(docs, p, ia, ib, e, v, out_e, out_v):  # pragma: no cover - compiled
    """Per posterior draw and pair: sums over topics of E_d[Δ_t] and Var_d[Δ_t] (``p``, ``e``, ``v`` lead with d;
    one p is one draw), in parallel over draws × pairs."""
    n_draws = p.shape[0]
    n_pairs = len(ia)
    n_topics = docs.shape[1]
    k = docs.shape[2]
    for j in numba.prange(n_draws * n_pairs):
        d, i = j // n_pairs, j % n_pairs
        a, b = ia[i], ib[i]
        se = 0.0
        sv = 0.0
        for t in range(n_topics):
            cross = _pair_topic_cross(docs[a, t], docs[b, t], p[d, a, t], p[d, b, t], k)
            cov = cross - e[d, a, t] * e[d, b, t]
            se += e[d, a, t] - e[d, b, t]
            sv += v[d, a, t] + v[d, b, t] - 2.0 * cov
        out_e[d, i] = se
        out_v[d, i] = sv


def cells_from_rankdata(cube: RankCube, data: RankData, arrays) -> np.ndarray:
    """Per-topic probabilities of ``data``'s documents laid on ``cube``'s cells (no loop over positions).

    Parameters
    ----------
    cube : RankCube
        Same systems and topics, in the same order, as ``data``, and the same ranked lists (both in
        trec_eval's order).
    data : RankData
    arrays : sequence of ndarray
        Per topic, aligned with ``data[t].docnos``: shape ``(n_t,)`` (a point p) or ``(draws, n_t)`` (posterior
        draws, the same number in every topic) — a relevance estimate's ``p`` or ``draws``.

    Returns
    -------
    ndarray, shape ``cube.docs.shape`` or ``(draws, *cube.docs.shape)``
        0 past the end of a list; judged cells are overwritten by their labels downstream
        (:func:`cell_probabilities`).
    """
    if tuple(cube.systems) != tuple(data.systems) or tuple(cube.topics) != tuple(data.topics):
        raise BayevalInputError("data: its systems and topics must be the cube's, in the same order")
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    if len(arrays) != len(data.topics):
        raise BayevalInputError(f"arrays: expected one per topic ({len(data.topics)}), got {len(arrays)}")
    lead = arrays[0].shape[:-1] if arrays else ()
    if any(a.shape[:-1] != lead or a.shape[-1] != tr.n_docs for a, tr in zip(arrays, data, strict=True)):
        raise BayevalInputError("arrays: each topic's array must end in its documents and share leading axes")
    n_s, n_t, depth = cube.docs.shape
    sizes = np.array([tr.n_docs for tr in data], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    flat = np.concatenate(arrays, axis=-1) if arrays else np.zeros((*lead, 0))
    ranked = np.full((n_s, n_t, depth), -1, dtype=np.int32)
    for t, tr in enumerate(data):  # one slice per topic; positions are not visited in Python
        w = min(depth, tr.ranked.shape[1])
        ranked[:, t, :w] = tr.ranked[:, :w]
    out = np.empty((*lead, n_s, n_t, depth))
    for s in range(n_s):  # one system at a time: no (S, T, D) index beside the result
        filled = ranked[s] >= 0
        index = np.where(filled, ranked[s] + offsets[:-1][:, None], 0)
        out[..., s, :, :] = np.where(filled, flat[..., index], 0.0)
    return out


def _draw_sums(docs, p, ia, ib):
    """For draws ``p`` (D, S, T, k): E, Var of RR@k per draw, system and topic, and per draw and pair the sums over
    the topics of E[Δ_t] and Var[Δ_t] (the latter clipped at 0)."""
    e, e2 = _system_moments(p)
    v = np.maximum(e2 - e * e, 0.0)
    out_e = np.zeros((p.shape[0], len(ia)))
    out_v = np.zeros((p.shape[0], len(ia)))
    if len(ia) and docs.shape[1] and docs.shape[2]:
        _pair_sums(np.ascontiguousarray(docs), np.ascontiguousarray(p), ia, ib, np.ascontiguousarray(e),
                   np.ascontiguousarray(v), out_e, out_v)
    return e, v, out_e, np.maximum(out_v, 0.0)


def _topic_block_sums(docs, p, ia, ib):
    """The topic task of :func:`~bayeval.expected._cube_pairs.run_topic_task` for RR@k at one p (S, T, k)."""
    e, v, out_e, out_v = _draw_sums(docs, p[None], ia, ib)
    return e[0], v[0], out_e[0], out_v[0], 0


def expected_reciprocal_rank_pairs(cube: RankCube, p_unjudged=0.0, *, cutoff: int = 10,
                                   pairs: str | np.ndarray = "all", scheduler=None,
                                   chunks: int | None = None, connect_timeout: float = 30.0,
                                   closed_form_draws: int = CLOSED_FORM_DRAWS) -> CubeReciprocalRank:
    r"""E, Var of RR@k per system and topic; E, Var and P(Δ<0) of ΔMRR@k for pairs (module notes).

    Parameters
    ----------
    cube : RankCube
    p_unjudged : float or ndarray (S, T, D) or (draws, S, T, D)
        Probability of relevance of unjudged ranked documents (:func:`cell_probabilities`); with a leading
        axis, posterior draws of it (the same draw in every topic; :func:`cells_from_rankdata` lays a relevance
        estimate's ``draws`` on the cube).
    cutoff : int, default 10
        k of RR@k (MS MARCO's MRR@10).
    pairs : "all" or ndarray of shape (P, 2)
        Pairs of system indices; default every a < b.
    scheduler : str or distributed.Client, optional
        A Dask scheduler (``"tcp://host:8786"``) or client: the topics are split into ``chunks`` parts (default
        four per worker), each summed by one task; the results equal the local ones up to the order of the
        sums over topics (1e-12).
    chunks : int, optional
        Number of topic chunks on Dask.
    connect_timeout : float
        Seconds to wait for the Dask scheduler.
    closed_form_draws : int
        With posterior draws, how many evenly spaced ones are combined
        (:func:`bayeval.data.probabilities.thin_draws`, the policy of every closed form in bayeval); runs
        locally (``scheduler`` is not used).

    Returns
    -------
    CubeReciprocalRank

    Notes
    -----
    Topics are independent, so over T topics :math:`E[\Delta MRR] = \frac1T\sum_t E[\Delta_t]`,
    :math:`\mathrm{Var}[\Delta MRR] = \frac1{T^2}\sum_t \mathrm{Var}[\Delta_t]`, and P(Δ<0) uses the normal
    approximation (certain sign when the variance is 0), as :func:`bayeval.expected.compare_systems` does.

    With D posterior draws, per draw d the sums :math:`S^E_d=\sum_t E_d[\Delta_t]`,
    :math:`S^V_d=\sum_t \mathrm{Var}_d[\Delta_t]` come from one kernel over draws × pairs × topics, and

    .. math:: E[\Delta MRR] = \frac1D\sum_d \frac{S^E_d}{T},\qquad
              \mathrm{Var}[\Delta MRR] = \frac1D\sum_d \frac{S^V_d}{T^2}
              + \mathrm{var}_d\Big(\frac{S^E_d}{T}\Big)

    (law of total variance; the draw is shared by every topic, so the second term is the variance over
    draws of the mean over topics, not a sum of per-topic ones), P(Δ<0) by the normal approximation on these
    moments. Per system and topic, ``expected``/``variance`` are :math:`\frac1D\sum_d E_d` and
    :math:`\frac1D\sum_d\mathrm{Var}_d + \mathrm{var}_d(E_d)`; ``all_variance`` treats the mean over topics
    as ΔMRR.

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=5, n_systems=3, n_docs=60, depth=20, judged_depth=3, seed=1)
    >>> res = expected_reciprocal_rank_pairs(RankCube.from_runs(col.runs, col.judgments), 0.1)
    >>> res.p_less.shape
    (3,)
    """
    if not isinstance(cube, RankCube):
        raise BayevalInputError(f"cube: expected a RankCube, got {type(cube).__name__}")
    k = check_cutoff(cutoff)
    ia, ib = pair_indices(pairs, cube.docs.shape[0])
    rows, drawn = draw_rows(cube, p_unjudged, closed_form_draws)
    p = np.stack([cell_probabilities(cube, row, k) for row in rows])
    docs = np.ascontiguousarray(cube.docs[:, :, :p.shape[3]])
    if drawn:  # one kernel over draws × pairs × topics, locally (one cube task at a time, as on Dask's threads)
        e, v, out_e, out_v = locked(_draw_sums, docs, p, ia, ib)
        parts = [(e[d], v[d], out_e[d], out_v[d], 0) for d in range(len(p))]
    else:
        parts = [run_topic_task(_topic_block_sums, (docs, p[0]), (), (), (ia, ib), scheduler=scheduler, chunks=chunks,
                                timeout=connect_timeout)]
    return combine_draws(parts, drawn, cube, ia, ib, "exact", f"RR@{k}")
