"""Model-anchored AP from a random sample (:func:`anchored_measures`): the model carries AP's non-linear part, the
sample corrects the terms of its expansion around the model.

The model-assisted estimate of :func:`bayeval.sampling.assisted_measures` divides two unbiased estimates,
``N̂/R̂``; with few judgments a topic ``R̂`` varies by a third or more and the ratio is biased — low where few
relevant documents are drawn (docs/notes/sampling-small-samples.md). Here nothing random is divided: every
function of binary labels is a multilinear polynomial in ``x - p``,

    AP(x) = E_p[AP] + Σ_d f_d (x_d - p_d) + Σ_{d<e} f_de (x_d - p_d)(x_e - p_e) + …,

whose coefficients are the derivatives of the model's expected AP (``E_q[AP]`` as a function of the
probabilities ``q``, at ``q = p``), and under Poisson sampling ``Π_{d∈A} I_d (x_d - p_d)/π_d`` is unbiased for
``Π_{d∈A} (x_d - p_d)`` (independent draws). The estimate keeps the terms up to ``order`` (default 2): it is
design-unbiased for AP up to the terms of order 3 and more, whose mean under the model is 0 and whose size is
that of the model's error cubed, not of the sampling error. Formulas: :mod:`bayeval.sampling._anchored_kernels`
and docs/sampling.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from bayeval.data.probabilities import RelevanceProbabilities
from bayeval.data.rankdata import RankData
from bayeval.data.run import Run, RunSet
from bayeval.data.sample import StratifiedSample
from bayeval.errors import BayevalInputError
from bayeval.sampling._anchored_kernels import anchored_topic
from bayeval.sampling.assisted import AssistedEvaluation, _inclusion, _mean_covariance

__all__ = ["ORDERS", "anchored_measures"]

#: The orders of the expansion :func:`anchored_measures` keeps.
ORDERS = (1, 2, "all")


def anchored_measures(runs: RunSet | Sequence[Run], sample: StratifiedSample,
                      predictions: RelevanceProbabilities, *, order: int = 2,
                      inclusion: Mapping[str, np.ndarray] | None = None, cutoffs: tuple[int, ...] = (10,),
                      depth: int = 1000, relevance_level: int = 1, default: float = 0.0,
                      nodes: int = 32) -> AssistedEvaluation:
    """Every run's AP (and P@k) anchored at the model's predictions and corrected by the random sample.

    Parameters
    ----------
    runs : RunSet or sequence of Run
    sample : StratifiedSample
        The pool (every document that could have been sampled) and the sampled judgments.
    predictions : RelevanceProbabilities
        Each pooled document's probability of relevance (``default`` where not listed). For the estimate to stay
        design-unbiased a document's p must not depend on its own draw (cross-fitting:
        :func:`bayeval.sampling.cross_fitted_predictions`).
    order : {1, 2, "all"}
        The terms of AP's expansion around ``p`` kept (default 2: the pairs of sampled documents too); ``"all"``:
        every term — the model's expected-AP formula evaluated at the corrected labels
        ``z_d = p_d + I_d (x_d - p_d)/π_d``, AP's multilinear extension at ``z``, exactly design-unbiased for AP
        (the terms of every order estimated from the sample; their variance grows with 1/π where R is small).
    inclusion : mapping topic -> ndarray, optional
        Each pooled document's inclusion probability, aligned with ``sample[topic].docnos``; default the
        stratum's sampling rate ``n_c / N_c``. Sampling is taken to be Poisson (independent draws).
    cutoffs, depth, relevance_level
        P@k cut-offs (P@k is linear in the labels: its estimate is the difference estimator, the same at every
        order); ranks kept; the least grade counted relevant.
    default : float
        p of a pooled document ``predictions`` does not list.
    nodes : int
        Gauss–Laguerre nodes of the tilted integral (docs/expected.md). 32 (default): every topic's estimate
        within 1.2·10⁻⁸ and its variance within 5·10⁻⁸ of 128 nodes' on DL 2020 samples of 10 judgments a topic
        (64: within 10⁻¹², at twice the time).

    Returns
    -------
    AssistedEvaluation
        ``AP`` and ``P{k}``: per-topic estimates (not projected onto [0, 1]: the projection would bias them),
        variances and the covariance of the runs' means over topics by the Poisson delete-one jackknife
        ``Σ_e (1 - π_e)(θ̂ - θ̂₍ₑ₎)²``, ``θ̂₍ₑ₎`` the estimate with e's draw undone (exact for the linear terms);
        ``weight`` 1 (the expansion is around ``p`` itself); every topic informative; ``unclipped`` the same
        values.

    Notes
    -----
    Runs' documents outside the pool count as nonrelevant (as in trec_eval and ``sample_eval.pl``); R counts
    the pool's relevant documents. See :mod:`bayeval.sampling.anchored` for the expansion.

    Examples
    --------
    A topic of four documents, two runs, two of the documents drawn: where the model is right (p = the labels)
    the anchor is AP itself and the sample has nothing to correct.

    >>> import numpy as np
    >>> from bayeval.data import RelevanceProbabilities, Run
    >>> from bayeval.data.sample import StratifiedSample, TopicSample
    >>> docs = np.array(["a", "b", "c", "d"], dtype=object)
    >>> runs = [Run.from_arrays("r1", np.full(4, "1"), docs, np.array([4.0, 3, 2, 1])),
    ...         Run.from_arrays("r2", np.full(4, "1"), docs[::-1].copy(), np.array([4.0, 3, 2, 1]))]
    >>> sample = StratifiedSample({"1": TopicSample(docs, np.zeros(4, np.int32), ("1",), np.array([1, -1, -1, 0]))})
    >>> p = RelevanceProbabilities({"1": {"a": 1.0, "b": 0.0, "c": 1.0, "d": 0.0}})
    >>> ev = anchored_measures(runs, sample, p, cutoffs=(), inclusion={"1": np.full(4, 0.5)})
    >>> np.round(ev.values["AP"][:, 0], 6)   # AP of r1 (a, c relevant at ranks 1, 3) and r2 (at ranks 2, 4)
    array([0.833333, 0.5     ])
    """
    runs = runs if isinstance(runs, RunSet) else RunSet(tuple(runs))
    if order not in ORDERS or isinstance(order, bool):
        raise BayevalInputError(f"order: one of {', '.join(map(str, ORDERS))}, got {order!r}")
    if not 0.0 <= float(default) <= 1.0:
        raise BayevalInputError(f"default: must lie in [0, 1], got {default!r}")
    if not isinstance(nodes, (int, np.integer)) or nodes < 8:
        raise BayevalInputError(f"nodes: an integer >= 8, got {nodes!r}")
    if predictions is None:
        raise BayevalInputError("predictions: the model's p of every pooled document (the anchor) is required")
    cutoffs = tuple(int(k) for k in cutoffs)
    data = RankData.build(runs, sample.pool(), depth=int(depth))
    S, T = len(runs), len(data.topics)
    measures = ("AP", *[f"P{k}" for k in cutoffs])
    values = {m: np.full((S, T), np.nan) for m in measures}
    variances = {m: np.full((S, T), np.nan) for m in measures}
    influence: dict[str, list[np.ndarray]] = {m: [] for m in measures}
    has = np.zeros((S, T), dtype=bool)
    for ti, tr in enumerate(data):
        parts = _topic_parts(tr, sample[tr.topic], predictions, inclusion, float(default), relevance_level,
                             cutoffs, order, int(nodes))
        ok = tr.has_results
        has[:, ti] = ok
        for m, (v, g) in parts.items():
            values[m][ok, ti] = v[ok]
            g = np.where(ok[:, None], g, 0.0)
            variances[m][ok, ti] = np.sum(g[ok] ** 2, axis=1)
            influence[m].append(g)
    every = np.ones(T, dtype=bool)
    covariance = {m: _mean_covariance(influence[m], values[m], has, every) for m in measures}
    return AssistedEvaluation(tuple(runs.names), tuple(data.topics), measures, values, variances, covariance, 1.0,
                              every, {m: v.copy() for m, v in values.items()})


def _topic_parts(tr, ts, predictions: RelevanceProbabilities, inclusion: Mapping[str, np.ndarray] | None,
                 default: float, relevance_level: int, cutoffs: tuple[int, ...], order: int, nodes: int
                 ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """One topic's anchored estimate of each measure and its per-document influences, ``{measure: (value,
    influence)}``: AP from :func:`anchored_topic`; P@k as the model's expected P@k plus the drawn documents'
    corrections ``(x_d - p_d)/π_d`` within the top k, with influences ``√(1 - π_d)`` times those."""
    pi = _inclusion(ts, inclusion, tr.topic)
    p = predictions.lookup(tr.topic, ts.docnos, default)
    if np.any((p < 0) | (p > 1)):
        raise BayevalInputError(f"predictions: probabilities in [0, 1], not for topic {tr.topic!r}")
    x = (ts.grades >= relevance_level).astype(np.float64)
    smp = ts.sampled
    where = pd.Index(tr.docnos).get_indexer(ts.docnos)
    p_doc = np.zeros(tr.n_docs)
    p_doc[where] = p
    ranks = tr.ranks[where[smp]].T.astype(np.int64)                       # (S, n)
    delta = (x - p)[smp] / pi[smp]
    res = anchored_topic(tr.ranked_values(p_doc, 0.0), p, ranks, delta, pi[smp], np.flatnonzero(smp),
                         order=order, nodes=nodes)
    parts = {"AP": (res["AP"], res["AP_g"])}
    root = np.sqrt(1.0 - pi[smp])
    for k in cutoffs:
        top = (ranks > 0) & (ranks <= k)
        parts[f"P{k}"] = ((tr.ranked_values(p_doc, 0.0)[:, :k].sum(axis=1) + (top * delta[None, :]).sum(axis=1))
                          / k, top * (root * delta)[None, :] / k)
    return parts
