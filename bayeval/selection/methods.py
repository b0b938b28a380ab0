"""Selection methods by name: ``mtc``, ``rtc``, ``pool`` (incremental pooling), ``depth-pool``."""

from __future__ import annotations

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.selection.pooling import DepthPoolSelector, IncrementalPoolSelector
from bayeval.selection.rtc import RTCSelector
from bayeval.selection.selector import MTCSelector, Selector

__all__ = ["METHODS", "make_selector"]

METHODS = ("mtc", "rtc", "pool", "depth-pool")


def make_selector(method: str, data: RankData, *, refit_every: int = 10, config="rtc-mtc", seed=0,
                  pool_depth: int | None = None, **kwargs) -> Selector:
    """A selector by method name; ``kwargs`` go to :class:`~bayeval.selection.MTCSelector`.

    ``pool`` with ``pool_depth`` is depth-k pooling (as ``depth-pool``); ``depth-pool`` needs ``pool_depth``.
    """
    if method == "mtc":
        return MTCSelector(data, **kwargs)
    if method == "rtc":
        return RTCSelector(data, refit_every=refit_every, config=config, seed=seed, **kwargs)
    if method == "pool" and pool_depth is None:
        return IncrementalPoolSelector(data, **kwargs)
    if method in ("pool", "depth-pool"):
        if pool_depth is None:
            raise BayevalInputError("pool_depth: depth-pool needs a pool depth")
        return DepthPoolSelector(data, pool_depth=pool_depth, **kwargs)
    raise BayevalInputError(f"method: must be one of {', '.join(METHODS)}, got {method!r}")
