"""Recalibrating a model's probabilities of relevance with a random sample: inverse-probability-weighted
logistic recalibration (:func:`recalibrate`).

A model fitted on documents chosen *because* they were informative is trusted on documents nobody chose; a
random sample with known inclusion probabilities says how its probabilities hold on the whole pool. The map
``p ↦ σ(a + b · logit p)`` (Platt scaling, Platt 1999; Cox 1958 for the slope) is fitted by maximising the
Horvitz-Thompson estimate of the *pool's* log-likelihood,

    ℓ̂(a, b) = Σ_t Σ_{e ∈ S_t} (1/π_e) [x_e log q_e + (1 - x_e) log(1 - q_e)],   q_e = σ(a + b · logit p_e),

which is unbiased for the log-likelihood summed over every pooled document under any design with known
inclusion probabilities, so its maximiser is consistent for the map that best calibrates the pool — not the
sample, which over-represents whatever the design favours (top ranks). Formulas: docs/sampling.md.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from scipy import optimize
from scipy.special import expit, logit

from bayeval.data.probabilities import RelevanceProbabilities
from bayeval.data.sample import StratifiedSample
from bayeval.errors import BayevalInputError

__all__ = ["Recalibration", "recalibrate"]

_EPS = 1e-6


@dataclass(frozen=True)
class Recalibration:
    """The fitted map ``p ↦ σ(intercept + slope · logit p)``.

    Attributes
    ----------
    intercept, slope : float
    documents : int
        Sampled documents the fit used.
    """

    intercept: float
    slope: float
    documents: int

    def __call__(self, p: np.ndarray) -> np.ndarray:
        """Recalibrated probabilities (``p`` clipped to ``[1e-6, 1 - 1e-6]`` before the logit)."""
        return expit(self.intercept + self.slope * logit(np.clip(np.asarray(p, dtype=np.float64), _EPS, 1 - _EPS)))

    def estimate(self, estimate):
        """A relevance estimate (e.g. :class:`bayeval.relevance.RelevanceEstimate`: any frozen dataclass with
        per-topic ``p`` and optional ``draws``) with every probability recalibrated, so that the Bayesian path
        (:mod:`bayeval.expected`) computes its expectations, variances and P(Δ < 0) from the recalibrated p.
        Judged documents are fixed at their judgments there, so only unjudged ones change."""
        if not dataclasses.is_dataclass(estimate) or not hasattr(estimate, "p"):
            raise BayevalInputError(f"estimate: expected a relevance estimate with per-topic p, got "
                                    f"{type(estimate).__name__}")
        draws = getattr(estimate, "draws", None)
        return dataclasses.replace(estimate, p=tuple(self(p) for p in estimate.p),
                                   **({} if draws is None else {"draws": tuple(self(d) for d in draws)}))

    def apply(self, predictions: RelevanceProbabilities) -> RelevanceProbabilities:
        """Every listed probability recalibrated."""
        out = {}
        for t, m in predictions.by_topic.items():
            q = self(np.fromiter(m.values(), dtype=np.float64, count=len(m)))
            out[t] = dict(zip(m.keys(), q.tolist(), strict=True))
        return RelevanceProbabilities(out)


def recalibrate(predictions: RelevanceProbabilities, sample: StratifiedSample, *,
                inclusion: dict[str, np.ndarray] | None = None, default: float = 0.0,
                relevance_level: int = 1, weighted: bool = True) -> Recalibration:
    """Fit ``p ↦ σ(a + b · logit p)`` to the sampled judgments, each weighted by ``1/π``.

    Parameters
    ----------
    predictions : RelevanceProbabilities
        The model's probabilities (``default`` for pooled documents not listed).
    sample : StratifiedSample
        The pool and the sampled judgments.
    inclusion : mapping topic -> ndarray, optional
        Inclusion probabilities aligned with ``sample[topic].docnos``; default the stratum rate ``n_c / N_c``.
    default, relevance_level
    weighted : bool
        ``False`` fits the sample as if it were the pool (every weight 1): for comparison only.

    Returns
    -------
    Recalibration
    """
    ls, xs, ws = [], [], []
    for t, ts in sample.items():
        pi = ts.inclusion if inclusion is None else np.asarray(inclusion[t], dtype=np.float64)
        if pi.shape != (len(ts),) or np.any(ts.sampled & ~(pi > 0)):
            raise BayevalInputError(f"inclusion: topic {t!r} needs one probability per pooled document, positive "
                                    "for every sampled one")
        smp = ts.sampled
        p = predictions.lookup(t, ts.docnos[smp], float(default))
        ls.append(logit(np.clip(p, _EPS, 1 - _EPS)))
        xs.append((ts.grades[smp] >= relevance_level).astype(np.float64))
        ws.append(1.0 / pi[smp] if weighted else np.ones(int(smp.sum())))
    lg, x, w = (np.concatenate(a) if a else np.zeros(0) for a in (ls, xs, ws))
    if len(x) == 0 or x.min() == x.max():
        raise BayevalInputError("sample: recalibration needs sampled relevant and nonrelevant documents")
    w = w / w.sum()

    def loss(theta):
        eta = theta[0] + theta[1] * lg
        q = expit(eta)
        val = np.sum(w * (np.logaddexp(0.0, eta) - x * eta))
        r = w * (q - x)
        return val, np.array([r.sum(), np.sum(r * lg)])

    res = optimize.minimize(loss, np.array([0.0, 1.0]), jac=True, method="BFGS")
    return Recalibration(float(res.x[0]), float(res.x[1]), len(x))
