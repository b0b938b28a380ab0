"""Relevance models without PyMC: kernels, priors, fast path, recovery, the RTC chain, CLI, diagnostics."""

from __future__ import annotations

import subprocess
import sys
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

from bayeval.data import Qrels, RankData
from bayeval.errors import BayevalInputError
from bayeval.relevance import (
    AggregationPrior,
    ExpertAggregation,
    RankCoefficients,
    RTCConfig,
    RTCEstimator,
    bayesian_confidence,
    compare_priors,
    estimate_probabilities,
    list_configs,
    load_config,
    reliability_table,
    score_probabilities,
    smoothed_probabilities,
    uniform_probabilities,
)
from bayeval.relevance._kernels import CoefPrior, bt_newton, bt_newton_batch, logistic_logpost, logistic_newton
from bayeval.relevance.heldout import HeldOutSplit, heldout_targets
from bayeval.relevance.rank_coefficients import rank_wins
from bayeval.relevance.simulate import (
    simulate_aggregation,
    simulate_calibration,
    simulate_rank_coefficients,
    simulate_similarity,
)
from bayeval.synthetic import make_collection


@pytest.fixture(scope="module")
def collection():
    return make_collection(n_topics=6, n_systems=6, n_docs=150, depth=50, judged_depth=5, seed=11)


@pytest.fixture(scope="module")
def data(collection):
    return RankData.build(collection.runs, collection.judgments, depth=50)


def test_import_does_not_load_pymc():
    code = "import bayeval.relevance, sys; assert 'pymc' not in sys.modules and 'pytensor' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# --- priors: pseudo-counts ≡ Beta prior on sigma(theta) ------------------------------------------------------
def test_pseudo_rows_equal_beta_prior_in_logistic():
    """a pseudo-rows (x = e_j, y = 1) + b pseudo-rows (y = 0) == a log σ(λ_j) + b log σ(−λ_j), exactly."""
    rng = np.random.default_rng(0)
    X = rng.random((50, 3))
    y = (rng.random(50) < 0.3).astype(float)
    w = np.ones(50)
    a, b = 2.5, 4.0
    with_prior = logistic_newton(X, y, w, CoefPrior.make(3, a=a, b=b))
    Xp = np.vstack([X, np.eye(3), np.eye(3)])
    yp = np.r_[y, np.ones(3), np.zeros(3)]
    wp = np.r_[w, np.full(3, a), np.full(3, b)]
    pseudo = logistic_newton(Xp, yp, wp, CoefPrior.make(3))
    np.testing.assert_allclose(with_prior.x, pseudo.x, atol=1e-10)
    np.testing.assert_allclose(with_prior.neg_hessian, pseudo.neg_hessian, atol=1e-9)
    beta = rng.normal(size=3)
    assert logistic_logpost(beta, X, y, w, CoefPrior.make(3, a=a, b=b)) == pytest.approx(
        logistic_logpost(beta, Xp, yp, wp, CoefPrior.make(3)), abs=1e-10)


def test_beta_prior_density_in_theta_space():
    """Beta(a, b) on u = σ(θ): log p(θ) = log Beta(σ(θ)) + log|du/dθ| = a log σ(θ) + b log σ(−θ) − log B(a, b).

    Checks bayeval's own densities against scipy's Beta by the change of variables: the logistic-beta
    log density exactly, and the rank model's log posterior with no preferences up to its constant
    K log B(a, b). Dropping the Jacobian (exponents a − 1, b − 1) in either breaks the equality."""
    from scipy.special import betaln
    from scipy.stats import beta as beta_dist

    from bayeval.relevance._logistic_beta import logistic_beta_logpdf
    a, b = 3.0, 7.0
    theta = np.linspace(-5, 3, 17)
    u = expit(theta)
    change_of_variables = beta_dist.logpdf(u, a, b) + np.log(u * (1 - u))
    np.testing.assert_allclose(logistic_beta_logpdf(theta, a, b), change_of_variables, atol=1e-10)
    m = RankCoefficients(np.zeros((1, 2, 2)), np.array([a]), np.array([b]), ("1",))
    grid = np.stack([theta, theta[::-1]], axis=1)
    got = np.array([m.log_posterior(t[None]) for t in grid])
    want = change_of_variables + change_of_variables[::-1] + 2 * betaln(a, b)
    np.testing.assert_allclose(got, want, atol=1e-9)
    # and its mode in θ is logit(a / (a + b)), not the u-space mode (a − 1)/(a + b − 2)
    np.testing.assert_allclose(expit(m.find_map()["theta"]), a / (a + b), atol=1e-9)


def test_bt_batch_equals_single():
    W = np.stack([rank_wins(6), rank_wins(6, 2.0), rank_wins(6, lengths=np.array([3, 6, 4]))])
    a, b = np.array([2.0, 5.0, 1.0]), np.array([9.0, 3.0, 1.0])
    th, H, lp, _, ok = bt_newton_batch(W, a, b)
    assert ok
    for t in range(3):
        r = bt_newton(W[t], CoefPrior.make(7, a=a[t], b=b[t]))
        np.testing.assert_allclose(th[t], r.x, atol=1e-8)
        np.testing.assert_allclose(H[t], r.neg_hessian, atol=1e-7)


