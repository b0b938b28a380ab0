r"""The reuse prior: how far the model's p may be off on the documents of held-out runs, and what a top-up of
those documents says about it.

A reused collection's judgments were made on the documents of the *contributing* runs
(:func:`bayeval.data.coverage.contributing_runs`); a held-out run's unjudged documents get the model's
extrapolated p, and nothing the judgments give predicts how wrong it is for a given run
(docs/notes/calibration-record.md,
revision 7: within a trial |r| ≤ 0.13 on Robust 2003 for every candidate built from the judgments). Measured
against complete judgments (``studies/reuse_levels.py``) the error has three parts: a level shared by every
held-out run of a collection, each run's own level, and a rank profile — the model's p decays too slowly with a
held-out run's rank (too low at its top ranks, too high deep down). This component carries all three in the
posterior draws of p, at the sizes measured across the choosing collections (docs/notes/calibration-record.md, "Where
things stand"), so that a pair whose difference rests on such documents is as uncertain as the error makes it (the
pairs of :mod:`bayeval.expected.extrapolation`'s share widen with it) — and a top-up of a few of those documents,
judged at random, learns them.

**The levels.** An unjudged document i that held-out runs retrieve moves, in each posterior draw d, by

.. math::

    \eta'_{di}=\eta_{di}+h_i(\mu+g_d)+(\mu_\gamma+\gamma_d)\,x_i+\sum_s w_{is}\,e_{ds},

    g_d\sim N(0,\sigma_b^2),\quad \gamma_d\sim N(0,\sigma_\gamma^2),\quad
    e_{ds}\sim N(0,\sigma_w^2)\ \text{or}\ t_\nu(0,\sigma_w),

with :math:`\eta_{di}=\mathrm{logit}\,p_{di}`, :math:`w_{is}=\mathbb 1[s\in S_i]/|S_i|` over every run
retrieving i with the contributing runs' weights set to 0 (:func:`level_weights`), :math:`h_i=\sum_sw_{is}` the
held-out runs' share of i (1 when no contributing run retrieves it) and :math:`x_i=\sum_sw_{is}\log(r_{is}/10)`
its held-out runs' log rank relative to rank 10. :math:`\mu, \sigma_b` (``[held_out_runs] reuse_mean``,
``reuse_common_sd``) are the level shared by the held-out runs, :math:`\mu_\gamma,\sigma_\gamma`
(``reuse_slope_mean``, ``reuse_slope_sd``) the rank profile, :math:`\sigma_w,\nu` (``reuse_run_sd``,
``reuse_run_df``; 0: Normal) each run's own level. No :math:`\kappa`: the levels move E[p], as the errors they
stand for do. Judged documents and documents only contributing runs retrieve are untouched.

**A top-up** (:class:`bayeval.relevance.topup.TopUpSample`): documents drawn at random from held-out runs'
unjudged documents and judged. Each judged draw i that held-out runs retrieve is evidence,
:math:`y_i\sim\mathrm{Bernoulli}(\sigma(\mathrm{logit}\,\bar p_i+h_i(\mu+g)+(\mu_\gamma+\gamma)x_i+\sum_sw_{is}
e_s))` with :math:`\bar p_i` the predictive p of the model fitted without the top-up (the draws' mean). The draw
depends only on the runs' ranks, which the model conditions on, so the design is ignorable and the inclusion
probabilities do not enter the likelihood. The posterior of :math:`\theta=(g,\gamma,e_s:s\in E)` over the runs E
the evidence reaches is its Laplace approximation (Newton on the log posterior; a Student-t prior by its
scale-mixture weights, its curvature at the mode floored); the levels of runs the evidence does not reach keep
their prior, independent of it. Without a top-up the draws are the prior's.

**Point p** (:meth:`HeldOutPrior.point`): the levels integrated out by the probit approximation (MacKay 1992),
:math:`\sigma\bigl((\eta_i+m_i)/\sqrt{1+\pi v_i/8}\bigr)` with :math:`m_i` and :math:`v_i` the mean and variance
of the shift above under the posterior.

References
----------
D. J. C. MacKay (1992). The evidence framework applied to classification networks. Neural Computation 4(5).
K. Lange, R. Little, J. Taylor (1989). Robust statistical modeling using the t distribution. JASA 84(408).
B. Carterette, J. Allan, R. Sitaraman (2007). Robust test collections for retrieval evaluation. SIGIR.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix
from scipy.special import expit, logit

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.relevance._kernels import member_rows
from bayeval.relevance.run_shift import check_topic_arrays, move_targets

__all__ = ["REFERENCE_RANK", "HeldOutLevels", "HeldOutPrior", "ReusePrior", "level_weights"]

_CLIP = 1e-6
_PI8 = np.pi / 8.0
#: The rank at which a run's level is its log-odds offset (the rank profile :math:`x_i` is 0 there).
REFERENCE_RANK = 10


def level_weights(tr, contributing, n_systems: int) -> tuple[np.ndarray, np.ndarray]:
    r"""(W, X) of topic ``tr``: dense (n_t, S) weights :math:`w_{is}=\mathbb 1[s\in S_i]/|S_i|` of its unjudged
    documents (:math:`S_i`: every run retrieving i, contributing runs included), the contributing runs' columns
    and the judged documents' rows 0, and :math:`w_{is}\log(r_{is}/10)` (whose row sums are :math:`x_i`).

    Examples
    --------
    >>> from bayeval.data import RankData, Run
    >>> a = Run.from_arrays("a", np.array(["1"] * 2), np.array(["x", "y"]), np.array([2.0, 1.0]))
    >>> b = Run.from_arrays("b", np.array(["1"] * 2), np.array(["y", "z"]), np.array([2.0, 1.0]))
    >>> W, X = level_weights(RankData.build([a, b])[0], (0,), 2)
    >>> W.tolist()   # x: only a (contributing); y: a and b, half b's; z: only b
    [[0.0, 0.0], [0.0, 0.5], [0.0, 1.0]]
    """
    r = np.asarray(tr.ranks)[:, :n_systems]
    indptr, indices, data = member_rows(r, np.full(r.shape[1], np.iinfo(np.int64).max))
    w = csr_matrix((data, indices, indptr), shape=r.shape).toarray()
    w[np.asarray(tr.judged)] = 0.0
    w[:, list(contributing)] = 0.0
    x = np.where(w > 0, w * np.log(np.maximum(r, 1) / REFERENCE_RANK), 0.0)
    return w, x


def _move(data: RankData, arrays, runs, move) -> tuple:
    """``arrays`` (per topic (..., n_t)) with the log-odds of the documents held-out runs retrieve replaced by
    ``move(eta, w, x)`` (eta (..., n); w (n, S) and x (n,) their weights and rank profile; topics without such a
    document are returned as given): :func:`~bayeval.relevance.run_shift.move_targets` with
    :func:`level_weights`."""
    def weights(tr, contributing, n_systems):
        w, xw = level_weights(tr, contributing, n_systems)
        return w, xw.sum(axis=1)

    return move_targets(data, arrays, runs, move, weights)


def _number(name: str, value, *, low: float | None = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not math.isfinite(value):
        raise BayevalInputError(f"{name}: must be a finite number, got {value!r}")
    if low is not None and value < low:
        raise BayevalInputError(f"{name}: must be >= {low}, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class ReusePrior:
    r"""The prior of the held-out runs' levels and rank profile (module docstring).

    Attributes
    ----------
    mean : float
        :math:`\mu`, the prior mean of the level shared by the held-out runs (log-odds, at rank 10).
    common_sd : float
        :math:`\sigma_b` ≥ 0, its spread.
    run_sd : float
        :math:`\sigma_w` ≥ 0, the spread of each run's own level.
    run_df : float
        :math:`\nu` of a Student-t run level (> 2), or 0 for a Normal one.
    slope_mean : float
        :math:`\mu_\gamma`, the prior mean of the rank profile (log-odds per unit of log rank).
    slope_sd : float
        :math:`\sigma_\gamma` ≥ 0, its spread.

    Examples
    --------
    >>> ReusePrior(0.0, 0.5, 1.0).active, ReusePrior().active
    (True, False)
    >>> round(ReusePrior(run_sd=1.0, run_df=4.0).run_var, 3)   # sd² ν / (ν − 2)
    2.0
    """

    mean: float = 0.0
    common_sd: float = 0.0
    run_sd: float = 0.0
    run_df: float = 0.0
    slope_mean: float = 0.0
    slope_sd: float = 0.0

    def __post_init__(self) -> None:
        _number("mean", self.mean, low=None)
        _number("slope_mean", self.slope_mean, low=None)
        for n in ("common_sd", "run_sd", "slope_sd"):
            _number(n, getattr(self, n))
        df = _number("run_df", self.run_df)
        if 0 < df <= 2:
            raise BayevalInputError(f"run_df: must be 0 (Normal) or > 2 (a Student-t with a variance), got {df!r}")

    @property
    def active(self) -> bool:
        """Whether the prior moves or spreads anything."""
        return any(v != 0 for v in (self.mean, self.common_sd, self.run_sd, self.slope_mean, self.slope_sd))

    @property
    def run_var(self) -> float:
        r"""Variance of a run's own level: :math:`\sigma_w^2`, or :math:`\sigma_w^2\nu/(\nu-2)` for the t."""
        v = self.run_sd ** 2
        return v * self.run_df / (self.run_df - 2.0) if self.run_df > 0 else v

    def run_draws(self, rng: np.random.Generator, shape) -> np.ndarray:
        """Draws of a run's own level from the prior."""
        z = rng.standard_normal(shape) * self.run_sd
        if self.run_df > 0:
            z = z * np.sqrt(self.run_df / rng.chisquare(self.run_df, shape))
        return z


