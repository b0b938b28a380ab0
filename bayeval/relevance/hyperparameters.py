r"""Integrating a hierarchical model's hyperparameters: the Laplace evidence, its mode over log h, and draws.

A model with latent coefficients x and hyperparameters h (here
:class:`~bayeval.relevance.hierarchical.HierarchicalRelevance`, h = (τ, σ0, σ1)) supplies the Laplace
approximation of its marginal likelihood,

.. math::

    L(h) = \log p(y\mid h) \approx \Psi(\hat x_h) + \tfrac P2\log 2\pi - \tfrac12\log\det H_h

(:func:`laplace_value`; ``model.log_marginal`` and ``model.log_marginal_grad`` with its gradient in log h),
and its half-normal hyperprior (``model.log_hyperprior``). This module

- finds the mode of :math:`L(h)+\log p(h)+\sum\log h` over log h (the Jacobian makes the mode proper) and
  the Gaussian there (:func:`hyper_mode`);
- integrates h by importance sampling (:func:`integrated_laplace`): ``hyper_points`` points of log h from a
  Student-t(4) proposal centred on that Gaussian, weighted by :math:`L(h)` × hyperprior × Jacobian / proposal
  (as INLA integrates its hyperparameters, Rue et al. 2009), and Laplace draws of x at each point
  (:func:`~bayeval.relevance._fitting.gaussian_draws`, the one Laplace draw of every model) in proportion to
  its weight.

The draws are stored as ``chains`` chains of ``draws`` (shuffled over the points, so every chain mixes them);
the generic Laplace path of :mod:`bayeval.relevance._fitting` stores one chain of ``chains × draws``.

References
----------
H. Rue, S. Martino, N. Chopin (2009). Approximate Bayesian inference for latent Gaussian models by using
integrated nested Laplace approximations. JRSS B 71(2). R. E. Kass, A. E. Raftery (1995). Bayes factors.
JASA 90(430) (§4.1 Laplace's method).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.stats import multivariate_t

from bayeval.relevance._bordered import cholesky
from bayeval.relevance._fitting import INFERENCE, Mode, _single_thread_blas, gaussian_draws
from bayeval.relevance.results import FitResult

__all__ = ["hyper_mode", "integrated_laplace", "laplace_value"]


def laplace_value(lp: float, H):
    r""":math:`\Psi(\hat x)+\frac P2\log 2\pi-\frac12\log\det H` from the log posterior at the mode and the
    negative Hessian (dense or bordered: :func:`~bayeval.relevance._bordered.cholesky`), and the factor (``None``,
    value −∞, where H is not positive definite)."""
    try:
        chol = cholesky(H)
    except np.linalg.LinAlgError:
        return -np.inf, None
    return lp + 0.5 * H.shape[0] * np.log(2 * np.pi) - 0.5 * chol.logdet(), chol


def _forward_hessian(fg, z, g0, cache, anchor, e: float = 1e-4):
    """Symmetrised forward differences of the gradient ``fg(z)[1]`` (each inner solve from ``anchor``)."""
    H = np.empty((len(z), len(z)))
    for i in range(len(z)):
        cache.update(anchor)
        H[:, i] = (fg(z + np.eye(len(z))[i] * e)[1] - g0) / e
    cache.update(anchor)
    return 0.5 * (H + H.T)


def _hyper_scales(model) -> np.ndarray:
    pr = model.prior
    return np.array([pr.topic_scale, pr.run_scale, pr.coverage_scale])


def hyper_mode(model):
    """Mode of log p(y | h) + log p(h) over log h (Jacobian included), and the Gaussian there:
    returns (log h mode, covariance of log h, (x̂, H, Ψ(x̂), converged) of the inner mode there).

    BFGS on the analytic gradient (``model.log_marginal_grad``) to a gradient below 0.05, then Newton
    steps to below 1e-6 with the curvature there (forward differences of the analytic gradient, taken
    again at the mode for the covariance). Each inner Newton solve starts from the last mode moved along
    :math:`d\\hat x/d\\log h` (first order) and reuses the last negative Hessian while it can
    (:func:`~bayeval.relevance._kernels.logistic_newton`, ``h0``)."""
    sc = _hyper_scales(model)
    cache = {}
    seen = {}  # z (bytes) → (its result, the warm start it left): BFGS and the polish ask again for points

    def fg(z):
        z = np.asarray(z, dtype=np.float64)
        if np.any(z < lo) or np.any(z > hi):
            return np.inf, np.zeros(3), None
        key = z.tobytes()
        if key in seen:
            out, state = seen[key]
            cache.clear()
            cache.update(state)
            return out
        x0, h0 = model.latent_prior(np.exp(z)).mu, None
        if cache:
            x0, h0 = cache["x"] + cache["dx"] @ (z - cache["z"]), cache["chol"]
        h = np.exp(z)
        val, g, x, H, ok, dx, lp, chol = model.log_marginal_grad(h, x0, h0)
        if np.isfinite(val) and np.all(np.isfinite(g)):
            cache.update(z=z.copy(), x=x, dx=dx, chol=chol)
        f = val + model.log_hyperprior(h) + float(np.sum(z))
        df = g - (h / sc) ** 2 + 1.0
        out = (-f, -df, (x, H, lp, ok))
        seen[key] = (out, dict(cache))
        return out

    lo, hi = -7.0, 3.0
    z0 = np.log(sc) - np.log(2.0)
    with _single_thread_blas():
        # BFGS from the curvature at the start (forward differences of the analytic gradient; its
        # eigenvalues floored at 1 where the start is not yet in the concave region); L-BFGS-B within
        # the bounds where BFGS stops short
        _, g0, _ = fg(z0)
        anchor = dict(cache)
        B0 = _forward_hessian(fg, z0, g0, cache, anchor)
        lam, U = np.linalg.eigh(B0)
        Binv = (U / np.maximum(np.abs(lam), 1.0)) @ U.T
        res = minimize(lambda z: fg(z)[:2], z0, jac=True, method="BFGS",
                       options={"gtol": 5e-2, "hess_inv0": 0.5 * (Binv + Binv.T)})
        if not res.success:
            res = minimize(lambda z: fg(z)[:2], np.clip(res.x, lo, hi), jac=True, method="L-BFGS-B",
                           bounds=[(lo, hi)] * 3, options={"ftol": 1e-14, "gtol": 5e-2, "maxiter": 200})
        # polish: Newton steps with the curvature at the BFGS point
        z = zH = np.clip(res.x, lo, hi)
        _, g, inner = fg(z)
        H = _forward_hessian(fg, z, g, cache, dict(cache))
        for _ in range(5):
            if np.max(np.abs(g)) < 1e-6:
                break
            znew = np.clip(z - np.linalg.solve(H, g), lo, hi)
            f1, g1, inner1 = fg(znew)
            if not np.isfinite(f1):
                break
            z, g, inner = znew, g1, inner1
        if np.max(np.abs(z - zH)) > 1e-4:  # the covariance's curvature at the mode itself
            H = _forward_hessian(fg, z, g, cache, dict(cache))
    lam, U = np.linalg.eigh(H)
    lam = np.maximum(lam, 1e-2)  # the hyperprior alone gives curvature ≥ (h/scale)²; guard noise
    cov = (U / lam) @ U.T
    return z, cov, inner


def integrated_laplace(model, mode: Mode, z: np.ndarray, cov_z: np.ndarray, chains: int, draws: int, seed):
    """``chains × draws`` draws of (x, h) with h integrated over ``model.prior.hyper_points`` importance points
    (module docstring), as a :class:`~bayeval.relevance.results.FitResult` of method ``"laplace"``.

    Parameters
    ----------
    model : HierarchicalRelevance
    mode : Mode
        The fast-path mode of (x, h) (:meth:`HierarchicalRelevance.mode`), kept in the result.
    z, cov_z : ndarray
        The mode of log h and its covariance (:func:`hyper_mode`).
    chains, draws : int
        Layout of the stored draws, ``(chains, draws)``.
    seed : int, SeedSequence or None
        Seed of the importance points, their allocation, the draws and the result's auxiliary draws.

    Notes
    -----
    ``idata.attrs`` gets the log evidence by Laplace over log h at its mode (``log_evidence_laplace``) and,
    with more than one point, the importance-sampling estimate (``log_evidence_is``) and the effective sample
    size of the weights (``is_ess``).
    """
    with _single_thread_blas():
        rng = np.random.default_rng(seed)
        total = chains * draws
        G = model.prior.hyper_points
        x0 = mode.x[:-3]
        # log evidence log p(y): Laplace over log h at its mode; with G > 1 also the importance-sampling mean
        val0, x_z, H_z, _ = model.log_marginal(np.exp(z), x0)
        evidence = {"log_evidence_laplace": float(val0 + model.log_hyperprior(np.exp(z)) + z.sum()
                                                  + 1.5 * np.log(2 * np.pi) + 0.5 * np.linalg.slogdet(cov_z)[1])}
        if G == 1:
            zs, sizes = z[None], np.array([total])
            inner = [(x_z, H_z)]
        else:
            # importance sampling of log h: Student-t(4) proposal around the Laplace Gaussian, weights from
            # the Laplace marginal likelihood × hyperprior (× Jacobian); draws allocated by the weights

            prop = multivariate_t(loc=z, shape=cov_z, df=4)
            zs = np.atleast_2d(prop.rvs(size=G, random_state=rng))
            logw, inner = np.empty(G), []
            h0 = cholesky(mode.blocks[0][1])
            for g, zz in enumerate(zs):
                val, x, H, _ = model.log_marginal(np.exp(zz), x0, h0)
                logw[g] = val + model.log_hyperprior(np.exp(zz)) + zz.sum()
                inner.append((x, H))
            logw -= prop.logpdf(zs)
            w = np.exp(logw - logw.max())
            sizes = rng.multinomial(total, w / w.sum())
            evidence["log_evidence_is"] = float(logw.max() + np.log(w.mean()))
            evidence["is_ess"] = float(w.sum() ** 2 / np.sum(w ** 2))
        out = []
        for g in np.flatnonzero(sizes):
            x, H = inner[g]
            h = np.repeat(np.exp(zs[g])[None], sizes[g], axis=0)
            out.append(np.hstack([gaussian_draws(x, H, sizes[g], rng), h]))
        flat = np.vstack(out)[rng.permutation(total)].reshape(chains, draws, -1)
    attrs = {"model": model.name, "method": "laplace",
             "inference": f"{INFERENCE['laplace']}; hyperparameters integrated over {G} importance-weighted points",
             **evidence}
    spec = model.param_spec
    return FitResult(model.name, "laplace", spec.unflatten(flat), spec, mode, source=model,
                     seed=int(rng.integers(2**31 - 1)), attrs=attrs)
