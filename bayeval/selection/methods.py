"""Selection methods by name: ``mtc``, ``rtc``, ``pool`` (incremental pooling), ``depth-pool``, and the
re-estimating MTC variants of Carterette & Allan (2007), ``mtc+one`` and ``mtc+sim``."""

from __future__ import annotations

from collections.abc import Callable

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.methods import SELECTION_METHODS
from bayeval.relevance import SimilarityConfig, SimilarityEstimator, load_config, smoothed_probabilities
from bayeval.selection.pooling import DepthPoolSelector, IncrementalPoolSelector
from bayeval.selection.rtc import RefitSelector, RTCSelector
from bayeval.selection.selector import MTCSelector, Selector

__all__ = ["ESTIMATING_METHODS", "SELECTION_METHODS", "SELECTORS", "make_selector"]

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
    build = SELECTORS.get(method)
    if build is None:
        raise BayevalInputError(f"method: must be one of {', '.join(SELECTION_METHODS + ESTIMATING_METHODS)}, "
                                f"got {method!r}")
    options = {"refit_every": refit_every, "config": config, "seed": seed, "pool_depth": pool_depth,
               "similarity": similarity}
    return build(data, options, kwargs)


def _mtc_one(data, o, kw):

    return RefitSelector(data, smoothed_probabilities, refit_every=o["refit_every"], method="mtc+one", **kw)


def _mtc_sim(data, o, kw):

    if not callable(o["similarity"]):
        raise BayevalInputError("similarity: mtc+sim needs a similarity function (topic, rows, features)")
    cfg = load_config(o["config"])  # the default, an RTC configuration, means: the similarity default
    est = SimilarityEstimator(cfg if isinstance(cfg, SimilarityConfig) else "similarity-default")
    return RefitSelector(data, _SimilarityRefit(est, o["similarity"]), refit_every=o["refit_every"],
                         method="mtc+sim", **kw)


def _depth_pool(data, o, kw):
    if o["pool_depth"] is None:
        raise BayevalInputError("pool_depth: depth-pool needs a pool depth")
    return DepthPoolSelector(data, pool_depth=o["pool_depth"], **kw)


#: The selector of each method name, ``(data, options, kwargs) -> Selector``: every name of
#: :data:`~bayeval.methods.SELECTION_METHODS` and :data:`ESTIMATING_METHODS`, once.
SELECTORS = {
    "mtc": lambda data, o, kw: MTCSelector(data, **kw),
    "rtc": lambda data, o, kw: RTCSelector(data, refit_every=o["refit_every"], config=o["config"], seed=o["seed"],
                                           **kw),
    "pool": lambda data, o, kw: (IncrementalPoolSelector(data, **kw) if o["pool_depth"] is None
                                 else _depth_pool(data, o, kw)),
    "depth-pool": _depth_pool,
    "mtc+one": _mtc_one,
    "mtc+sim": _mtc_sim,
}


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