def test_bt_batch_topics_do_not_interact():
    """Each topic of a batch gets, to the last bit, what it gets alone: the batch drops a topic once it converges
    and no topic's steps depend on another's (topics converging after different numbers of steps; a (T, K)
    prior)."""
    W = np.stack([rank_wins(8), rank_wins(8, 4.0), rank_wins(8, lengths=np.array([2, 8, 5, 8])), rank_wins(8) * 0.1])
    a = np.array([[2.0], [40.0], [1.0], [0.5]]) * np.linspace(1.0, 2.0, 9)[None, :]
    b = np.array([9.0, 3.0, 1.0, 0.5])[:, None] * np.ones(9)[None, :]
    th, H, lp, it, ok = bt_newton_batch(W, a, b)
    assert ok
    iters = []
    for t in range(len(W)):
        th1, H1, lp1, it1, ok1 = bt_newton_batch(W[t:t + 1], a[t:t + 1], b[t:t + 1])
        iters.append(it1)
        assert ok1 and np.array_equal(th[t], th1[0]) and np.array_equal(H[t], H1[0]) and lp[t] == lp1[0]
    assert len(set(iters)) > 1 and it == max(iters)


def test_negative_hessian_matches_finite_differences():
    m = RankCoefficients(rank_wins(4)[None], np.array([2.0]), np.array([5.0]), ("1",))
    mode = m.mode()
    x0, H = mode.x, mode.blocks[0][1]
    eps = 1e-4
    num = np.empty((5, 5))
    for i in range(5):
        for j in range(5):
            e_i, e_j = np.eye(5)[i] * eps, np.eye(5)[j] * eps
            f = lambda v: m.log_posterior(v[None])  # noqa: E731
            num[i, j] = -(f(x0 + e_i + e_j) - f(x0 + e_i - e_j) - f(x0 - e_i + e_j) + f(x0 - e_i - e_j)) / (4 * eps**2)
    np.testing.assert_allclose(H, num, rtol=1e-4, atol=1e-4)


def test_rank_wins_counts():
    W = rank_wins(3)
    # positions 1 < 2 < 3 < unretrieved: every earlier one beats every later one once
    np.testing.assert_array_equal(W, np.triu(np.ones((4, 4)), 1))
    # per system: lengths 1 and 3 → pair (1,2) only in the second list; rank 1 beats unretrieved twice
    Ws = rank_wins(3, lengths=np.array([1, 3]))
    assert Ws[0, 1] == 1 and Ws[0, 3] == 2 and Ws[1, 3] == 1


def test_rank_coefficients_decrease_with_rank_and_follow_topic_rate(data):
    m = RankCoefficients.from_rankdata(data)
    theta = m.find_map()["theta"]
    assert np.all(np.diff(theta[:, :-1], axis=1) < 0)
    # a topic with a higher judged rate gets higher coefficients
    rate = np.array([(tr.num_rel + 1) / (tr.num_rel + tr.num_nonrel + 2) for tr in data])
    assert np.corrcoef(rate, theta.mean(axis=1))[0, 1] > 0.9


# --- parameter recovery from the generators -----------------------------------------------------------------
def test_recover_rank_coefficients():
    true = np.array([[2.0, 1.0, 0.0, -1.5, -3.0]])
    m = simulate_rank_coefficients(true, comparisons=3000, prior_a=0.5, prior_b=0.5, seed=1)
    fit = m.fit("laplace", draws=1000, chains=2, seed=1)
    est = fit.map_estimate()["theta"]
    # BT identifies differences; the weak prior pins the level only loosely — compare centred values, with
    # the posterior sd of the centred contrasts (the level's uncertainty would make a useless tolerance)
    d_est, d_true = est - est.mean(), true - true.mean()
    dr = fit.draws("theta")
    sd_c = (dr - dr.mean(axis=-1, keepdims=True)).std(axis=0)
    assert np.all(np.abs(d_est - d_true) < 4 * sd_c)


def test_recover_calibration():
    A, B = np.array([-3.0, -1.0, 0.5]), np.array([4.0, 2.0, -1.0])
    m = simulate_calibration(A, B, cells_per_system=4000, docs_per_cell=20, seed=2, smoothing=0.5)
    est = m.find_map()
    sd = m.mode().sd()
    np.testing.assert_array_less(np.abs(np.r_[est["A"] - A, est["B"] - B]), 4 * sd)


@pytest.mark.parametrize("features,lam0", [("probability", None), ("logit", -1.0)])
def test_recover_aggregation(features, lam0):
    lam = np.array([2.0, -1.0, 0.5])
    m = simulate_aggregation(lam, lam0, n_docs=20000, features=features, seed=3)
    fit = m.fit("map")
    est = fit.map_estimate()
    sd = fit.mode.sd()
    got = np.r_[est["lam"], [] if lam0 is None else [est["lam0"]]]
    want = np.r_[lam, [] if lam0 is None else [lam0]]
    np.testing.assert_array_less(np.abs(got - want), 4 * sd)


def test_recover_similarity():
    beta = [np.array([3.0, -2.0, 0.0]), np.array([1.0])]
    m = simulate_similarity([-1.0, 0.5], beta, n_docs=5000, penalty=0.01, seed=4)
    est = m.find_map()
    sd = m.mode().sd()
    np.testing.assert_array_less(np.abs(np.r_[est["beta0"] - [-1.0, 0.5], est["beta"] - np.concatenate(beta)]),
                                 4 * sd)


