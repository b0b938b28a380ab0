r"""A hierarchical relevance model: RTC's log-odds with learned topic and run effects.

For document i of topic t, with :math:`o_i` the log-odds of the RTC chain (``base``, MAP fit) and
:math:`S_i` the runs that retrieve i,

.. math::

    \mathrm{logit}\,\Pr(X_i=1\mid a,u) = \kappa_i(\beta_0+\beta_1 o_i) + a_t + \sum_s w_{is}u_s,\qquad
    w_{is}=\frac{\mathbb 1[s\in S_i]}{|S_i|},

    a_t\sim N(0,\tau^2),\qquad u_s\sim N(0,\sigma_s^2),\qquad \sigma_s=\sigma_0+\sigma_1h_s,

    \tau,\sigma_0,\sigma_1 \sim \mathrm{HalfNormal},\quad \beta_0\sim N(0, s_0^2),\quad \beta_1\sim N(m_1, s_1^2).

The **run effect** :math:`u_s` is shared by run s's documents in every topic, so that the error of a run's
E[MAP] does not average away over topics; its scale grows with :math:`h_s`, the share of the run's top
``coverage_depth`` documents that is unjudged (averaged over topics): a run whose top ranks the pool
covers is not blunted, one that the pool hardly covers is uncertain, and a run with no judged document
carries its prior. The **topic effect** :math:`a_t` moves a topic's relevance level.

With ``run_training = "complete"`` (default) a judged document informs the run effect of run s only when it
lies in s's *completely judged prefix* — an unbiased sample of s's own ranking, as for the calibration of
``rtc-default`` (docs/relevance.md): a run's other judged documents were put in the pool by other runs and
are relevant far more often than its unjudged documents.

**Marginalisation** (Heagerty 1999): :math:`\kappa_i=\sqrt{1+\tfrac{\pi}{8}v_i}`,
:math:`v_i=\tau^2+\sum_s w_{is}^2\sigma_s^2`, the prior variance of the random part of the log-odds. By the
probit approximation :math:`E_Z[\sigma(\kappa m+Z)]\approx\sigma(m)` for :math:`Z\sim N(0,v)`, so
:math:`\beta_0+\beta_1o_i` is the log-odds of the *marginal* probability: drawing the random effects from
their prior does not move E[p] (contrast :func:`bayeval.relevance.run_effect_draws`, whose zero-mean noise
on the log-odds raises every small p). Only the judgments move it, through the posterior of a and u.

**Extrapolation** (``extrapolation = "unseen_run"``, ``studies/models/hier-extrap.toml``): the set :math:`U_t` of
unjudged documents that no judged run retrieves (:func:`bayeval.data.coverage.beyond_judged_runs`,
depth ``coverage_depth``) gets one more term :math:`g\,\mathbb 1[i\in U_t]`,
:math:`g\sim N(0,(\sigma_0+\sigma_1)^2)` shared over topics and runs — the prior of a run effect with
:math:`h_s=1` — drawn in the predictive draws of p and added to :math:`v_i` in :math:`\kappa_i`. It is
not in the likelihood (no judged document is in :math:`U_t`), so the fit is unchanged; E[MAP] of a run
whose documents no judged run saw becomes as uncertain as the calibration of an uncovered run.

**Cross-fitted calibration** (``calibration_map = "crossfit"``, ``studies/models/hier-crossfit*.toml``): the log-odds of
the unjudged documents no contributing run retrieves pass through a map learned out of fold, on judgments the
map's documents did not shape, its uncertainty drawn once per draw of p
(:mod:`bayeval.relevance.crossfit`; :func:`bayeval.relevance.held_out_runs.fit_calibration_map`).

**Held-out run shifts** (``run_shift_sd`` > 0, ``studies/models/hier-shift.toml``,
``studies/models/hier-crossfit-slope-shift.toml``): in each draw of p every run gets its own log-odds shift on the
unjudged documents no contributing run retrieves, E[p] kept (:mod:`bayeval.relevance.run_shift`;
:meth:`HierarchicalFit.held_out_shift`).

**Held-out run levels** (``run_level_sd`` > 0, ``studies/models/hier-level.toml``): before the shifts, every run's
level of p on those documents moves by a log-odds offset learned from how its judged documents compare with
the model's p, shrunk across runs (:mod:`bayeval.relevance.run_level`; :meth:`HierarchicalFit.held_out_level`).

These corrections of the documents no contributing run retrieves — the cross-fitted map, the held-out run levels,
their shifts and the reuse prior — are not part of the model: a configuration sets them in its table
``[held_out_runs]`` (:class:`~bayeval.relevance.config.HeldOutRunsPrior`; ``[hierarchy]``,
:class:`~bayeval.relevance.config.HierarchyPrior`, holds the model's priors only), and the fit applies them to the
model's draws and point p in the order declared in :mod:`bayeval.relevance.held_out_runs`
(:meth:`HierarchicalFit.corrections`). The extrapolation effect is the model's: a random effect of the linear
predictor whose variance enters :math:`\kappa_i` of every draw, not a transform of the model's p.

**Fit.** Given the hyperparameters :math:`h=(\tau,\sigma_0,\sigma_1)` the log posterior of
:math:`x=(\beta,a,u)` is a logistic regression with a Gaussian prior (concave; Newton on a sparse design).
The fast path sets h by the Laplace approximation of the marginal likelihood,

.. math::

    \log p(y\mid h) \approx \log p(y\mid\hat x_h) + \log p(\hat x_h\mid h) + \tfrac P2\log 2\pi
    - \tfrac12\log\det H_h,

plus the log hyperprior (on log h, Jacobian included: the mode is proper), then integrates h over
``hyper_points`` importance points with Laplace draws of x at each (:mod:`bayeval.relevance.hyperparameters`,
as INLA integrates its hyperparameters, Rue et al. 2009). ``build_model()``
writes the same model in PyMC (NUTS: full Bayes); ``build_model(hyper=h)`` the conditional posterior at
fixed h, which the fast path's inner mode maximises.

**Heavy tails** (``run_effect = "student_t"``, ``studies/models/hier-t.toml``): :math:`u_s\sim t_\nu(0,\sigma_s)`
instead of the Normal, so that one run whose judged prefix lies far off what the RTC log-odds predict is
shrunk less (docs/notes/calibration-record.md, "Heavy tails"). Given h the inner log posterior is then no longer concave
in u; its mode is found by EM on the t as a scale mixture of Normals (:math:`u_s\mid\lambda_s\sim
N(0,\sigma_s^2/\lambda_s)`, :math:`\lambda_s\sim\Gamma(\nu/2,\nu/2)`; Lange, Little & Taylor 1989):
the E-step gives u_s the Gaussian prior precision :math:`(\nu+1)/(\nu\sigma_s^2+u_s^2)`, the M-step is
the Gaussian-prior Newton solve, warm-started, until x stops moving. The Laplace determinant and draws use
the *true* negative Hessian there, whose u-block carries the t's curvature
:math:`(\nu+1)(\nu\sigma_s^2-u_s^2)/(\nu\sigma_s^2+u_s^2)^2`, and the log posterior the t's
normalising constant, so that the evidences of the Normal and the t model are comparable. In
:math:`\kappa_i` the run effect's variance is the t's, :math:`\sigma_s^2\nu/(\nu-2)` (ν > 2); the probit
marginalisation assumes a Normal random part, so for the t it keeps E[p] only approximately. For a run the
judgments hardly inform, the Gaussian at the mode misses the t's tails (sd :math:`\sigma_s\sqrt{\nu/(\nu+1)}`
against the prior's :math:`\sigma_s\sqrt{\nu/(\nu-2)}`) and the Laplace evidence is low by up to
:math:`-\log t_\nu(0;0,\sigma_s)-\tfrac12\log(2\pi\nu\sigma_s^2/(\nu+1))` (0.17 nats at ν = 4) per such run;
NUTS on :meth:`~HierarchicalRelevance.build_model` has neither approximation.

References
----------
P. J. Heagerty (1999). Marginally specified logistic-normal models for longitudinal binary data.
Biometrics 55(3). H. Rue, S. Martino, N. Chopin (2009). Approximate Bayesian inference for latent Gaussian
models by using integrated nested Laplace approximations. JRSS B 71(2). K. L. Lange, R. J. A. Little,
J. M. G. Taylor (1989). Robust statistical modeling using the t distribution. JASA 84(408). B. Carterette, J. Allan,
R. Sitaraman (2007). Robust test collections for retrieval evaluation. SIGIR.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import csr_matrix, hstack, vstack
from scipy.special import expit, gammaln, log_expit, logit

from bayeval.data.coverage import beyond_judged_runs, complete_prefix, run_coverage
from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.relevance._bordered import BorderedDiagonal
from bayeval.relevance._fitting import (
    Mode,
    ParamSpec,
    RelevanceModel,
    _check,
    _psd_inverse_root,
    _single_thread_blas,
    fit_model,
)
from bayeval.relevance._idata import Observed
from bayeval.relevance._kernels import (
    CoefPrior,
    EffectsDesign,
    SparseDesign,
    logistic_logpost,
    logistic_newton,
    member_rows,
)
from bayeval.relevance.config import HierarchicalConfig, HierarchyPrior, load_config_as
from bayeval.relevance.held_out_runs import HeldOutCorrections, fit_calibration_map
from bayeval.relevance.hyperparameters import hyper_mode, integrated_laplace, laplace_value
from bayeval.relevance.results import FitResult, RelevanceEstimate
from bayeval.relevance.rtc import RTCEstimator
from bayeval.relevance.transfer import transferred_offsets

__all__ = ["HierarchicalEstimator", "HierarchicalFit", "HierarchicalRelevance"]

_PI8 = np.pi / 8.0
_CLIP = 1e-6
HYPER = ("tau", "sigma0", "sigma1")


def _student_t_terms(u, sd, nu: float):
    r"""The Student-t prior :math:`t_\nu(0,\sigma)` of the run effects at u, elementwise: normalised log density
    :math:`\log\Gamma(\tfrac{\nu+1}2)-\log\Gamma(\tfrac\nu2)-\tfrac12\log(\nu\pi)-\log\sigma
    -\tfrac{\nu+1}2\log(1+\tfrac{u^2}{\nu\sigma^2})`, its gradient :math:`-(\nu+1)u/q`, its negative second
    derivative :math:`(\nu+1)(\nu\sigma^2-u^2)/q^2` and the EM precision :math:`(\nu+1)/q`, with
    :math:`q=\nu\sigma^2+u^2`."""
    u = np.asarray(u, dtype=np.float64)
    sd = np.asarray(sd, dtype=np.float64)
    q = nu * sd ** 2 + u ** 2
    logp = (gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * np.log(nu * np.pi) - np.log(sd)
            - 0.5 * (nu + 1) * np.log1p(u ** 2 / (nu * sd ** 2)))
    return logp, -(nu + 1) * u / q, (nu + 1) * (nu * sd ** 2 - u ** 2) / q ** 2, (nu + 1) / q


#: documents per block of topics when the point p of every document is computed (HierarchicalFit.probabilities)
_ROWS_PER_BLOCK = 250_000


def _topic_blocks(data: RankData) -> list[range]:
    """Consecutive topics in blocks of about :data:`_ROWS_PER_BLOCK` documents (one block for a TREC collection)."""
    ends = np.cumsum([tr.n_docs for tr in data])
    cuts = np.searchsorted(ends, np.arange(_ROWS_PER_BLOCK, int(ends[-1]) if len(ends) else 0, _ROWS_PER_BLOCK),
                           side="right")
    bounds = [0, *sorted({int(c) for c in cuts if 0 < c < len(ends)}), len(ends)]
    return [range(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


def _covariance_parts(H, k: int, G: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The parts of :math:`H^{-1}` that :meth:`~bayeval.relevance._kernels.EffectsDesign.quad_diag_parts` reads:
    through the Schur complement for the bordered H of the Normal run effects, from the (pseudo-)inverse of the
    dense H of the Student-t ones (its first k coordinates, then G groups, then the rest)."""
    if isinstance(H, BorderedDiagonal):
        return H.factor().inverse_parts()
    M = _psd_inverse_root(H)
    return EffectsDesign.parts_of(M @ M.T, k, G)


