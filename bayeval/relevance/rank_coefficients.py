r"""Rank coefficients: a Bradley–Terry model over rank positions, one per topic (Carterette et al. 2007 §3.2).

Every rank position r = 1..D of a ranked list is preferred to every later position and to the
"unretrieved" position D+1. With coefficients :math:`\theta_{t,r}`

.. math::

    L_t(\theta) = \prod_{r<r'} \sigma(\theta_{t,r}-\theta_{t,r'})^{W_{rr'}},\qquad
    \sigma(\theta_{t,r}) \sim \mathrm{Beta}(|R_t|+1,\ |N_t|+1),

and the expert's self-reported probability of relevance at rank r is :math:`q^*_{t,r}=\sigma(\theta_{t,r})`.
The Beta prior on :math:`\sigma(\theta)` has log density :math:`a\log\sigma(\theta)+b\log\sigma(-\theta)` in
:math:`\theta` (Jacobian included): exactly *a* wins and *b* losses against a reference item with
:math:`\theta=0` — mtc-eval's pseudo-comparisons.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.relevance._fitting import Mode, ParamSpec, RelevanceModel
from bayeval.relevance._kernels import CoefPrior, bt_logpost, bt_newton_batch
from bayeval.relevance._logistic_beta import logistic_beta_rvs, pymc_logistic_beta
from bayeval.relevance.config import RankPrior
from bayeval.relevance.rank_decay import fit_rank_decay, prefix_observations

__all__ = ["RankCoefficients", "rank_wins"]


def rank_wins(depth: int, weight: float = 1.0, lengths: np.ndarray | None = None) -> np.ndarray:
    """Win counts (D+1, D+1) of the position preferences: ``W[r, r']`` = times position r beats r'.

    Positions 0..D-1 are ranks 1..D and position D is "unretrieved". Without ``lengths`` every pair
    counts ``weight`` once; with ``lengths`` (one per system) a pair counts once per system whose list
    reaches the positions compared (ranks r < r' <= length; any rank <= length beats unretrieved).
    """
    D = int(depth)
    W = np.zeros((D + 1, D + 1))
    if lengths is None:
        W[np.triu_indices(D + 1, k=1)] = weight
        return W
    lengths = np.asarray(lengths, dtype=np.int64)
    # n_ge[k] = systems whose list holds at least k+1 documents
    n_ge = np.array([(lengths > k).sum() for k in range(D)], dtype=np.float64)
    for r in range(D):
        W[r, r + 1:D] = n_ge[r + 1:D]  # both positions exist iff the later one exists
        W[r, D] = n_ge[r]
    return W * weight


@dataclass(frozen=True, eq=False)
class RankCoefficients(RelevanceModel):
    r"""Per-topic Bradley–Terry rank coefficients with Beta priors on :math:`\sigma(\theta)`.

    Parameters
    ----------
    wins : ndarray, shape (T, K, K)
        ``wins[t, a, b]``: how often position a beats position b in topic t (K = D + 1 positions,
        the last "unretrieved").
    prior_a, prior_b : ndarray, shape (T,) or (T, K)
        Beta(a_t, b_t) prior on every :math:`\sigma(\theta_{t,r})`, or one per position (the learned
        decay, ``RankPrior.decay = "learned"``).
    topics : tuple of str
    prior : RankPrior
        The configuration the arrays were built from (kept for reference).

    Notes
    -----
    Log posterior of topic t:
    :math:`\sum_{a,b}W_{ab}\log\sigma(\theta_a-\theta_b)+\sum_r a_t\log\sigma(\theta_r)+b_t\log\sigma(-\theta_r)`,
    concave; the fast path is Newton's method with the Laplacian-form Hessian, O(K²) per step.

    References
    ----------
    B. Carterette, J. Allan, R. Sitaraman (2007). Robust test collections for retrieval evaluation. SIGIR, §3.2.

    Examples
    --------
    >>> m = RankCoefficients(rank_wins(5)[None], np.array([3.0]), np.array([9.0]), ("1",))
    >>> q = m.q_star(m.find_map()["theta"])
    >>> bool(np.all(np.diff(q[0, :5]) < 0)), q.shape
    (True, (1, 6))
    """

    wins: np.ndarray
    prior_a: np.ndarray
    prior_b: np.ndarray
    topics: tuple
    prior: RankPrior = RankPrior()
    name = "rank_coefficients"

    def __post_init__(self) -> None:
        w = np.asarray(self.wins, dtype=np.float64)
        if w.ndim != 3 or w.shape[1] != w.shape[2]:
            raise BayevalInputError(f"wins: expected shape (T, K, K), got {w.shape}")
        if np.any(w < 0):
            raise BayevalInputError("wins: counts must be non-negative")
        a = np.asarray(self.prior_a, dtype=np.float64)
        b = np.asarray(self.prior_b, dtype=np.float64)
        a = a.reshape(-1) if a.ndim <= 1 or a.shape[1:] != w.shape[1:2] else a
        b = b.reshape(-1) if b.ndim <= 1 or b.shape[1:] != w.shape[1:2] else b
        if len(a) != w.shape[0] or len(self.topics) != w.shape[0] or a.shape != b.shape:
            raise BayevalInputError("prior_a, prior_b, topics: need one entry (or one row of K) per topic of wins")
        if np.any(a <= 0) or np.any(b <= 0):
            raise BayevalInputError("prior_a, prior_b: must be positive (the prior makes the model identified)")
        object.__setattr__(self, "wins", w)
        object.__setattr__(self, "prior_a", a)
        object.__setattr__(self, "prior_b", b)
        object.__setattr__(self, "topics", tuple(str(t) for t in self.topics))

    @classmethod
    def from_rankdata(cls, data: RankData, prior: RankPrior | None = None, *, depth: int | None = None
                      ) -> RankCoefficients:
        """Position preferences and Beta(|R_t|+1, |N_t|+1) priors from runs and judgments."""
        prior = RankPrior() if prior is None else prior
        D = int(depth) if depth is not None else int(max(int(tr.lengths.max(initial=0)) for tr in data))
        D = max(D, 1)
        wins = np.empty((len(data), D + 1, D + 1))
        base = rank_wins(D, prior.comparison_weight)
        seen: dict[bytes, np.ndarray] = {}  # topics whose lists have the same lengths share their wins
        for t, tr in enumerate(data):
            if not prior.per_system:
                wins[t] = base
                continue
            lengths = np.minimum(tr.lengths, D)
            key = lengths.tobytes()
            if key not in seen:
                seen[key] = rank_wins(D, prior.comparison_weight, lengths)
            wins[t] = seen[key]
        R = np.array([tr.num_rel for tr in data], dtype=np.float64)
        N = np.array([tr.num_nonrel for tr in data], dtype=np.float64)
        a = prior.count_scale * R + prior.relevant_offset
        b = prior.count_scale * N + prior.nonrelevant_offset
        if prior.decay == "learned":
            t, r, y = prefix_observations(data, D)
            m = fit_rank_decay(t, r, y, len(data), topic_sd=prior.decay_topic_sd).mean(D)  # (T, D + 1)
            strength = (a + b)[:, None]
            a, b = strength * m, strength * (1.0 - m)
        return cls(wins, a, b, tuple(data.topics), prior)

    @property
    def _a2(self) -> np.ndarray:
        """prior_a as (T, 1) or (T, K): broadcastable against θ."""
        return self.prior_a[:, None] if self.prior_a.ndim == 1 else self.prior_a

    @property
    def _b2(self) -> np.ndarray:
        return self.prior_b[:, None] if self.prior_b.ndim == 1 else self.prior_b

    @property
    def depth(self) -> int:
        return self.wins.shape[1] - 1

    @property
    def param_spec(self) -> ParamSpec:
        T, K = self.wins.shape[:2]
        pos = [str(r) for r in range(1, K)] + ["unretrieved"]
        return ParamSpec(("theta",), ((T, K),), (("topic", "position"),),
                         {"topic": list(self.topics), "position": pos})

    def _prior(self, t: int) -> CoefPrior:
        K = self.wins.shape[1]
        return CoefPrior.make(K, a=self.prior_a[t], b=self.prior_b[t])

    def mode(self, warm_start: RankCoefficients | None = None) -> Mode:
        """Newton per topic, all topics batched; with ``warm_start`` (an earlier fitted model) a topic
        whose wins and prior are unchanged reuses its solution, and the others start at its θ."""
        T, K = self.wins.shape[:2]
        # start at the prior mode: sigma(theta) = a / (a + b)
        theta = np.broadcast_to(np.log(self._a2 / self._b2), (T, K)).copy()
        todo = np.ones(T, bool)
        old = getattr(warm_start, "_solution", None)
        H, lp = (None, None) if old is None else (np.empty((T, K, K)), np.empty(T))
        if old is not None and warm_start.wins.shape[1] == K:
            where = {name: i for i, name in enumerate(warm_start.topics)}
            for t, name in enumerate(self.topics):
                i = where.get(name)
                if i is None:
                    continue
                theta[t] = old[0][i]
                if (np.array_equal(self.prior_a[t], warm_start.prior_a[i])
                        and np.array_equal(self.prior_b[t], warm_start.prior_b[i])
                        and np.array_equal(self.wins[t], warm_start.wins[i])):
                    H[t], lp[t] = old[1][i], old[2][i]
                    todo[t] = False
        it, ok = 0, True
        if todo.all():  # no warm start: the solver's arrays as they are (no second (T, K, K) array)
            theta, H, lp, it, ok = bt_newton_batch(self.wins, self.prior_a, self.prior_b, x0=theta)
        elif todo.any():
            theta[todo], H[todo], lp[todo], it, ok = bt_newton_batch(
                self.wins[todo], self.prior_a[todo], self.prior_b[todo], x0=theta[todo])
        object.__setattr__(self, "_solution", (theta, H, lp))
        blocks = tuple((np.arange(t * K, (t + 1) * K), H[t]) for t in range(T))
        return Mode(theta.reshape(-1), blocks, float(lp.sum()), it, ok)

    def log_posterior(self, theta: np.ndarray) -> float:
        """Log posterior (up to a constant) at ``theta`` (T, K)."""
        theta = np.asarray(theta, dtype=np.float64).reshape(self.wins.shape[:2])
        return float(sum(bt_logpost(theta[t], self.wins[t], self._prior(t)) for t in range(len(self.topics))))

    def build_model(self):
        """The same log posterior in PyMC: ``theta`` logistic-beta (the Beta prior on σ(θ) written in θ,
        a proper prior with no transform, so ``pm.find_MAP`` — which drops Jacobians — optimises the same
        function and ``pm.sample_prior_predictive`` draws from it) and the preferences as a Potential."""
        import pymc as pm
        import pytensor.tensor as pt

        spec = self.param_spec
        mask = self.wins > 0
        ti, ai, bi = np.nonzero(mask)
        w = self.wins[mask]
        shape = self.wins.shape[:2]
        with pm.Model(coords=spec.coords) as model:
            theta = pymc_logistic_beta("theta", np.broadcast_to(self._a2, shape),
                                       np.broadcast_to(self._b2, shape), dims=("topic", "position"))
            d = theta[ti, ai] - theta[ti, bi]
            pm.Potential("preferences", pt.sum(w * -pt.softplus(-d)))
        return model

    def observed(self):
        """None: the rank coefficients are unsupervised — judgments enter only through the prior's counts."""
        return None

    def prior_draws(self, size: int, rng: np.random.Generator) -> dict:
        """θ ~ logistic-beta(a_t, b_t) independently per (topic, position)."""

        T, K = self.wins.shape[:2]
        return {"theta": logistic_beta_rvs(self._a2, self._b2, (size, T, K), rng)}

    def q_star(self, theta: np.ndarray, unretrieved: str | None = None) -> np.ndarray:
        """:math:`q^* = \\sigma(\\theta)` per (…, topic, position); the unretrieved position gets 0
        (``"zero"``, the paper) or its fitted value (``"fitted"``). Default from the prior config."""
        q = expit(np.asarray(theta, dtype=np.float64))
        if (unretrieved or self.prior.unretrieved) == "zero":
            q = q.copy()
            q[..., -1] = 0.0
        return q
