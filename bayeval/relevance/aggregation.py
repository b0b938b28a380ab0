r"""Expert aggregation: logistic regression of relevance on the experts' calibrated probabilities.

Carterette et al. (2007) §3.1: the maximum-entropy combination of k experts' probabilities is

.. math::

    p_i = \sigma\Big(\lambda_0 + \sum_j \lambda_j f(q_{ij})\Big),\qquad
    \sigma(\lambda_j)\sim\mathrm{Beta}(\alpha,\beta),\ \alpha=\beta=1,

with no intercept :math:`\lambda_0` in the paper and :math:`f(q)=q`. The Beta prior on
:math:`\sigma(\lambda_j)`, written in :math:`\lambda_j` (Jacobian included), is
:math:`\alpha\log\sigma(\lambda_j)+\beta\log\sigma(-\lambda_j)`: α pseudo-rows with :math:`y=1` and β
with :math:`y=0` whose only feature is expert j's indicator — mtc-eval's two pseudo-rows per system.
Experts are columns: ranked systems, or any other source (an LLM's or a crowd's label probabilities,
click rates).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logit

from bayeval.errors import BayevalInputError
from bayeval.relevance._fitting import Mode, ParamSpec, RelevanceModel
from bayeval.relevance._idata import Observed
from bayeval.relevance._kernels import CoefPrior, DenseDesign, OffsetSparseDesign, logistic_logpost, logistic_newton
from bayeval.relevance._logistic_beta import logistic_beta_rvs, pymc_logistic_beta
from bayeval.relevance.config import AggregationPrior

__all__ = ["ExpertAggregation", "expert_features"]

_EPS = 1e-6


def expert_features(q: np.ndarray, features: str) -> np.ndarray:
    """:math:`f(q)`: ``q`` itself or ``logit(q)`` (clipped to [1e-6, 1 − 1e-6])."""
    q = np.asarray(q, dtype=np.float64)
    if features == "probability":
        return q
    if features == "logit":
        return logit(np.clip(q, _EPS, 1 - _EPS))
    raise BayevalInputError(f"features: must be 'probability' or 'logit', got {features!r}")


@dataclass(frozen=True, eq=False)
class ExpertAggregation(RelevanceModel):
    r"""Logistic aggregation of expert probabilities with Beta priors on :math:`\sigma(\lambda_j)`.

    Parameters
    ----------
    X : ndarray, shape (n, k)
        Features :math:`f(q_{ij})` of the training documents (already transformed; see
        :func:`expert_features`).
    y : ndarray, shape (n,)
        Relevance in [0, 1] (judgments; fractional targets allowed).
    experts : tuple of str
        Column names.
    w : ndarray, shape (n,), optional
        Row weights (default 1).
    prior : AggregationPrior
    row_groups, group_baseline : ndarray, optional
        A structure hint that changes no result, only the fast path's speed: row i equals
        ``group_baseline[row_groups[i]]`` (G, k) except in few entries (RTC's documents equal their
        topic's "unretrieved" features wherever a system does not rank them). Newton then works with
        :class:`~bayeval.relevance._kernels.OffsetSparseDesign`.

    Notes
    -----
    Parameters ``lam`` (k,) and, with ``prior.intercept``, ``lam0`` (Normal(0, intercept_sd)).
    The fast path is IRLS on the log posterior (concave).

    References
    ----------
    B. Carterette, J. Allan, R. Sitaraman (2007). Robust test collections for retrieval evaluation. SIGIR §3.1.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((400, 2)); y = (rng.random(400) < expit(3 * X[:, 0] - 2)).astype(float)
    >>> m = ExpertAggregation(X, y, ("a", "b"), prior=AggregationPrior(intercept=True))
    >>> round(float(m.find_map()["lam"][0]), 1) > 1
    True
    """

    X: np.ndarray
    y: np.ndarray
    experts: tuple
    w: np.ndarray | None = None
    prior: AggregationPrior = AggregationPrior()
    row_groups: np.ndarray | None = None
    group_baseline: np.ndarray | None = None
    name = "aggregation"

    def __post_init__(self) -> None:
        X = np.asarray(self.X, dtype=np.float64)
        if X.ndim != 2:
            raise BayevalInputError(f"X: expected a 2-d array (documents × experts), got shape {X.shape}")
        y = np.asarray(self.y, dtype=np.float64).reshape(-1)
        if len(y) != X.shape[0]:
            raise BayevalInputError(f"y: expected {X.shape[0]} targets, got {len(y)}")
        if np.any((y < 0) | (y > 1)) or not np.all(np.isfinite(X)):
            raise BayevalInputError("y, X: targets must lie in [0, 1] and features be finite")
        if len(self.experts) != X.shape[1]:
            raise BayevalInputError(f"experts: expected {X.shape[1]} names, got {len(self.experts)}")
        w = np.ones(len(y)) if self.w is None else np.asarray(self.w, dtype=np.float64).reshape(-1)
        if len(w) != len(y) or np.any(w < 0):
            raise BayevalInputError("w: one non-negative weight per row")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "w", w)
        object.__setattr__(self, "experts", tuple(str(e) for e in self.experts))
        if (self.row_groups is None) != (self.group_baseline is None):
            raise BayevalInputError("row_groups, group_baseline: give both or neither")
        if self.row_groups is not None:
            g = np.asarray(self.row_groups, dtype=np.int64).reshape(-1)
            base = np.asarray(self.group_baseline, dtype=np.float64)
            if len(g) != len(y) or base.ndim != 2 or base.shape[1] != X.shape[1] or (
                    len(g) and (g.min() < 0 or g.max() >= len(base))):
                raise BayevalInputError(f"row_groups, group_baseline: need one group index per row into a "
                                        f"(G, {X.shape[1]}) baseline")
            object.__setattr__(self, "row_groups", g)
            object.__setattr__(self, "group_baseline", base)

    @property
    def param_spec(self) -> ParamSpec:
        k = self.X.shape[1]
        names, shapes, dims = ["lam"], [(k,)], [("expert",)]
        if self.prior.intercept:
            names.append("lam0")
            shapes.append(())
            dims.append(())
        return ParamSpec(tuple(names), tuple(shapes), tuple(dims), {"expert": list(self.experts)})

    def _design(self):
        k = self.X.shape[1]
        a, b = self.prior.alpha, self.prior.beta
        X, base = self.X, self.group_baseline
        if self.prior.intercept:
            X = np.hstack([X, np.ones((len(self.y), 1))])
            base = None if base is None else np.hstack([base, np.ones((len(base), 1))])
            prior = CoefPrior(np.zeros(k + 1), np.r_[np.zeros(k), 1.0 / self.prior.intercept_sd ** 2],
                              np.r_[np.full(k, a), 0.0], np.r_[np.full(k, b), 0.0])
        else:
            prior = CoefPrior.make(k, a=a, b=b)
        Xd = DenseDesign(X) if base is None else OffsetSparseDesign.from_dense(X, self.row_groups, base)
        return Xd, prior

    def mode(self) -> Mode:
        Xd, prior = self._design()
        r = logistic_newton(Xd, self.y, self.w, prior)
        return Mode(r.x, ((np.arange(len(r.x)), r.neg_hessian),), r.logpost, r.n_iter, r.converged)

    def log_posterior(self, lam, lam0=None) -> float:
        """Log posterior (up to a constant)."""
        Xd, prior = self._design()
        beta = np.r_[np.asarray(lam, float), [] if lam0 is None else [float(lam0)]]
        return logistic_logpost(beta, Xd, self.y, self.w, prior)

    def _proper(self) -> bool:
        return self.prior.alpha > 0 and self.prior.beta > 0

    def _binary(self) -> bool:
        return bool(np.all((self.y == 0) | (self.y == 1)) and np.all(self.w == 1))

    def build_model(self):
        """The same log posterior in PyMC: ``lam`` logistic-beta (the Beta prior on σ(λ) in λ; Flat plus
        that Potential when α or β is 0, an improper prior); Bernoulli likelihood ``relevant``."""
        import pymc as pm
        import pytensor.tensor as pt

        k = self.X.shape[1]
        with pm.Model(coords=self.param_spec.coords) as model:
            if self._proper():
                lam = pymc_logistic_beta("lam", np.full(k, self.prior.alpha), np.full(k, self.prior.beta),
                                         dims="expert")
            else:
                lam = pm.Flat("lam", dims="expert")
                pm.Potential("prior", pt.sum(self.prior.alpha * -pt.softplus(-lam)
                                             + self.prior.beta * -pt.softplus(lam)))
            eta = pt.dot(self.X, lam)
            if self.prior.intercept:
                eta = eta + pm.Normal("lam0", 0.0, self.prior.intercept_sd)
            if self._binary():
                pm.Bernoulli("relevant", logit_p=eta, observed=self.y.astype(np.int64))
            else:
                ll = self.y * -pt.softplus(-eta) + (1 - self.y) * -pt.softplus(eta)
                pm.Potential("relevant", pt.sum(self.w * ll))
        return model

    def observed(self):
        """The training rows (judged documents): Bernoulli ``relevant``, or weighted fractional rows."""

        n = len(self.y)
        if self._binary():
            return Observed("relevant", "row", np.arange(n), self.y, np.ones(n))
        return Observed("relevant", "row", np.arange(n), self.w * self.y, self.w)

    def linear_predictor(self, params: dict) -> np.ndarray:
        eta = np.asarray(params["lam"]) @ self.X.T
        if self.prior.intercept:
            eta = eta + np.asarray(params["lam0"])[..., None]
        return eta

    def prior_draws(self, size: int, rng: np.random.Generator):
        """λ_j ~ logistic-beta(α, β), λ0 ~ Normal(0, intercept_sd); None when α or β is 0 (improper)."""

        if not self._proper():
            return None
        out = {"lam": logistic_beta_rvs(self.prior.alpha, self.prior.beta, (size, self.X.shape[1]), rng)}
        if self.prior.intercept:
            out["lam0"] = rng.normal(0.0, self.prior.intercept_sd, size)
        return out

    @staticmethod
    def predict(X, lam, lam0=None) -> np.ndarray:
        """:math:`\\sigma(\\lambda_0 + X\\lambda)`; with draws (lam (K, k)) returns (K, n)."""
        lam = np.asarray(lam)
        eta = np.asarray(X) @ lam.T
        if lam0 is not None:
            eta = eta + np.asarray(lam0)
        return expit(eta.T if lam.ndim == 2 else eta)