@dataclass(frozen=True, eq=False)
class HeldOutLevels:
    r"""The held-out runs' levels after the evidence: a Gaussian summary of :math:`(g,\gamma,e_1,\ldots,e_S)`.

    Attributes
    ----------
    prior : ReusePrior
    systems : tuple of str
    contributing : tuple of int
        The contributing runs (no level of their own).
    mean : ndarray, shape (S + 2,)
        Posterior means of g, γ, e_1, …, e_S (the prior means :math:`\mu,\mu_\gamma` not included).
    cov : ndarray, shape (S + 2, S + 2)
        Posterior covariance (a run without evidence: its prior variance, :attr:`ReusePrior.run_var`).
    evidence : ndarray, shape (S,)
        Per run, the judged top-up documents reaching it (:math:`\sum_i w_{is}`).
    relevant : ndarray, shape (S,)
        Of those, the relevant ones (:math:`\sum_i w_{is}y_i`).
    fitted : ndarray of bool, shape (S + 2,)
        The coordinates the evidence reached (their posterior is the Laplace approximation; the others keep
        their prior, independent of them).
    documents, relevant_documents : int
        The judged top-up documents that are evidence (held-out runs retrieve them), and the relevant ones.
    """

    prior: ReusePrior
    systems: tuple
    contributing: tuple
    mean: np.ndarray
    cov: np.ndarray
    evidence: np.ndarray
    relevant: np.ndarray
    fitted: np.ndarray
    documents: int = 0
    relevant_documents: int = 0

    def _held_out(self) -> np.ndarray:
        keep = np.ones(len(self.systems), bool)
        keep[list(self.contributing)] = False
        return keep

    @property
    def level_mean(self) -> np.ndarray:
        r"""Per run, the posterior mean of its level at rank 10, :math:`\mu+g+e_s` (0 for a contributing run)."""
        return np.where(self._held_out(), self.prior.mean + self.mean[0] + self.mean[2:], 0.0)

    @property
    def level_sd(self) -> np.ndarray:
        """Per run, the posterior sd of :math:`g+e_s` (0 for a contributing run)."""
        v = self.cov[0, 0] + np.diag(self.cov)[2:] + 2 * self.cov[0, 2:]
        return np.where(self._held_out(), np.sqrt(np.maximum(v, 0.0)), 0.0)

    @property
    def slope(self) -> tuple[float, float]:
        r"""Posterior mean and sd of the rank profile :math:`\mu_\gamma+\gamma`."""
        return self.prior.slope_mean + float(self.mean[1]), float(np.sqrt(self.cov[1, 1]))

    def describe(self) -> str:
        """What the levels rest on, for a caption: '' without top-up evidence."""
        if self.documents == 0:
            return ""
        return (f"top-up: {self.documents} judged documents ({self.relevant_documents} relevant) of runs that did "
                "not contribute, their levels learned from them")

    def to_frame(self) -> pd.DataFrame:
        """One row per held-out run: ``run, level, sd, topup_judged, topup_relevant``."""
        keep = self._held_out()
        names = np.asarray(self.systems, dtype=object)
        return pd.DataFrame({"run": names[keep], "level": self.level_mean[keep], "sd": self.level_sd[keep],
                             "topup_judged": self.evidence[keep], "topup_relevant": self.relevant[keep]})


