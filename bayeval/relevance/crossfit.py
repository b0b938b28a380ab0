r"""Cross-fitted calibration: a map from the model's log-odds to p learned where the documents did not shape it.

The hierarchical model (:mod:`bayeval.relevance.hierarchical`) is fitted on the judged documents, and on them
its log-odds look well calibrated; on documents that only *other* runs retrieve — the documents a held-out
run's measure rests on — its p is biased and too extreme (docs/calibration.md, "Where p goes wrong"). This
module learns, from the judgments themselves, how the model's log-odds transfer to such documents, and how
sure that transfer is.

**Contributing runs.** :func:`~bayeval.data.coverage.contributing_runs` finds a set C of runs that together
retrieve every judged document, taking the runs whose top ranks are most densely judged first. With judgments
made by selection on c runs (the robustness study) C is those c runs; with a pool it is the pooled runs that
account for it.

**Folds.** The runs of C are dealt round-robin into K folds (``crossfit_folds``). For fold f the model is
refitted (MAP, the same configuration with in-sample calibration) on the judged documents the runs of f
retrieve — the judgments "f's selection made" — and scored on the judged documents that runs of *other*
folds retrieve and no run of f does: documents that, seen from fold f's fit, only non-contributing runs
retrieve. Over the folds this gives pairs :math:`(\ell_i, y_i)` of out-of-fold log-odds and judgments.

**The map.** A logistic regression :math:`\Pr(y_i=1)=\sigma(a+b\,\ell_i)` with priors
:math:`a\sim N(0,s_a^2)`, :math:`b\sim N(1,s_b^2)` (centred on the identity: with no scored documents the map
is the model's own p, widened by the prior), fitted at its mode :math:`\hat\theta` by Newton's method. Its
uncertainty is the topic-clustered sandwich (Liang & Zeger 1986) of the penalised fit,

.. math::

    \Sigma = H^{-1}\Big(\sum_t g_t g_t^\top + \Lambda\Big)H^{-1},\qquad
    g_t=\sum_{i\in t}(y_i-\hat\pi_i)\,(1,\ell_i)^\top,

with :math:`H` the negative Hessian at the mode (prior precision :math:`\Lambda` included): documents of one
topic share its errors, so they count as one cluster, and with no data :math:`\Sigma=\Lambda^{-1}`, the prior.

**Use.** In the full fit the map replaces the log-odds :math:`\eta` of the *target* documents — unjudged and
retrieved by no run of C (``crossfit_target = "held_out"``), or every unjudged document (``"unjudged"``) — by
:math:`a+b\eta`, with one draw :math:`(a_d,b_d)\sim N(\hat\theta,\Sigma)` per posterior draw of p shared by
every target document of every topic, applied to each document's posterior-mean log-odds :math:`\bar\eta`
with the model's own spread around it kept, :math:`a_d+b_d\bar\eta+(\eta_d-\bar\eta)`: the map's uncertainty
moves a held-out run's documents together, so the forecasts of pairs with a held-out run widen where the map is
uncertain. The point p (no draws) integrates the map by the probit approximation,
:math:`\sigma\big((\hat a+\hat b\ell)/\sqrt{1+\tfrac\pi8 v(\ell)}\big)`, :math:`v(\ell)=(1,\ell)\Sigma(1,\ell)^\top`.

**Level kept** (``crossfit_level = "kept"``, :meth:`OutOfFoldMap.keep_level`). The scored documents were
judged because a selection chose them, and are relevant far more often than the target documents (Robust 2003,
trial 0: 17.7% against 4.5%), so the fitted intercept does not transfer, while the slope does (0.23 out of
fold; 0.18 fitted on the target documents against the complete qrels). The kept map is centred on the target
documents' mean log-odds :math:`\bar\ell_T`, :math:`a+b(\ell-\bar\ell_T)`, with :math:`a` solved so that the
target documents' mean p stays the model's and drawn with the fitted map's variance at the scored documents'
mean log-odds :math:`\bar\ell_S`: one shift shared by every target document, whose size the cross-fit learns.

References
----------
K.-Y. Liang, S. L. Zeger (1986). Longitudinal data analysis using generalized linear models. Biometrika 73(1).
V. Chernozhukov et al. (2018). Double/debiased machine learning for treatment and structural parameters.
Econometrics Journal 21(1) (cross-fitting). D. J. C. MacKay (1992). The evidence framework applied to
classification networks. Neural Computation 4(5).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit, logit

from bayeval.data.coverage import retrieved_by, target_documents
from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.relevance._kernels import CoefPrior, DenseDesign, logistic_newton

__all__ = ["OutOfFoldMap", "fit_map", "out_of_fold_pairs"]

_PI8 = np.pi / 8.0
_CLIP = 1e-6


def _hide(data: RankData, keep) -> RankData:
    """``data`` with only the judgments where ``keep`` (per topic, per document) is true."""
    per = []
    for tr, k in zip(data, keep, strict=True):
        hide = np.asarray(tr.judged) & ~k
        per.append(dataclasses.replace(tr, judged=np.asarray(tr.judged) & ~hide,
                                       grades=np.where(hide, 0, np.asarray(tr.grades))))
    return RankData(data.systems, data.topics, tuple(per), data.depth)


def out_of_fold_pairs(data: RankData, runs, folds: int, fit_p) -> tuple:
    """Out-of-fold log-odds, judgments and topic index of the judged documents (module docstring, "Folds").

    Parameters
    ----------
    data : RankData
    runs : array of int
        The contributing runs (:func:`~bayeval.data.coverage.contributing_runs`), dealt round-robin into
        ``folds`` folds.
    folds : int
        K ≥ 2 (fewer runs than K: one run per fold).
    fit_p : callable
        ``fit_p(RankData) -> tuple of ndarray``: point p of every document per topic from a fit on the given
        judgments (the model with in-sample calibration).

    Returns
    -------
    (ell, y, topic) : ndarray
        Empty when C has fewer than two runs (nothing to cross-fit).
    """
    runs = np.asarray(runs, dtype=np.int64)
    K = min(int(folds), len(runs))
    ell, ys, tps = [], [], []
    if K < 2:
        return np.zeros(0), np.zeros(0), np.zeros(0, np.int64)
    groups = [runs[f::K] for f in range(K)]
    for f in range(K):
        mine = [retrieved_by(tr, groups[f]) for tr in data]
        others = np.concatenate([groups[g] for g in range(K) if g != f])
        score = [np.asarray(tr.judged) & retrieved_by(tr, others) & ~m for tr, m in zip(data, mine, strict=True)]
        keep = [np.asarray(tr.judged) & m for tr, m in zip(data, mine, strict=True)]
        if not any(k.any() for k in keep) or not any(s.any() for s in score):
            continue
        p = fit_p(_hide(data, keep))
        for t, (tr, s) in enumerate(zip(data, score, strict=True)):
            if s.any():
                ell.append(logit(np.clip(np.asarray(p[t])[s], _CLIP, 1 - _CLIP)))
                ys.append(np.asarray(tr.relevant)[s].astype(np.float64))
                tps.append(np.full(int(s.sum()), t, dtype=np.int64))
    if not ell:
        return np.zeros(0), np.zeros(0), np.zeros(0, np.int64)
    return np.concatenate(ell), np.concatenate(ys), np.concatenate(tps)


@dataclass(frozen=True)
class OutOfFoldMap:
    r"""The map :math:`\ell\mapsto a+b\ell` and its uncertainty (module docstring).

    Attributes
    ----------
    mean : ndarray, shape (2,)
        :math:`(\hat a,\hat b)`.
    cov : ndarray, shape (2, 2)
        :math:`\Sigma`, the topic-clustered sandwich (the prior's covariance with no scored documents).
    n : int
        Scored (out-of-fold) judged documents.
    runs : tuple of int
        The contributing runs.
    target : str
        ``"held_out"`` or ``"unjudged"``.
    centre : float
        :math:`c`: the map is :math:`a+b(\ell-c)`; 0 as fitted, the target documents' mean log-odds after
        :meth:`keep_level`.
    scored_mean : float
        :math:`\bar\ell_S`, the mean out-of-fold log-odds of the scored documents.
    """

    mean: np.ndarray
    cov: np.ndarray
    n: int
    runs: tuple
    target: str = "held_out"
    centre: float = 0.0
    scored_mean: float = 0.0

    def targets(self, tr) -> np.ndarray:
        """:func:`target_documents` of topic ``tr`` for this map."""
        return target_documents(tr, self.runs, self.target)

    def point(self, ell) -> np.ndarray:
        r"""p of log-odds ``ell`` with the map integrated out: :math:`\sigma((\hat a+\hat b\ell)/\sqrt{1+\pi v/8})`."""
        return self._point(np.asarray(ell, dtype=np.float64) - self.centre, self.mean[0])

    def _point(self, z, a) -> np.ndarray:
        m = a + self.mean[1] * z
        v = self.cov[0, 0] + 2.0 * self.cov[0, 1] * z + self.cov[1, 1] * z ** 2
        return expit(m / np.sqrt(1.0 + _PI8 * np.maximum(v, 0.0)))

    def apply(self, eta, ab) -> np.ndarray:
        r"""Log-odds draws ``eta`` (draws, n) through the map draws ``ab`` (draws, 2): the map moves each
        document's posterior-mean log-odds :math:`\bar\eta`, the model's own spread around it is kept,
        :math:`a_d+b_d(\bar\eta-c)+(\eta_d-\bar\eta)`."""
        eta = np.asarray(eta, dtype=np.float64)
        centre = eta.mean(axis=0, keepdims=True)
        return ab[:, :1] + ab[:, 1:] * (centre - self.centre) + (eta - centre)

    def keep_level(self, ell, p) -> OutOfFoldMap:
        r"""The map with its slope learned out of fold and its level kept: centred on the target documents' mean
        log-odds :math:`c=ar\ell_T`, with the intercept :math:`a` solved so that the mean of :meth:`point` over
        the target documents (log-odds ``ell``) equals the mean of their p ``p`` before the map, and the
        intercept's variance the fitted map's at the scored documents' mean log-odds,
        :math:`(1,ar\ell_S)\Sigma(1,ar\ell_S)^	op` — the uncertainty of how far off the model's level is on
        documents only other runs retrieve, drawn as one shift per draw; the slope keeps its variance."""
        ell = np.asarray(ell, dtype=np.float64).reshape(-1)
        p = np.asarray(p, dtype=np.float64).reshape(-1)
        if len(ell) == 0:
            return self
        e = np.array([1.0, self.scored_mean])
        cov = np.diag([float(e @ self.cov @ e), float(self.cov[1, 1])])
        kept = dataclasses.replace(self, cov=cov, centre=float(ell.mean()))
        z, goal = ell - kept.centre, float(p.mean())
        a = brentq(lambda a: float(kept._point(z, a).mean()) - goal, -40.0, 40.0, xtol=1e-10)
        return dataclasses.replace(kept, mean=np.array([a, self.mean[1]]))

    def draws(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` draws (size, 2) of (a, b) from N(mean, cov)."""
        L = np.linalg.cholesky(self.cov + 1e-12 * np.eye(2))
        return self.mean[None, :] + rng.standard_normal((size, 2)) @ L.T


def fit_map(ell, y, topic, *, intercept_sd: float = 1.0, slope_sd: float = 0.5, runs=(),
            target: str = "held_out") -> OutOfFoldMap:
    """Fit the map (module docstring, "The map") to out-of-fold log-odds ``ell`` and judgments ``y``, the
    documents clustered by ``topic``."""
    ell = np.asarray(ell, dtype=np.float64).reshape(-1)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    topic = np.asarray(topic, dtype=np.int64).reshape(-1)
    if not (len(ell) == len(y) == len(topic)):
        raise BayevalInputError(f"ell, y, topic: need equal lengths, got {len(ell)}, {len(y)}, {len(topic)}")
    if np.any((y != 0) & (y != 1)) or not np.all(np.isfinite(ell)):
        raise BayevalInputError("ell, y: judgments must be 0/1 and log-odds finite")
    for name, v in (("intercept_sd", intercept_sd), ("slope_sd", slope_sd)):
        if not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
            raise BayevalInputError(f"{name}: must be a positive number, got {v!r}")
    lam = np.array([1.0 / intercept_sd ** 2, 1.0 / slope_sd ** 2])
    prior = CoefPrior.make(2, mu=np.array([0.0, 1.0]), prec=lam)
    X = np.column_stack([np.ones(len(ell)), ell])
    r = logistic_newton(DenseDesign(X), y, np.ones(len(y)), prior, x0=np.array([0.0, 1.0]))
    Hinv = np.linalg.inv(r.neg_hessian)
    resid = y - expit(X @ r.x)
    G = np.zeros((int(topic.max()) + 1 if len(topic) else 0, 2))
    np.add.at(G, topic, resid[:, None] * X)
    cov = Hinv @ (G.T @ G + np.diag(lam)) @ Hinv
    return OutOfFoldMap(r.x, 0.5 * (cov + cov.T), len(y), tuple(int(s) for s in runs), target,
                        scored_mean=float(ell.mean()) if len(ell) else 0.0)
