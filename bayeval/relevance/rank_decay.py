r"""How relevance decays with rank, learned across topics from every run's completely judged prefix.

The rank coefficients' paper prior gives every rank of topic t the same Beta(|R_t|+1, |N_t|+1): how fast
relevance falls with rank is left to the unsupervised position preferences, and with ~5 judgments per topic
the decay is extrapolated (docs/calibration.md, "Where p goes wrong"). Here the decay is *learned*: every
run's completely judged prefix (ranks 1..c all judged, an unbiased sample of its ranking) of every topic
gives (rank, relevant) observations, and a logistic regression with a topic intercept shrunk towards a
common one and a slope shared by all topics,

.. math::

    \operatorname{logit} m_{t,r} = \alpha + u_t + \beta\log r,\qquad u_t\sim N(0,\tau^2),\quad
    \alpha\sim N(0, 10^2),\quad \beta\sim N(0, 10^2),

is fitted at its mode (penalised IRLS; τ = ``RankPrior.decay_topic_sd``) — a hierarchical prior over topics
for the decay, fitted by empirical Bayes — under the constraint β ≤ 0 (relevance does not grow with rank:
where the prefixes, often 5 ranks deep, say otherwise, β = 0 and the prior is the paper's flat one with
topic-specific means). Rank r's prior is then Beta(κ_t m_{t,r}, κ_t (1 − m_{t,r})) with
the strength κ_t of the paper's prior (|R_t| + |N_t| + offsets), so only its *shape over ranks* changes;
the unretrieved position takes :math:`r = D + 1`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from bayeval.data.coverage import complete_prefix

__all__ = ["RankDecay", "fit_rank_decay", "prefix_observations"]


@dataclass(frozen=True)
class RankDecay:
    """The fitted decay: common intercept, shared slope over log rank, topic offsets.

    Attributes
    ----------
    alpha, beta : float
    offsets : ndarray, shape (T,)
    n_obs : int
        Judged (rank, relevant) observations it was fitted on.
    """

    alpha: float
    beta: float
    offsets: np.ndarray
    n_obs: int

    def mean(self, depth: int) -> np.ndarray:
        """:math:`m_{t,r}` for r = 1..D and the unretrieved position (r = D + 1): shape (T, D + 1)."""
        r = np.arange(1, int(depth) + 2, dtype=np.float64)
        return expit(self.alpha + self.offsets[:, None] + self.beta * np.log(r)[None, :])


def prefix_observations(data, depth: int):
    """(topic index, rank, relevant) of every document in some run's completely judged prefix (≤ depth)."""

    ts, rs, ys = [], [], []
    for t, tr in enumerate(data):
        comp = np.minimum(complete_prefix(tr), depth)
        for j in np.flatnonzero(comp > 0):
            c = int(comp[j])
            docs = tr.ranked[j, :c]
            ts.append(np.full(c, t))
            rs.append(np.arange(1, c + 1))
            ys.append(np.asarray(tr.relevant)[docs])
    cat = lambda v, dt: np.concatenate(v).astype(dt) if v else np.zeros(0, dt)  # noqa: E731
    return cat(ts, np.int64), cat(rs, np.float64), cat(ys, np.float64)


def fit_rank_decay(topic: np.ndarray, rank: np.ndarray, y: np.ndarray, n_topics: int, *, topic_sd: float = 1.0,
                   max_iter: int = 100, tol: float = 1e-10) -> RankDecay:
    r"""Mode of the decay regression (module docstring) by Newton's method on its concave log posterior.

    Parameters
    ----------
    topic, rank, y : ndarray, shape (n,)
        Topic index, rank (1-based) and relevance (0/1) of each observation.
    n_topics : int
    topic_sd : float
        τ, the prior sd of the topic offsets.
    """
    fit = _fit(topic, rank, y, int(n_topics), topic_sd, True, max_iter, tol)
    if fit.beta > 0:  # constrained: β ≤ 0, so β = 0 at the constrained mode (concave objective)
        fit = _fit(topic, rank, y, int(n_topics), topic_sd, False, max_iter, tol)
    return fit


def _fit(topic, rank, y, T, topic_sd, slope, max_iter, tol) -> RankDecay:
    X = np.zeros((len(y), T + 2))
    X[:, 0] = 1.0
    X[:, 1] = np.log(rank)
    if len(y):
        X[np.arange(len(y)), 2 + topic] = 1.0
    prec = np.r_[1e-2, 1e-2, np.full(T, 1.0 / topic_sd ** 2)]
    if not slope:
        X[:, 1] = 0.0
        prec[1] = 1.0  # β's column is zero: its mode is 0
    w = np.zeros(T + 2)

    def logpost(w):
        eta = X @ w
        return float(np.sum(y * eta - np.logaddexp(0.0, eta)) - 0.5 * np.sum(prec * w * w))

    cur = logpost(w)
    for _ in range(max_iter):
        s = expit(X @ w)
        g = X.T @ (y - s) - prec * w
        H = (X * (s * (1 - s))[:, None]).T @ X + np.diag(prec)
        step = np.linalg.solve(H, g)
        t = 1.0
        for _ in range(60):
            new = logpost(w + t * step)
            if new >= cur - 1e-12 * max(1.0, abs(cur)):
                break
            t *= 0.5
        w, cur = w + t * step, new
        if float(g @ step) < tol:
            break
    return RankDecay(float(w[0]), float(w[1]), w[2:].copy(), int(len(y)))