# --- fit results -------------------------------------------------------------------------------------------
def test_map_and_laplace_share_the_idata_shape():
    m = simulate_aggregation([1.0, -1.0], -0.5, n_docs=500, seed=5)
    f_map = m.fit("map")
    f_lap = m.fit("laplace", draws=300, chains=2, seed=0)
    for f in (f_map, f_lap):
        assert set(f.idata.posterior.data_vars) == {"lam", "lam0"}
        assert f.idata.posterior["lam"].dims == ("chain", "draw", "expert")
        assert list(f.idata.posterior["expert"].values) == ["e1", "e2"]
    assert f_map.n_draws == 1 and f_lap.n_draws == 600
    # Laplace draws: mean at the mode, covariance the inverse negative Hessian (MC error ~ sd/sqrt(600))
    sd = f_map.mode.sd()
    np.testing.assert_array_less(np.abs(f_lap.flat_draws().mean(0) - f_map.mode.x), 4 * sd / np.sqrt(600))
    np.testing.assert_allclose(f_lap.flat_draws().std(0), sd, rtol=0.15)
    # the draws keep the posterior correlations (−H)⁻¹ (here about −0.66 between lam0 and each lam; the sampling
    # error of a correlation from 600 draws is ≲ 0.04), not just the marginal sds
    cov = np.zeros((len(sd), len(sd)))
    for idx, block in f_map.mode.covariance_blocks():
        cov[np.ix_(idx, idx)] = block
    np.testing.assert_allclose(np.corrcoef(f_lap.flat_draws().T), cov / np.outer(sd, sd), atol=0.12)
    assert abs(cov[0, 2] / (sd[0] * sd[2])) > 0.5
    # independent draws from an approximation: one chain, no r-hat pretending to diagnose it
    assert f_lap.core.posterior.sizes["chain"] == 1 and f_lap.rhat().isna().all()
    assert "r_hat" not in f_lap.summary().columns and "Laplace" in f_lap.idata.attrs["inference"]
    assert list(f_lap.to_frame().columns) == ["param", "mode", "mean", "sd", "q2.5", "q97.5"]
    ci = f_map.confidence_interval(0.9)  # the Laplace interval: mode ± z_0.95 sd
    np.testing.assert_allclose(ci["upper"] - f_map.mode.x, 1.6448536269514722 * sd, rtol=1e-9)
    np.testing.assert_allclose(f_map.mode.x - ci["lower"], 1.6448536269514722 * sd, rtol=1e-9)


def test_fit_rejects_bad_method():
    m = simulate_aggregation([1.0], n_docs=50, seed=0)
    with pytest.raises(BayevalInputError, match="method"):
        m.fit("nuts")
    with pytest.raises(BayevalInputError, match="draws"):
        m.fit("laplace", draws=0)


# --- configurations ------------------------------------------------------------------------------------------
def test_shipped_configs_load():
    names = list_configs()
    assert {"rtc-default", "rtc-mtc", "similarity-default", "uniform", "smoothed"} <= set(names)
    for n in names:
        cfg = load_config(n)
        assert cfg.name == n
    assert load_config("rtc").name == "rtc-default"
    mtc = load_config("rtc-mtc")
    assert (mtc.aggregation.alpha, mtc.aggregation.beta, mtc.aggregation.intercept) == (1.0, 1.0, False)
    assert (mtc.rank.relevant_offset, mtc.calibration.smoothing) == (1.0, 1.0)


def test_rtc_config_defaults_are_rtc_default():
    # one default RTC: the dataclass defaults and the shipped rtc-default.toml (load_config("rtc")) agree
    shipped = load_config("rtc")
    assert replace(RTCConfig(), description=shipped.description) == shipped


def test_config_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('kind = "rtc"\n[aggregation]\nalpah = 1.0\n')
    with pytest.raises(BayevalInputError, match="alpah"):
        load_config(bad)
    bad.write_text('kind = "rtc"\n[aggregation]\nalpha = -1.0\n')
    with pytest.raises(BayevalInputError, match="aggregation.alpha"):
        load_config(bad)
    with pytest.raises(BayevalInputError, match="no configuration"):
        load_config("no-such-model")
    with pytest.raises(BayevalInputError, match="calibration.training"):
        load_config("rtc-default").calibration.__class__(training="some")


# --- the RTC chain -----------------------------------------------------------------------------------------
def test_rtc_estimate_shapes_and_range(data):
    est = RTCEstimator("rtc-default").estimate(data)
    assert est.topics == data.topics and not est.has_draws
    for tr, p in zip(data, est.p, strict=True):
        assert p.shape == (tr.n_docs,) and np.all((p > 0) & (p < 1))
    probs = est.to_probabilities()
    n_unj = sum(int((~tr.judged).sum()) for tr in data)
    assert sum(len(v) for v in probs.by_topic.values()) == n_unj


def test_warm_start_reuses_unchanged_topics_and_finds_the_same_fit(collection, data):
    # judge 8 more documents of the first two topics only: the other topics' rank priors do not change
    extra = [(tr.topic, d) for tr in list(data)[:2] for d in tr.docnos[~tr.judged][:4]]
    qrels = collection.judgments.to_frame()
    more = [{"topic": t, "docno": d, "grade": collection.qrels.grade_of(t, d) or 0} for t, d in extra]
    judged = Qrels.from_frame(pd.concat([qrels, pd.DataFrame(more)], ignore_index=True))
    data2 = RankData.build(collection.runs, judged, depth=50)
    est = RTCEstimator("rtc-mtc")
    first = est.fit(data, "map")
    cold = est.fit(data2, "map")
    warm = est.fit(data2, "map", warm_start=first)
    th_first = first.rank.point()["theta"]
    th_cold, th_warm = cold.rank.point()["theta"], warm.rank.point()["theta"]
    assert np.array_equal(th_warm[2:], th_first[2:])  # reused as they were
    assert not np.allclose(th_warm[:2], th_first[:2])  # refitted
    assert np.allclose(th_warm, th_cold, atol=1e-9, rtol=0)
    for a, b in zip(cold.probabilities(draws=None).p, warm.probabilities(draws=None).p, strict=True):
        assert np.allclose(a, b, atol=1e-9, rtol=0)
    with pytest.raises(BayevalInputError, match="warm_start"):
        est.fit(data2, "map", warm_start="previous")


