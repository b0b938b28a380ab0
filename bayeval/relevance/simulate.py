"""Data generated *from each relevance model*, for parameter-recovery tests and examples.

Each generator takes the model's parameters and a seed and returns the model object (data + prior)
ready to fit, so ``simulate_x(...).fit()`` should recover the parameters it was given.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from bayeval.errors import BayevalInputError
from bayeval.relevance.aggregation import ExpertAggregation, expert_features
from bayeval.relevance.calibration import PlattCalibration
from bayeval.relevance.config import AggregationPrior, CalibrationPrior, SimilarityPrior
from bayeval.relevance.rank_coefficients import RankCoefficients
from bayeval.relevance.similarity import SimilarityRegression

__all__ = ["simulate_aggregation", "simulate_calibration", "simulate_rank_coefficients", "simulate_similarity"]


def _rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def simulate_rank_coefficients(theta, comparisons: int = 50, prior_a=1.0, prior_b=1.0, seed=None
                               ) -> RankCoefficients:
    r"""Random pairwise outcomes from a Bradley–Terry model.

    Every ordered pair of positions (a < b) of every topic is compared ``comparisons`` times; position
    a wins each with probability :math:`\sigma(\theta_a-\theta_b)`.

    Parameters
    ----------
    theta : ndarray (T, K)
        True coefficients.
    comparisons : int
    prior_a, prior_b : float or ndarray (T,)
        The Beta prior of the returned model (weak by default, for recovery).
    seed : int, Generator or None
    """
    theta = np.atleast_2d(np.asarray(theta, dtype=np.float64))
    if comparisons < 1:
        raise BayevalInputError(f"comparisons: must be >= 1, got {comparisons!r}")
    rng = _rng(seed)
    T, K = theta.shape
    wins = np.zeros((T, K, K))
    iu = np.triu_indices(K, k=1)
    for t in range(T):
        p = expit(theta[t][iu[0]] - theta[t][iu[1]])
        k = rng.binomial(comparisons, p)
        wins[t][iu] = k
        wins[t][iu[1], iu[0]] = comparisons - k
    a = np.broadcast_to(np.asarray(prior_a, float), (T,)).copy()
    b = np.broadcast_to(np.asarray(prior_b, float), (T,)).copy()
    return RankCoefficients(wins, a, b, tuple(str(t + 1) for t in range(T)))


def simulate_calibration(A, B, cells_per_system: int = 500, docs_per_cell: int = 1, smoothing: float = 1.0,
                         smoothing_cells: int = 10, seed=None) -> PlattCalibration:
    r"""Judged cells from Platt calibration: :math:`x\sim U(0,1)`, relevant ~ Binomial(m, σ(A_j+B_jx)).

    The first ``smoothing_cells`` cells of each system also carry the smoothing pseudo-counts.
    """
    A = np.asarray(A, dtype=np.float64).reshape(-1)
    B = np.asarray(B, dtype=np.float64).reshape(-1)
    if A.shape != B.shape:
        raise BayevalInputError("A, B: need the same length")
    rng = _rng(seed)
    S = len(A)
    sys = np.repeat(np.arange(S), cells_per_system)
    x = rng.random(len(sys))
    n_rel = rng.binomial(docs_per_cell, expit(A[sys] + B[sys] * x)).astype(float)
    n_non = docs_per_cell - n_rel
    pick = np.tile(np.arange(cells_per_system) < smoothing_cells, S)
    return PlattCalibration(sys, x, n_rel, n_non, sys[pick], x[pick], tuple(f"sys{j + 1}" for j in range(S)),
                            CalibrationPrior(smoothing=smoothing))


def simulate_aggregation(lam, lam0: float | None = None, n_docs: int = 2000, features: str = "probability",
                         alpha: float = 1.0, beta: float = 1.0, seed=None) -> ExpertAggregation:
    r"""Documents with expert probabilities :math:`q_{ij}\sim U(0.02, 0.98)` and relevance
    ~ Bernoulli(σ(λ₀ + Σ λ_j f(q_ij)))."""

    lam = np.asarray(lam, dtype=np.float64).reshape(-1)
    rng = _rng(seed)
    q = rng.uniform(0.02, 0.98, size=(n_docs, len(lam)))
    X = expert_features(q, features)
    eta = X @ lam + (0.0 if lam0 is None else lam0)
    y = (rng.random(n_docs) < expit(eta)).astype(float)
    prior = AggregationPrior(alpha=alpha, beta=beta, intercept=lam0 is not None, features=features)
    return ExpertAggregation(X, y, tuple(f"e{j + 1}" for j in range(len(lam))), prior=prior)


def simulate_similarity(beta0, beta, n_docs: int = 400, penalty: float = 1.0, seed=None) -> SimilarityRegression:
    r"""Per topic, similarities ~ U(0, 1) to ``len(beta[t])`` feature documents and relevance
    ~ Bernoulli(σ(β₀ + Σ β_j sim)); all documents judged (targets 0/1).

    Parameters
    ----------
    beta0 : sequence of float, one per topic
    beta : sequence of ndarray, one per topic
    """
    rng = _rng(seed)
    beta0 = np.asarray(beta0, dtype=np.float64).reshape(-1)
    if len(beta) != len(beta0):
        raise BayevalInputError("beta0, beta: need one entry per topic")
    Xs, ys, names = [], [], []
    for b0, b in zip(beta0, beta, strict=True):
        b = np.asarray(b, dtype=np.float64)
        X = rng.random((n_docs, len(b)))
        ys.append((rng.random(n_docs) < expit(b0 + X @ b)).astype(float))
        Xs.append(X)
        names.append(tuple(f"f{j + 1}" for j in range(len(b))))
    return SimilarityRegression(tuple(Xs), tuple(ys), tuple(str(t + 1) for t in range(len(beta0))), tuple(names),
                                prior=SimilarityPrior(penalty=penalty))
