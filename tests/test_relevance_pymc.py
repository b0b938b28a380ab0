"""Cross-checks against PyMC: the fast path maximises the same log posterior as ``build_model()``.

Tolerances. ``pm.find_MAP`` runs L-BFGS-B (default ``gtol`` 1e-5 on the projected gradient, relative
``ftol`` ≈ 2e-9) on PyMC's log posterior; it stops within about ‖H⁻¹‖·‖g‖ of the mode, i.e. ~1e-4 for these
well-conditioned problems, while the fast path's Newton iteration converges to ~1e-12. So we check three
things: (1) PyMC's gradient at the fast-path mode vanishes (≤ 1e-6 — the same function, the same maximiser);
(2) differences of PyMC's log density between random points equal the fast path's (≤ 1e-8 relative — the
same function up to a constant); (3) ``find_MAP`` lands within 1e-3 of the fast path and not higher.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest
from conftest import study_model
from scipy.special import betaln, log_expit

from bayeval.relevance import CalibrationPrior, RTCEstimator
from bayeval.relevance.rank_coefficients import RankCoefficients, rank_wins
from bayeval.relevance.simulate import simulate_aggregation, simulate_calibration, simulate_similarity

pm = pytest.importorskip("pymc")


def _models():
    rng = np.random.default_rng(0)
    rank = RankCoefficients(np.stack([rank_wins(6), rank_wins(6, 2.0)]), np.array([3.0, 6.0]),
                            np.array([15.0, 5.0]), ("1", "2"))
    cal = simulate_calibration([-2.0, 0.5], [3.0, -1.0], cells_per_system=150, seed=1, smoothing=1.0)
    cal_norm = type(cal)(cal.system, cal.x, cal.n_rel, cal.n_nonrel, cal.smooth_system, cal.smooth_x, cal.systems,
                         CalibrationPrior(smoothing=0.5, intercept_sd=2.0, slope_sd=3.0))
    agg = simulate_aggregation([1.5, -1.0, 0.5], None, n_docs=300, seed=2)
    agg_int = simulate_aggregation([1.5, -1.0], -0.7, n_docs=300, features="logit", seed=3)
    sim = simulate_similarity([-1.0, 0.3], [rng.normal(size=3), rng.normal(size=2)], n_docs=120, seed=4)
    # fractional targets exercise the Potential likelihood
    sim = type(sim)(sim.X, (sim.y[0] * 0.8 + 0.1, sim.y[1]), sim.topics, sim.features, None, sim.prior)
    # smoothing cells = the observed cells: the fast path merges them into one row each
    cal_merged = type(cal)(cal.system, cal.x, cal.n_rel, cal.n_nonrel, cal.system, cal.x, cal.systems,
                           CalibrationPrior(smoothing=1.0))
    # the aggregation stage of a real RTC chain: the fast path uses its baseline + sparse design
    from bayeval.data import RankData
    from bayeval.synthetic import make_collection
    col = make_collection(n_topics=4, n_systems=4, n_docs=80, depth=30, judged_depth=5, seed=5)
    agg_rtc = RTCEstimator(study_model("rtc-intercept")).fit(
        RankData.build(col.runs, col.judgments, depth=30)).models["aggregation"]
    assert agg_rtc.row_groups is not None
    return {"rank": rank, "calibration": cal, "calibration-normal": cal_norm, "calibration-merged": cal_merged,
            "aggregation": agg, "aggregation-intercept": agg_int, "aggregation-rtc": agg_rtc, "similarity": sim}


MODELS = _models()


@pytest.fixture(scope="session")
def compiled():
    """Per model: PyMC model, compiled logp and dlogp (jacobian as find_MAP uses it), fast-path mode."""
    out = {}
    for name, m in MODELS.items():
        pmm = m.build_model()
        out[name] = (pmm, pmm.compile_logp(jacobian=False), pmm.compile_dlogp(jacobian=False), m.mode())
    return out


def _point(m, flat):
    return {f"{n}": v for n, v in m.param_spec.unflatten(flat).items()}


def _fast_logpost(m, flat):
    vals = m.param_spec.unflatten(flat)
    if isinstance(m, RankCoefficients):
        return m.log_posterior(vals["theta"])
    return m.log_posterior(*vals.values())


@pytest.mark.parametrize("name", list(MODELS))
def test_pymc_gradient_vanishes_at_fast_path_mode(compiled, name):
    m = MODELS[name]
    pmm, logp, dlogp, mode = compiled[name]
    g = dlogp(_point(m, mode.x))
    assert np.max(np.abs(g)) < 1e-6 * (1 + abs(mode.logpost))


@pytest.mark.parametrize("name", list(MODELS))
def test_pymc_logp_equals_fast_logpost_up_to_a_constant(compiled, name):
    m = MODELS[name]
    pmm, logp, dlogp, mode = compiled[name]
    rng = np.random.default_rng(7)
    pts = [mode.x] + [mode.x + rng.normal(0, 0.3, mode.x.shape) for _ in range(3)]
    pm_vals = np.array([logp(_point(m, x)) for x in pts])
    fast = np.array([_fast_logpost(m, x) for x in pts])
    np.testing.assert_allclose(pm_vals - pm_vals[0], fast - fast[0], rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("name", ["rank", "calibration", "aggregation-intercept", "similarity"])
def test_find_map_agrees_with_fast_path(compiled, name):
    m = MODELS[name]
    pmm, logp, dlogp, mode = compiled[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fm = pm.find_MAP(model=pmm, progressbar=False)
    got = m.param_spec.flatten({n: fm[n] for n in m.param_spec.names})
    np.testing.assert_allclose(got, mode.x, atol=1e-3)
    assert logp(_point(m, mode.x)) >= logp(_point(m, got)) - 1e-9


def test_beta_prior_on_sigmoid_equals_pymc_beta_with_jacobian():
    """The rank model's PyMC prior on θ is u ~ Beta(a, b) on its logit scale, Jacobian included:
    log p(θ) = a log σ(θ) + b log σ(−θ) − log B(a, b), the density ``pm.Beta`` has on ``u_logodds__``.
    Checked on ``RankCoefficients.build_model()`` with no preferences (prior only); written without the
    Jacobian (exponents a − 1, b − 1) the densities differ and the mode moves to (a − 1)/(a + b − 2)."""
    a, b = 4.0, 11.0
    with pm.Model() as beta_model:
        pm.Beta("u", a, b)
    beta_logp = beta_model.compile_logp(jacobian=True)
    m = RankCoefficients(np.zeros((1, 2, 2)), np.array([a]), np.array([b]), ("1",))
    model = m.build_model()
    assert not model.rvs_to_transforms[model["theta"]]  # θ is the free variable: no hidden Jacobian term
    ours = model.compile_logp(jacobian=True)
    theta = np.linspace(-6, 2, 9)
    got = np.array([ours({"theta": np.array([[t, -t]])}) for t in theta])
    want = np.array([beta_logp({"u_logodds__": t}) + beta_logp({"u_logodds__": -t}) for t in theta])
    # (PyTensor's betaln and logodds Jacobian agree with scipy's to ~1e-6 absolute)
    np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_allclose(got, a * log_expit(theta) + b * log_expit(-theta) - 2 * betaln(a, b)
                               + a * log_expit(-theta) + b * log_expit(theta), atol=1e-5)
    # find_MAP drops the Jacobian, so on pm.Beta it finds the u-space mode (a-1)/(a+b-2); on bayeval's
    # model (a proper density in θ, no transform) it finds the θ-mode σ(θ) = a/(a+b) of the fast path
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        u_map = pm.find_MAP(model=beta_model, progressbar=False)["u"]
        theta_map = pm.find_MAP(model=model, progressbar=False)["theta"]
    assert u_map == pytest.approx((a - 1) / (a + b - 2), abs=1e-4)
    np.testing.assert_allclose(1 / (1 + np.exp(-theta_map)), a / (a + b), atol=1e-4)
    np.testing.assert_allclose(1 / (1 + np.exp(-m.find_map()["theta"])), a / (a + b), atol=1e-9)


def test_every_method_gives_the_same_idata_shape():
    m = MODELS["aggregation-intercept"]
    fits = {
        "map": m.fit("map"),
        "laplace": m.fit("laplace", draws=40, chains=2, seed=0),
        "mcmc": m.fit("mcmc", draws=40, tune=40, chains=2, seed=0),
        "vi": m.fit("vi", draws=40, chains=2, seed=0, vi_iterations=300),
    }
    ref = fits["laplace"].idata.posterior
    for method, f in fits.items():
        post = f.idata.posterior
        assert set(post.data_vars) == set(ref.data_vars), method
        for v in ref.data_vars:
            assert post[v].dims == ref[v].dims, (method, v)
            assert post[v].shape[2:] == ref[v].shape[2:]
        assert list(post["expert"].values) == list(ref["expert"].values)
        assert f.idata.attrs["method"] == method
    # divergences are counted from NUTS's sample stats; the other methods have none to count
    mc = fits["mcmc"]
    assert mc.idata.sample_stats["diverging"].shape == (2, 40)
    assert mc.divergences() == int(mc.idata.sample_stats["diverging"].values.sum())
    flags = np.zeros((2, 40), dtype=bool)
    flags[0, [3, 7]] = flags[1, 11] = True
    assert replace(mc, sample_stats={**mc.sample_stats, "diverging": flags}).divergences() == 3
    assert all(fits[k].divergences() == 0 and "diverging" not in getattr(fits[k].idata, "sample_stats", {})
               for k in ("map", "laplace", "vi"))
    assert "r_hat" in mc.summary().columns and mc.summary()["r_hat"].notna().all()


# --- real sampling (slow) ----------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("name", ["aggregation", "calibration", "similarity", "rank"])
def test_nuts_and_laplace_posteriors_sit_at_the_map(name):
    """Well-identified synthetic data: posterior means within 0.25 posterior sd of the MAP (asymptotically the
    gap is O(n^-1/2) sd), sds within 25% of the Laplace ones, r-hat < 1.01, no divergences."""
    big = {"aggregation": simulate_aggregation([1.5, -1.0, 0.5], -0.5, n_docs=5000, seed=12),
           "calibration": simulate_calibration([-2.0, 0.5], [3.0, -1.0], cells_per_system=3000, seed=13),
           "similarity": simulate_similarity([-1.0], [np.array([2.0, -1.0])], n_docs=4000, seed=14),
           "rank": RankCoefficients(rank_wins(8, 5.0)[None], np.array([30.0]), np.array([60.0]), ("1",))}[name]
    f = big.fit("mcmc", draws=1000, tune=1000, chains=4, seed=1)
    mode, sd = f.mode.x, f.mode.sd()
    flat = f.flat_draws()
    assert np.all(np.abs(flat.mean(0) - mode) < 0.25 * sd)
    np.testing.assert_allclose(flat.std(0), sd, rtol=0.25)
    assert f.rhat().max() < 1.01 and f.divergences() == 0
    lap = big.fit("laplace", draws=1000, chains=4, seed=1).flat_draws()
    assert np.all(np.abs(lap.mean(0) - flat.mean(0)) < 0.3 * sd)


@pytest.mark.slow
def test_rtc_mcmc_chain_runs_and_agrees_with_map():
    from bayeval.data import RankData
    from bayeval.synthetic import make_collection
    col = make_collection(n_topics=5, n_systems=5, n_docs=120, depth=40, judged_depth=5, seed=21)
    data = RankData.build(col.runs, col.judgments, depth=40)
    est = RTCEstimator("rtc-default")
    f_mcmc = est.fit(data, "mcmc", draws=300, tune=300, chains=2, seed=3)
    p_map = est.estimate(data).p
    p_mc = f_mcmc.probabilities(draws=100, seed=3).p
    assert max(f.rhat().max() for f in f_mcmc.fits.values()) < 1.05
    assert np.corrcoef(np.concatenate(p_map), np.concatenate(p_mc))[0, 1] > 0.95
    # the NUTS estimate carries its parameter uncertainty: p is the mean of 100 posterior draws of p, and every
    # unjudged document's draws spread
    est_mc = f_mcmc.probabilities(draws=100, seed=3)
    for tr, p, d in zip(data, est_mc.p, est_mc.draws, strict=True):
        assert d.shape == (100, tr.n_docs)
        np.testing.assert_allclose(p, d.mean(axis=0), atol=1e-6)
        assert np.all(d[:, ~tr.judged].std(axis=0) > 1e-4)