def _membership(tr, S: int, prefix: np.ndarray | None = None):
    """Sparse (n_t, S) rows w_is = 1/|S_i| for the runs retrieving document i (with ``prefix``, per run a
    depth: only the runs that rank i within it)."""
    r = np.asarray(tr.ranks)
    depth = np.full(S, np.iinfo(np.int64).max) if prefix is None else np.asarray(prefix, dtype=np.int64)
    indptr, indices, data = member_rows(r, depth)
    return csr_matrix((data, indices, indptr), shape=(tr.n_docs, S)), np.diff(indptr)


@dataclass(frozen=True, eq=False)
class HierarchicalRelevance(RelevanceModel):
    r"""The hierarchical model's data and log posterior (see the module docstring).

    Parameters
    ----------
    offset : ndarray, shape (n,)
        :math:`o_i`, the RTC log-odds of the judged training documents.
    topic : ndarray of int, shape (n,)
    member : scipy.sparse.csr_matrix, shape (n, S)
        :math:`w_{is}`.
    y : ndarray, shape (n,)
        Judgments (0/1).
    uncovered : ndarray, shape (S,)
        :math:`h_s`.
    topics, systems : tuple of str
    prior : HierarchyPrior

    Notes
    -----
    Parameters: ``beta`` (2,), ``topic_effect`` (T,), ``run_effect`` (S,), ``hyper`` (3,) = (τ, σ0, σ1).
    ``fit("map")`` and ``fit("laplace")`` are the fast path (``hyper_points`` importance points of h);
    ``fit("mcmc")``/``"vi"`` sample :meth:`build_model` (non-centred effects).
    """

    offset: np.ndarray
    topic: np.ndarray
    member: object
    y: np.ndarray
    uncovered: np.ndarray
    topics: tuple
    systems: tuple
    prior: HierarchyPrior = field(default_factory=HierarchyPrior)
    name = "hierarchical"

    def __post_init__(self) -> None:
        o = np.asarray(self.offset, dtype=np.float64).reshape(-1)
        n = len(o)
        t = np.asarray(self.topic, dtype=np.int64).reshape(-1)
        y = np.asarray(self.y, dtype=np.float64).reshape(-1)
        W = csr_matrix(self.member, dtype=np.float64)
        h = np.asarray(self.uncovered, dtype=np.float64).reshape(-1)
        T, S = len(self.topics), len(self.systems)
        if len(t) != n or len(y) != n or W.shape != (n, S):
            raise BayevalInputError(f"offset, topic, y, member: need {n} rows (member ({n}, {S}))")
        if n and (t.min() < 0 or t.max() >= T):
            raise BayevalInputError(f"topic: index outside 0..{T - 1}")
        if np.any((y != 0) & (y != 1)) or not np.all(np.isfinite(o)):
            raise BayevalInputError("y, offset: judgments must be 0/1 and offsets finite")
        if len(h) != S or np.any((h < 0) | (h > 1)):
            raise BayevalInputError(f"uncovered: need {S} shares in [0, 1]")
        for k, v in (("offset", o), ("topic", t), ("y", y), ("member", W), ("uncovered", h)):
            object.__setattr__(self, k, v)
        object.__setattr__(self, "topics", tuple(str(x) for x in self.topics))
        object.__setattr__(self, "systems", tuple(str(x) for x in self.systems))

    # layout ---------------------------------------------------------------------------------------
    @property
    def param_spec(self) -> ParamSpec:
        T, S = len(self.topics), len(self.systems)
        return ParamSpec(("beta", "topic_effect", "run_effect", "hyper"), ((2,), (T,), (S,), (3,)),
                         (("coef",), ("topic",), ("system",), ("hyperparameter",)),
                         {"coef": ["intercept", "rtc_logit"], "topic": list(self.topics),
                          "system": list(self.systems), "hyperparameter": list(HYPER)})

    @property
    def n_latent(self) -> int:
        return 2 + len(self.topics) + len(self.systems)

    def run_sd(self, hyper) -> np.ndarray:
        """:math:`\\sigma_s=\\sigma_0+\\sigma_1h_s` (broadcast over leading dims of ``hyper``)."""
        hyper = np.asarray(hyper, dtype=np.float64)
        return hyper[..., 1:2] + hyper[..., 2:3] * self.uncovered

    def _squared_member(self):
        """:math:`w_{is}^2` (sparse, computed once)."""
        W2 = getattr(self, "_w2", None)
        if W2 is None:
            W2 = self.member.multiply(self.member).tocsr()
            object.__setattr__(self, "_w2", W2)
        return W2

    def _member_moments(self) -> np.ndarray:
        r""":math:`m_{ik}=\sum_s w_{is}^2h_s^k`, k = 0, 1, 2 (n, 3), computed once: with them
        :math:`\sum_s w_{is}^2\sigma_s^2 = \sigma_0^2m_{i0}+2\sigma_0\sigma_1m_{i1}+\sigma_1^2m_{i2}`."""
        m = getattr(self, "_moments", None)
        if m is None:
            m = self._squared_member() @ np.column_stack([np.ones_like(self.uncovered), self.uncovered,
                                                          self.uncovered ** 2])
            object.__setattr__(self, "_moments", m)
        return m

    def run_var(self, hyper) -> np.ndarray:
        r"""Prior variance of :math:`u_s`: :math:`\sigma_s^2`, or :math:`\sigma_s^2\nu/(\nu-2)` for the t."""
        v = self.run_sd(hyper) ** 2
        if self.prior.run_effect == "student_t":
            nu = float(self.prior.run_effect_df)
            v = v * (nu / (nu - 2.0))
        return v

    def kappa(self, hyper, member=None) -> np.ndarray:
        """:math:`\\kappa_i=\\sqrt{1+\\frac\\pi8(\\tau^2+\\sum_s w_{is}^2\\sigma_s^2)}` of the rows of ``member``
        (:math:`\\sigma_s^2` the prior variance of the run effect, :meth:`run_var`)."""
        hyper = np.asarray(hyper, dtype=np.float64)  # (3,), or draws (D, 3): then κ is (D, n)
        if member is None:  # Σ_s w_is² σ_s² through the moments of h_s (:meth:`_member_moments`)
            s0, s1 = hyper[..., 1:2], hyper[..., 2:3]
            fac = self.run_var(np.array([0.0, 1.0, 0.0]))[0]  # the t's ν/(ν−2), else 1
            m = self._member_moments()
            v = hyper[..., :1] ** 2 + fac * (s0 ** 2 * m[:, 0] + 2.0 * s0 * s1 * m[:, 1] + s1 ** 2 * m[:, 2])
            return np.sqrt(1.0 + _PI8 * v)
        W2 = member.multiply(member)
        sd2 = self.run_var(hyper)
        v = hyper[..., :1] ** 2 + (W2 @ sd2.T).T
        return np.sqrt(1.0 + _PI8 * v)

    def design(self, hyper, offset=None, topic=None, member=None):
        """Sparse design (rows × P) of the latent x = (β0, β1, a, u) at hyperparameters ``hyper``."""
        o = self.offset if offset is None else offset
        tp = self.topic if topic is None else topic
        W = self.member if member is None else member
        k = self.kappa(hyper, W)
        n, T = len(o), len(self.topics)
        A = csr_matrix((np.ones(n), (np.arange(n), tp)), shape=(n, T))
        return hstack([csr_matrix(np.column_stack([k, k * o])), A, W], format="csr")

    def latent_prior(self, hyper, run_effect=None) -> CoefPrior:
        """Gaussian prior of x = (β, a, u) given h. For the Student-t run effect, the Gaussian of the EM
        step at ``run_effect`` (default 0): precision :math:`(\\nu+1)/(\\nu\\sigma_s^2+u_s^2)` on u_s."""
        T, S = len(self.topics), len(self.systems)
        pr = self.prior
        sd = np.r_[pr.intercept_sd, pr.slope_sd, np.full(T, hyper[0]), self.run_sd(hyper)]
        mu = np.r_[0.0, pr.slope_mean, np.zeros(T + S)]
        prec = 1.0 / sd ** 2
        if pr.run_effect == "student_t":
            u = np.zeros(S) if run_effect is None else np.asarray(run_effect, dtype=np.float64)
            prec[2 + T:] = _student_t_terms(u, sd[2 + T:], float(pr.run_effect_df))[3]
        return CoefPrior.make(2 + T + S, mu=mu, prec=prec)

    def latent_logprior(self, x, hyper) -> float:
        """Normalised log prior density of x = (β, a, u) given h (Gaussian; the t's on u for ``student_t``)."""
        x = np.asarray(x, dtype=np.float64)
        prior = self.latent_prior(hyper)
        k = len(x) if self.prior.run_effect == "normal" else 2 + len(self.topics)
        lp = float(np.sum(-0.5 * prior.prec[:k] * (x[:k] - prior.mu[:k]) ** 2
                          + 0.5 * np.log(prior.prec[:k] / (2 * np.pi))))
        if k < len(x):
            lp += float(np.sum(_student_t_terms(x[k:], self.run_sd(hyper), float(self.prior.run_effect_df))[0]))
        return lp

    # inner (conditional) posterior and the marginal likelihood -----------------------------------------
    def _effects_design(self, hyper) -> EffectsDesign:
        """:meth:`design` as an :class:`~bayeval.relevance._kernels.EffectsDesign` (its patterns found once)."""
        k = self.kappa(hyper)
        F = np.column_stack([k, k * self.offset])
        E = getattr(self, "_effects", None)
        if E is None:  # bordered: the topic effects' block of the negative Hessian is diagonal (docs/scale.md)
            E = EffectsDesign.from_parts(F, self.topic, len(self.topics), self.member, bordered=True)
            object.__setattr__(self, "_effects", E)
            return E
        return E.with_dense(F)

    def conditional_mode(self, hyper, x0=None):
        """Newton mode of x given ``hyper``: (x, negative Hessian, log posterior incl. normalising constants)."""
        x, H, lp, ok, _ = self._conditional_mode(hyper, x0)
        return x, H, lp, ok

    def _conditional_mode(self, hyper, x0=None, h0=None):
        hyper = np.asarray(hyper, dtype=np.float64)
        if self.prior.run_effect == "student_t":
            return (*self._conditional_mode_t(hyper, x0), None)
        prior = self.latent_prior(hyper)
        X = self._effects_design(hyper)
        r = logistic_newton(X, self.y, np.ones(len(self.y)), prior, x0=x0, tol=1e-10, h0=h0, lagged=True)
        # normalised Gaussian prior: + sum 1/2 log(prec / 2π)
        lp = r.logpost + 0.5 * float(np.sum(np.log(prior.prec / (2 * np.pi))))
        return r.x, r.neg_hessian, lp, r.converged, X

    def _conditional_mode_t(self, hyper, x0=None, max_em: int = 1000, tol: float = 1e-10):
        """:meth:`conditional_mode` with Student-t run effects: EM / iteratively reweighted prior precision
        (module docstring), each M-step :func:`logistic_newton` warm-started; the negative Hessian returned
        is the true one of the t log posterior at the fixed point."""
        X = SparseDesign(self.design(hyper))
        w = np.ones(len(self.y))
        k = 2 + len(self.topics)
        x = np.zeros(self.n_latent) if x0 is None else np.array(x0, dtype=np.float64)
        ok = False
        for _ in range(max_em):
            prior = self.latent_prior(hyper, x[k:])
            r = logistic_newton(X, self.y, w, prior, x0=x, tol=1e-12)
            step = float(np.max(np.abs(r.x - x), initial=0.0))
            x = r.x
            if step < tol:
                ok = r.converged
                break
        nh = _student_t_terms(x[k:], self.run_sd(hyper), float(self.prior.run_effect_df))[2]
        H = r.neg_hessian.copy()
        idx = np.arange(k, len(x))
        H[idx, idx] += nh - prior.prec[k:]
        eta = X.dot(x)
        lp = float(np.sum(self.y * log_expit(eta) + (1 - self.y) * log_expit(-eta))) + self.latent_logprior(x, hyper)
        return x, H, lp, ok

    def log_hyperprior(self, hyper) -> float:
        """Half-normal log densities of (τ, σ0, σ1), normalised (without the log-scale Jacobian)."""
        pr = self.prior
        sc = np.array([pr.topic_scale, pr.run_scale, pr.coverage_scale])
        h = np.asarray(hyper, dtype=np.float64)
        return float(np.sum(0.5 * np.log(2 / np.pi) - np.log(sc) - 0.5 * (h / sc) ** 2))

    def log_marginal(self, hyper, x0=None, h0=None):
        """Laplace approximation of :math:`\\log p(y\\mid h)` and the inner mode behind it (``x0``, ``h0``: start
        and Hessian factor of the inner Newton solve, as in :meth:`log_marginal_grad`)."""
        x, H, lp, ok, _ = self._conditional_mode(hyper, x0, h0)
        val, _ = laplace_value(lp, H)
        return val, x, H, ok

    def log_marginal_grad(self, hyper, x0=None, h0=None):
        r"""The Laplace log marginal likelihood :math:`L(h)` and its gradient with respect to
        :math:`\log h`.

        Returns (L, dL/dlog h (3,), x̂, H, converged, dx̂/dlog h (P, 3), Ψ(x̂), Cholesky factor of H);
        ``x0``, ``h0``: start and Hessian factor of the inner Newton solve (see
        :func:`~bayeval.relevance._kernels.logistic_newton`).

        Notes
        -----
        With :math:`\Psi(x,h)` the conditional log posterior (normalised prior), :math:`\hat x_h` its mode,
        :math:`H=X^\top DX+\Lambda` the negative Hessian there (:math:`D=\mathrm{diag}\,\pi(1-\pi)`,
        :math:`\Lambda` the prior precisions) and :math:`C=H^{-1}` (Rasmussen & Williams 2006, §3.4.1 and
        §5.5.1),

        .. math::

            \frac{dL}{d\theta} = \frac{\partial\Psi}{\partial\theta}\Big|_{\hat x}
            - \tfrac12\,\mathrm{tr}\Big(C\frac{dH}{d\theta}\Big),\qquad
            \frac{d\hat x}{d\theta} = C\,\frac{\partial\nabla_x\Psi}{\partial\theta},

            \mathrm{tr}\Big(C\frac{dH}{d\theta}\Big) = 2\sum_i D_i (XC)_i\,\partial_\theta X_i^\top
            + \sum_i D_i(1-2\pi_i)\frac{d\eta_i}{d\theta}\,X_iCX_i^\top + \mathrm{tr}\Big(C\frac{\partial\Lambda}
            {\partial\theta}\Big),

        :math:`\frac{d\eta_i}{d\theta}=\partial_\theta\kappa_i\,(\beta_0+\beta_1o_i)+X_i\frac{d\hat x}{d\theta}`:
        the mode moves with h (implicit function theorem) and h enters the design through
        :math:`\kappa_i` (only its first two columns depend on h) as well as the prior of a and u.
        """
        h = np.asarray(hyper, dtype=np.float64)
        if self.prior.run_effect == "student_t":
            return self._log_marginal_grad_fd(h, x0)
        x, H, lp, ok, X = self._conditional_mode(h, x0, h0)
        val, chol = laplace_value(lp, H)
        T, S = len(self.topics), len(self.systems)
        P = len(x)
        beta, a, u = x[:2], x[2:2 + T], x[2 + T:]
        sd = self.run_sd(h)
        kap = X.F[:, 0]
        # dσ_s/dθ for θ = (τ, σ0, σ1), and dκ_i/dθ = (π/8) (dv_i/dθ) / (2κ_i), with
        # Σ_s w_is² σ_s dσ_s/dσ0 = σ0 m0 + σ1 m1 and Σ_s w_is² σ_s h_s = σ0 m1 + σ1 m2 (m_k = Σ_s w_is² h_s^k)
        dsd = np.column_stack([np.zeros(S), np.ones(S), self.uncovered])
        m = self._member_moments()
        dkap = np.empty((len(kap), 3))
        dkap[:, 0] = 2.0 * h[0]
        dkap[:, 1] = 2.0 * (h[1] * m[:, 0] + h[2] * m[:, 1])
        dkap[:, 2] = 2.0 * (h[1] * m[:, 1] + h[2] * m[:, 2])
        dkap *= (_PI8 / 2.0) / kap[:, None]  # (n, 3)
        mlin = beta[0] + beta[1] * self.offset
        eta = X.dot(x)
        pi = expit(eta)
        D = pi * (1.0 - pi)
        resid = self.y - pi
        E = dkap * mlin[:, None]  # ∂η/∂θ at fixed x
        # explicit ∂Ψ/∂θ: likelihood through κ, normalised Gaussian priors of a and u
        gu = u ** 2 / sd ** 3 - 1.0 / sd
        explicit = resid @ E + np.array([float(np.sum(a ** 2) / h[0] ** 3 - T / h[0]), float(np.sum(gu)),
                                         float(np.sum(gu * self.uncovered))])
        # ∂(∇_x Ψ)/∂θ
        R = -X.rdot(D[:, None] * E)
        R[0] += resid @ dkap
        R[1] += (resid * self.offset) @ dkap
        R[2:2 + T, 0] += 2.0 * a / h[0] ** 3
        R[2 + T:, :] += (2.0 * u / sd ** 3)[:, None] * dsd
        if chol is None:
            return val, np.full(3, np.nan), x, H, ok, np.zeros((P, 3)), lp, None
        # C = H⁻¹ only through the factor of the bordered H: C R, the two columns of F, diag(X C Xᵀ), diag(C)
        sol = chol.solve(np.hstack([R, np.eye(P, 2)]))  # (P, 5): dx̂/dθ and C's columns of F
        dx = sol[:, :3]
        XB = X.dot(sol)  # (n, 5): X dx̂/dθ and (XC)_i for the two columns of F
        deta = E + XB[:, :3]  # (n, 3) total dη/dθ
        tr = 2.0 * ((D * XB[:, 3]) @ dkap + (D * XB[:, 4] * self.offset) @ dkap)
        tr += X.gram_trace_inverse(chol, (D * (1.0 - 2.0 * pi))[:, None] * deta)
        cd = chol.inverse_diag()
        tr[0] += float(np.sum(cd[2:2 + T])) * (-2.0 / h[0] ** 3)
        tr += (cd[2 + T:] * (-2.0 / sd ** 3)) @ dsd
        grad = explicit - 0.5 * tr
        return val, grad * h, x, H, ok, dx * h[None, :], lp, chol

    def _log_marginal_grad_fd(self, h, x0=None, e: float = 1e-4):
        """:meth:`log_marginal_grad` for the Student-t run effects, whose inner mode is an EM fixed point: the
        gradient by central differences in log h (the analytic one assumes Gaussian priors); dx̂/dlog h is not
        computed (zeros), there is no Cholesky factor to reuse."""
        x, H, lp, ok, _ = self._conditional_mode(h, x0)
        val, _ = laplace_value(lp, H)
        grad = np.empty(3)
        for k in range(3):
            step = np.exp(np.eye(3)[k] * e)
            grad[k] = (self.log_marginal(h * step, x)[0] - self.log_marginal(h / step, x)[0]) / (2 * e)
        return val, grad, x, H, ok, np.zeros((len(x), 3)), lp, None

    def hyper_mode(self):
        """Mode of log h and the Gaussian there: :func:`~bayeval.relevance.hyperparameters.hyper_mode`."""
        return hyper_mode(self)

    # RelevanceModel protocol --------------------------------------------------------------------------
    def mode(self) -> Mode:
        with _single_thread_blas():
            z, cov_z, (x, H, lp, ok) = self.hyper_mode()
        h = np.exp(z)
        P = len(x)
        Jh = np.diag(h)  # delta method: cov(h) = J cov(log h) J
        blocks = ((np.arange(P), H), (np.arange(P, P + 3), np.linalg.inv(Jh @ cov_z @ Jh)))
        mode = Mode(np.r_[x, h], blocks, float(lp), 0, bool(ok))
        object.__setattr__(self, "_hyper_laplace", (z, cov_z))
        return mode

    def log_posterior(self, beta, topic_effect, run_effect, hyper) -> float:
        """Full log posterior (up to a constant) at (β, a, u, h): likelihood, priors of x given h
        (normalised: Gaussian, or Student-t on u), half-normal hyperpriors."""
        hyper = np.asarray(hyper, dtype=np.float64)
        x = np.r_[beta, topic_effect, run_effect]
        X = self.design(hyper)
        eta = X @ x
        ll = float(np.sum(self.y * log_expit(eta) + (1 - self.y) * log_expit(-eta)))
        return ll + self.latent_logprior(x, hyper) + self.log_hyperprior(hyper)

    def conditional_log_posterior(self, x, hyper) -> float:
        """Log posterior of x given h (up to a constant)."""
        if self.prior.run_effect == "student_t":
            eta = self.design(hyper) @ np.asarray(x, float)
            return float(np.sum(self.y * log_expit(eta) + (1 - self.y) * log_expit(-eta))) \
                + self.latent_logprior(x, hyper)
        return logistic_logpost(np.asarray(x, float), SparseDesign(self.design(hyper)), self.y,
                                np.ones(len(self.y)), self.latent_prior(hyper))

    def fit(self, method: str = "map", *, draws: int = 1000, tune: int = 1000, chains: int = 4, seed=None,
            cores: int | None = 1, target_accept: float = 0.95, vi_iterations: int = 20_000,
            progressbar: bool = False, warm_start=None, nuts_sampler: str = "pymc") -> FitResult:
        """As :meth:`RelevanceModel.fit`; ``"laplace"`` integrates the hyperparameters over
        ``prior.hyper_points`` importance-weighted points (each with draws of x from the conditional Laplace
        posterior in proportion to its weight)."""
        _check(method, draws, chains, nuts_sampler)
        mode = self.mode()
        if method in ("mcmc", "vi"):
            return fit_model(self, method, draws=draws, tune=tune, chains=chains, seed=seed, cores=cores,
                             target_accept=target_accept, vi_iterations=vi_iterations, progressbar=progressbar,
                             mode=mode, nuts_sampler=nuts_sampler)
        fr = fit_model(self, "map", mode=mode)
        if method == "map":
            return fr

        return integrated_laplace(self, mode, *self._hyper_laplace, chains, draws, seed)

    # complete InferenceData (bayeval.relevance._idata): what the model observes, η per draw, prior draws ------
    def observed(self):
        """The judged training documents: Bernoulli ``relevant``, one unit per row."""
        n = len(self.y)
        return Observed("relevant", "row", np.arange(n), self.y, np.ones(n))

    def linear_predictor(self, params: dict) -> np.ndarray:
        r""":math:`\eta_i=\kappa_i(\beta_0+\beta_1o_i)+a_{t_i}+\sum_s w_{is}u_s` for parameter arrays with leading
        draw dims: ``(..., n)``."""
        beta = np.asarray(params["beta"], dtype=np.float64)
        hyper = np.asarray(params["hyper"], dtype=np.float64)
        a = np.asarray(params["topic_effect"], dtype=np.float64)
        u = np.asarray(params["run_effect"], dtype=np.float64)
        lead = beta.shape[:-1]
        beta, hyper = beta.reshape(-1, 2), hyper.reshape(-1, 3)
        a, u = a.reshape(len(beta), -1), u.reshape(len(beta), -1)
        eta = self.kappa(hyper) * (beta[:, :1] + beta[:, 1:2] * self.offset[None, :]) + a[:, self.topic] \
            + (self.member @ u.T).T
        return eta.reshape(lead + (len(self.y),))

    def prior_draws(self, size: int, rng: np.random.Generator) -> dict:
        """(τ, σ0, σ1) half-normal, β normal, a_t ~ N(0, τ²), u_s ~ N(0, σ_s²) or t_ν(0, σ_s): the model's
        proper prior."""
        pr = self.prior
        T, S = len(self.topics), len(self.systems)
        sc = np.array([pr.topic_scale, pr.run_scale, pr.coverage_scale])
        hyper = np.abs(rng.normal(0.0, 1.0, (size, 3))) * sc
        z_u = rng.standard_t(float(pr.run_effect_df), (size, S)) if pr.run_effect == "student_t" \
            else rng.normal(0.0, 1.0, (size, S))
        beta = np.column_stack([rng.normal(0.0, pr.intercept_sd, size),
                                rng.normal(pr.slope_mean, pr.slope_sd, size)])
        return {"beta": beta, "topic_effect": rng.normal(0.0, 1.0, (size, T)) * hyper[:, :1],
                "run_effect": z_u * self.run_sd(hyper), "hyper": hyper}

    def _initial_values(self, point: dict) -> dict:
        """NUTS start of the full model (its free variables are the non-centred effects, u_s/σ_s for the Normal
        and for the t alike) from the mode."""
        h = np.maximum(np.asarray(point["hyper"], dtype=np.float64), 1e-3)
        return {"beta": point["beta"], "hyper": h, "topic_z": np.asarray(point["topic_effect"]) / h[0],
                "run_z": np.asarray(point["run_effect"]) / self.run_sd(h)}

    def build_model(self, hyper=None):
        """The model in PyMC: with ``hyper`` None the full model (half-normal hyperpriors, non-centred
        effects, ``topic_effect``/``run_effect`` deterministic; ``run_z`` Normal or Student-t); with ``hyper`` =
        (τ, σ0, σ1) the conditional posterior of x (centred Normals, or a centred t on u), the function the fast
        path's inner Newton (EM for the t) maximises."""
        import pymc as pm
        import pytensor.sparse as ps
        import pytensor.tensor as pt

        pr = self.prior
        W = self.member
        W2 = W.multiply(W).tocsr()
        t_df = float(pr.run_effect_df) if pr.run_effect == "student_t" else None
        var_fac = 1.0 if t_df is None else t_df / (t_df - 2.0)  # the t's variance σ²ν/(ν−2) in κ
        with pm.Model(coords=self.param_spec.coords) as model:
            beta = pm.Normal("beta", mu=np.array([0.0, pr.slope_mean]),
                             sigma=np.array([pr.intercept_sd, pr.slope_sd]), dims="coef")
            if hyper is None:
                hyp = pm.HalfNormal("hyper", sigma=np.array([pr.topic_scale, pr.run_scale, pr.coverage_scale]),
                                    dims="hyperparameter")
                sd_run = hyp[1] + hyp[2] * self.uncovered
                z_t = pm.Normal("topic_z", 0.0, 1.0, dims="topic")
                z_u = (pm.Normal("run_z", 0.0, 1.0, dims="system") if t_df is None
                       else pm.StudentT("run_z", nu=t_df, mu=0.0, sigma=1.0, dims="system"))
                a = pm.Deterministic("topic_effect", hyp[0] * z_t, dims="topic")
                u = pm.Deterministic("run_effect", sd_run * z_u, dims="system")
                tau = hyp[0]
            else:
                hyper = np.asarray(hyper, dtype=np.float64)
                sd_run = self.run_sd(hyper)
                tau = float(hyper[0])
                a = pm.Normal("topic_effect", 0.0, tau, dims="topic")
                u = (pm.Normal("run_effect", 0.0, sd_run, dims="system") if t_df is None
                     else pm.StudentT("run_effect", nu=t_df, mu=0.0, sigma=sd_run, dims="system"))
            v = tau ** 2 + ps.structured_dot(ps.as_sparse_variable(W2),
                                             pt.as_tensor(var_fac * sd_run ** 2)[:, None])[:, 0]
            kap = pt.sqrt(1.0 + _PI8 * v)
            eta = (kap * (beta[0] + beta[1] * self.offset) + a[self.topic]
                   + ps.structured_dot(ps.as_sparse_variable(W), u[:, None])[:, 0])
            pm.Bernoulli("relevant", logit_p=eta, observed=self.y.astype(np.int64))
        return model


