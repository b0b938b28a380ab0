"""One entry point from a collection to probabilities of relevance: :func:`estimate_probabilities`."""

from __future__ import annotations

import numpy as np

from bayeval.data.rankdata import RankData
from bayeval.defaults import DEFAULT_FIT, DEFAULT_MODEL, P_DRAWS, SEED
from bayeval.errors import BayevalInputError
from bayeval.relevance._fitting import FIT_METHODS
from bayeval.relevance.assessor import with_assessors
from bayeval.relevance.baselines import smoothed_probabilities, uniform_probabilities
from bayeval.relevance.beyond_depth import with_beyond_depth
from bayeval.relevance.config import SimilarityConfig, kinds_accepting, load_config, load_config_as
from bayeval.relevance.hierarchical import HierarchicalEstimator
from bayeval.relevance.results import RelevanceEstimate
from bayeval.relevance.rtc import RTCEstimator
from bayeval.relevance.similarity import SimilarityRegression
from bayeval.relevance.sparse_labels import sparse_label_probabilities

__all__ = ["AFTER_MODEL", "ESTIMATORS", "MODEL_KINDS", "SimilarityEstimator", "estimate_probabilities"]


class SimilarityEstimator:
    """Similarity regression from a collection to p for every document (see :mod:`.similarity`).

    Parameters
    ----------
    config : SimilarityConfig or str
        Default ``"similarity-default"``.
    """

    def __init__(self, config: SimilarityConfig | str = "similarity-default") -> None:
        self.config = load_config_as(config, SimilarityConfig, "a similarity")

    def model(self, data: RankData, *, texts=None, embeddings=None, similarity=None, matrix=None):

        given = [k for k, v in (("texts", texts), ("embeddings", embeddings), ("similarity", similarity),
                                ("matrix", matrix)) if v is not None]
        if len(given) != 1:
            raise BayevalInputError("texts, embeddings, similarity, matrix: give exactly one source of "
                                    f"similarities (got {given or 'none'})")
        prior = self.config.similarity
        if texts is not None:
            return SimilarityRegression.from_texts(data, texts, prior, **self.config.tfidf)
        if embeddings is not None:
            return SimilarityRegression.from_embeddings(data, embeddings, prior)
        if matrix is not None:
            docnos, mat = matrix
            return SimilarityRegression.from_matrix(data, docnos, mat, prior)
        return SimilarityRegression.from_rankdata(data, similarity, prior)

    def estimate(self, data: RankData, method: str = "map", *, p_draws: int | None = P_DRAWS, seed=None,
                 texts=None, embeddings=None, similarity=None, matrix=None, **fit_kwargs) -> RelevanceEstimate:
        """Fit and predict; ``p_draws`` posterior draws of p for sampled fits."""
        m = self.model(data, texts=texts, embeddings=embeddings, similarity=similarity, matrix=matrix)
        fit = m.fit(method, seed=seed, **fit_kwargs)
        pt = fit.point()
        p = m.predict(pt["beta0"], pt["beta"])
        dr = None
        if p_draws and method != "map":
            rng = np.random.default_rng(seed)
            k = rng.integers(fit.n_draws, size=p_draws)
            dr = tuple(np.asarray(d, dtype=np.float32) for d in m.predict(fit.draws("beta0")[k], fit.draws("beta")[k]))
            p = [d.mean(axis=0, dtype=np.float64) for d in dr]
        return RelevanceEstimate(tuple(data.topics), tuple(tr.docnos for tr in data),
                                 tuple(np.asarray(tr.judged) for tr in data), tuple(p), dr,
                                 model=self.config.name, method=method, fits={"similarity": fit},
                                 relevant=tuple(np.asarray(tr.relevant) for tr in data))


