"""Sampling designs: inclusion probabilities for drawing a share of a pool at random.

* :func:`rank_inclusion` — strata by the best rank any run gives a document (1-10, 11-30, deeper), sampled at
  rates in the ratio 10 : 5 : 2 (the shape of the TREC-8 sample of docs/sampling.md, as xinfAP samples);
* :func:`proportional_inclusion` — proportional to a prior or model probability of relevance, with a floor
  (statAP's design: Aslam, Pavlu & Yilmaz 2006 sample in proportion to a prior on relevance).

Both scale the probabilities so that their sum, the expected number of documents drawn, is ``share`` times the
pool, capping at 1 (the excess of a capped document goes to the others). :func:`poisson_draw` draws each
document independently with its probability (Poisson sampling, the design every estimator of
:mod:`bayeval.sampling` assumes).
"""

from __future__ import annotations

import numpy as np

from bayeval.errors import BayevalInputError

__all__ = ["RANK_EDGES", "RANK_RATES", "poisson_draw", "proportional_inclusion", "rank_inclusion", "rank_stratum"]

RANK_EDGES = (10, 30)
RANK_RATES = (10.0, 5.0, 2.0)


def _check_share(share: float) -> float:
    share = float(share)
    if not 0.0 < share <= 1.0:
        raise BayevalInputError(f"share: must lie in (0, 1], got {share!r}")
    return share


def _scaled(base: np.ndarray, share: float) -> np.ndarray:
    """``base`` scaled to sum to ``share · len(base)``, capped at 1, the excess redistributed."""
    target = share * len(base)
    capped = np.zeros(len(base), dtype=bool)
    pi = np.zeros(len(base))
    for _ in range(len(base) + 1):
        free = ~capped
        scale = (target - capped.sum()) / max(float(base[free].sum()), 1e-300)
        pi = np.where(capped, 1.0, np.minimum(base * scale, 1.0))
        newly = free & (pi >= 1.0)
        if not newly.any():
            break
        capped |= newly
    return pi


def rank_stratum(best_rank: np.ndarray) -> np.ndarray:
    """Stratum 0, 1, 2 of documents whose best rank is 1-10, 11-30, deeper."""
    return np.searchsorted(np.asarray(RANK_EDGES), np.asarray(best_rank), side="left").astype(np.int32)


def rank_inclusion(best_rank: np.ndarray, share: float) -> np.ndarray:
    """Inclusion probabilities by rank stratum (rates 10 : 5 : 2), expected total ``share · N``."""
    share = _check_share(share)
    return _scaled(np.asarray(RANK_RATES)[rank_stratum(best_rank)], share)


def proportional_inclusion(p: np.ndarray, share: float, floor: float = 0.05) -> np.ndarray:
    """Inclusion probabilities proportional to ``max(p, floor)``, expected total ``share · N``.

    The floor keeps every document's probability positive, so that the Horvitz-Thompson weights stay bounded
    whatever the prior gets wrong.
    """
    share = _check_share(share)
    p = np.asarray(p, dtype=np.float64)
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise BayevalInputError("p: probabilities must lie in [0, 1]")
    if not 0 < floor <= 1:
        raise BayevalInputError(f"floor: must lie in (0, 1], got {floor!r}")
    return _scaled(np.maximum(p, floor), share)


def poisson_draw(inclusion: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Whether each document is drawn: independently, with its inclusion probability."""
    return rng.random(len(inclusion)) < np.asarray(inclusion)
