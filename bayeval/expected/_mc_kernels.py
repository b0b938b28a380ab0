"""Monte Carlo kernels: measures computed exactly on sampled relevance, and pairwise statistics."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__: list[str] = []

# measure family codes
AP, PREC, RECALL, NDCG, RPREC = 0, 1, 2, 3, 4


@njit(cache=True, parallel=True)
def measure_draws(x, ranked, lengths, family, k, judged, gains, disc, idcg, out):
    """``out[s, d]`` = the measure of system s on the relevance draw ``x[d]`` (uint8 (draws, n)).

    ``lengths`` are already cut at the cutoff; ``k`` is the cutoff (P@k divides by it); for nDCG,
    ``idcg[n]`` is the ideal DCG with n relevant unjudged documents (n lumped at len(idcg) - 1).
    """
    n_draws = x.shape[0]
    n_docs = x.shape[1]
    n_sys = ranked.shape[0]
    top = idcg.shape[0] - 1
    for d in prange(n_draws):
        rel = 0
        unj = 0
        for i in range(n_docs):
            if x[d, i]:
                rel += 1
                if not judged[i]:
                    unj += 1
        for s in range(n_sys):
            length = lengths[s]
            val = 0.0
            if family == AP:
                if rel > 0:
                    cnt = 0
                    acc = 0.0
                    for r in range(length):
                        if x[d, ranked[s, r]]:
                            cnt += 1
                            acc += cnt / (r + 1.0)
                    val = acc / rel
            elif family == PREC or family == RECALL:
                cnt = 0
                for r in range(length):
                    if x[d, ranked[s, r]]:
                        cnt += 1
                if family == PREC:
                    val = cnt / k
                elif rel > 0:
                    val = cnt / rel
            elif family == RPREC:
                if rel > 0:
                    cnt = 0
                    for r in range(min(length, rel)):
                        if x[d, ranked[s, r]]:
                            cnt += 1
                    val = cnt / rel
            else:  # nDCG
                ideal = idcg[min(unj, top)]
                if ideal > 0.0:
                    acc = 0.0
                    for r in range(length):
                        doc = ranked[s, r]
                        g = gains[doc] if judged[doc] else float(x[d, doc])
                        acc += g * disc[r]
                    val = acc / ideal
            out[s, d] = val


@njit(cache=True, parallel=True)
def pair_draw_stats(values, pa, pb, mean, var, less, map_mean, map_var, map_less):
    """Per pair and topic: mean, variance (ddof 1) and P(delta < 0) of ``values[t, a, d] - values[t, b, d]``;
    the same for the mean over topics (MAP) per draw.

    A draw with delta == 0 exactly (a tie: identical rankings, or R = 0) counts one half, so that
    P(delta < 0) + P(delta > 0) = 1 as with the normal approximation (where sd = 0 and E = 0 gives 0.5).
    """
    n_topics, _, n_draws = values.shape
    for i in prange(pa.shape[0]):
        a = pa[i]
        b = pb[i]
        tot = np.zeros(n_draws)
        for t in range(n_topics):
            s1 = 0.0
            cnt = 0.0
            for d in range(n_draws):
                delta = values[t, a, d] - values[t, b, d]
                s1 += delta
                tot[d] += delta
                if delta < 0.0:
                    cnt += 1.0
                elif delta == 0.0:
                    cnt += 0.5
            mu = s1 / n_draws
            s2 = 0.0
            for d in range(n_draws):
                dev = values[t, a, d] - values[t, b, d] - mu
                s2 += dev * dev
            mean[i, t] = mu
            var[i, t] = s2 / (n_draws - 1) if n_draws > 1 else 0.0
            less[i, t] = cnt / n_draws
        s1 = 0.0
        cnt = 0.0
        for d in range(n_draws):
            tot[d] /= n_topics
            s1 += tot[d]
            if tot[d] < 0.0:
                cnt += 1.0
            elif tot[d] == 0.0:
                cnt += 0.5
        mu = s1 / n_draws
        s2 = 0.0
        for d in range(n_draws):
            s2 += (tot[d] - mu) ** 2
        map_mean[i] = mu
        map_var[i] = s2 / (n_draws - 1) if n_draws > 1 else 0.0
        map_less[i] = cnt / n_draws