def estimate_probabilities(data: RankData, model=DEFAULT_MODEL, *, fit: str = DEFAULT_FIT,
                           p_draws: int | None = P_DRAWS, seed=SEED,
                           extra=None, texts=None, embeddings=None, similarity=None, matrix=None,
                           stage_methods=None, depth: int | None = None, topup=None, labels=None,
                           **fit_kwargs) -> RelevanceEstimate:
    """Probabilities of relevance of every document of ``data`` (and posterior draws of them).

    Parameters
    ----------
    data : RankData
        Runs aligned with the (incomplete) judgments.
    model : str or config
        Default :data:`~bayeval.defaults.DEFAULT_MODEL` (``"hier-reuse-depth"``: the reuse prior,
        docs/calibration.md, with p beyond the judged depth, docs/depth.md; add the unseen relevant documents with
        :func:`bayeval.relevance.unseen.with_unseen`, as the command line does by default).
        ``"rtc"``, ``"hier"`` (the hierarchical model, :mod:`.hierarchical`), ``"similarity"``, ``"uniform"``,
        ``"smoothed"``, ``"sparse"`` (sparse labels, :mod:`.sparse_labels`) (their ``-default`` configuration),
        the name of a shipped configuration (``"rtc-mtc"``, …), a TOML path, or a config object.
    fit : {"map", "laplace", "mcmc", "vi"}
        Fit method (ignored by the point baselines).
    p_draws : int or None
        Posterior draws of p to keep for sampled fits (``None``/0: none).
    seed : int or None
    extra : mapping name → RelevanceProbabilities or path, optional
        Extra expert columns for ``rtc`` (LLM/crowd label probabilities, click rates).
    texts, embeddings, similarity, matrix
        The similarity source for ``similarity`` (exactly one).
    stage_methods : mapping, optional
        Per-stage methods for ``rtc``.
    depth : int, optional
        Rank positions of the rank-coefficient model (``rtc`` and ``hierarchical``, whose features are an
        RTC chain's).
    topup : TopUpSample, optional
        Documents drawn at random from held-out runs' own documents (:mod:`bayeval.relevance.topup`), judged in
        ``data``: the ``hierarchical`` model is fitted without them and learns the held-out runs' levels from
        them (:mod:`bayeval.relevance.reuse_prior`).
    labels : sequence of AssessorLabels, optional
        Automatic assessors' labels (:func:`bayeval.io.read_labels`), for every model kind: after the model's fit,
        each assessor's map from label to relevance is learned on the judged documents it labelled and applied to
        the unjudged ones, its uncertainty carried into p's draws (:func:`bayeval.relevance.assessor.with_assessors`,
        with ``p_draws`` and ``seed``; ``p_draws=None`` keeps a point estimate).

    Each option is given only to a model whose configuration ``accepts`` it (a clear error otherwise).
    **fit_kwargs
        ``draws``, ``tune``, ``chains``, ``cores``, ``progressbar``.

    Returns
    -------
    RelevanceEstimate

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=3, n_systems=4, n_docs=60, depth=20, judged_depth=4, seed=2)
    >>> est = estimate_probabilities(RankData.build(col.runs, col.judgments), "smoothed")
    >>> est.model, est.has_draws
    ('smoothed', False)
    """
    if not isinstance(data, RankData):
        raise BayevalInputError(f"data: expected a RankData, got {type(data).__name__}")
    if fit not in FIT_METHODS:
        raise BayevalInputError(f"fit: must be one of {', '.join(map(repr, FIT_METHODS))}, got {fit!r}")
    cfg = load_config(model)
    options = {"extra": extra, "stage_methods": stage_methods, "depth": depth, "texts": texts,
               "embeddings": embeddings, "similarity": similarity, "matrix": matrix, "topup": topup,
               "labels": labels}
    options = {k: v for k, v in options.items() if v is not None}
    refused = sorted(k for k in options if k not in cfg.accepts)
    if refused:
        raise BayevalInputError(f"{', '.join(refused)}: not for a {cfg.kind} model (only for "
                                f"{' / '.join(sorted({k for r in refused for k in kinds_accepting(r)}))})")
    labels = options.pop("labels", None)
    est = ESTIMATORS[cfg.kind](data, cfg, fit, p_draws=p_draws, seed=seed, **options, **fit_kwargs)
    for step in AFTER_MODEL:
        est = _AFTER[step](est, data, cfg, depth=depth, labels=labels, p_draws=p_draws, seed=seed)
    return est


