"""Cross-fitted predictions: a model's p for each pooled document from a fit that never saw the part of the
random sample that corrects it (:func:`cross_fitted_predictions`).

The model-assisted estimate replaces each pooled document's label by ``z_d = λ p_d + I_d (x_d - λ p_d)/π_d``.
It is unbiased, ``E z_d = x_d``, when the prediction ``p_d`` is independent of the draw ``I_d``. A model fitted
on the whole sample breaks that: it has seen ``x_d`` wherever ``I_d = 1``, so its ``p_d`` leans towards ``x_d``
exactly there, the residuals ``x_d - λ p_d`` of the sampled documents shrink, and the estimate and its
variance lean with them (a model that memorises its training labels makes every residual 0 and the variance
estimate 0, whatever the truth).

K-fold cross-fitting (Chernozhukov et al. 2018; cross-prediction, Zrnic & Candès 2024) restores the
independence: every pooled document gets a fold ``F_d ∈ {0, …, K-1}`` drawn independently of the sample; the
model is fitted K times, the k-th time on the sampled documents of the other folds only, and gives ``p_d`` for
the documents of fold k (sampled or not). Then ``p_d`` is a function of ``{(I_e, x_e) : F_e ≠ F_d}`` alone and,
under Poisson sampling, ``I_d`` is independent of it:

    E[z_d] = E[ λ p_d + E(I_d | p_d) (x_d - λ p_d)/π_d ] = x_d,

so every estimate linear in the labels (R, P@k) is exactly unbiased, and so is every product of labels of one
fold; a product of labels of two different folds (AP's numerator has such terms) keeps a bias of the order of
one document's influence on a fit of the whole sample. The variances of :func:`assisted_measures` treat the
cross-fitted ``p`` as fixed, as cross-prediction-powered inference does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from bayeval.data.probabilities import RelevanceProbabilities
from bayeval.data.qrels import Qrels, TopicJudgments
from bayeval.data.sample import NOT_SAMPLED, StratifiedSample, TopicSample
from bayeval.errors import BayevalInputError

__all__ = ["assign_folds", "cross_fitted_predictions", "held_out", "held_out_judgments"]


def assign_folds(sample: StratifiedSample, folds: int, seed: int) -> dict[str, np.ndarray]:
    """A fold in ``0 … folds-1`` for every pooled document of every topic, independent of the sample.

    Per topic, a random permutation of the pool dealt round-robin (folds of equal size within one document);
    the draw uses only ``seed``, the topic's position and the pool's size, never which documents were sampled.
    """
    if not isinstance(folds, (int, np.integer)) or folds < 2:
        raise BayevalInputError(f"folds: cross-fitting needs an integer >= 2, got {folds!r}")
    out = {}
    for i, (t, ts) in enumerate(sample.items()):
        rng = np.random.default_rng([int(seed), i])
        fold = np.empty(len(ts), dtype=np.int64)
        fold[rng.permutation(len(ts))] = np.arange(len(ts)) % folds
        out[t] = fold
    return out


def held_out(sample: StratifiedSample, fold: Mapping[str, np.ndarray], k: int) -> StratifiedSample:
    """The sample with the judgments of fold ``k`` removed (its documents marked not sampled)."""
    return StratifiedSample({t: TopicSample(ts.docnos, ts.strata, ts.labels,
                                            np.where(fold[t] == k, NOT_SAMPLED, ts.grades))
                             for t, ts in sample.items()})


def held_out_judgments(extra: Qrels, sample: StratifiedSample, fold: Mapping[str, np.ndarray], k: int) -> Qrels:
    """``extra`` without the judgments of fold ``k``'s pooled documents and of the sample's drawn ones (those are
    the sample's: :func:`held_out` gives them to the folds that may see them); documents outside the pool, and
    topics outside the sample, are kept."""
    out = {}
    for t in extra.topics:
        tj = extra[t]
        ts = sample.get(t)
        if ts is None:
            out[t] = tj
            continue
        pos = pd.Index(ts.docnos).get_indexer(tj.docnos)
        inside = pos >= 0
        at = np.maximum(pos, 0)
        drop = inside & ((fold[t][at] == k) | ts.sampled[at])
        keep = ~drop
        out[t] = TopicJudgments(tj.docnos[keep], tj.grades[keep],
                                None if tj.inclusion is None else tj.inclusion[keep])
    return Qrels(out, extra.relevance_level)


def cross_fitted_predictions(sample: StratifiedSample, fit: Callable[..., RelevanceProbabilities], *,
                             folds: int = 5, seed: int = 0, default: float = 0.0,
                             extra: Qrels | None = None) -> RelevanceProbabilities:
    """Each pooled document's p from the fit on the other folds' sampled judgments.

    Parameters
    ----------
    sample : StratifiedSample
        The pool and the sampled judgments.
    fit : callable
        ``fit(training_sample) -> RelevanceProbabilities``: fits the model on ``training_sample``'s sampled
        documents (the others unjudged) and predicts every pooled document. Called ``folds`` times.
    folds : int >= 2
        Default 5: each fit sees 80% of the sample (against 2: narrower model-assisted intervals on a synthetic
        collection, the same on Robust 2003, at 2.5 times the fits; docs/sampling.md).
    seed : int
        Seed of the fold assignment (:func:`assign_folds`).
    default : float
        p of a pooled document the fit does not list.
    extra : Qrels, optional
        Judgments that were not drawn at random (a selector's adaptive picks, an initial pool): the model may
        learn from them, they never correct it. Fit k learns from those of documents outside fold k (pooled
        documents of other folds, and documents outside the pool) and is then called
        ``fit(training_sample, extra_k)``; a pooled document's own judgment never reaches its prediction,
        drawn or not (:func:`held_out_judgments`). A document of ``extra`` that was drawn must carry the
        sample's grade and is left to the sample.

    Notes
    -----
    Why fold k's non-random judgments are held out too: a pooled document d is non-random (in ``extra``)
    only where it was not drawn. Were its judgment in the fit that predicts it, ``p_d`` would lean towards
    ``x_d`` exactly when ``I_d = 0``, and ``E z_d = x_d + λ (1 - π_d) (p_d⁽⁰⁾ - p_d⁽¹⁾)``, biased.

    Returns
    -------
    RelevanceProbabilities
        Every pooled document's out-of-fold prediction.
    """
    fold = assign_folds(sample, folds, seed)
    out: dict[str, dict[str, float]] = {t: {} for t in sample}
    for k in range(folds):
        pred = (fit(held_out(sample, fold, k)) if extra is None
                else fit(held_out(sample, fold, k), held_out_judgments(extra, sample, fold, k)))
        if not isinstance(pred, RelevanceProbabilities):
            raise BayevalInputError(f"fit: must return RelevanceProbabilities, got {type(pred).__name__}")
        for t, ts in sample.items():
            mine = fold[t] == k
            docs = ts.docnos[mine]
            out[t].update(zip(docs.tolist(), pred.lookup(t, docs, float(default)).tolist(), strict=True))
    return RelevanceProbabilities(out)