def test_rtc_beats_baselines_on_synthetic_heldout(collection, data):
    targets, labels = heldout_targets(data, collection.qrels)
    split = HeldOutSplit(data, targets, labels)
    rtc = split.score(RTCEstimator("rtc-default").estimate(data).p)
    uni = split.score(uniform_probabilities(data).p)
    smo = split.score(smoothed_probabilities(data).p)
    assert rtc["auc"] > 0.75
    assert rtc["log_loss"] < min(uni["log_loss"], smo["log_loss"], rtc["base_log_loss"])


def test_rtc_laplace_draws_and_extra_expert(data, collection, tmp_path):
    # an "LLM" expert: the truth blurred
    rng = np.random.default_rng(0)
    truth = {t: {d: float(np.clip((g > 0) * 0.7 + rng.normal(0.15, 0.1), 0.01, 0.99))
                 for d, g in zip(tj.docnos, tj.grades, strict=True)}
             for t, tj in collection.qrels.topic_judgments.items()}
    from bayeval.data import RelevanceProbabilities
    from bayeval.io.probabilities import write_probabilities
    path = tmp_path / "llm.txt"
    write_probabilities(RelevanceProbabilities(truth), path)
    fit = RTCEstimator().fit(data, "laplace", extra={"llm": path}, draws=100, chains=2, seed=1)
    assert fit.aggregation.spec.coords["expert"][-1] == "llm"
    assert fit.aggregation.map_estimate()["lam"][-1] > 0.5  # a good expert gets weight
    est = fit.probabilities(draws=50, seed=1)
    assert est.has_draws and est.draws[0].shape == (50, data[0].n_docs)
    assert np.allclose(est.p[0], est.draws[0].mean(0), atol=1e-6)
    # parameter uncertainty: draws of p differ
    assert np.all(est.draws[0].std(0) > 0)


def test_estimate_probabilities_dispatch(data):
    u = estimate_probabilities(data, "uniform")
    assert np.all(u.p[0] == 0.5)
    s = estimate_probabilities(data, "smoothed")
    tr = data[0]
    assert s.p[0][0] == pytest.approx((tr.num_rel + 1) / (tr.num_rel + tr.num_nonrel + 2))
    with pytest.raises(BayevalInputError, match="fit"):
        estimate_probabilities(data, "rtc", fit="exact")
    with pytest.raises(BayevalInputError, match="exactly one"):
        estimate_probabilities(data, "similarity")


def test_similarity_from_embeddings_and_texts(data, collection):
    rng = np.random.default_rng(0)
    # embeddings: relevant documents cluster around one direction
    emb = {}
    for tj in collection.qrels.topic_judgments.values():
        for d, g in zip(tj.docnos, tj.grades, strict=True):
            emb[d] = (np.array([3.0, 0, 0, 0]) if g > 0 else np.array([0, 1.0, 0, 0])) + rng.normal(0, 0.7, 4)
    est = estimate_probabilities(data, "similarity", embeddings=emb)
    targets, labels = heldout_targets(data, collection.qrels)
    s = HeldOutSplit(data, targets, labels).score(est.p)
    assert s["auc"] > 0.9
    texts = {d: ("relevant topic words " if v[0] > 1.5 else "other filler words ") + f"w{i % 7}"
             for i, (d, v) in enumerate(emb.items())}
    est2 = estimate_probabilities(data, "similarity", texts=texts)
    assert HeldOutSplit(data, targets, labels).score(est2.p)["auc"] > 0.8


def test_similarity_matrix_equals_embeddings(data):
    from bayeval.relevance import SimilarityRegression
    docs = sorted({d for tr in data for d in tr.docnos})
    rng = np.random.default_rng(1)
    V = rng.normal(size=(len(docs), 5))
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    a = SimilarityRegression.from_matrix(data, docs, V @ V.T).find_map()
    b = SimilarityRegression.from_embeddings(data, dict(zip(docs, V, strict=True))).find_map()
    np.testing.assert_allclose(a["beta"], b["beta"], atol=1e-8)


# --- Bayesian confidence ----------------------------------------------------------------------------------
def test_bayesian_confidence_point_estimate_matches_plugin(data):
    est = RTCEstimator().estimate(data)  # no draws: the Monte Carlo confidence estimates the plug-in one
    bc = bayesian_confidence(data, est, draws=4000, seed=1)
    f = bc.to_frame()
    assert not bc.parameter_uncertainty
    assert np.abs(f["p_less_bayes"] - f["p_less_plugin"]).max() < 0.05
    assert "plug-in" in bc.summary()


def test_bayesian_confidence_with_draws_propagates_parameter_uncertainty(data):
    """Law of total variance: Var[ΔMAP] = E_p[Var(ΔMAP | p)] + Var_p(E[ΔMAP | p]). Monte Carlo over the Laplace
    draws of p and the exact moments per draw combined over the draws agree (up to MC error, sd of a variance
    ≈ Var·√(2/4000) = 2%), and the second term is not negligible here: the draws' spread of E[ΔMAP | p] exceeds
    the plug-in variance. Replacing the draws by copies of the point estimate makes that term 0 and fails."""
    from bayeval.expected import compare_systems

    est = RTCEstimator().estimate(data, "laplace", draws=200, chains=2, p_draws=200, seed=2)
    bc = bayesian_confidence(data, est, draws=4000, seed=2)
    assert bc.parameter_uncertainty
    mc_var = bc.bayesian.all_variance
    closed = bayesian_confidence(data, est, method="exact", closed_form_draws=200)
    np.testing.assert_allclose(closed.bayesian.all_variance, mc_var, rtol=0.12)
    np.testing.assert_allclose(closed.bayesian.all_expected, bc.bayesian.all_expected,
                               atol=4 * float(np.sqrt(mc_var.max() / 4000)))
    draws = est.arrays(draws=True)
    between = np.var([compare_systems(data, [p[d] for p in draws], method="exact").all_expected
                      for d in range(draws[0].shape[0])], axis=0)
    plugin_var = bc.plugin.all_variance
    assert np.all(between > plugin_var)
    assert np.all(closed.bayesian.all_variance > 2 * plugin_var)


