"""Sampling designs: inclusion probabilities for drawing a share of a pool at random.

* :func:`rank_inclusion` — strata by the best rank any run gives a document (1-10, 11-30, deeper), sampled at
  rates in the ratio 10 : 5 : 2 (the shape of the TREC-8 sample of docs/sampling.md, as xinfAP samples);
* :func:`proportional_inclusion` — proportional to a prior or model probability of relevance, with a floor
  (statAP's design: Aslam, Pavlu & Yilmaz 2006 sample in proportion to a prior on relevance);
* :func:`prior_inclusion` — proportional to the AP-prior of the runs' ranks (:func:`ap_prior`, Aslam, Pavlu &
  Savell 2003), the prior statAP's own experiments sample with.

All three scale the probabilities so that their sum, the expected number of documents drawn, is ``share`` times the
pool, capping at 1 (the excess of a capped document goes to the others). :func:`poisson_draw` draws each
document independently with its probability (Poisson sampling, the design every estimator of
:mod:`bayeval.sampling` assumes).
"""

from __future__ import annotations

import numpy as np

from bayeval.errors import BayevalInputError

__all__ = ["PRIOR_FLOOR", "RANK_EDGES", "RANK_RATES", "ap_prior", "poisson_draw", "prior_inclusion",
           "proportional_inclusion", "rank_inclusion", "rank_stratum"]

RANK_EDGES = (10, 30)
RANK_RATES = (10.0, 5.0, 2.0)
#: the floor of :func:`proportional_inclusion` (and :func:`prior_inclusion`'s, relative to the topic's largest prior)
PRIOR_FLOOR = 0.05


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


def proportional_inclusion(p: np.ndarray, share: float, floor: float = PRIOR_FLOOR) -> np.ndarray:
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


def ap_prior(ranks: np.ndarray, depth: int) -> np.ndarray:
    """The AP-prior of each document, averaged over runs (Aslam, Pavlu & Savell 2003).

    A list of depth ``Z`` whose average precision is to be estimated gives the document at rank ``r`` the weight

      a(r) = (1 / 2Z) · (1 + Σ_{i=r}^{Z} 1/i),

    derived by Aslam, Pavlu & Savell from AP's form as a sum over pairs of ranks, ``(1/R) Σ_{i ≤ j} x_i x_j / j``;
    ``Σ_{r=1}^{Z} a(r) = 1``. A document that a run does not retrieve within ``Z`` gets 0 from it, and the prior
    of a document is the mean of its weights over the runs (Aslam, Pavlu & Yilmaz 2006 sample in proportion to it).

    Parameters
    ----------
    ranks : array of int, shape (documents, runs)
        1-based rank of each document in each run; 0 (or anything above ``depth``) where the run does not
        retrieve it within ``depth``.
    depth : int
        ``Z``, the depth of the lists (the pool's depth).

    Returns
    -------
    numpy.ndarray, shape (documents,)
        The mean AP-prior over the runs, in [0, (1 + H_Z) / 2Z] (``H_Z`` the Z-th harmonic number).

    References
    ----------
    J. A. Aslam, V. Pavlu and R. Savell, "A unified model for metasearch, pooling, and system evaluation", CIKM
    2003. J. A. Aslam, V. Pavlu and E. Yilmaz, "A statistical method for system evaluation using incomplete
    judgments", SIGIR 2006.
    """
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise BayevalInputError(f"depth: a positive integer, got {depth!r}")
    ranks = np.asarray(ranks)
    if ranks.ndim != 2 or not np.issubdtype(ranks.dtype, np.integer):
        raise BayevalInputError(f"ranks: a 2-d integer array (documents × runs), got shape {ranks.shape} "
                                f"of {ranks.dtype}")
    if ranks.shape[1] == 0:
        raise BayevalInputError("ranks: needs at least one run (column)")
    tail = np.cumsum((1.0 / np.arange(1, depth + 1))[::-1])[::-1]          # Σ_{i=r}^{Z} 1/i
    inside = (ranks > 0) & (ranks <= depth)
    w = np.where(inside, (1.0 + tail[np.clip(ranks, 1, depth) - 1]) / (2.0 * depth), 0.0)
    return w.mean(axis=1)


def prior_inclusion(ranks: np.ndarray, share: float, depth: int, floor: float = PRIOR_FLOOR) -> np.ndarray:
    """Inclusion probabilities proportional to the AP-prior of the runs' ranks, expected total ``share · N``.

    ``π_d ∝ max(a_d / max_e a_e, floor)`` (:func:`ap_prior` ``a``, :func:`proportional_inclusion`): the prior is
    scaled so that the topic's most likely document has 1, and the floor is relative to it. Every π is then at
    least ``floor · c``, ``c ≥ share`` the scale that meets the budget (the scaled priors sum to at most N), so a
    Horvitz–Thompson weight ``1/π_d`` is at most ``1/(floor · share)`` and at most ``1/floor`` times the smallest
    weight of the topic, whatever the prior gets wrong.

    Parameters
    ----------
    ranks : array of int, shape (documents, runs)
        The pool of one topic: 1-based rank of each document in each run, 0 where not retrieved.
    share : float in (0, 1]
        Expected share of the pool drawn.
    depth : int
        The pool's depth ``Z`` (:func:`ap_prior`).
    floor : float in (0, 1]
        Least relative prior (default 0.05, the floor of :func:`proportional_inclusion`).

    Returns
    -------
    numpy.ndarray, shape (documents,)
        Inclusion probabilities in (0, 1], summing to ``share · N``.

    References
    ----------
    J. A. Aslam, V. Pavlu and E. Yilmaz, "A statistical method for system evaluation using incomplete
    judgments", SIGIR 2006 (sampling in proportion to the AP-prior).
    """
    a = ap_prior(ranks, depth)
    if len(a) == 0:
        raise BayevalInputError("ranks: the pool is empty")
    top = float(a.max())
    if top <= 0.0:
        raise BayevalInputError(f"ranks: no document is retrieved within depth {depth}")
    return proportional_inclusion(a / top, share, floor=floor)


def poisson_draw(inclusion: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Whether each document is drawn: independently, with its inclusion probability."""
    return rng.random(len(inclusion)) < np.asarray(inclusion)