@dataclass(frozen=True)
class HeldOutPrior:
    """The reuse prior on held-out runs' unjudged documents, and its posterior given a top-up (module docstring).

    Attributes
    ----------
    prior : ReusePrior
    runs : tuple of int
        The contributing runs (indices into ``data.systems``).

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=2, n_systems=4, n_docs=60, depth=10, judged_depth=3, seed=1)
    >>> data = RankData.build(col.runs, col.judgments, depth=10)
    >>> p = [np.full((400, tr.n_docs), 0.2, np.float32) for tr in data]
    >>> out, post = HeldOutPrior(ReusePrior(0.0, 0.0, 1.0), (0,)).apply(data, p, np.random.default_rng(0))
    >>> moved = level_weights(data[0], (0,), 4)[0].sum(axis=1) > 0
    >>> bool(out[0][:, moved].std(axis=0).min() > 0.05), bool(np.all(out[0][:, ~moved] == p[0][:, ~moved]))
    (True, True)
    """

    prior: ReusePrior
    runs: tuple

    def __post_init__(self) -> None:
        if not isinstance(self.prior, ReusePrior):
            raise BayevalInputError(f"prior: expected a ReusePrior, got {type(self.prior).__name__}")
        object.__setattr__(self, "runs", tuple(int(s) for s in self.runs))

    # ------------------------------------------------------------------ the posterior of the levels
    def _evidence(self, data: RankData, p_mean, sampled) -> tuple:
        """(offsets, design rows (h, x, w), y) of the judged top-up documents held-out runs retrieve."""
        S = len(data.systems)
        offs, rows, ys = [], [], []
        if sampled is not None:
            if len(sampled) != len(data):
                raise BayevalInputError(f"sampled: expected one entry per topic ({len(data)}), got {len(sampled)}")
            for tr, p, (idx, y) in zip(data, p_mean, sampled, strict=True):
                idx = np.asarray(idx, dtype=np.int64)
                if not len(idx):
                    continue
                w, xw = level_weights(tr, self.runs, S)
                w, x = w[idx], xw[idx].sum(axis=1)
                on = w.sum(axis=1) > 0
                if on.any():
                    pi = np.clip(np.asarray(p, dtype=np.float64)[idx[on]], _CLIP, 1 - _CLIP)
                    h = w[on].sum(axis=1)
                    offs.append(logit(pi) + self.prior.mean * h + self.prior.slope_mean * x[on])
                    rows.append(np.column_stack([h, x[on], w[on]]))
                    ys.append(np.asarray(y, dtype=np.float64)[on])
        if not offs:
            return np.zeros(0), np.zeros((0, S + 2)), np.zeros(0)
        return np.concatenate(offs), np.concatenate(rows), np.concatenate(ys)

    def posterior(self, data: RankData, p_mean, sampled=None) -> HeldOutLevels:
        """The levels' posterior given the judged top-up documents ``sampled`` (per topic ``(indices, y)``;
        ``None``: the prior), with ``p_mean`` the model's predictive p per topic (n_t,)."""
        check_topic_arrays(data, p_mean, "p_mean")
        pr = self.prior
        S = len(data.systems)
        o, X, y = self._evidence(data, p_mean, sampled)
        W = X[:, 2:]
        ev, rel = W.sum(axis=0), (W * y[:, None]).sum(axis=0)
        mean = np.zeros(S + 2)
        cov = np.diag(np.concatenate([[pr.common_sd ** 2, pr.slope_sd ** 2], np.full(S, pr.run_var)]))
        block = ([0] if pr.common_sd > 0 else []) + ([1] if pr.slope_sd > 0 else []) + \
            ([2 + s for s in np.flatnonzero(ev > 0)] if pr.run_sd > 0 else [])
        fitted = np.zeros(S + 2, dtype=bool)
        if len(y) and block:
            Xb = X[:, block]
            is_run = np.array([b >= 2 for b in block])
            sd = np.array([pr.common_sd if b == 0 else pr.slope_sd if b == 1 else pr.run_sd for b in block])
            theta = np.zeros(len(block))
            for _ in range(100):
                prec, grad_prior = self._prior_terms(theta, is_run, sd)
                p = expit(o + Xb @ theta)
                H = (Xb * (p * (1 - p))[:, None]).T @ Xb + np.diag(prec)
                step = np.linalg.solve(H, Xb.T @ (y - p) + grad_prior)
                t, now = 1.0, self._log_posterior(theta, o, Xb, y, is_run, sd)
                while self._log_posterior(theta + t * step, o, Xb, y, is_run, sd) < now - 1e-12 and t > 1e-8:
                    t /= 2  # step halving: with a Student-t prior the log posterior is not concave
                theta = theta + t * step
                if np.max(np.abs(t * step)) < 1e-9:
                    break
            prec, _ = self._prior_terms(theta, is_run, sd, curvature=True)
            p = expit(o + Xb @ theta)
            H = (Xb * (p * (1 - p))[:, None]).T @ Xb + np.diag(prec)
            mean[block] = theta
            cov[np.ix_(block, block)] = np.linalg.inv(H)
            fitted[block] = True
        return HeldOutLevels(pr, tuple(data.systems), self.runs, mean, cov, ev, rel, fitted, len(y), int(y.sum()))

    def _log_posterior(self, theta, o, X, y, is_run, sd) -> float:
        eta = o + X @ theta
        lp = float(np.sum(y * eta - np.logaddexp(0.0, eta)))
        nu = self.prior.run_df
        if nu > 0:
            t = theta[is_run] ** 2 / (nu * self.prior.run_sd ** 2)
            return lp - 0.5 * float(np.sum((theta[~is_run] / sd[~is_run]) ** 2)) - 0.5 * (nu + 1) * float(
                np.sum(np.log1p(t)))
        return lp - 0.5 * float(np.sum((theta / sd) ** 2))

    def _prior_terms(self, theta, is_run, sd, curvature: bool = False):
        """Per coordinate: the prior's precision (the t's IRLS weight; with ``curvature`` its curvature at
        ``theta``, floored at a thousandth of its largest value) and the gradient of the log prior."""
        prec = 1.0 / sd ** 2
        grad = -theta * prec
        nu = self.prior.run_df
        if nu > 0:
            s2 = self.prior.run_sd ** 2
            wt = (nu + 1) / (nu * s2 + theta ** 2)
            if curvature:  # it turns negative beyond sqrt(nu) * sd
                wt = np.maximum((nu + 1) * (nu * s2 - theta ** 2) / (nu * s2 + theta ** 2) ** 2,
                                1e-3 * (nu + 1) / (nu * s2))
            prec = np.where(is_run, wt, prec)
            grad = np.where(is_run, -(nu + 1) * theta / (nu * s2 + theta ** 2), grad)
        return prec, grad

    # ------------------------------------------------------------------ the levels on p
    def apply(self, data: RankData, draws, rng: np.random.Generator, sampled=None) -> tuple:
        r"""(draws of p with the levels on held-out runs' unjudged documents, :class:`HeldOutLevels`): per draw d,
        :math:`(g_d,\gamma_d,e_d)` from the posterior given ``sampled`` (module docstring). With an inactive
        prior the draws are returned as given (and ``None``)."""
        check_topic_arrays(data, draws, "draws")
        S = len(data.systems)
        if not self.prior.active or len(draws) == 0:
            return tuple(draws), None
        pr = self.prior
        post = self.posterior(data, [np.asarray(d).mean(axis=0, dtype=np.float64) for d in draws], sampled)
        K = np.asarray(draws[0]).shape[0]
        theta = np.zeros((K, S + 2))
        theta[:, 0] = rng.standard_normal(K) * pr.common_sd
        theta[:, 1] = rng.standard_normal(K) * pr.slope_sd
        if pr.run_sd > 0:
            theta[:, 2:] = pr.run_draws(rng, (K, S))
        block = np.flatnonzero(post.fitted)
        if len(block):
            L = np.linalg.cholesky(post.cov[np.ix_(block, block)] + 1e-12 * np.eye(len(block)))
            theta[:, block] = post.mean[block] + rng.standard_normal((K, len(block))) @ L.T
        g, gam, e = pr.mean + theta[:, 0], pr.slope_mean + theta[:, 1], theta[:, 2:]
        out = _move(data, draws, self.runs,
                    lambda eta, w, x: eta + g[:, None] * w.sum(axis=1)[None, :] + gam[:, None] * x[None, :] + e @ w.T)
        return out, post

    def point(self, data: RankData, p, sampled=None) -> tuple:
        """(point p with the levels integrated out on held-out runs' unjudged documents, :class:`HeldOutLevels`)."""
        check_topic_arrays(data, p, "p")
        if not self.prior.active or len(p) == 0:
            return tuple(p), None
        pr = self.prior
        post = self.posterior(data, p, sampled)
        m = post.mean + np.concatenate([[pr.mean, pr.slope_mean], np.zeros(len(data.systems))])

        def move(eta, w, x):
            z = np.column_stack([w.sum(axis=1), x, w])
            v = np.einsum("ij,jk,ik->i", z, post.cov, z)
            return (eta + z @ m) / np.sqrt(1.0 + _PI8 * v)

        return _move(data, p, self.runs, move), post
