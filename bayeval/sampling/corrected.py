"""Bias-corrected statAP from a random sample alone (:func:`corrected_measures`).

statAP (Aslam, Pavlu & Yilmaz, SIGIR 2006) divides two Horvitz-Thompson estimates, ``AP̂ = N̂ / R̂``: each is
unbiased, their ratio is not, by an amount of order ``1/n`` for ``n`` sampled relevant documents — at small
budgets a bias of the size of the standard error of MAP, so that statAP's intervals cover too rarely. This
module subtracts the ratio's estimated second-order bias from every topic's estimate and gives the variance
of the corrected estimate by the Poisson delete-one jackknife (each draw undone, the correction recomputed).
Formulas and the study that chose it: docs/sampling.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from bayeval.data.rankdata import RankData
from bayeval.data.run import Run, RunSet
from bayeval.data.sample import StratifiedSample
from bayeval.errors import BayevalInputError
from bayeval.sampling._corrected_kernels import corrected_topic
from bayeval.sampling.assisted import AssistedEvaluation, _bounded, _inclusion, _mean_covariance

__all__ = ["corrected_measures"]


def corrected_measures(runs: RunSet | Sequence[Run], sample: StratifiedSample, *,
                       inclusion: Mapping[str, np.ndarray] | None = None, depth: int = 1000,
                       relevance_level: int = 1, correction: str = "taylor",
                       empty: str = "impute") -> AssistedEvaluation:
    """Every run's AP from the sample alone, statAP with its ratio bias removed, with design-based variances.

    Parameters
    ----------
    runs : RunSet or sequence of Run
    sample : StratifiedSample
        The pool (every document that could have been sampled) and the sampled judgments.
    inclusion : mapping topic -> ndarray, optional
        Each pooled document's inclusion probability, aligned with ``sample[topic].docnos``; default the
        stratum's sampling rate ``n_c / N_c``. Sampling is taken to be Poisson (independent draws).
    depth, relevance_level
        Ranks kept; the least grade counted relevant.
    correction : {"taylor", "none"}
        ``"taylor"`` (default): per topic ``θ̂ - B̂`` with ``B̂ = Σ_{e ∈ S} (1 - π_e) π_e⁻² (θ̂ - b_e) / R̂²`` the
        estimated second-order bias of the ratio ``θ̂ = N̂/R̂`` (``b_e = ∂N̂/∂z_e``; sums over the sampled
        relevant documents). ``"none"``: statAP, exactly as :func:`bayeval.sampling.assisted_measures` gives it
        at weight 0.
    empty : {"impute", "zero"}
        Topics without a sampled relevant document, as in :func:`bayeval.sampling.assisted_measures`: MAP over
        the informative topics with the between-topic term for the others (default), or AP = 0 there.

    Returns
    -------
    AssistedEvaluation
        Measure ``AP`` only (``weight`` 0): per-topic values and jackknife variances, the covariance of the
        runs' MAP (``mean``, ``interval``, ``differences`` with P(Δ < 0)).

    Notes
    -----
    The variance is the Poisson delete-one jackknife of the *corrected* estimate,
    ``Σ_{e ∈ S} (1 - π_e) (θ̃ - θ̃₍ₑ₎)²``, ``θ̃₍ₑ₎`` the corrected estimate recomputed with e's draw undone
    (slopes and correction included). A topic's estimate is clipped to [0, 1] and its influences scaled so that
    its variance is at most 1/4 (Popoviciu's bound), as statAP's in :func:`bayeval.sampling.assisted_measures`.
    Runs' documents outside the pool count as nonrelevant. Formulas, and what was tried: docs/sampling.md.
    """
    runs = runs if isinstance(runs, RunSet) else RunSet(tuple(runs))
    if correction not in ("taylor", "none"):
        raise BayevalInputError(f"correction: 'taylor' or 'none', got {correction!r}")
    if empty not in ("impute", "zero"):
        raise BayevalInputError(f"empty: 'impute' or 'zero', got {empty!r}")
    if not isinstance(depth, (int, np.integer)) or depth < 1:
        raise BayevalInputError(f"depth: must be a positive integer, got {depth!r}")
    data = RankData.build(runs, sample.pool(), depth=int(depth))
    S, T = len(runs), len(data.topics)
    values, variances, unclipped = np.full((S, T), np.nan), np.full((S, T), np.nan), np.full((S, T), np.nan)
    has = np.zeros((S, T), dtype=bool)
    informative = np.ones(T, dtype=bool)
    key = ("AP", "g") if correction == "none" else ("corrected", "g_corrected")
    influences = []
    for ti, tr in enumerate(data):
        ts = sample[tr.topic]
        pi = _inclusion(ts, inclusion, tr.topic)
        rel = ts.sampled & (ts.grades >= relevance_level)
        where = pd.Index(tr.docnos).get_indexer(ts.docnos)
        z_doc = np.zeros(tr.n_docs)
        z_doc[where[rel]] = 1.0 / pi[rel]
        res = corrected_topic(tr.ranked_values(z_doc, 0.0), tr.ranks[where[rel]].T.astype(np.int64),
                              1.0 / pi[rel], pi[rel])
        ok = tr.has_results
        has[:, ti] = ok
        informative[ti] = empty == "zero" or bool(rel.any())
        influences.append(_bounded(res[key[0]], res[key[1]], ok, values[:, ti], variances[:, ti]))
        unclipped[ok, ti] = res[key[0]][ok]
    covariance = _mean_covariance(influences, values, has, informative)
    return AssistedEvaluation(tuple(runs.names), tuple(data.topics), ("AP",), {"AP": values}, {"AP": variances},
                              {"AP": covariance}, 0.0, informative, {"AP": unclipped})
