"""The complete InferenceData of every relevance model fit, and comparing priors by PSIS-LOO.

Statistical checks and how each fails when its property is removed:
- the pointwise log likelihood sums to the log posterior minus the log prior (a wrong likelihood term,
  or a missing unit, breaks the identity);
- the numpy hooks agree with what PyMC computes from ``build_model()`` (log likelihood to 1e-8; prior
  draws with the same mean within Monte Carlo error), so a new model without the hooks gets the same groups;
- the prior draws of σ(θ) have the Beta(a, b) mean a/(a+b) (within 5 standard errors).
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from conftest import study_model
from scipy.special import expit, log_expit

from bayeval.data import RankData
from bayeval.relevance import (
    FitResult,
    RTCEstimator,
    compare_priors,
    estimate_probabilities,
    prior_predictive_check,
    prior_sensitivity,
)
from bayeval.relevance.aggregation import ExpertAggregation
from bayeval.relevance.rank_coefficients import RankCoefficients, rank_wins
from bayeval.relevance.simulate import simulate_aggregation, simulate_calibration, simulate_similarity
from bayeval.synthetic import make_collection

az = pytest.importorskip("arviz")
pm = pytest.importorskip("pymc")

OBSERVING = {
    "calibration": lambda: simulate_calibration([-2.0, 0.5], [3.0, -1.0], cells_per_system=80, seed=1),
    "aggregation": lambda: simulate_aggregation([1.5, -1.0], -0.7, n_docs=200, seed=3),
    "similarity": lambda: simulate_similarity([-1.0, 0.3], [np.array([1.0, -0.5, 0.2]), np.array([0.8, 0.1])],
                                              n_docs=100, seed=4),
}


def _rank():
    return RankCoefficients(np.stack([rank_wins(6), rank_wins(6, 2.0)]), np.array([3.0, 6.0]),
                            np.array([15.0, 5.0]), ("1", "2"))


@pytest.fixture(scope="module")
def data():
    col = make_collection(n_topics=4, n_systems=4, n_docs=80, depth=30, judged_depth=6, seed=5)
    return RankData.build(col.runs, col.judgments, depth=30)


@pytest.mark.parametrize("name", list(OBSERVING))
def test_every_group_and_loo_for_observing_models(name):
    m = OBSERVING[name]()
    f = m.fit("laplace", draws=200, chains=1, seed=0)
    groups = set(f.idata.groups())
    assert {"posterior", "log_likelihood", "posterior_predictive", "prior", "prior_predictive", "observed_data",
            "constant_data"} <= groups
    obs = m.observed()
    ll = f.idata.log_likelihood[obs.name]
    assert ll.shape == (1, 200, len(obs.successes))
    assert f.idata.posterior_predictive[obs.name].shape == ll.shape
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loo = az.loo(f.idata)
    assert np.isfinite(loo.elpd_loo) and loo.elpd_loo < 0
    # the replicated counts are Binomial(n, σ(η)) at each posterior draw: per draw, the standardised gap
    # between replicated and expected totals has mean square 1 (± 5 sd of a mean of 200 χ²₁), which a
    # replicate from other draws does not
    np.testing.assert_array_equal(f.idata.observed_data[obs.name].values, obs.successes)
    post = {v: f.idata.posterior[v].values for v in f.idata.posterior.data_vars}
    p = expit(m.linear_predictor(post))[0]
    rep = f.idata.posterior_predictive[obs.name].values[0]
    z = (rep.sum(axis=1) - (obs.trials * p).sum(axis=1)) / np.sqrt((obs.trials * p * (1 - p)).sum(axis=1))
    assert 0.5 < np.mean(z**2) < 1.5
    # and each unit's replicates vary across draws as the binomial mixture does (law of total variance),
    # which a copy of the observations does not
    mixture_var = (obs.trials * p * (1 - p)).mean(axis=0) + (obs.trials * p).var(axis=0)
    assert rep.var(axis=0).sum() / mixture_var.sum() == pytest.approx(1.0, abs=0.2)
    ax = az.plot_ppc(f.idata, num_pp_samples=20)
    assert "Observed" in ax.get_legend_handles_labels()[1]


def test_rank_coefficients_observe_no_judgments_but_have_a_prior():
    f = _rank().fit("laplace", draws=50, chains=1, seed=0)
    groups = set(f.idata.groups())
    assert "prior" in groups and "constant_data" in groups
    assert "log_likelihood" not in groups and "posterior_predictive" not in groups


def test_pointwise_log_likelihood_is_the_log_posterior_minus_the_log_prior():
    """Aggregation with intercept: log post = Σ_i ll_i + Σ_j [α log σ(λ_j) + β log σ(−λ_j)] − λ0²/(2 sd²)."""
    m = OBSERVING["aggregation"]()
    f = m.fit("laplace", draws=5, chains=1, seed=1)
    ll = f.idata.log_likelihood["relevant"].values[0]
    lam = f.draws("lam")
    lam0 = f.draws("lam0")
    a, b, sd = m.prior.alpha, m.prior.beta, m.prior.intercept_sd
    for k in range(5):
        prior = np.sum(a * log_expit(lam[k]) + b * log_expit(-lam[k])) - 0.5 * (lam0[k] / sd) ** 2
        np.testing.assert_allclose(ll[k].sum(), m.log_posterior(lam[k], lam0[k]) - prior, rtol=1e-10)


class _NoHooks(ExpertAggregation):
    """An aggregation model without the numpy hooks: the groups come from its PyMC model."""

    def observed(self):
        return NotImplemented

    def prior_draws(self, size, rng):
        return NotImplemented


def test_pymc_fallback_gives_the_same_log_likelihood_and_prior():
    m = OBSERVING["aggregation"]()
    f = m.fit("laplace", draws=40, chains=1, seed=2)
    nh = _NoHooks(m.X, m.y, m.experts, m.w, m.prior)
    g = nh.fit("laplace", draws=40, chains=1, seed=2)
    np.testing.assert_allclose(g.flat_draws(), f.flat_draws())
    ll_np = f.idata.log_likelihood["relevant"].values
    ll_pm = g.idata.log_likelihood["relevant"].values
    np.testing.assert_allclose(ll_pm, ll_np, rtol=1e-8, atol=1e-10)
    assert "prior_predictive" in g.idata.groups() and "posterior_predictive" in g.idata.groups()
    # prior of σ(λ): Beta(α, β), mean α/(α+β), from PyMC's draws as from the numpy ones
    for idata in (f.idata, g.idata):
        u = expit(idata.prior["lam"].values.reshape(-1))
        a, b = m.prior.alpha, m.prior.beta
        se = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)) / u.size)
        assert abs(u.mean() - a / (a + b)) < 5 * se


def test_rank_prior_draws_have_the_beta_mean():
    m = _rank()
    th = m.prior_draws(4000, np.random.default_rng(0))["theta"]
    u = expit(th)
    for t in range(2):
        a, b = m.prior_a[t], m.prior_b[t]
        se = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)) / u[:, t].size)
        assert abs(u[:, t].mean() - a / (a + b)) < 5 * se


@pytest.mark.parametrize("config", ["rtc-default", "rtc-mtc", study_model("rtc-weak"),
                                    study_model("rtc-intercept")])
def test_pm_sample_prior_predictive_works_on_every_rtc_stage(data, config):
    fit = RTCEstimator(config).fit(data)
    for stage in ("rank", "calibration", "aggregation"):
        with fit.models[stage].build_model(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pri = pm.sample_prior_predictive(20, random_seed=1)
        assert set(fit.models[stage].param_spec.names) <= set(pri.prior.data_vars), (config, stage)


@pytest.mark.parametrize("name", ["calibration", "similarity", "rank"])
def test_netcdf_round_trip_rebuilds_the_fit(tmp_path, name):
    m = _rank() if name == "rank" else OBSERVING[name]()
    f = m.fit("laplace", draws=30, chains=1, seed=0)
    path = tmp_path / "fit.nc"
    f.idata.to_netcdf(str(path))
    g = FitResult.from_idata(az.from_netcdf(str(path)))
    assert type(g.source) is type(m) and g.method == "laplace"
    np.testing.assert_allclose(g.flat_draws(), f.flat_draws())
    np.testing.assert_allclose(g.mode.x, f.mode.x, rtol=1e-10, atol=1e-12)
    assert set(g.idata.groups()) == set(f.idata.groups())
    assert g.source.prior == m.prior


def test_vi_is_one_chain_reported_as_vi():
    m = OBSERVING["aggregation"]()
    f = m.fit("vi", draws=50, chains=2, seed=0, vi_iterations=300)
    assert f.core.posterior.sizes["chain"] == 1 and f.n_draws == 100
    assert f.rhat().isna().all() and "r_hat" not in f.summary().columns
    assert "ADVI" in f.idata.attrs["inference"] and "vi_final_loss" in f.idata.attrs
    mp = m.fit("map")
    assert mp.summary().attrs["inference"].startswith("posterior mode")


def test_compare_priors_by_loo_on_the_judgments_one_has(data):
    with pytest.warns(UserWarning, match="Pareto k"):
        cmp = compare_priors(data, ["rtc-default", "rtc-mtc"], p_draws=100, draws=100, chains=1)
    tab = cmp.to_frame()
    assert tab["pareto_k_bad"].sum() > 0  # this data exercises the warnings
    assert cmp.kind == "loo" and set(tab.index) == {"rtc-default", "rtc-mtc"}
    n = sum(int(tr.judged.sum()) for tr in data)
    assert (tab["n"] == n).all()
    assert sorted(tab["rank"]) == [0, 1] and cmp.best() == tab["elpd_loo"].idxmax()
    for name, lo in cmp.loo.items():
        bad = int((np.asarray(lo.pareto_k) > lo.good_k).sum())
        assert tab.loc[name, "pareto_k_bad"] == bad
        assert (bad > 0) == any(w.startswith(f"{name}:") for w in cmp.warnings)
    with pytest.raises(Exception, match="posterior draws"):
        compare_priors(data, ["rtc-default", "smoothed"], p_draws=20, draws=20, chains=1)


def test_prior_predictive_check_and_sensitivity(data):
    pp = prior_predictive_check(data, "rtc-default", draws=8, seed=0)
    assert pp.expected.shape == (8, len(data.systems)) and np.all((pp.rate >= 0) & (pp.rate <= 1))
    assert list(pp.to_frame().columns) == ["q5", "median", "q95"]
    est = {c: estimate_probabilities(data, c, fit="laplace", p_draws=50, draws=50, chains=1) for c in
           ("rtc-default", "rtc-mtc")}
    sens = prior_sensitivity(data, est, mc_draws=200)
    f = sens.to_frame()
    n = len(data.systems)
    assert len(f) == n * (n - 1) // 2
    np.testing.assert_allclose(f["spread"], f[["rtc-default", "rtc-mtc"]].max(axis=1)
                               - f[["rtc-default", "rtc-mtc"]].min(axis=1))


def test_expected_measures_accepts_an_estimate(data):
    from bayeval.expected import expected_measures
    est = estimate_probabilities(data, "rtc", fit="laplace", p_draws=20, draws=20, chains=1)
    # an estimate gives its posterior draws of p to every method (law of total variance, docs/expected.md)
    a = expected_measures(data, est, method="delta")
    b = expected_measures(data, list(est.draws), method="delta")
    np.testing.assert_allclose(a.all_expected, b.all_expected)
    np.testing.assert_allclose(a.all_variance, b.all_variance)
    mc = expected_measures(data, est, method="mc", seed=0)
    assert mc.draws == 20  # the estimate's posterior draws of p drive the Monte Carlo


def test_pymc_fallback_with_an_improper_prior_has_no_prior_groups():
    from bayeval.relevance.config import AggregationPrior

    m = simulate_aggregation([1.0, -0.5], None, n_docs=150, seed=6)
    nh = _NoHooks(m.X, m.y, m.experts, m.w, AggregationPrior(alpha=0.0, beta=1.0))  # Flat λ + Potential
    g = nh.fit("laplace", draws=20, chains=1, seed=0)
    groups = set(g.idata.groups())
    assert "log_likelihood" in groups and "posterior_predictive" in groups
    assert "prior" not in groups and "prior_predictive" not in groups
    assert not nh._proper()


# ---------------------------------------------------------------------- a fit file cannot run code
def _crafted(tmp_path, record: dict, **extra):
    """A netCDF file shaped like a fit, with the given model record in its attrs (read back from disk)."""
    import json

    import bayeval

    attrs = {"bayeval_model": json.dumps(record), "bayeval_version": bayeval.__version__,
             "bayeval_model_id": record.get("class"), "method": "map", **extra}
    idata = az.from_dict(posterior={"x": np.zeros((1, 2))}, constant_data={"a": np.zeros(3)})
    for g in idata.groups():
        getattr(idata, g).attrs.update({k: v for k, v in attrs.items() if v is not None})
    path = tmp_path / f"sent{len(list(tmp_path.glob('sent*.nc')))}.nc"
    idata.to_netcdf(str(path))
    return az.from_netcdf(str(path))


def test_fit_file_naming_os_system_is_refused_and_nothing_runs(tmp_path, monkeypatch):
    import os

    from bayeval.errors import BayevalInputError

    calls = []
    monkeypatch.setattr(os, "system", lambda *a: calls.append(a) or 0)
    real = "bayeval.relevance.aggregation:ExpertAggregation"
    crafted = [
        ({"class": "os:system", "fields": {"command": {"value": "touch pwned"}}}, "model class 'os:system'"),
        ({"class": real, "fields": {"prior": {"config": "os:system", "value": {"command": "touch pwned"}}}},
         "configuration class 'os:system'"),
        ({"class": "bayeval.relevance._idata:_allowed", "fields": {}}, "not one of bayeval's own"),
        ({"class": "builtins:eval", "fields": {}}, "not one of bayeval's own"),
    ]
    for record, words in crafted:
        idata = _crafted(tmp_path, record)
        with pytest.raises(BayevalInputError, match=words):
            FitResult.from_idata(idata)
    assert calls == [] and not (tmp_path / "pwned").exists()


def test_fit_file_of_another_version_or_mismatched_id_is_refused(tmp_path):
    from bayeval.errors import BayevalInputError

    m = OBSERVING["calibration"]()
    f = m.fit("map", seed=0)
    attrs = dict(f.idata.posterior.attrs)
    assert attrs["bayeval_model_id"] == "bayeval.relevance.calibration:PlattCalibration"
    import bayeval
    assert attrs["bayeval_version"] == bayeval.__version__
    record = __import__("json").loads(attrs["bayeval_model"])
    idata = _crafted(tmp_path, record, bayeval_version="0.0.1")
    with pytest.raises(BayevalInputError, match=r"written by bayeval '0.0.1'"):
        FitResult.from_idata(idata)
    idata = _crafted(tmp_path, record, bayeval_model_id="bayeval.relevance.aggregation:ExpertAggregation")
    with pytest.raises(BayevalInputError, match="does not match"):
        FitResult.from_idata(idata)
    idata = _crafted(tmp_path, {"class": record["class"], "fields": {"nonsense": {"value": 1}}})
    with pytest.raises(BayevalInputError, match="does not fit"):
        FitResult.from_idata(idata)


def test_commands_do_not_import_arviz(tmp_path):
    """``measures``, ``evaluate`` (the default model, with pairs) and ``report`` read no InferenceData: ArviZ stays
    unimported (it costs seconds); the fit's ``idata`` is built only when asked for (docs/scale.md)."""
    from bayeval.io import write_qrels, write_run
    from bayeval.synthetic import make_collection

    col = make_collection(n_topics=3, n_systems=3, n_docs=60, depth=20, judged_depth=5, seed=2)
    runs = []
    for run in col.runs:
        write_run(run, tmp_path / f"{run.name}.run")
        runs.append(str(tmp_path / f"{run.name}.run"))
    write_qrels(col.judgments, tmp_path / "qrels.txt")
    code = ("import sys\nfrom bayeval.cli.main import main\n"
            f"q, runs = {str(tmp_path / 'qrels.txt')!r}, {runs!r}\n"
            "for argv in (['measures', q, *runs], ['evaluate', q, *runs, '--pairs', '--method', 'delta'],\n"
            "             ['report', q, *runs, '--quiet']):\n"
            "    assert main(argv) == 0, argv\n"
            "    assert 'arviz' not in sys.modules, argv\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("ok")


def test_estimate_save_fit_writes_each_stage_and_keeps_what_exists(tmp_path):
    """``bayeval estimate --save-fit DIR``: the complete InferenceData of each stage, read back into the same fit;
    an existing file is never overwritten (one-line error, exit 2)."""
    import arviz as az
    from conftest import run_cli

    from bayeval.io import write_qrels, write_run
    from bayeval.relevance import FitResult
    from bayeval.synthetic import make_collection

    col = make_collection(n_topics=3, n_systems=3, n_docs=60, depth=20, judged_depth=5, seed=2)
    runs = []
    for run in col.runs:
        write_run(run, tmp_path / f"{run.name}.run")
        runs.append(tmp_path / f"{run.name}.run")
    write_qrels(col.judgments, tmp_path / "qrels.txt")
    args = ["estimate", tmp_path / "qrels.txt", *runs, "--model", "hier-default", "--out", tmp_path / "p.txt"]
    rc, _, err = run_cli(*args, "--save-fit", tmp_path / "fits")
    assert rc == 0, err
    saved = sorted(p.name for p in (tmp_path / "fits").iterdir())
    assert "hierarchical.nc" in saved
    idata = az.from_netcdf(tmp_path / "fits" / "hierarchical.nc")
    assert {"posterior", "log_likelihood", "constant_data"} <= set(idata.groups())
    back = FitResult.from_idata(idata)
    assert back.model == "hierarchical" and back.spec.names == ("beta", "topic_effect", "run_effect", "hyper")
    before = (tmp_path / "fits" / "hierarchical.nc").stat().st_mtime_ns
    rc, _, err = run_cli(*args, "--save-fit", tmp_path / "fits")
    assert rc == 2 and "exists" in err and len(err.strip().splitlines()) == 1
    assert (tmp_path / "fits" / "hierarchical.nc").stat().st_mtime_ns == before
