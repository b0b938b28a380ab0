"""The hierarchical relevance model: fast path = PyMC, learned hyperparameters, honest uncertainty.

Cross-checks as tests/test_relevance_pymc.py: at fixed hyperparameters the fast path's Newton mode is the
mode of ``build_model(hyper=h)`` (PyMC's gradient vanishes there, log densities differ by a constant,
``pm.find_MAP`` lands within its L-BFGS tolerance); the full model's PyMC log density equals
``log_posterior`` plus the Jacobian of the non-centred effects; NUTS on the full model agrees with the
fast path's Laplace-grid posterior (slow).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import pymc_density_gaps
from scipy.special import expit

from bayeval.data import RankData, Run, RunSet
from bayeval.data.coverage import run_coverage
from bayeval.errors import BayevalInputError
from bayeval.relevance import estimate_probabilities, run_effect_draws
from bayeval.relevance.hierarchical import HierarchicalEstimator, HierarchicalRelevance
from bayeval.synthetic import make_collection, pool_qrels

pm = pytest.importorskip("pymc")


def _collection(seed=3, n_topics=6, n_systems=5):
    col = make_collection(n_topics=n_topics, n_systems=n_systems, n_docs=120, depth=30, judged_depth=4, seed=seed)
    # one run no judgment touches: every document it retrieves is new to the collection
    topics = [t for t in col.runs.topics]
    docs = [f"new-{t}-{k}" for t in topics for k in range(20)]
    new = Run.from_arrays("unseen", np.repeat(topics, 20), np.array(docs, dtype=object),
                          np.tile(np.arange(20.0)[::-1], len(topics)))
    runs = RunSet(tuple(col.runs) + (new,))
    qrels = pool_qrels(col.runs, col.qrels, 4)
    return RankData.build(runs, qrels, depth=30)


DATA = _collection()
EST = HierarchicalEstimator()
MODEL, RTC, OFFSETS = EST.model(DATA)


def test_coverage_and_uncovered_share():
    cov = run_coverage(DATA, 10)
    assert cov[-1] == 0.0  # the unseen run: nothing in its top 10 is judged
    assert np.all(cov[:-1] >= 0.4) and np.all(cov <= 1)
    assert MODEL.uncovered[-1] == 1.0


@pytest.fixture(scope="module")
def hyper_fit():
    return MODEL.hyper_mode()


def test_fast_path_is_pymc_conditional_mode(hyper_fit):
    z, _, (x, H, _, ok) = hyper_fit
    h = np.exp(z)
    assert ok
    pmm = MODEL.build_model(hyper=h)
    logp, dlogp = pmm.compile_logp(jacobian=False), pmm.compile_dlogp(jacobian=False)
    T = len(MODEL.topics)
    pt_ = lambda v: {"beta": v[:2], "topic_effect": v[2:2 + T], "run_effect": v[2 + T:]}  # noqa: E731
    g = dlogp(pt_(x))
    assert np.max(np.abs(g)) < 1e-6
    rng = np.random.default_rng(0)
    diffs = []
    for _ in range(4):
        v = x + rng.normal(scale=0.3, size=len(x))
        diffs.append(float(logp(pt_(v))) - MODEL.conditional_log_posterior(v, h))
    assert np.ptp(diffs) < 1e-8 * (1 + abs(diffs[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fm = pm.find_MAP(model=pmm, progressbar=False)
    got = np.r_[fm["beta"], fm["topic_effect"], fm["run_effect"]]
    assert np.max(np.abs(got - x)) < 1e-3
    assert float(logp(pt_(got))) <= float(logp(pt_(x))) + 1e-9


def test_log_marginal_gradient_is_the_finite_difference():
    """The analytic gradient of the Laplace log marginal likelihood (with the implicit move of the mode and of
    κ) and dx̂/dlog h equal central differences."""
    e = 1e-5
    for z in (np.array([-0.3, 0.5, -0.2]), np.array([0.4, -1.0, 0.3])):
        val, g, x, _, ok, dx, _, _ = MODEL.log_marginal_grad(np.exp(z))
        assert ok and val == pytest.approx(MODEL.log_marginal(np.exp(z))[0], abs=1e-9)
        fd, dxfd = np.empty(3), np.empty((len(x), 3))
        for i in range(3):
            (vp, xp, _, _), (vm, xm, _, _) = (MODEL.log_marginal(np.exp(z + s * e * np.eye(3)[i]), x) for s in (1, -1))
            fd[i], dxfd[:, i] = (vp - vm) / (2 * e), (xp - xm) / (2 * e)
        assert np.max(np.abs(g - fd)) < 1e-6 * (1 + np.max(np.abs(fd)))
        assert np.max(np.abs(dx - dxfd)) < 1e-6 * (1 + np.max(np.abs(dxfd)))


def test_hyper_mode_is_stationary(hyper_fit):
    """The mode of log p(y | h) + log p(h) + Σ log h: its finite-difference gradient vanishes and the curvature
    behind the covariance is the finite-difference one."""
    z, cov, (x, _, _, _) = hyper_fit

    def obj(zz):
        return MODEL.log_marginal(np.exp(zz), x)[0] + MODEL.log_hyperprior(np.exp(zz)) + zz.sum()

    e = 1e-4
    g = np.array([(obj(z + e * d) - obj(z - e * d)) / (2 * e) for d in np.eye(3)])
    assert np.max(np.abs(g)) < 1e-5
    e = 1e-2
    H = np.array([[(obj(z + e * (a + b)) - obj(z + e * (a - b)) - obj(z - e * (a - b)) + obj(z - e * (a + b)))
                   / (4 * e * e) for b in np.eye(3)] for a in np.eye(3)])
    assert np.allclose(np.linalg.inv(-H), cov, rtol=1e-3, atol=1e-5)


def test_hyper_mode_without_judgments_is_the_hyperprior_mode():
    """No judged row: log p(h) + Σ log h of half-normals peaks at h = scale with curvature 2 in log h."""
    m0 = HierarchicalRelevance(MODEL.offset[:0], MODEL.topic[:0], MODEL.member[:0], MODEL.y[:0], MODEL.uncovered,
                               MODEL.topics, MODEL.systems)
    z, cov, (x, _, _, ok) = m0.hyper_mode()
    pr = m0.prior
    scale = np.log([pr.topic_scale, pr.run_scale, pr.coverage_scale])
    assert ok and np.allclose(z, scale, atol=1e-6) and np.allclose(cov, np.eye(3) / 2, atol=1e-3)
    assert np.allclose(x, m0.latent_prior(np.exp(z)).mu)


def test_effects_design_products_equal_the_dense_design():
    from bayeval.relevance._bordered import cholesky
    from bayeval.relevance._kernels import CoefPrior, SparseDesign, logistic_newton

    h = np.array([0.7, 0.4, 0.9])
    E, Xs = MODEL._effects_design(h), MODEL.design(h)
    X = Xs.toarray()
    assert len(E.U) < X.shape[0]  # rows share patterns
    rng = np.random.default_rng(5)
    v, b, R = rng.random(len(X)), rng.normal(size=X.shape[1]), rng.normal(size=(len(X), 3))
    A = rng.normal(size=(X.shape[1],) * 2)
    C = A @ A.T
    assert np.allclose(E.dot(b), X @ b) and np.allclose(E.rdot(v), X.T @ v)
    assert np.allclose(E.rdot(R), X.T @ R) and np.allclose(E.dot(np.column_stack([b, -b])), X @ np.c_[b, -b])
    nnz = np.diff(E.Us.indptr)
    # every pattern through the numba kernels, every pattern through BLAS, and a split between the two
    for cut in (X.shape[1], -1, int(np.median(nnz))):
        Ec = E.from_parts(E.F, E.group, E.n_groups, E.W, dense_above=cut)
        assert len(Ec.dense) == np.count_nonzero(nnz > cut)
        for w in (v, v - 0.5):  # syrk for the dense patterns when weights are ≥ 0, the numba kernel otherwise
            assert np.allclose(Ec.gram(w), X.T @ (X * w[:, None]), rtol=1e-12, atol=1e-12)
        assert np.allclose(Ec.quad_diag(C), np.einsum("ij,jk,ik->i", X, C, X), rtol=1e-12, atol=1e-12)
        assert np.allclose(Ec.gram_trace(C, R), [np.trace(C @ X.T @ (X * r[:, None])) for r in R.T])
        # bordered: the topic block diagonal, H^-1 through its factor only
        Hb = Ec.gram_bordered(v).plus_diagonal(np.full(X.shape[1], 0.5))
        Hd = X.T @ (X * v[:, None]) + 0.5 * np.eye(X.shape[1])
        assert np.allclose(np.asarray(Hb), Hd, rtol=1e-12, atol=1e-12)
        Ci = np.linalg.inv(Hd)
        assert np.allclose(Ec.quad_diag_inverse(Hb.factor()), np.einsum("ij,jk,ik->i", X, Ci, X), rtol=1e-10)
        assert np.allclose(Ec.gram_trace_inverse(Hb.factor(), R), [np.trace(Ci @ X.T @ (X * r[:, None])) for r in R.T])
    # Newton with a neighbouring Hessian factor (simplified steps first) lands on the plain Newton mode
    prior = MODEL.latent_prior(h)
    ref = logistic_newton(SparseDesign(Xs), MODEL.y, np.ones(len(X)), prior, tol=1e-10)
    near = logistic_newton(SparseDesign(Xs), MODEL.y, np.ones(len(X)),
                           CoefPrior.make(X.shape[1], mu=prior.mu, prec=prior.prec * 1.1), tol=1e-10)
    got = logistic_newton(E, MODEL.y, np.ones(len(X)), prior, x0=near.x, tol=1e-10, h0=cholesky(near.neg_hessian))
    assert got.converged and np.max(np.abs(got.x - ref.x)) < 1e-8
    assert np.allclose(got.neg_hessian, ref.neg_hessian) and got.logpost == pytest.approx(ref.logpost, abs=1e-9)
    # Shamanskii (lagged=True): from the prior mean, and after simplified steps with a far factor that fail
    far = logistic_newton(E, MODEL.y, np.ones(len(X)), CoefPrior.make(X.shape[1], mu=prior.mu, prec=prior.prec * 50),
                          tol=1e-10)
    for kw in ({}, {"x0": far.x, "h0": cholesky(far.neg_hessian)}):
        lag = logistic_newton(E, MODEL.y, np.ones(len(X)), prior, tol=1e-10, lagged=True, **kw)
        assert lag.converged and np.max(np.abs(lag.x - ref.x)) < 1e-8
        assert np.allclose(lag.neg_hessian, ref.neg_hessian) and lag.logpost == pytest.approx(ref.logpost, abs=1e-9)


def test_membership_rows_are_one_over_the_runs_that_retrieve_each_document():
    """member_rows (numba) against the definition: w_is = 1/|S_i| for the runs ranking i within their depth."""
    from bayeval.relevance._kernels import member_rows

    rng = np.random.default_rng(11)
    ranks = np.where(rng.random((40, 6)) < 0.4, rng.integers(1, 30, (40, 6)), 0).astype(np.int32)
    ranks[3] = 0  # a document no run retrieves
    for depth in (np.full(6, np.iinfo(np.int64).max), np.array([0, 5, 10, 30, 2, 20])):
        member = (ranks > 0) & (ranks <= depth[None, :])
        indptr, indices, data = member_rows(ranks, depth)
        W = np.zeros(ranks.shape)
        for i in range(len(ranks)):
            W[i, indices[indptr[i]:indptr[i + 1]]] = data[indptr[i]:indptr[i + 1]]
            assert np.all(np.diff(indices[indptr[i]:indptr[i + 1]]) > 0)  # sorted columns
        n = member.sum(axis=1)
        assert np.array_equal(W, np.where(member, 1.0 / np.maximum(n, 1)[:, None], 0.0))


def test_full_pymc_density_is_log_posterior_plus_jacobian(hyper_fit):
    diffs = pymc_density_gaps(MODEL, lambda rng, S: rng.normal(size=S))
    assert np.ptp(diffs) < 1e-8 * (1 + abs(diffs[0]))


def test_priors_are_proper_prior_predictive_samples():
    with MODEL.build_model():
        pp = pm.sample_prior_predictive(draws=50, random_seed=1)
    h = pp.prior["hyper"].values.reshape(-1, 3)
    assert np.all(np.isfinite(h)) and np.all(h > 0)
    assert pp.prior_predictive["relevant"].shape[-1] == len(MODEL.y)


def test_unidentified_run_carries_its_prior(hyper_fit):
    z, _, (x, H, _, _) = hyper_fit
    h = np.exp(z)
    cov = np.linalg.inv(H)
    T = len(MODEL.topics)
    s = len(MODEL.systems) - 1  # the unseen run: no judged document anywhere
    sd_post = np.sqrt(cov[2 + T + s, 2 + T + s])
    assert abs(x[2 + T + s]) < 1e-8
    assert sd_post == pytest.approx(MODEL.run_sd(h)[s], rel=1e-6)
    assert sd_post > 0.1


def test_kappa_is_its_definition():
    """κ_i = sqrt(1 + π/8 (τ² + Σ_s w_is² σ_s²)), σ_s = σ0 + σ1 h_s, for one h and for draws of h (the model's
    own rows go through the moments Σ_s w_is² h_s^k, other rows through w² directly)."""
    W = MODEL.member.toarray()
    hs = np.array([[0.5, 1.0, 1.5], [0.1, 2.0, 0.0], [1.3, 0.0, 0.7]])
    for h in (hs[0], hs):
        sd = MODEL.run_sd(h)
        want = np.sqrt(1.0 + np.pi / 8 * (np.atleast_2d(h)[:, :1] ** 2 + np.atleast_2d(sd) ** 2 @ (W ** 2).T))
        np.testing.assert_allclose(MODEL.kappa(h), want.reshape(MODEL.kappa(h).shape), rtol=1e-13)
        np.testing.assert_allclose(MODEL.kappa(h, MODEL.member), MODEL.kappa(h), rtol=1e-13)


def test_random_effects_do_not_move_expected_p():
    """Drawing a and u from their prior leaves E[p] at σ(β0 + β1 o) (the marginalisation); without κ the same
    noise raises small p — the bias of run_effect_draws."""
    rng = np.random.default_rng(2)
    h = np.array([0.5, 1.0, 1.5])
    o = np.linspace(-4, 1, 30)
    W = MODEL.member[:30]
    m = MODEL.prior
    k = MODEL.kappa(h, W)
    a = rng.normal(0, h[0], size=(20000, 1))
    u = rng.normal(size=(20000, len(MODEL.systems))) * MODEL.run_sd(h)
    eta_rand = a + (W @ u.T).T
    target = expit(0.0 + m.slope_mean * o)
    marginal = expit(k * (m.slope_mean * o) + eta_rand).mean(axis=0)
    naive = expit(m.slope_mean * o + eta_rand).mean(axis=0)
    assert np.max(np.abs(marginal - target)) < 0.01
    assert np.max(np.abs(naive - target)) > 0.05


def test_draws_keep_mean_p_where_run_effect_draws_inflate_it():
    fit = EST.fit(DATA, "laplace", seed=3, draws=400, chains=1)
    est = fit.probabilities(draws=400, seed=3)
    mp = fit.probabilities(draws=None)  # the MacKay-corrected point at the hyperparameter mode
    s = DATA.systems.index("unseen")
    only = [(np.asarray(tr.ranks)[:, s] > 0) & ((np.asarray(tr.ranks) > 0).sum(axis=1) == 1) for tr in DATA]
    got = np.concatenate([p[o] for p, o in zip(est.p, only, strict=True)])
    base = np.concatenate([p[o] for p, o in zip(mp.p, only, strict=True)])
    # the unseen run's documents: posterior draws carry the prior-sized run effect, their mean stays put
    sd = np.concatenate([d[:, o].std(axis=0) for d, o in zip(est.draws, only, strict=True)])
    assert sd.mean() > 0.3 * got.mean()
    assert abs(got.mean() - base.mean()) < 0.02
    rtc = list(RTC.probabilities(draws=None).p)
    infl = run_effect_draws(DATA, rtc, 3.0, draws=400, seed=0)
    r0 = np.concatenate([p[o] for p, o in zip(rtc, only, strict=True)])
    r1 = np.concatenate([d[:, o].mean(axis=0) for d, o in zip(infl, only, strict=True)])
    assert r1.mean() - r0.mean() > 0.05


def test_estimate_shapes_and_registry():
    est = estimate_probabilities(DATA, "hier-default", fit="laplace", p_draws=30, seed=1, draws=60, chains=1)
    assert est.model == "hier-default" and est.has_draws
    assert [d.shape for d in est.draws] == [(30, tr.n_docs) for tr in DATA]
    assert all(np.all((p >= 0) & (p <= 1)) for p in est.p)
    pt = estimate_probabilities(DATA, "hier-default")
    assert not pt.has_draws and pt.method == "map"


def test_complete_idata_loo_and_netcdf_round_trip(tmp_path):
    """The hierarchical fit carries every InferenceData group (bayeval.relevance._idata): its pointwise log
    likelihood sums to the log posterior minus the log prior at each draw (a wrong η — e.g. without κ or the
    run effects — breaks the identity), its prior draws have the half-normal means, az.loo runs, and the fit
    is rebuilt from netCDF."""
    import arviz as az

    from bayeval.relevance import FitResult

    f = MODEL.fit("laplace", draws=40, chains=1, seed=0)
    idata = f.idata
    assert {"posterior", "log_likelihood", "posterior_predictive", "prior", "prior_predictive", "observed_data",
            "constant_data"} <= set(idata.groups())
    ll = idata.log_likelihood["relevant"].values[0]
    post = idata.posterior
    for d in (0, 17, 39):
        x = {k: post[k].values[0, d] for k in ("beta", "topic_effect", "run_effect", "hyper")}
        h = x["hyper"]
        prior = MODEL.latent_prior(h)
        lat = np.r_[x["beta"], x["topic_effect"], x["run_effect"]]
        log_prior = prior.logp(lat) + 0.5 * np.sum(np.log(prior.prec / (2 * np.pi))) + MODEL.log_hyperprior(h)
        np.testing.assert_allclose(ll[d].sum(), MODEL.log_posterior(**x) - log_prior, rtol=1e-9)
    hyper = MODEL.prior_draws(4000, np.random.default_rng(1))["hyper"]
    pr = MODEL.prior
    sc = np.array([pr.topic_scale, pr.run_scale, pr.coverage_scale])
    np.testing.assert_array_less(np.abs(hyper.mean(0) - sc * np.sqrt(2 / np.pi)), 5 * sc * 0.6 / np.sqrt(4000))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isfinite(az.loo(idata).elpd_loo)
    path = tmp_path / "hier.nc"
    idata.to_netcdf(str(path))
    g = FitResult.from_idata(az.from_netcdf(str(path)))
    assert type(g.source) is type(MODEL) and g.source.prior == MODEL.prior
    np.testing.assert_allclose(g.flat_draws(), f.flat_draws())


def test_bad_input():
    with pytest.raises(BayevalInputError, match="uncovered"):
        HierarchicalRelevance(MODEL.offset, MODEL.topic, MODEL.member, MODEL.y, MODEL.uncovered[:-1],
                              MODEL.topics, MODEL.systems)
    with pytest.raises(BayevalInputError, match="config"):
        HierarchicalEstimator("rtc-default")
    with pytest.raises(BayevalInputError, match="nuts_sampler"):
        MODEL.fit("mcmc", nuts_sampler="stan")


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["pymc", "nutpie"])
def test_nuts_agrees_with_fast_path(sampler):
    """NUTS (PyMC's sampler or nutpie) on the full model vs the fast path (Laplace evidence, importance-weighted
    hyperparameter points, conditional Laplace draws): predictive p and the run effects' posterior means and sds."""
    if sampler == "nutpie":
        pytest.importorskip("nutpie")
    data = _collection(seed=5, n_topics=10, n_systems=6)
    est = HierarchicalEstimator()
    lap = est.fit(data, "laplace", seed=1, draws=1000, chains=2)
    nuts = est.fit(data, "mcmc", seed=1, draws=1000, tune=1000, chains=4, nuts_sampler=sampler)
    assert nuts.fit.idata.attrs["nuts_sampler"] == sampler
    assert nuts.fit.divergences() == 0
    assert float(nuts.fit.rhat().max()) <= 1.01  # az.summary rounds to 0.01
    pl, pn = lap.probabilities(draws=400, seed=1), nuts.probabilities(draws=400, seed=1)
    a = np.concatenate([p[~j] for p, j in zip(pl.p, pl.judged, strict=True)])
    b = np.concatenate([p[~j] for p, j in zip(pn.p, pn.judged, strict=True)])
    assert np.max(np.abs(a - b)) < 0.05 and abs(a.mean() - b.mean()) < 0.01
    ul, un = lap.fit.draws("run_effect"), nuts.fit.draws("run_effect")
    assert np.all(np.abs(ul.std(axis=0) / un.std(axis=0) - 1) < 0.25)
    assert np.all(np.abs(ul.mean(axis=0) - un.mean(axis=0)) < 0.25 * un.std(axis=0))
