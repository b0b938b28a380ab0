"""Expected measures of runs when the relevance of some documents is only a probability.

:func:`expected_scores` wraps :func:`bayeval.expected.expected_measures` (AP, P@k, nDCG@k, recall@k) and
adds :func:`bayeval.expected.expected_reciprocal_rank` (re-exported here), so that a
biased-pool study can put every measure of Büttcher et al. (2007) on the same footing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.expected import expected_measures, expected_reciprocal_rank
from bayeval.measures import Provider, parse_measures

__all__ = ["SCORES", "expected_reciprocal_rank", "expected_scores"]

SCORES = Provider("expected score", ("AP", "P", "nDCG", "recall", "RR"))
"""Families :func:`expected_scores` gives (not condensed); NaN for the others."""


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
        Measures; those outside :data:`SCORES` (bpref, RankEff, infAP, condensed ``(j)``
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
    analytic = [i for i, m in enumerate(ms) if SCORES.supports(m) and m.name != "RR"]
    if analytic:
        ev = expected_measures(data, arrays, measures=[str(ms[i]) for i in analytic], method=method, progress=False)
        out[analytic] = ev.expected
    rr = [i for i, m in enumerate(ms) if SCORES.supports(m) and m.name == "RR"]
    if rr:
        for t, tr in enumerate(data):
            p = np.asarray(arrays[t], dtype=np.float64).copy()
            p[tr.judged] = tr.relevant[tr.judged]
            ranked = tr.ranked_values(p, fill=0.0)
            for i in rr:  # RR@k: the first relevant document among the top k only
                out[i, :, t] = expected_reciprocal_rank(ranked[:, :ms[i].cutoff])
    return out
