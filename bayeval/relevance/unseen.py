r"""Relevant documents no run retrieves: how many, with what uncertainty, and how they enter R_t.

AP and recall divide by :math:`R_t`, the number of relevant documents of the topic, but the documents a
collection's runs retrieve are only part of them (on TREC-8, 30–48% of the relevant documents lie outside
the union of ten runs' top 100). Treating the runs as sampling units that each "capture" some relevant
documents, the number never captured is estimated from the incidence frequencies, Chao's estimator
(Chao 1987; incidence form, Chao et al. 2014):

.. math::

    \hat f_0 = \frac{m-1}{m}\,\frac{Q_1(Q_1-1)}{2(Q_2+1)}

with m the runs and :math:`Q_k=\sum_{i:|S_i|=k}p_i` the expected number of relevant documents exactly k runs
retrieve (judged documents count 1 or 0, unjudged ones their probability of relevance) — the
bias-corrected form, :math:`Q_1-1` floored at 0 for fractional counts —, and variance, with
:math:`A=\tfrac{m-1}m`,

.. math::

    \widehat{\mathrm{Var}}(\hat f_0) = \frac{AQ_1(Q_1-1)}{2(Q_2+1)} + \frac{A^2Q_1(2Q_1-1)^2}{4(Q_2+1)^2}
    + \frac{A^2Q_1^2Q_2(Q_1-1)^2}{4(Q_2+1)^4}.

It is a lower bound when runs differ in how often they capture (heterogeneity), which they do.

:func:`with_unseen` makes the estimate part of every confidence method without touching them: each topic
gets M *phantom* documents that no run ranks, unjudged, each relevant with probability :math:`\hat f_0/M`;
they add :math:`\hat f_0` to E[R_t] and their Bernoulli variance to Var[R_t] in every method (``paper``,
``delta``, ``exact``, ``mc``). With posterior draws of p, draw k recomputes :math:`Q_1, Q_2` from draw k and
adds the estimator's own uncertainty (a Gamma draw with the variance left after the Bernoulli part), so
Monte Carlo confidences integrate over it.

References
----------
A. Chao (1987). Estimating the population size for capture-recapture data with unequal catchability.
Biometrics 43(4). A. Chao (2005). Species estimation and applications. Encyclopedia of Statistical
Sciences, 2nd ed. A. Chao, N. J. Gotelli, T. C. Hsieh et al. (2014). Rarefaction and extrapolation with
Hill numbers. Ecological Monographs 84(1).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.relevance.results import RelevanceEstimate

__all__ = ["UnseenRelevant", "chao_unseen", "unseen_relevant", "with_unseen"]

PHANTOM_PREFIX = "__unseen__"


def chao_unseen(q1, q2, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Chao's bias-corrected incidence estimate of the unseen count and its variance (arrays broadcast)."""
    q1 = np.asarray(q1, dtype=np.float64)
    q2 = np.asarray(q2, dtype=np.float64)
    A = (m - 1) / m if m > 1 else 0.0
    d = q2 + 1.0
    q1m = np.maximum(q1 - 1.0, 0.0)
    f0 = A * q1 * q1m / (2 * d)
    var = (A * q1 * q1m / (2 * d) + A ** 2 * q1 * np.maximum(2 * q1 - 1, 0.0) ** 2 / (4 * d ** 2)
           + A ** 2 * q1 ** 2 * q2 * q1m ** 2 / (4 * d ** 4))
    return f0, var


@dataclass(frozen=True, eq=False)
class UnseenRelevant:
    """Per topic, the estimated number of relevant documents no run retrieves.

    Attributes
    ----------
    topics : tuple of str
    mean, sd : ndarray
        Point estimate (from the point p) and standard deviation (Chao's variance plus, with draws, the
        spread over posterior draws of p).
    draws : ndarray or None
        (n_draws, T): per posterior draw of p, a draw of the unseen count's mean (estimator noise included).
    q1, q2 : ndarray
        Expected relevant documents retrieved by exactly one / two runs.
    runs : int
    """

    topics: tuple
    mean: np.ndarray
    sd: np.ndarray
    draws: np.ndarray | None
    q1: np.ndarray
    q2: np.ndarray
    runs: int

    def to_frame(self) -> pd.DataFrame:
        """``topic, q1, q2, unseen, sd``."""
        return pd.DataFrame({"topic": list(self.topics), "q1": self.q1, "q2": self.q2, "unseen": self.mean,
                             "sd": self.sd})

    def summary(self) -> str:
        return (f"unseen relevant documents ({self.runs} runs, Chao): {self.mean.sum():.1f} over "
                f"{len(self.topics)} topics (sd {np.sqrt(np.sum(self.sd ** 2)):.1f}), "
                f"{self.mean.mean():.2f} per topic")


def _incidence(tr) -> np.ndarray:
    return (np.asarray(tr.ranks) > 0).sum(axis=1)


