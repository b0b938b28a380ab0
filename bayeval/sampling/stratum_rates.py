"""A working model from the sample alone: each pooled document's p is the relevance rate of its stratum in its
topic, shrunk towards the stratum's rate over all topics (:func:`stratum_rates`).

No run's ranking and no relevance model enter it — only the drawn judgments and the design's strata — so an
estimate anchored at it (:func:`bayeval.sampling.anchored_measures`, with the rates cross-fitted by
:func:`bayeval.sampling.cross_fitted_predictions`) uses the sample alone, as statAP does, without dividing by a
random R̂.
"""

from __future__ import annotations

import numpy as np

from bayeval.data.probabilities import RelevanceProbabilities
from bayeval.data.sample import StratifiedSample
from bayeval.errors import BayevalInputError

__all__ = ["stratum_rates"]


def stratum_rates(sample: StratifiedSample, *, relevance_level: int = 1, prior: float = 2.0
                  ) -> RelevanceProbabilities:
    """Every pooled document's p: the share of relevant documents among those drawn in its topic and stratum,
    shrunk towards the stratum's share over all topics.

    Parameters
    ----------
    sample : StratifiedSample
        The pool and its drawn judgments (for cross-fitting: a fold's training sample).
    relevance_level : int
        The least grade counted relevant.
    prior : float > 0
        Pseudo-draws of the shrinkage: ``p = (k_tc + prior · ρ_c) / (n_tc + prior)``, ``k_tc`` relevant among
        the ``n_tc`` drawn in topic t's stratum c, ``ρ_c = (Σ_t k_tc + ½) / (Σ_t n_tc + 1)``.

    Returns
    -------
    RelevanceProbabilities
        A probability in (0, 1) for every pooled document, drawn or not.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.data.sample import StratifiedSample, TopicSample
    >>> ts = TopicSample(np.array(["a", "b", "c", "d"], dtype=object), np.array([0, 0, 1, 1], np.int32),
    ...                  ("1", "2"), np.array([1, -1, 0, -1]))
    >>> p = stratum_rates(StratifiedSample({"1": ts}), prior=2.0)
    >>> np.round(p.lookup("1", np.array(["a", "b", "c", "d"], dtype=object), 0.0), 3).tolist()
    [0.833, 0.833, 0.167, 0.167]
    """
    if not float(prior) > 0:
        raise BayevalInputError(f"prior: must be > 0, got {prior!r}")
    width = max((len(ts.labels) for ts in sample.values()), default=0)
    k_all, n_all = np.zeros(width), np.zeros(width)
    counts = {}
    for t, ts in sample.items():
        smp = ts.sampled
        rel = smp & (ts.grades >= relevance_level)
        k = np.bincount(ts.strata[rel], minlength=width).astype(np.float64)
        n = np.bincount(ts.strata[smp], minlength=width).astype(np.float64)
        counts[t] = (k, n)
        k_all += k
        n_all += n
    rho = (k_all + 0.5) / (n_all + 1.0)
    out = {}
    for t, ts in sample.items():
        k, n = counts[t]
        rate = (k + prior * rho) / (n + prior)
        out[t] = dict(zip(ts.docnos.tolist(), rate[ts.strata].tolist(), strict=True))
    return RelevanceProbabilities(out)