# --- scores and diagnostics -------------------------------------------------------------------------------
def test_scores_by_hand():
    s = score_probabilities([1, 0], [0.8, 0.4])
    assert s["log_loss"] == pytest.approx(-(np.log(0.8) + np.log(0.6)) / 2)
    assert s["brier"] == pytest.approx((0.2**2 + 0.4**2) / 2)
    assert s["auc"] == 1.0 and s["mean_p"] == pytest.approx(0.6)


def test_reliability_table_counts():
    rng = np.random.default_rng(0)
    p = rng.random(10000)
    y = (rng.random(10000) < p).astype(float)
    t = reliability_table(y, p, bins=5)
    assert t["n"].sum() == 10000
    np.testing.assert_allclose(t["rate"], t["mean_p"], atol=0.03)


def test_compare_priors(collection, data):
    """Each row scores its configuration's p on the held-out judgments; ``best`` picks the best row."""
    targets, labels = heldout_targets(data, collection.qrels)
    split = HeldOutSplit(data, targets, labels)
    names = ["rtc-default", "rtc-mtc", "smoothed"]
    cmp = compare_priors(split, names, p_draws=50, draws=50, chains=2)
    tab = cmp.to_frame()
    assert list(tab.index) == names
    y = np.concatenate(labels).astype(float)
    for name in names:
        # an independent log loss of the configuration's p on the held-out targets
        p = np.concatenate([cmp.estimates[name].p[t][targets[t]] for t in range(len(targets))])
        p = np.clip(p, 1e-6, 1 - 1e-6)
        assert tab.loc[name, "log_loss"] == pytest.approx(-np.mean(y * np.log(p) + (1 - y) * np.log1p(-p)),
                                                          rel=1e-6)
        assert tab.loc[name, "n"] == len(y)
    # a point estimate's ELPD is minus n times its log loss; a model's comes from its draws of p
    row = tab.loc["smoothed"]
    assert row["elpd"] == pytest.approx(-row["n"] * row["log_loss"], rel=1e-9)
    est = cmp.estimates["rtc-default"]
    assert est.has_draws
    P = np.concatenate([d[:, t] for d, t in zip(est.draws, targets, strict=True)], axis=1)
    P = np.clip(P.astype(np.float64), 1e-6, 1 - 1e-6)
    elpd = np.sum(np.log(np.mean(np.where(y == 1, P, 1 - P), axis=0)))
    assert tab.loc["rtc-default", "elpd"] == pytest.approx(elpd, rel=1e-9)
    assert cmp.best("elpd") == names[int(np.argmax(tab["elpd"].to_numpy()))]
    assert cmp.best("log_loss") == names[int(np.argmin(tab["log_loss"].to_numpy()))]
    assert cmp.best("auc") == names[int(np.argmax(tab["auc"].to_numpy()))]


def test_reliability_diagram_draws():
    """The plotted points are the reliability table's (mean p, observed rate) with its Wilson intervals."""
    import matplotlib
    matplotlib.use("Agg")
    from bayeval.relevance import reliability_diagram
    rng = np.random.default_rng(3)
    p = rng.random(400)
    y = (rng.random(400) < p).astype(float)
    ax = reliability_diagram(y, p, bins=4, label="m")
    t = reliability_table(y, p, bins=4)
    points = [ln for ln in ax.get_lines() if ln.get_marker() == "o"]
    assert len(points) == 1
    np.testing.assert_allclose(np.asarray(points[0].get_xdata(), float), t["mean_p"])
    np.testing.assert_allclose(np.asarray(points[0].get_ydata(), float), t["rate"])
    bars = ax.containers[0].lines[2][0].get_segments()
    np.testing.assert_allclose([s[0, 1] for s in bars], t["rate_lo"])
    np.testing.assert_allclose([s[1, 1] for s in bars], t["rate_hi"])
    assert ax.get_legend().get_texts()[0].get_text() == "m"
    import matplotlib.pyplot as plt
    plt.close(ax.figure)


# --- CLI ------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def collection_files(tmp_path_factory, collection):
    from bayeval.io.qrels import write_qrels
    from bayeval.io.runs import write_run
    d = tmp_path_factory.mktemp("col")
    (d / "runs").mkdir()
    for r in collection.runs:
        write_run(r, d / "runs" / r.name)
    write_qrels(collection.judgments, d / "qrels")
    return d


@pytest.mark.parametrize("model", ["rtc", "rtc-mtc", "uniform", "smoothed"])
def test_cli_estimate_writes_unjudged_pooled(collection_files, model, data):
    from bayeval.cli.main import main
    from bayeval.io.probabilities import read_probabilities
    out = collection_files / f"p-{model}.txt"
    rc = main(["estimate", str(collection_files / "qrels"), str(collection_files / "runs"), "--model", model,
               "--depth", "50", "--out", str(out), "--format", "csv"])
    assert rc == 0
    probs = read_probabilities(out)
    for tr in data:
        pooled_unjudged = set(tr.docnos[(np.asarray(tr.ranks) > 0).any(1) & ~tr.judged])
        assert set(probs.by_topic[tr.topic]) == pooled_unjudged


