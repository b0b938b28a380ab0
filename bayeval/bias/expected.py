"""Expected measures of runs when the relevance of some documents is only a probability.

:func:`expected_scores` wraps :func:`bayeval.expected.expected_measures` (AP, P@k, nDCG@k, recall@k) and
adds the expected reciprocal rank, which that module does not provide, so that a biased-pool study can
put every measure of Büttcher et al. (2007) on the same footing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.expected import expected_measures
from bayeval.measures import parse_measures

__all__ = ["EXPECTED_FAMILIES", "expected_reciprocal_rank", "expected_scores"]

EXPECTED_FAMILIES = ("AP", "P", "nDCG", "recall", "RR")
"""Measure families with an expected value here (not condensed)."""


def expected_reciprocal_rank(p_ranked: np.ndarray) -> np.ndarray:
    r"""Exact E[RR] of every system from the probabilities of relevance in rank order.

    .. math:: E[RR] = \sum_{r \ge 1} \frac{1}{r}\, p_r \prod_{s < r} (1 - p_s)

    (the first relevant document is at rank r with probability :math:`p_r\prod_{s<r}(1-p_s)`;
    documents independent). Judged documents enter with p = 1 or 0.

    Parameters
    ----------
    p_ranked : ndarray, shape (S, D)
        ``p_ranked[s, r]``: probability that system s's document at rank r + 1 is relevant (0 past
        the end of the list).

    Examples
    --------
    Ranking with p = 0.5, 1: E[RR] = 0.5 · 1 + 0.5 · 1/2.

    >>> expected_reciprocal_rank(np.array([[0.5, 1.0]]))
    array([0.75])
    """
    p = np.asarray(p_ranked, dtype=np.float64)
    if p.ndim != 2:
        raise BayevalInputError("p_ranked: expected an (systems, ranks) array")
    none_above = np.cumprod(np.concatenate([np.ones((p.shape[0], 1)), 1.0 - p[:, :-1]], axis=1), axis=1)
    return (p * none_above / np.arange(1, p.shape[1] + 1)).sum(axis=1)


def expected_scores(data: RankData, probabilities: Mapping[str, np.ndarray] | Sequence[np.ndarray],
                    measures, *, method: str = "exact") -> np.ndarray:
    """Expected value of each measure for every system and topic; NaN where none is defined here.

    Parameters
    ----------
    data : RankData
        Runs aligned with the (reduced) judgments.
    probabilities : one array per topic
        Probability of relevance of every document of ``data[t].docnos`` (judged ones are fixed at their
        judgment), as :func:`bayeval.expected.expected_measures` takes them.
    measures : str or sequence
        Measures; those outside :data:`EXPECTED_FAMILIES` (bpref, RankEff, infAP, condensed ``(j)``
        measures, judged@k) get NaN.
    method : {"exact", "delta", "paper", "mc"}
        How AP's random denominator is handled (see :func:`~bayeval.expected.expected_measures`).

    Returns
    -------
    ndarray, shape (M, S, T)

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=2, n_systems=2, n_docs=30, depth=10, judged_depth=3, seed=1)
    >>> data = RankData.build(col.runs, col.judgments)
    >>> p = [np.full(tr.n_docs, 0.1) for tr in data]
    >>> e = expected_scores(data, p, "AP,RR,bpref")
    >>> e.shape, bool(np.isnan(e[2]).all())
    ((3, 2, 2), True)
    """
    ms = parse_measures(measures)
    arrays = [probabilities[t] for t in data.topics] if isinstance(probabilities, Mapping) else list(probabilities)
    if len(arrays) != len(data):
        raise BayevalInputError(f"probabilities: expected one array per topic ({len(data)}), got {len(arrays)}")
    out = np.full((len(ms), len(data.systems), len(data)), np.nan)
    analytic = [i for i, m in enumerate(ms) if m.name in ("AP", "P", "nDCG", "recall") and not m.condensed]
    if analytic:
        ev = expected_measures(data, arrays, measures=[str(ms[i]) for i in analytic], method=method, progress=False)
        out[analytic] = ev.expected
    rr = [i for i, m in enumerate(ms) if m.name == "RR" and not m.condensed]
    if rr:
        for t, tr in enumerate(data):
            p = np.asarray(arrays[t], dtype=np.float64).copy()
            p[tr.judged] = tr.relevant[tr.judged]
            out[rr, :, t] = expected_reciprocal_rank(tr.ranked_values(p, fill=0.0))
    return out