@dataclass(frozen=True, eq=False)
class HierarchicalFit:
    """A fitted :class:`HierarchicalRelevance` on one collection, and the predictions for every document.

    Attributes
    ----------
    data : RankData
    config : HierarchicalConfig
    model : HierarchicalRelevance
    fit : FitResult
    rtc : RTCFit
        The base RTC chain (MAP) that gives the offsets.
    offsets : tuple of ndarray
        Per topic, :math:`o_i` of every document.
    calibration_map : OutOfFoldMap or None
        With ``calibration_map = "crossfit"``: the map learned out of fold
        (:mod:`bayeval.relevance.crossfit`) that the target documents' log-odds pass through.
    """

    data: RankData
    config: HierarchicalConfig
    model: HierarchicalRelevance
    fit: FitResult
    rtc: object
    offsets: tuple
    calibration_map: object = None

    @property
    def method(self) -> str:
        return self.fit.method

    def probabilities(self, *, draws: int | None = 200, seed=None, topup=None) -> RelevanceEstimate:
        """p for every document and, for sampled fits, ``draws`` posterior draws of p.

        Without draws (``map``), p is the approximate posterior predictive mean at the hyperparameter mode,
        :math:`\\sigma(\\hat\\eta_i/\\sqrt{1+\\pi s_i^2/8})` with :math:`s_i^2` the Laplace variance of
        :math:`\\eta_i` (MacKay 1992), so that it agrees with the mean of the draws; with draws, p is
        their mean.

        ``topup``: a :class:`~bayeval.relevance.topup.TopUpSample` whose judged draws this fit was made without
        (:meth:`HierarchicalEstimator.estimate` does both): they update the reuse prior's levels
        (:meth:`held_out_prior`).
        """
        fr = self.fit
        P = self.model.n_latent
        corrections = self.corrections()  # of the documents no contributing run retrieves, in their declared order
        dr = None
        if draws and fr.method != "map":
            rng = np.random.default_rng(seed)
            flat = fr.flat_draws()
            pick = flat[rng.integers(len(flat), size=draws)]
            xs, hs = pick[:, :P], pick[:, P:]
            T = len(self.data)
            beta, a, u = xs[:, :2], xs[:, 2:2 + T], xs[:, 2 + T:]
            rtc_draws = self.rtc.probabilities(draws=draws, seed=rng).draws if self.rtc.has_draws else None
            var_run = self.model.run_var(hs)  # (draws, S)
            var_g = self.extrapolation_var(hs)  # (draws,)
            g = rng.standard_normal(draws) * np.sqrt(var_g)  # one unseen run's effect per draw
            ab = corrections.map_draws(draws, rng)
            dr = []
            for t, tr in enumerate(self.data):
                W, _ = _membership(tr, len(self.data.systems))
                U = self.extrapolated(tr).astype(np.float64)  # (n_t,)
                v = hs[:, :1] ** 2 + (W.multiply(W) @ var_run.T).T + var_g[:, None] * U
                kap = np.sqrt(1.0 + _PI8 * v)  # (draws, n_t)
                o = self.offsets[t] if rtc_draws is None else logit(np.clip(rtc_draws[t], _CLIP, 1 - _CLIP))
                eta = kap * (beta[:, :1] + beta[:, 1:] * o) + a[:, t:t + 1] + (W @ u.T).T + g[:, None] * U
                dr.append(expit(corrections.log_odds(tr, eta, ab)).astype(np.float32))
            dr, levels = corrections.draws(self.data, tuple(dr), rng, self._evidence(topup))
            p = tuple(d.mean(axis=0, dtype=np.float64) for d in dr)
        else:
            # the documents of a block of topics in one design: s_i² = X_i C X_iᵀ through the membership patterns,
            # C's parts computed once (blocks of about _ROWS_PER_BLOCK documents bound the memory at many topics)
            x, h = fr.mode.x[:P], fr.mode.x[P:]
            var_g = float(self.extrapolation_var(h))
            with _single_thread_blas():
                cov = _covariance_parts(fr.mode.blocks[0][1], 2, len(self.data))
                p = tuple(q for block in _topic_blocks(self.data) for q in self._point_block(block, x, h, var_g, cov))
            p, levels = corrections.point(self.data, p, self._evidence(topup))
        return RelevanceEstimate(tuple(self.data.topics), tuple(tr.docnos for tr in self.data),
                                 tuple(np.asarray(tr.judged) for tr in self.data), p, dr,
                                 model=self.config.name, method=fr.method,
                                 fits={"hierarchical": fr, **self.rtc.fits}, held_out=levels)

    def _point_block(self, block: range, x: np.ndarray, h: np.ndarray, var_g: float, cov) -> list[np.ndarray]:
        """Point p (approximate posterior predictive mean at the hyperparameter mode) of the topics ``block``."""
        tops = [self.data[t] for t in block]
        W = vstack([_membership(tr, len(self.data.systems))[0] for tr in tops], format="csr")
        o = np.concatenate([self.offsets[t] for t in block])
        U = np.concatenate([self.extrapolated(tr) for tr in tops]).astype(np.float64)
        k = np.sqrt(self.model.kappa(h, W) ** 2 + _PI8 * var_g * U)
        X = EffectsDesign.from_parts(np.column_stack([k, k * o]), np.repeat(np.asarray(block), [tr.n_docs
                                                                                             for tr in tops]),
                                     len(self.data), W)
        pall = expit(X.dot(x) / np.sqrt(1.0 + _PI8 * (X.quad_diag_parts(*cov) + var_g * U)))
        return np.split(pall, np.cumsum([tr.n_docs for tr in tops])[:-1])

    def corrections(self) -> HeldOutCorrections:
        """The corrections of p on the documents no contributing run retrieves, applied after the model in the
        order of :data:`bayeval.relevance.held_out_runs.ORDER`: the calibration map, the held-out run levels, their
        shifts, the reuse prior."""
        return HeldOutCorrections.build(self.data, self.config.held_out_runs, self.config.hierarchy.coverage_depth,
                                        self.calibration_map)

    def with_held_out_runs(self, **keys) -> HierarchicalFit:
        """This fit with its configuration's ``[held_out_runs]`` keys replaced (``run_shift_sd=2.0``;
        :class:`~bayeval.relevance.config.HeldOutRunsPrior`): the same model fit, other corrections after it. The
        calibration map is the estimator's (:meth:`HierarchicalEstimator.fit`): its keys here do not refit it.

        Examples
        --------
        >>> from bayeval.synthetic import make_collection
        >>> col = make_collection(n_topics=3, n_systems=4, n_docs=60, depth=20, judged_depth=4, seed=2)
        >>> fit = HierarchicalEstimator().fit(RankData.build(col.runs, col.judgments, depth=20))
        >>> fit.with_held_out_runs(run_shift_sd=2.0).held_out_shift().sd
        2.0
        """
        held_out_runs = dataclasses.replace(self.config.held_out_runs, **keys)
        return dataclasses.replace(self, config=dataclasses.replace(self.config, held_out_runs=held_out_runs))

    def held_out_level(self):
        """The held-out run levels of :mod:`bayeval.relevance.run_level` (prior scale ``run_level_sd``; 0: none;
        spread ``run_level_spread``), the second of :meth:`corrections`."""
        return self.corrections().level

    def held_out_shift(self):
        """The held-out run shifts of :mod:`bayeval.relevance.run_shift` (scale ``run_shift_sd``; 0: none)."""
        return self.corrections().shift

    def held_out_prior(self):
        """The reuse prior of :mod:`bayeval.relevance.reuse_prior` (``reuse_*``; all 0: none)."""
        return self.corrections().reuse_prior

    def _evidence(self, topup):
        """Per topic (indices, y) of ``topup``'s judged draws in this fit's data (``None`` without a top-up)."""
        return None if topup is None else topup.positions(self.data)

    def extrapolated(self, tr) -> np.ndarray:
        """Per document of topic ``tr``: does the extrapolation effect g reach it? (Unjudged and retrieved by no
        run whose top ``coverage_depth`` is all judged; none with ``extrapolation = "none"``.)"""
        if self.config.hierarchy.extrapolation == "none":
            return np.zeros(tr.n_docs, dtype=bool)

        return beyond_judged_runs(tr, self.config.hierarchy.coverage_depth)

    def extrapolation_var(self, hyper) -> np.ndarray:
        r"""Variance of the extrapolation effect g at ``hyper`` (…, 3): the prior variance of the run effect of
        a run the judgments do not cover (:math:`h_s=1`), :math:`(\sigma_0+\sigma_1)^2` (times
        :math:`\nu/(\nu-2)` for the t); 0 with ``extrapolation = "none"``."""
        hyper = np.asarray(hyper, dtype=np.float64)
        v = (hyper[..., 1] + hyper[..., 2]) ** 2
        if self.config.hierarchy.run_effect == "student_t":
            nu = float(self.config.hierarchy.run_effect_df)
            v = v * (nu / (nu - 2.0))
        if self.config.hierarchy.extrapolation == "none":
            v = np.zeros_like(v)
        return v

    def summary(self):
        """Posterior summary of β, the hyperparameters and the run effects."""
        return self.fit.summary()