@pytest.mark.parametrize("model", ["rtc", "hier-default"])
def test_cli_model_depth_reaches_every_rank_model(collection_files, model, data, tmp_path, capsys):
    """``--model-depth`` sets the rank model's positions of every model that has one, in estimate,
    evaluate and report alike: the written p is the library's at that depth, and another depth differs."""
    from bayeval.cli.main import main
    from bayeval.io.probabilities import read_probabilities
    from bayeval.relevance import load_config
    assert "depth" in load_config(model).accepts
    args = [str(collection_files / "qrels"), str(collection_files / "runs"), "--model", model, "--depth", "50"]
    written = {}
    for d in (4, 40):
        assert main(["estimate", *args, "--model-depth", str(d), "--out", str(tmp_path / f"{d}.txt")]) == 0
        written[d] = read_probabilities(tmp_path / f"{d}.txt").by_topic
    est = estimate_probabilities(data, model, depth=4)
    for tr, p in zip(data, est.p, strict=True):
        got = written[4][tr.topic]
        np.testing.assert_allclose([got[d] for d in got], p[[list(tr.docnos).index(d) for d in got]], rtol=1e-5)
    assert any(abs(written[4][t][d] - written[40][t][d]) > 1e-3 for t in written[4] for d in written[4][t])
    capsys.readouterr()
    for cmd in (["evaluate", "--format", "csv"], ["report", "--fit", "map"]):
        printed = []
        for d in (4, 40):
            assert main([cmd[0], *args, *cmd[1:], "--model-depth", str(d)]) == 0
            printed.append(capsys.readouterr().out)
        assert printed[0] != printed[1], cmd[0]


def test_cli_estimate_laplace_draws_out(collection_files, tmp_path):
    import arviz as az

    from bayeval.cli.main import main
    nc = tmp_path / "d.nc"
    rc = main(["estimate", str(collection_files / "qrels"), str(collection_files / "runs"), "--fit", "laplace",
               "--posterior-draws", "50", "--chains", "2", "--p-draws", "20", "--out", str(tmp_path / "p.txt"),
               "--draws-out", str(nc), "--format", "csv"])
    assert rc == 0
    idata = az.from_netcdf(nc)
    assert idata.posterior["p_1"].shape[:2] == (1, 20)


def test_cli_estimate_errors(collection_files, capsys):
    from bayeval.cli.main import main
    args = ["estimate", str(collection_files / "qrels"), str(collection_files / "runs")]
    assert main([*args, "--draws-out", "x.nc"]) == 2
    assert "--draws-out" in capsys.readouterr().err
    assert main([*args, "--model", "nope"]) == 2
    assert main([*args, "--model", "similarity"]) == 2
    assert main([*args, "--extra", "bad"]) == 2


def test_rtc_mtc_config_is_the_paper(data):
    """The paper's chain: q* = 0 for unretrieved, calibration on q*, probability features, no intercept."""
    fit = RTCEstimator("rtc-mtc").fit(data)
    assert fit.aggregation.spec.names == ("lam",)
    theta = fit.rank.map_estimate()["theta"]
    q = fit.models["rank"].q_star(theta)
    assert np.all(q[:, -1] == 0.0)
    cfg = load_config("rtc-mtc")
    assert replace(cfg.calibration, smoothing=1.0).smoothing_cells == "all"
    # features are σ(A_j + B_j q*) of each system's rank
    tr, des = data[0], fit.models["design"]
    cp = fit.calibration.map_estimate()
    want = expit(cp["A"][None, :] + cp["B"][None, :] * q[0][des.positions[0]])
    np.testing.assert_allclose(fit.features[0], want)
    # p of an unjudged document: σ(Σ_j λ_j f_ij) on the probability features themselves (not their logits), no λ0
    lam = fit.aggregation.map_estimate()["lam"]
    unjudged = ~tr.judged
    p = fit.probabilities(draws=None).p[0]
    np.testing.assert_allclose(p[unjudged], expit(fit.features[0][unjudged] @ lam), rtol=1e-9)
    assert not np.allclose(p[unjudged], expit(logit(np.clip(fit.features[0][unjudged], 1e-6, 1 - 1e-6)) @ lam))


def test_aggregation_validation():
    with pytest.raises(BayevalInputError, match="y"):
        ExpertAggregation(np.zeros((3, 2)), np.zeros(2), ("a", "b"))
    with pytest.raises(BayevalInputError, match="experts"):
        ExpertAggregation(np.zeros((3, 2)), np.zeros(3), ("a",))
    assert AggregationPrior().intercept is False


