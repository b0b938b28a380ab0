r"""RTC (robust test collections): MTC whose probabilities of relevance are re-estimated as it judges.

Every ``refit_every`` judgments (default 10, carterette2007 §4.2) the composed relevance model
(:class:`bayeval.relevance.RTCEstimator`: rank coefficients → Platt calibration → expert
aggregation, fast ``"map"`` fit) is refitted on the judgments so far, and the confidence
:math:`P(\Delta MAP < 0)` and the topic scaling :math:`1/E[R_t]` of the weights use its
probabilities instead of MTC's 0.5.
"""

from __future__ import annotations

import numpy as np

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.selection.selector import MTCSelector

__all__ = ["RTCSelector"]


class RTCSelector(MTCSelector):
    """MTC with the relevance model refitted every ``refit_every`` judgments.

    Parameters
    ----------
    data : RankData
    refit_every : int
        Judgments between refits (default 10).
    config : str or RTCConfig
        Relevance-model configuration (default ``"rtc-mtc"``, the paper's priors; see
        :func:`bayeval.relevance.list_configs`). On TREC-8 (16 random pairs, depth 100, AP, alpha 0.95) it
        needed a median of 192 judgments with every decided pair right, while ``"rtc-default"``,
        ``"rtc-weak"`` and ``"rtc-intercept"`` — built to avoid over-estimating p on shallow *pools* —
        became confident after 10 MTC-chosen judgments and were wrong on 12–19% of the pairs
        (docs/judging.md).
    seed : int, optional
        Seed of the fits (the ``"map"`` fit is deterministic; kept for sampled configurations).
    **kwargs
        As for :class:`MTCSelector` (``probabilities``/``default_p`` are replaced by the model's).

    References
    ----------
    .. [1] B. Carterette. Robust test collections for retrieval evaluation. SIGIR 2007, §3, §4.2.

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=4, n_systems=3, n_docs=60, depth=20, seed=2)
    >>> sel = RTCSelector(RankData.build(col.runs, None, depth=20), pairs=[("sys01", "sys02")], refit_every=5)
    >>> for _ in range(5):
    ...     c = sel.select()[0]
    ...     _ = sel.record(c.topic, c.docno, col.qrels.grade_of(c.topic, c.docno) or 0)
    >>> sel.refits
    2
    """

    method = "rtc"

    def __init__(self, data: RankData, *, refit_every: int = 10, config="rtc-mtc", seed=0, **kwargs) -> None:
        if isinstance(refit_every, bool) or not isinstance(refit_every, (int, np.integer)) or refit_every < 1:
            raise BayevalInputError(f"refit_every: must be a positive integer, got {refit_every!r}")
        from bayeval.relevance import RTCEstimator

        self.refit_every = int(refit_every)
        self.estimator = RTCEstimator(config)
        self.seed = seed
        self.refits = 0
        self._fit = None
        kwargs.pop("default_p", None)
        super().__init__(data, **kwargs)
        self._refit()
        self._recompute_all()

    def _refit(self) -> None:
        fit = self.estimator.fit(self.topic_ranks(), "map", seed=self.seed, warm_start=self._fit)
        self._fit = fit
        est = fit.probabilities(draws=None)
        for t, p in enumerate(est.p):
            p = np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)
            j = self._judged[t]
            self._p[t] = np.where(j, (self._grades[t] >= self.level).astype(np.float64), p)
        self.refits += 1

    def _after_record(self, t: int) -> None:
        if self._judgments % self.refit_every == 0:
            self._refit()
            self._recompute_all()
        else:
            super()._after_record(t)

    def _replay_items(self, items) -> None:
        # refit at the same judgment counts as one-at-a-time recording would: the last multiple of N
        first = self._judgments
        last_fit = ((first + len(items)) // self.refit_every) * self.refit_every
        cut = max(0, last_fit - first)
        if cut:
            for t, i, grade, docno in items[:cut]:
                self._apply(t, i, grade)
                self._judgments += 1
                self._history.append((self.data.topics[t], docno, grade))
            self._refit()
        super()._replay_items(items[cut:])