def _q(tr, p: np.ndarray, c: np.ndarray):
    p = np.array(p, dtype=np.float64, copy=True)
    j = np.asarray(tr.judged)
    p[..., j] = tr.relevant[j]
    return (p * (c == 1)).sum(axis=-1), (p * (c == 2)).sum(axis=-1)


def unseen_relevant(data: RankData, estimate: RelevanceEstimate, *, seed=None) -> UnseenRelevant:
    """Chao's estimate of the relevant documents outside the union of ``data``'s runs, per topic.

    Parameters
    ----------
    data : RankData
    estimate : RelevanceEstimate
        p of every document (judged documents count by their judgment); with draws, one unseen draw per
        draw of p.
    seed : int, Generator or None
        Seed of the estimator-noise draws.

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> from bayeval.relevance import smoothed_probabilities
    >>> col = make_collection(n_topics=3, n_systems=4, n_docs=200, depth=10, judged_depth=10, seed=1)
    >>> data = RankData.build(col.runs, col.judgments, depth=10)
    >>> u = unseen_relevant(data, smoothed_probabilities(data))
    >>> bool(np.all(u.mean >= 0)), len(u.topics)
    (True, 3)
    """
    if not isinstance(estimate, RelevanceEstimate):
        raise BayevalInputError(f"estimate: expected a RelevanceEstimate, got {type(estimate).__name__}")
    if tuple(estimate.topics) != tuple(data.topics):
        raise BayevalInputError("estimate: made on a different collection (topics differ from data's)")
    m = len(data.systems)
    q1, q2 = np.empty(len(data)), np.empty(len(data))
    for t, tr in enumerate(data):
        q1[t], q2[t] = _q(tr, estimate.p[t], _incidence(tr))
    mean, var = chao_unseen(q1, q2, m)
    dr = None
    if estimate.has_draws:
        rng = np.random.default_rng(seed)
        K = estimate.draws[0].shape[0]
        Q1, Q2 = np.empty((K, len(data))), np.empty((K, len(data)))
        for t, tr in enumerate(data):
            Q1[:, t], Q2[:, t] = _q(tr, estimate.draws[t], _incidence(tr))
        mu, v = chao_unseen(Q1, Q2, m)
        # the Bernoulli sum of the phantoms carries ≈ mu of the variance; the Gamma draw adds the rest
        extra = np.maximum(v - mu, 0.0)
        ok = (mu > 1e-9) & (extra > 1e-12)
        shape = np.where(ok, mu ** 2 / np.where(ok, extra, 1.0), 1.0)
        scale = np.where(ok, extra / np.where(mu > 1e-9, mu, 1.0), 0.0)
        dr = np.where(ok, rng.gamma(shape, 1.0) * scale, mu)
        var = var + mu.var(axis=0)
    return UnseenRelevant(tuple(data.topics), mean, np.sqrt(var), dr, q1, q2, m)


def with_unseen(data: RankData, estimate: RelevanceEstimate, unseen: UnseenRelevant | None = None, *,
                seed=None) -> tuple[RankData, RelevanceEstimate]:
    """``data`` and ``estimate`` with M phantom documents per topic carrying the unseen relevant count.

    The phantoms are unjudged and no run ranks them: they change R_t only. Per topic
    :math:`M=\\lceil 2\\max\\hat f_0\\rceil+1` (over the point and every draw), each with
    :math:`p=\\hat f_0/M\\le\\tfrac12`.

    Returns
    -------
    (RankData, RelevanceEstimate)
        Aligned with each other (pass both to :func:`bayeval.expected.compare_systems`).
    """
    if unseen is None:
        unseen = unseen_relevant(data, estimate, seed=seed)
    per, ps, ds, docs, judged = [], [], [], [], []
    for t, tr in enumerate(data):
        top = float(unseen.mean[t]) if unseen.draws is None else float(max(unseen.mean[t], unseen.draws[:, t].max()))
        M = int(np.ceil(2 * top)) + 1
        names = np.array([f"{PHANTOM_PREFIX}{k}" for k in range(M)], dtype=object)
        dn = np.concatenate([tr.docnos, names])
        jd = np.concatenate([tr.judged, np.zeros(M, bool)])
        gr = np.concatenate([tr.grades, np.zeros(M, np.int64)])
        per.append(dataclasses.replace(tr, docnos=dn, judged=jd, grades=gr))
        ps.append(np.concatenate([estimate.p[t], np.full(M, unseen.mean[t] / M)]))
        if estimate.has_draws:
            d = estimate.draws[t]
            fill = (unseen.draws[:, t] / M).astype(d.dtype) if unseen.draws is not None else \
                np.full(d.shape[0], unseen.mean[t] / M, d.dtype)
            ds.append(np.concatenate([d, np.repeat(fill[:, None], M, axis=1)], axis=1))
        docs.append(dn)
        judged.append(jd)
    aug = RankData(data.systems, data.topics, tuple(per), data.depth)
    est = dataclasses.replace(estimate, docnos=tuple(docs), judged=tuple(judged), p=tuple(ps),
                              draws=tuple(ds) if estimate.has_draws else None)
    return aug, est
