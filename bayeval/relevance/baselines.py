"""Point baselines: uniform p (MTC's 0.5) and per-topic plus-one smoothing."""

from __future__ import annotations

import numpy as np

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.relevance.results import RelevanceEstimate

__all__ = ["smoothed_probabilities", "uniform_probabilities"]


def _estimate(data: RankData, ps, model: str) -> RelevanceEstimate:
    if not isinstance(data, RankData):
        raise BayevalInputError(f"data: expected a RankData, got {type(data).__name__}")
    return RelevanceEstimate(tuple(data.topics), tuple(tr.docnos for tr in data),
                             tuple(np.asarray(tr.judged) for tr in data), tuple(ps), None, model=model, method="map",
                             relevant=tuple(np.asarray(tr.relevant) for tr in data))


def uniform_probabilities(data: RankData, p: float = 0.5) -> RelevanceEstimate:
    """Every document relevant with probability ``p``.

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=2, n_systems=3, n_docs=40, depth=10, judged_depth=3, seed=1)
    >>> est = uniform_probabilities(RankData.build(col.runs, col.judgments), 0.25)
    >>> float(est.p[0][0])
    0.25
    """
    if not 0.0 <= p <= 1.0:
        raise BayevalInputError(f"p: must lie in [0, 1], got {p!r}")
    return _estimate(data, [np.full(tr.n_docs, float(p)) for tr in data], "uniform")


def smoothed_probabilities(data: RankData, a: float = 1.0, b: float = 1.0) -> RelevanceEstimate:
    r"""Per topic :math:`p_t = (|R_t|+a)/(|R_t|+|N_t|+a+b)` for every document (plus-one smoothing)."""
    if a < 0 or b < 0 or a + b == 0:
        raise BayevalInputError(f"a, b: must be non-negative and not both 0, got {a!r}, {b!r}")
    return _estimate(data, [np.full(tr.n_docs, (tr.num_rel + a) / (tr.num_rel + tr.num_nonrel + a + b))
                            for tr in data], "smoothed")
