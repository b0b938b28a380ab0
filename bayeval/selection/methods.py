"""Selection methods by name: ``mtc``, ``rtc``, ``pool`` (incremental pooling), ``depth-pool``, and the
re-estimating MTC variants of Carterette & Allan (2007), ``mtc+one`` and ``mtc+sim``."""

from __future__ import annotations

from collections.abc import Callable

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.methods import SELECTION_METHODS
from bayeval.selection.pooling import DepthPoolSelector, IncrementalPoolSelector
from bayeval.selection.rtc import RefitSelector, RTCSelector
from bayeval.selection.selector import MTCSelector, Selector

__all__ = ["ESTIMATING_METHODS", "SELECTION_METHODS", "make_selector"]

ESTIMATING_METHODS = ("mtc+one", "mtc+sim")
"""MTC with p re-estimated every ``refit_every`` judgments: per-topic plus-one smoothing, or the
similarity regression (needs ``similarity``); not offered by judging campaigns."""


def make_selector(method: str, data: RankData, *, refit_every: int = 10, config="rtc-mtc", seed=0,
                  pool_depth: int | None = None, similarity: Callable | None = None, **kwargs) -> Selector:
    """A selector by method name; ``kwargs`` go to :class:`~bayeval.selection.MTCSelector`.

    ``pool`` with ``pool_depth`` is depth-k pooling (as ``depth-pool``); ``depth-pool`` needs ``pool_depth``.
    ``mtc+sim`` needs ``similarity(topic, row_docnos, feature_docnos)`` → similarity matrix (e.g.
    :func:`bayeval.relevance.similarity.cosine_from_texts`); its regression uses ``config`` when that is a
    similarity configuration, else ``"similarity-default"``.
    """
    if method == "mtc":
        return MTCSelector(data, **kwargs)
    if method == "rtc":
        return RTCSelector(data, refit_every=refit_every, config=config, seed=seed, **kwargs)
    if method == "mtc+one":
        from bayeval.relevance import smoothed_probabilities

        return RefitSelector(data, smoothed_probabilities, refit_every=refit_every, method=method, **kwargs)
    if method == "mtc+sim":
        from bayeval.relevance import SimilarityEstimator, load_config
        from bayeval.relevance.config import SimilarityConfig

        if not callable(similarity):
            raise BayevalInputError("similarity: mtc+sim needs a similarity function (topic, rows, features)")
        cfg = load_config(config)  # the default, an RTC configuration, means: the similarity default
        est = SimilarityEstimator(cfg if isinstance(cfg, SimilarityConfig) else "similarity-default")
        return RefitSelector(data, _SimilarityRefit(est, similarity), refit_every=refit_every, method=method,
                             **kwargs)
    if method == "pool" and pool_depth is None:
        return IncrementalPoolSelector(data, **kwargs)
    if method in ("pool", "depth-pool"):
        if pool_depth is None:
            raise BayevalInputError("pool_depth: depth-pool needs a pool depth")
        return DepthPoolSelector(data, pool_depth=pool_depth, **kwargs)
    raise BayevalInputError(f"method: must be one of {', '.join(SELECTION_METHODS + ESTIMATING_METHODS)}, "
                            f"got {method!r}")


class _SimilarityRefit:
    """The similarity regression refitted on the judgments so far; topics whose judgments did not change
    since the previous refit keep their fit (``warm_start``)."""

    def __init__(self, estimator, similarity: Callable) -> None:
        self.estimator = estimator
        self.similarity = similarity
        self._model = None

    def __call__(self, data: RankData):
        model = self.estimator.model(data, similarity=self.similarity)
        point = model.fit("map", warm_start=self._model).point()
        self._model = model
        return model.predict(point["beta0"], point["beta"])