def _beyond_depth(est, data, cfg, *, depth, seed, **_):
    """p beyond the judged depth of a hierarchical configuration with a ``[beyond_depth]`` band (:mod:`.beyond_depth`:
    the model refitted by MAP on half the judged depth measures its error there); ``est`` itself otherwise."""
    return with_beyond_depth(data, cfg, est, depth=depth, seed=seed)


def _labels(est, data, cfg, *, labels, p_draws, seed, **_):
    """The automatic assessors' labels as experts after any model (:func:`.assessor.with_assessors`); ``est`` itself
    without labels."""
    if not labels:  # None or no label set
        return est
    return with_assessors(est, data, labels, p_draws=p_draws, seed=0 if seed is None else int(seed))


#: What the estimator does to a model's p after its fit, in this order (each step leaves p as it is when its
#: configuration or option is off). The hierarchical model's corrections of the documents no contributing run
#: retrieves come before them, inside its fit (:data:`bayeval.relevance.held_out_runs.ORDER`); the extrapolation
#: effect is part of that model (:mod:`.hierarchical`).
AFTER_MODEL = ("beyond_depth", "labels")
_AFTER = {"beyond_depth": _beyond_depth, "labels": _labels}


def _rtc(data, cfg, fit, *, p_draws, seed, depth=None, extra=None, stage_methods=None, **fit_kwargs):

    return RTCEstimator(cfg, depth=depth).fit(data, fit, stage_methods=stage_methods, extra=extra, seed=seed,
                                              **fit_kwargs).probabilities(draws=p_draws, seed=seed)


def _hierarchical(data, cfg, fit, *, p_draws, seed, depth=None, topup=None, **fit_kwargs):
    """The hierarchical model's estimate with its held-out corrections (a top-up updating the reuse prior)."""
    return HierarchicalEstimator(cfg, depth=depth).estimate(data, fit, p_draws=p_draws, seed=seed, topup=topup,
                                                            **fit_kwargs)


def _similarity(data, cfg, fit, *, p_draws, seed, **options):
    return SimilarityEstimator(cfg).estimate(data, fit, p_draws=p_draws, seed=seed, **options)


#: The estimator of each configuration ``kind`` (:mod:`bayeval.relevance.config`): a function
#: ``(data, config, fit, *, p_draws, seed, **options, **fit_kwargs) -> RelevanceEstimate`` taking the
#: options the configuration ``accepts``.
ESTIMATORS = {
    "rtc": _rtc,
    "hierarchical": _hierarchical,
    "similarity": _similarity,
    "uniform": lambda data, cfg, fit, **_: uniform_probabilities(data, cfg.p),
    "smoothed": lambda data, cfg, fit, **_: smoothed_probabilities(data, cfg.a, cfg.b),
    "sparse": lambda data, cfg, fit, *, p_draws, seed, **_: sparse_label_probabilities(
        data, relevant_mean=cfg.relevant_mean, relevant_shape=cfg.relevant_shape, bin_edges=cfg.bin_edges,
        pooling=cfg.pooling, combine=cfg.combine, vote_classes=cfg.vote_classes,
        projection_ridge=cfg.projection_ridge, projection_draw_steps=cfg.projection_draw_steps,
        share_draws=cfg.share_draws, consensus_power=cfg.consensus_power, p_draws=p_draws, seed=seed,
        model=cfg.name),
}
#: The model kinds, one per registered estimator.
MODEL_KINDS = tuple(ESTIMATORS)