@dataclass(frozen=True, eq=False)
class HierarchicalEstimator:
    """From runs and judgments to p for every document with the hierarchical model.

    Parameters
    ----------
    config : HierarchicalConfig or str
        Default ``"hier-default"`` (``models/hier-default.toml``).
    depth : int, optional
        Rank positions of the base RTC chain's rank-coefficient model (:class:`~bayeval.relevance.RTCEstimator`).

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=4, n_systems=5, n_docs=80, depth=30, judged_depth=5, seed=3)
    >>> data = RankData.build(col.runs, col.judgments, depth=30)
    >>> est = HierarchicalEstimator().estimate(data, "laplace", p_draws=50, seed=1, draws=100, chains=2)
    >>> len(est.draws) == len(data), est.draws[0].shape[0]
    (True, 50)
    """

    config: HierarchicalConfig | str = "hier-default"
    depth: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "config", load_config_as(self.config, HierarchicalConfig, "a hierarchical"))

    def model(self, data: RankData, rtc_fit=None):
        """(HierarchicalRelevance on the judged documents of ``data``, base RTC fit, offsets per topic)."""
        if not isinstance(data, RankData):
            raise BayevalInputError(f"data: expected a RankData, got {type(data).__name__}")
        if rtc_fit is None:
            rtc_fit = RTCEstimator(self.config.base, depth=self.depth).fit(data, "map")
        p0 = rtc_fit.probabilities(draws=None).p
        offsets = tuple(logit(np.clip(p, _CLIP, 1 - _CLIP)) for p in p0)
        # the map to p is learned on the judged documents' log-odds: in sample, or transferred
        learn = offsets
        if self.config.hierarchy.offsets == "transfer":
            learn = transferred_offsets(data, self.config.base, offsets)
        S = len(data.systems)
        o, tp, W, y = [], [], [], []
        complete = self.config.hierarchy.run_training == "complete"
        for t, tr in enumerate(data):
            j = np.asarray(tr.judged)
            Wt, _ = _membership(tr, S, complete_prefix(tr) if complete else None)
            o.append(learn[t][j])
            tp.append(np.full(int(j.sum()), t))
            W.append(Wt[j])
            y.append(tr.relevant[j].astype(float))
        cov = run_coverage(data, self.config.hierarchy.coverage_depth)
        cat = lambda v, dt=float: np.concatenate(v).astype(dt) if v else np.zeros(0, dt)  # noqa: E731
        m = HierarchicalRelevance(cat(o), cat(tp, np.int64), vstack(W, format="csr") if W else np.zeros((0, S)),
                                  cat(y), 1.0 - cov, tuple(data.topics), tuple(data.systems), self.config.hierarchy)
        return m, rtc_fit, offsets

    def fit(self, data: RankData, method: str = "map", *, seed=None, rtc_fit=None, **fit_kwargs) -> HierarchicalFit:
        """Fit on ``data``; ``fit_kwargs`` as in :meth:`HierarchicalRelevance.fit`.

        With a sampled ``method`` the base RTC chain's aggregation stage is fitted by Laplace too, and each
        predictive draw of p uses a draw of the RTC log-odds :math:`o_i` (a modular posterior, as the RTC
        stages themselves): the uncertainty of the RTC weights is not lost.
        """
        if rtc_fit is None and method != "map":
            rtc_fit = RTCEstimator(self.config.base, depth=self.depth).fit(
                data, "laplace", stage_methods={"rank": "map", "calibration": "map"}, seed=seed,
                draws=max(200, int(fit_kwargs.get("draws", 200))), chains=1)
        m, rtc_fit, offsets = self.model(data, rtc_fit)
        fr = m.fit(method, seed=seed, **fit_kwargs)
        fit = HierarchicalFit(data, self.config, m, fr, rtc_fit, offsets)
        cmap = fit_calibration_map(data, self.config.held_out_runs, self.config.hierarchy.coverage_depth, self._refit_p,
                                   lambda: fit.probabilities(draws=None).p)
        return dataclasses.replace(fit, calibration_map=cmap)

    def _refit_p(self, data: RankData) -> tuple:
        """Point p of this model refitted (MAP) on ``data`` without the calibration map and the extrapolation
        effect: the out-of-fold scores of :func:`~bayeval.relevance.held_out_runs.fit_calibration_map`."""
        hierarchy = dataclasses.replace(self.config.hierarchy, extrapolation="none")
        held_out_runs = dataclasses.replace(self.config.held_out_runs, calibration_map="none")
        cfg = dataclasses.replace(self.config, hierarchy=hierarchy, held_out_runs=held_out_runs)
        return HierarchicalEstimator(cfg, self.depth).fit(data, "map").probabilities(draws=None).p

    def estimate(self, data: RankData, method: str = "laplace", *, p_draws: int | None = 200, seed=None,
                 topup=None, **fit_kwargs) -> RelevanceEstimate:
        """``fit(data, method, ...).probabilities(draws=p_draws)``.

        With ``topup`` (a :class:`~bayeval.relevance.topup.TopUpSample` whose judged draws ``data`` holds) the
        model is fitted without the draws' judgments and the draws update the reuse prior's levels
        (:mod:`bayeval.relevance.reuse_prior`); the estimate is aligned with ``data`` (the draws judged).
        """
        if topup is None:
            return self.fit(data, method, seed=seed, **fit_kwargs).probabilities(draws=p_draws, seed=seed)
        topup.check(data)
        est = self.fit(topup.without(data), method, seed=seed, **fit_kwargs).probabilities(
            draws=p_draws, seed=seed, topup=topup)
        return dataclasses.replace(est, judged=tuple(np.asarray(tr.judged) for tr in data))