# --- fast-path structure: results unchanged --------------------------------------------------------------------
def test_offset_sparse_design_equals_dense():
    from bayeval.relevance._kernels import DenseDesign, OffsetSparseDesign
    rng = np.random.default_rng(5)
    n, p, G = 3000, 12, 4
    g = rng.integers(G, size=n)
    base = rng.normal(size=(G, p))
    X = base[g].copy()
    m = rng.random((n, p)) < 0.15
    X[m] = rng.normal(size=int(m.sum()))
    sp, de = OffsetSparseDesign.from_dense(X, g, base), DenseDesign(X)
    v, beta = rng.random(n), rng.normal(size=p)
    np.testing.assert_allclose(sp.gram(v), de.gram(v), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(sp.dot(beta), X @ beta, atol=1e-12)
    np.testing.assert_allclose(sp.rdot(v), X.T @ v, atol=1e-9)
    np.testing.assert_allclose(sp.dense(), X, atol=1e-15)
    from scipy.sparse import csr_matrix  # S holds exactly the nonzero entries of X − B_g, row by row
    ref = csr_matrix(X - base[g])
    assert all(np.array_equal(getattr(sp.S, k), getattr(ref, k)) for k in ("indptr", "indices", "data"))


def test_offset_sparse_gram_bit_identical_to_scipy_product():
    """The S^T D S kernel of the aggregation Gram matrix sums the same products in the same order as scipy's
    sparse product it replaced (fits unchanged to the last bit), negative and zero weights included."""
    from scipy.sparse import csr_matrix

    from bayeval.relevance._kernels import OffsetSparseDesign
    rng = np.random.default_rng(11)
    n, p = 2000, 9
    S = csr_matrix(rng.normal(size=(n, p)) * (rng.random((n, p)) < 0.3))
    v = rng.normal(size=n)
    v[::7] = 0.0
    d = OffsetSparseDesign.from_dense(S.toarray(), np.zeros(n, dtype=np.int64), np.zeros((1, p)))
    Sv = d.S.copy()
    Sv.data *= v[d.row]
    ref = (d.S.T.tocsr() @ Sv).toarray()
    got = d.gram(v)
    assert np.array_equal(got, ref)
    assert not np.array_equal(got, got.T)  # each cell keeps its own rounding: the kernel is not mirrored


@pytest.mark.parametrize("smoothing_cells", ["judged", "all"])
@pytest.mark.parametrize("depth", [50, 7])
def test_complete_prefix_cells_are_the_per_system_cells_in_order(data, smoothing_cells, depth):
    """The calibration cells of ``training = "complete"`` (built per topic at once) are, in the same order, the
    cells of a loop over topics and systems: each system's completely judged prefix, rank by rank, and the
    smoothing cells (ranks 0..k-1 then the unretrieved cell with ``smoothing_cells = "all"``)."""
    from bayeval.relevance.rtc import _calibration_input, _complete_prefix_cells, _design

    cfg = replace(load_config("rtc-default").calibration, smoothing_cells=smoothing_cells)
    fit = RTCEstimator("rtc-default").fit(data)
    D = min(depth, fit.models["rank"].depth)
    des = _design(data, D)
    q = _calibration_input(fit.models["rank"], fit.rank.point()["theta"], cfg)
    q = np.concatenate([q[:, :D], q[:, -1:]], axis=1)  # positions 0..D-1, then the unretrieved one
    got = _complete_prefix_cells(data, des, q, cfg)
    ref = {k: [] for k in ("system", "x", "n_rel", "n_nonrel", "smooth_system", "smooth_x")}
    for t, tr in enumerate(data):
        for j in range(len(data.systems)):
            k = int(min(tr.lengths[j], D))
            c = int(des.complete[t][j])
            docs = tr.ranked[j, :c]
            ref["system"] += [j] * c
            ref["x"] += list(q[t][:c])
            ref["n_rel"] += list(tr.relevant[docs].astype(float))
            ref["n_nonrel"] += list((tr.judged[docs] & ~tr.relevant[docs]).astype(float))
            smooth = list(q[t][:k]) + [q[t][D]] if smoothing_cells == "all" else list(q[t][:c])
            ref["smooth_system"] += [j] * len(smooth)
            ref["smooth_x"] += smooth
    assert got.x.size and np.any(got.n_rel > 0) and np.any(got.n_nonrel > 0)
    for k, v in ref.items():
        assert np.array_equal(getattr(got, k), np.asarray(v, dtype=getattr(got, k).dtype)), k


def test_platt_sums_are_the_bincounts_bit_for_bit():
    """The calibration stage's per-system sums of its score and negative Hessian terms (one numba pass) equal the
    five bincounts they replaced to the last bit, rows in any order (fits unchanged)."""
    from bayeval.relevance._kernels import platt_sums

    rng = np.random.default_rng(5)
    n, S = 5000, 13
    sys_ = rng.integers(0, S - 1, n)  # unsorted; the last system has no row
    x, y, w, s = rng.normal(size=n), rng.random(n), rng.random(n) * 3, expit(rng.normal(size=n))
    r, v = w * (y - s), w * s * (1 - s)
    ref = [np.bincount(sys_, c, minlength=S) for c in (r, r * x, v, v * x, v * x * x)]
    got = platt_sums(sys_, x, y, w, s, S)
    assert all(np.array_equal(a, b) for a, b in zip(got, ref, strict=True)) and got[0][-1] == 0.0


def test_rtc_aggregation_structure_hint_changes_nothing(data):
    fit = RTCEstimator("rtc-default").fit(data)
    m = fit.models["aggregation"]
    assert m.row_groups is not None
    plain = ExpertAggregation(m.X, m.y, m.experts, prior=m.prior)
    a, b = m.mode(), plain.mode()
    np.testing.assert_allclose(a.x, b.x, atol=1e-9)
    np.testing.assert_allclose(a.blocks[0][1], b.blocks[0][1], rtol=1e-10)
    # the hint must describe X: a baseline that disagrees everywhere is still exact (S is just dense)
    wrong = ExpertAggregation(m.X, m.y, m.experts, prior=m.prior, row_groups=m.row_groups,
                              group_baseline=m.group_baseline + 1.0)
    np.testing.assert_allclose(wrong.mode().x, b.x, atol=1e-9)
    with pytest.raises(BayevalInputError, match="row_groups"):
        ExpertAggregation(m.X, m.y, m.experts, row_groups=m.row_groups)


def test_calibration_of_a_system_with_one_cell_is_the_minimum_norm_mode():
    # system "a" has one judged cell (x = 0.3: 1 relevant, smoothing 1 at that cell): only A + 0.3 B is
    # identified, and it must equal logit((1 + 1) / (1 + 2)); system "b" has no cell at all
    from bayeval.relevance import PlattCalibration
    from bayeval.relevance.config import CalibrationPrior

    prior = CalibrationPrior(smoothing=1.0, smoothing_cells="judged", intercept_sd=None, slope_sd=None)  # flat
    m = PlattCalibration(np.array([0, 2, 2]), np.array([0.3, 0.2, 0.8]), np.array([1.0, 1.0, 0.0]),
                         np.array([0.0, 2.0, 1.0]), np.array([0, 2, 2]), np.array([0.3, 0.2, 0.8]), ("a", "b", "c"),
                         prior)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow on the way
        fit = m.fit("laplace", draws=500, chains=1, seed=0)
    A, B = fit.mode.x[:3], fit.mode.x[3:]
    assert np.isfinite(fit.mode.logpost) and fit.mode.converged
    assert A[0] + 0.3 * B[0] == pytest.approx(logit(2 / 3), abs=1e-10)
    assert A[0] / B[0] == pytest.approx(1 / 0.3)  # (A, B) ∥ (1, x): the minimum-norm point of the line
    assert A[1] == B[1] == 0.0  # nothing to fit: q = σ(0)
    # Laplace draws move only along the identified direction (A + 0.3 B varies, the orthogonal one does not)
    dA, dB = fit.draws("A")[:, 0] - A[0], fit.draws("B")[:, 0] - B[0]
    assert np.std(dA + 0.3 * dB) > 0.1 and np.allclose(0.3 * dA - dB, 0.0, atol=1e-9)
    assert np.all(np.isfinite(fit.mode.sd()))


def test_calibration_merged_smoothing_rows_are_the_same_posterior():
    """Smoothing cells that coincide with the observed cells are merged into one row
    (y = (n⁺+s)/(n+2s), w = n+2s): the same log posterior as separate rows."""
    from bayeval.relevance import PlattCalibration
    from bayeval.relevance.config import CalibrationPrior
    m = simulate_calibration([-1.0, 0.5], [2.0, -1.0], cells_per_system=300, docs_per_cell=2, seed=8)
    prior = CalibrationPrior(smoothing=0.7)
    merged = PlattCalibration(m.system, m.x, m.n_rel, m.n_nonrel, m.system, m.x, m.systems, prior)
    perm = np.random.default_rng(0).permutation(len(m.x))  # same cells, another order: not merged
    separate = PlattCalibration(m.system, m.x, m.n_rel, m.n_nonrel, m.system[perm], m.x[perm], m.systems, prior)
    assert len(merged._rows()[0]) == len(m.x) and len(separate._rows()[0]) == 2 * len(m.x)
    np.testing.assert_allclose(merged.mode().x, separate.mode().x, atol=1e-10)
    A, B = np.array([0.3, -0.2]), np.array([1.0, 0.5])
    assert merged.log_posterior(A, B) == pytest.approx(separate.log_posterior(A, B), rel=1e-12)


# --- real data: the shallow-pool held-out protocol on TREC-8 ----------------------------------------------------------
TREC8_SYSTEMS = ("INQ601", "INQ602", "Sab8A1", "Sab8A2", "ok8alx", "ok8amxc", "pir9Aatd", "weaver1", "att99atde",
                 "fub99a")


@pytest.mark.data
def test_trec8_heldout_protocol(shared_data):
    """docs/relevance.md's table: the paper's chain reproduces mtc-eval's over-estimation (measured for mtc-eval:
    log loss 0.337, AUC 0.601, mean p 0.182), rtc-default meets the three goals."""
    from bayeval.io import read_qrels, read_runs
    from bayeval.relevance import shallow_pool_split
    d = shared_data / "trec8"
    qrels = read_qrels(d / "qrels.txt.gz")
    all_runs = read_runs(sorted((d / "runs").glob("input.*.gz")))  # the depth-10 pool is over all 129 runs
    split = shallow_pool_split(all_runs, qrels, TREC8_SYSTEMS, judged_depth=10, depth=100)
    assert split.n_targets == 11459 and int(np.concatenate(split.labels).sum()) == 917
    paper = split.score(estimate_probabilities(split.data, "rtc-mtc").p)
    assert paper["log_loss"] > paper["base_log_loss"] and paper["mean_p_ratio"] > 2
    ours = split.score(estimate_probabilities(split.data, "rtc-default").p)
    assert ours["log_loss"] < ours["base_log_loss"]
    assert ours["auc"] >= 0.75
    assert abs(ours["mean_p_ratio"] - 1) <= 0.25


def test_run_effect_draws_share_one_offset_per_run_across_topics():
    from bayeval.relevance import run_effect_draws

    col = make_collection(n_topics=3, n_systems=3, n_docs=60, depth=15, judged_depth=2, seed=5)
    data = RankData.build(col.runs, col.judgments, depth=15)
    point = [np.full(tr.n_docs, 0.3) for tr in data]
    out = run_effect_draws(data, point, 1.5, draws=4000, seed=1)
    z = [logit(np.clip(d.astype(np.float64), 1e-9, 1 - 1e-9)) - logit(0.3) for d in out]
    # a document only run 0 retrieves moves by u_0 in every topic: the same offset in every topic, per draw
    only0 = [np.flatnonzero(~tr.judged & (tr.ranks[:, 0] > 0) & (tr.ranks[:, 1:] == 0).all(axis=1)) for tr in data]
    t0, t1 = [t for t in range(len(data)) if len(only0[t])][:2]
    np.testing.assert_allclose(z[t0][:, only0[t0][0]], z[t1][:, only0[t1][0]], atol=1e-4)
    assert np.std(z[t0][:, only0[t0][0]]) == pytest.approx(1.5, rel=0.05)
    # a document two runs retrieve moves by the mean of two effects: sd 1.5/sqrt(2)
    t, i = next((t, int(i)) for t, tr in enumerate(data)
                for i in np.flatnonzero(~tr.judged & ((tr.ranks > 0).sum(axis=1) == 2)))
    assert np.std(z[t][:, i]) == pytest.approx(1.5 / np.sqrt(2), rel=0.06)
    tr = data[0]
    # judged documents are their judgments; sd = 0 returns the input
    assert np.all(out[0][:, tr.judged] == tr.relevant[tr.judged])
    assert np.allclose(run_effect_draws(data, point, 0.0, draws=3)[1], 0.3 * ~data[1].judged + data[1].relevant)
    with pytest.raises(BayevalInputError, match="sd"):
        run_effect_draws(data, point, -1.0)
