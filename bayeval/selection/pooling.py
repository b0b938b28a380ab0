"""Pooling baselines with the selectors' interface: incremental pooling and depth-k pooling.

Incremental pooling (carterette2007 §4.2, "IP") judges documents in order of their best rank over
all runs, round-robin over topics: every topic's documents first ranked at 1, then at 2, and so
on (within a topic and a rank, in the order of the runs). Depth-k pooling judges everything some
run ranks in its top k, in the same order, and stops only when that pool is judged.
"""

from __future__ import annotations

import numpy as np

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.selection.selector import Selector

__all__ = ["DepthPoolSelector", "IncrementalPoolSelector", "pool_order"]


def pool_order(data: RankData, depth: int | None = None) -> list[tuple[int, int]]:
    """``(topic index, document index)`` in incremental-pooling order, each document once.

    Round-robin: rank position r = 1, 2, ... ; for each r the topics in order; in each topic the runs in
    order, skipping documents already pooled. ``depth`` stops at rank ``depth``.
    """
    seen = [np.zeros(tr.n_docs, dtype=bool) for tr in data]
    width = max((tr.ranked.shape[1] for tr in data), default=0)
    if depth is not None:
        width = min(width, int(depth))
    out = []
    for r in range(width):
        for t, tr in enumerate(data):
            if r >= tr.ranked.shape[1]:
                continue
            for d in tr.ranked[:, r]:
                if d >= 0 and not seen[t][d]:
                    seen[t][d] = True
                    out.append((t, int(d)))
    return out


class IncrementalPoolSelector(Selector):
    """Incremental pooling (IP), stopping like MTC when every pair is decided at ``alpha``.

    Takes the arguments of :class:`~bayeval.selection.MTCSelector`; the confidence uses the same
    probabilities (default 0.5 for unjudged documents). The selection ignores the pairs.

    References
    ----------
    .. [1] B. Carterette. Robust test collections for retrieval evaluation. SIGIR 2007, §4.2.
    """

    method = "pool"
    _pool_depth: int | None = None

    def __init__(self, data: RankData, **kwargs) -> None:
        order = pool_order(data, self._pool_depth)
        self._rank_score = [np.zeros(tr.n_docs) for tr in data]
        n = len(order)
        for pos, (t, i) in enumerate(order):
            self._rank_score[t][i] = float(n - pos)  # earlier in the pool order → higher score
        super().__init__(data, **kwargs)

    def _topic_scores(self, t: int, und: np.ndarray):
        n = len(self._state[t].p)
        return self._rank_score[t].copy(), np.zeros(n, np.int8), np.zeros(n, np.int64)

    def _update_status(self, changed=None) -> None:
        self._status = self._make_status()
        self._undecided = ~self._status.decided
        for t in changed if changed is not None else range(len(self.data)):
            self._refresh_scores(t)
        self._set_exhausted()


class DepthPoolSelector(IncrementalPoolSelector):
    """Depth-k pooling: judge every document some run ranks in its top ``pool_depth``; done when judged.

    Parameters
    ----------
    data : RankData
    pool_depth : int
        Pool depth k.
    **kwargs
        As for :class:`~bayeval.selection.MTCSelector` (the confidence is reported, not used to stop).
    """

    method = "depth-pool"

    def __init__(self, data: RankData, pool_depth: int = 100, **kwargs) -> None:
        if isinstance(pool_depth, bool) or not isinstance(pool_depth, (int, np.integer)) or pool_depth < 1:
            raise BayevalInputError(f"pool_depth: must be a positive integer, got {pool_depth!r}")
        self._pool_depth = int(pool_depth)
        super().__init__(data, **kwargs)

    @property
    def done(self) -> bool:
        return not bool((self._score > 0).any())
