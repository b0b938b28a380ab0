"""Array kernels of the inferred measures (xinfAP, infNDCG, iP@k, interpolated precision) for one topic.

Every system of the topic at once, from ``(S, D)`` arrays in rank order. The arithmetic follows NIST's
``sample_eval.pl`` step by step (docs/sampling.md), strata summed in the order of their labels as text, so
that values agree with its output to the last printed digit.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RECALL_LEVELS", "ideal_dcg", "interpolated_precision", "topic_inferred"]

_EPS_NUM, _EPS_DEN = 1e-5, 3e-5  # sample_eval.pl's smoothing of the sampled precision within a stratum
_LN2 = np.log(2.0)
RECALL_LEVELS = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])


def _discount(rank: np.ndarray) -> np.ndarray:
    """``log2(rank + 1)`` computed as ``log(rank + 1) / log(2)`` (as the Perl code does)."""
    return np.log(rank + 1.0) / _LN2


def ideal_dcg(grade_counts: dict[int, float], max_rank: int) -> float:
    """Ideal DCG from estimated counts per grade: each count rounded half up, grades in descending order,
    gain ``g / log2(r + 1)``; within a grade the ranks stop at ``max_rank`` (a later grade still adds its first
    rank past it, as ``sample_eval.pl`` does)."""
    total, start = 0.0, 0
    for g in sorted(grade_counts, reverse=True):
        n = int(np.floor(grade_counts[g] + 0.5))
        last = min(start + n, max(max_rank, start + 1))
        for r in range(start + 1, last + 1):
            total += g / (np.log(r + 1.0) / _LN2)
        start += n
    return total


def topic_inferred(code: np.ndarray, grade: np.ndarray, lengths: np.ndarray, n_pool: np.ndarray,
                   n_sampled: np.ndarray, n_rel: np.ndarray, idcg: float, cutoffs: tuple[int, ...]):
    """Inferred measures of every system for one topic.

    Parameters
    ----------
    code : ndarray of int, shape (S, D)
        Stratum (0..K-1, strata in label order) of the document at each rank; -1 when the document is not
        pooled or past the end of the list.
    grade : ndarray of int, shape (S, D)
        Its grade where sampled; -1 where not sampled (or not pooled).
    lengths : ndarray of int, shape (S,)
    n_pool, n_sampled, n_rel : ndarray of int, shape (K,)
        ``N_c``, ``n_c``, ``s_c``: pooled, sampled, sampled relevant documents of each stratum.
    idcg : float
    cutoffs : tuple of int
        The ``k`` of iP@k.

    Returns
    -------
    dict of ndarray, shape (S,) each — ``infAP``, ``infNDCG``, ``iP{k}``, ``inum_rel_ret``; and ``R_k``,
    shape (S, D): the estimated relevant count up to and including each rank.
    """
    S, D = code.shape
    K = len(n_pool)
    rank = np.arange(1, D + 1, dtype=np.float64)
    onehot = code[:, :, None] == np.arange(K)[None, None, :]          # (S, D, K)
    sampled = (grade >= 0)[:, :, None] & onehot
    rel = (grade > 0)[:, :, None] & onehot
    d_in = np.cumsum(onehot, axis=1, dtype=np.int32)
    n_in = np.cumsum(sampled, axis=1, dtype=np.int32)
    s_in = np.cumsum(rel, axis=1, dtype=np.int32)
    # above rank k (exclusive) and up to rank k (inclusive), strata added in label order
    above = np.zeros((S, D))
    upto = np.zeros((S, D))
    for c in range(K):
        d_ex, n_ex, s_ex = d_in[:, :, c] - onehot[:, :, c], n_in[:, :, c] - sampled[:, :, c], \
            s_in[:, :, c] - rel[:, :, c]
        above += np.where(d_ex > 0, d_ex * ((s_ex + _EPS_NUM) / (n_ex + _EPS_DEN)), 0.0)
        upto += d_in[:, :, c] * ((s_in[:, :, c] + _EPS_NUM) / (n_in[:, :, c] + _EPS_DEN))
    prec = 1.0 / rank + above / rank                                  # estimated precision above a relevant doc
    sap = np.einsum("sd,sdk->sk", prec, rel)                          # (S, K)
    r_hat_c = np.where(n_sampled > 0, n_rel * n_pool / np.maximum(n_sampled, 1), 0.0)
    r_hat = 0.0
    for c in range(K):
        r_hat += r_hat_c[c]
    ap = np.zeros(S)
    if r_hat != 0:
        for c in range(K):
            if n_sampled[c] != 0:
                inner = sap[:, c] / n_rel[c] if n_rel[c] != 0 else np.zeros(S)
                ap += (r_hat_c[c] / r_hat) * inner
    last = np.maximum(lengths - 1, 0)
    rows = np.arange(S)
    gain = np.where(grade > 0, grade / _discount(rank)[None, :], 0.0)
    gain_c = np.einsum("sd,sdk->sk", gain, rel)
    d_end, n_end = d_in[rows, last], n_in[rows, last]                 # (S, K)
    m = d_end.sum(axis=1)
    dcg = np.zeros(S)
    for c in range(K):
        ok = (m != 0) & (n_end[:, c] != 0)
        dcg += np.where(ok, (d_end[:, c] / np.maximum(m, 1)) * gain_c[:, c] / np.maximum(n_end[:, c], 1), 0.0)
    ndcg = m * dcg / idcg if idcg != 0 else np.zeros(S)
    out = {"infAP": ap, "infNDCG": ndcg}
    for k in cutoffs:
        out[f"iP{k}"] = upto[rows, np.minimum(lengths, k) - 1] / k if D else np.zeros(S)
    out["inum_rel_ret"] = upto[rows, last]
    out["R_k"] = upto
    return out


def interpolated_precision(r_k: np.ndarray, lengths: np.ndarray, r_hat: float) -> np.ndarray:
    """Interpolated precision at the 11 recall levels, ``(S, 11)``, as ``sample_eval.pl`` estimates it.

    Walking up from the last rank, the running maximum of ``R̂(k)/k`` is credited to the highest recall
    level not yet credited whose target ``level · R̂`` exceeds ``R̂(k)`` — at most one level per rank —; levels
    left over get the maximum over all ranks. Levels above the run's final ``R̂(k)`` are the first ones
    considered.
    """
    S, D = r_k.shape
    rank = np.arange(1, D + 1, dtype=np.float64)
    cuts = RECALL_LEVELS * r_hat
    j = np.arange(D)
    valid = j[None, :] < lengths[:, None]
    # reverse each list: column j is rank lengths - j
    src = np.clip(lengths[:, None] - 1 - j[None, :], 0, None)
    r_desc = np.where(valid, np.take_along_axis(r_k, src, axis=1), np.inf)
    p_desc = np.where(valid, np.take_along_axis(r_k / rank, src, axis=1), -np.inf)
    run_max = np.maximum.accumulate(p_desc, axis=1)
    overall = run_max[np.arange(S), np.maximum(lengths - 1, 0)]
    overall = np.where(lengths > 0, overall, 0.0)
    final = r_desc[:, 0]
    cur = np.searchsorted(cuts, final, side="right") - 1               # last level with target <= final R̂
    out = np.zeros((S, len(cuts)))
    prev = np.full(S, -1)
    rows = np.arange(S)
    while True:
        act = cur >= 0
        if not act.any():
            break
        target = cuts[np.maximum(cur, 0)]
        hit = (r_desc < target[:, None]) & (j[None, :] > prev[:, None]) & act[:, None]
        has = hit.any(axis=1)
        first = hit.argmax(axis=1)
        m = act & has
        out[rows[m], cur[m]] = run_max[rows[m], first[m]]
        prev = np.where(m, first, prev)
        done = act & ~has
        for s in np.flatnonzero(done):
            out[s, : cur[s] + 1] = overall[s]
        cur = np.where(m, cur - 1, np.where(done, -1, cur))
    return out
