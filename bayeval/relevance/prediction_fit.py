"""A relevance model as a function of the judgments it learns from (:class:`PredictionFit`).

Cross-fitting (:func:`bayeval.sampling.cross_fitted_predictions`, :func:`bayeval.sampling.evaluate_assisted`)
fits one model K times, each time on part of the judgments, and keeps its predictions for the documents that
fit never saw. :class:`PredictionFit` is that model, fixed once (runs, configuration, depth, fit method,
seed): called with judgments, it fits the model on them (:func:`~bayeval.relevance.estimate_probabilities`)
and returns the model's point p of every document of the runs — judged ones included, where p is the model's
prediction and not the judgment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from bayeval.data.probabilities import RelevanceProbabilities
from bayeval.data.qrels import Qrels
from bayeval.data.rankdata import RankData
from bayeval.data.run import Run, RunSet
from bayeval.defaults import DEFAULT_MODEL
from bayeval.errors import BayevalInputError
from bayeval.methods import FIT_METHODS
from bayeval.relevance.config import load_config
from bayeval.relevance.estimate import estimate_probabilities

__all__ = ["PredictionFit"]


@dataclass(frozen=True)
class PredictionFit:
    """``fit(judgments) -> RelevanceProbabilities``: a relevance model fitted on ``judgments``, predicting every
    document the runs rank (within ``depth``).

    Parameters
    ----------
    runs : RunSet or sequence of Run
    model : str or configuration
        Default :data:`~bayeval.defaults.DEFAULT_MODEL`, as every door of the package
        (:func:`~bayeval.relevance.estimate_probabilities`); checked when the object is made.
    depth : int, optional
        Ranks of each run the model sees (``None``: all).
    method : {"map", "laplace", "mcmc", "vi"}
        Fit method (default ``"map"``, the fast path; a sampled fit gives the posterior mean of p).
    seed : int
    options : mapping
        Further keywords of :func:`~bayeval.relevance.estimate_probabilities`, as far as the model
        ``accepts`` them: ``depth=`` the rank positions of an rtc or hierarchical model (without it every
        rank of the runs; the commands give ``min(depth, 100)``), ``texts=`` of a similarity model, ...

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=2, n_systems=3, n_docs=40, depth=15, judged_depth=5, seed=1)
    >>> fit = PredictionFit(col.runs, "smoothed")
    >>> p = fit(col.judgments)
    >>> t = col.runs.topics[0]
    >>> len(p.lookup(t, col.runs[0].ranking(t), -1.0)) == len(col.runs[0].ranking(t))
    True
    """

    runs: RunSet | Sequence[Run]
    model: object = DEFAULT_MODEL
    depth: int | None = None
    method: str = "map"
    seed: int = 0
    options: Mapping = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.runs, RunSet):
            object.__setattr__(self, "runs", RunSet(tuple(self.runs)))
        load_config(self.model)  # an unknown model fails here, before any fit
        if self.method not in FIT_METHODS:
            raise BayevalInputError(f"method: one of {', '.join(FIT_METHODS)}, got {self.method!r}")
        if not isinstance(self.seed, (int, np.integer)) or isinstance(self.seed, bool):
            raise BayevalInputError(f"seed: an integer, got {self.seed!r}")
        if self.depth is not None and (not isinstance(self.depth, (int, np.integer)) or self.depth < 1):
            raise BayevalInputError(f"depth: a positive integer, got {self.depth!r}")

    @property
    def name(self) -> str:
        """The model's configuration name."""
        return str(load_config(self.model).name)

    def __call__(self, judgments: Qrels) -> RelevanceProbabilities:
        """Fit the model on ``judgments`` (documents absent from them unjudged) and return every document's p."""
        data = RankData.build(self.runs, judgments, depth=self.depth)
        est = estimate_probabilities(data, self.model, fit=self.method, p_draws=None, seed=int(self.seed),
                                     **dict(self.options))
        return est.to_probabilities(include_judged=True)
