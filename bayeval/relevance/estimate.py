"""One entry point from a collection to probabilities of relevance: :func:`estimate_probabilities`."""

from __future__ import annotations

import numpy as np

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.relevance._fitting import FIT_METHODS
from bayeval.relevance.baselines import smoothed_probabilities, uniform_probabilities
from bayeval.relevance.config import (
    HierarchicalConfig,
    RTCConfig,
    SimilarityConfig,
    SmoothedConfig,
    UniformConfig,
    load_config,
)
from bayeval.relevance.defaults import DEFAULT_MODEL
from bayeval.relevance.results import RelevanceEstimate

__all__ = ["MODEL_KINDS", "SimilarityEstimator", "estimate_probabilities"]

MODEL_KINDS = ("rtc", "hierarchical", "similarity", "uniform", "smoothed")


class SimilarityEstimator:
    """Similarity regression from a collection to p for every document (see :mod:`.similarity`).

    Parameters
    ----------
    config : SimilarityConfig or str
        Default ``"similarity-default"``.
    """

    def __init__(self, config: SimilarityConfig | str = "similarity-default") -> None:
        cfg = load_config(config)
        if not isinstance(cfg, SimilarityConfig):
            raise BayevalInputError(f"config: expected a similarity configuration, got kind {cfg.kind!r}")
        self.config = cfg

    def model(self, data: RankData, *, texts=None, embeddings=None, similarity=None, matrix=None):
        from bayeval.relevance.similarity import SimilarityRegression

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

    def estimate(self, data: RankData, method: str = "map", *, p_draws: int | None = 200, seed=None,
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


def estimate_probabilities(data: RankData, model=DEFAULT_MODEL, *, fit: str = "map", p_draws: int | None = 200, seed=0,
                           extra=None, texts=None, embeddings=None, similarity=None, matrix=None,
                           stage_methods=None, depth: int | None = None, **fit_kwargs) -> RelevanceEstimate:
    """Probabilities of relevance of every document of ``data`` (and posterior draws of them).

    Parameters
    ----------
    data : RankData
        Runs aligned with the (incomplete) judgments.
    model : str or config
        Default :data:`~bayeval.relevance.defaults.DEFAULT_MODEL` (``"hier-default"``, the calibration
        studies' choice: docs/calibration.md; add the unseen relevant documents with
        :func:`bayeval.relevance.unseen.with_unseen`, as the command line does by default).
        ``"rtc"``, ``"hier"`` (the hierarchical model, :mod:`.hierarchical`), ``"similarity"``, ``"uniform"``,
        ``"smoothed"`` (their ``-default`` configuration),
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
        Rank positions of the rank-coefficient model (``rtc``).
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
    if isinstance(cfg, UniformConfig):
        return uniform_probabilities(data, cfg.p)
    if isinstance(cfg, SmoothedConfig):
        return smoothed_probabilities(data, cfg.a, cfg.b)
    if isinstance(cfg, HierarchicalConfig):
        from bayeval.relevance.hierarchical import HierarchicalEstimator
        if extra is not None or stage_methods:
            raise BayevalInputError("extra, stage_methods: only for RTC models, not the hierarchical model")
        return HierarchicalEstimator(cfg).estimate(data, fit, p_draws=p_draws, seed=seed, **fit_kwargs)
    if isinstance(cfg, RTCConfig):
        from bayeval.relevance.rtc import RTCEstimator
        est = RTCEstimator(cfg, depth=depth)
        return est.fit(data, fit, stage_methods=stage_methods, extra=extra, seed=seed,
                       **fit_kwargs).probabilities(draws=p_draws, seed=seed)
    return SimilarityEstimator(cfg).estimate(data, fit, p_draws=p_draws, seed=seed, texts=texts,
                                             embeddings=embeddings, similarity=similarity, matrix=matrix,
                                             **fit_kwargs)
