"""Proper scores of P(Δ < 0): bayeval.stats.forecast and their place in the robustness statistics."""

import numpy as np
import pandas as pd
import pytest

from bayeval.errors import BayevalInputError
from bayeval.stats import brier_score, forecast_scores, log_score, reliability_bins, wilson_interval


def test_scores_are_proper_expected_score_is_smallest_at_the_true_probability():
    q = 0.7  # P(Δ < 0) of the truth
    grid = np.linspace(0.01, 0.99, 99)

    def expected(score):
        return np.array([q * score([p], [-1.0])[0] + (1 - q) * score([p], [1.0])[0] for p in grid])

    for score in (brier_score, log_score):
        assert grid[np.argmin(expected(score))] == pytest.approx(q)


def test_swapping_the_pair_leaves_every_score_unchanged_and_ties_prefer_one_half():
    rng = np.random.default_rng(3)
    p = rng.uniform(size=50)
    d = rng.choice([-1.0, 0.0, 1.0], size=50)
    np.testing.assert_allclose(brier_score(p, d), brier_score(1 - p, -d))
    np.testing.assert_allclose(log_score(p, d), log_score(1 - p, -d))
    ties = np.zeros(3)
    assert np.argmin(brier_score([0.2, 0.5, 0.9], ties)) == 1
    assert np.argmin(log_score([0.2, 0.5, 0.9], ties)) == 1


def test_reliability_bins_accept_a_calibrated_forecaster_and_flag_an_overconfident_one():
    rng = np.random.default_rng(11)
    q = rng.beta(0.5, 0.5, size=20000)
    d = np.where(rng.uniform(size=q.size) < q, -1.0, 1.0)
    good = reliability_bins(q, d, level=0.999)
    assert good["consistent"].all()
    sharp = np.where(q > 0.5, 0.999, 0.001)  # claims near-certainty for every call
    bad = reliability_bins(sharp, d)
    assert not bad["consistent"].all()
    assert forecast_scores(q, d).brier < forecast_scores(sharp, d).brier
    assert forecast_scores(q, d).log_score < forecast_scores(sharp, d).log_score
    # the frequency lies inside its own Wilson interval and n adds up
    nz = good[good["n"] > 0]
    assert ((nz["lower"] <= nz["frequency"]) & (nz["frequency"] <= nz["upper"])).all()
    assert good["n"].sum() == q.size


def test_wilson_interval_matches_the_closed_form_and_is_nan_for_no_trials():
    lo, hi = wilson_interval([0, 10], [10, 10])
    z2 = 1.959963984540054 ** 2
    assert float(hi[0]) == pytest.approx(z2 / (10 + z2))
    assert float(lo[1]) == pytest.approx(10 / (10 + z2))
    assert np.isnan(wilson_interval(0, 0)[0])


def test_bad_forecasts_are_rejected_with_the_argument_named():
    with pytest.raises(BayevalInputError, match="p_less"):
        brier_score([1.2], [0.1])
    with pytest.raises(BayevalInputError, match="shapes differ"):
        log_score([0.2, 0.3], [0.1])
    with pytest.raises(BayevalInputError, match="edges"):
        reliability_bins([0.2], [0.1], edges=(0.0, 0.5))


def test_robustness_statistics_split_proper_scores_by_pair_type_and_run_type():
    from bayeval.experiments import robustness_statistics

    rng = np.random.default_rng(5)
    n = 400
    runs = np.array(["A", "B", "M", "C"])
    ra, rb = rng.choice(4, n), rng.choice(4, n)
    f = pd.DataFrame({"method": "rtc", "confidence": "delta", "trial": np.repeat(np.arange(4), n // 4),
                      "pair_type": rng.choice(["both", "one", "none"], n), "similarity": 0.2,
                      "run_a": runs[ra], "run_b": runs[rb], "p_less": rng.uniform(size=n),
                      "true_delta": rng.normal(size=n), "judgments": 10, "tau": 0.5, "decided": True,
                      "seconds": 1.0})
    st = robustness_statistics(f, manual=["M"])
    pr = st.proper.set_index(["split", "group"])
    assert set(pr.index) == {("all", "all"), ("pair_type", "both"), ("pair_type", "one"), ("pair_type", "none"),
                             ("run_type", "automatic"), ("run_type", "manual")}
    man = f["run_a"].eq("M") | f["run_b"].eq("M")
    assert pr.loc[("run_type", "manual"), "pairs"] == man.sum()
    assert pr.loc[("run_type", "manual"), "brier"] == pytest.approx(
        brier_score(f.loc[man, "p_less"], f.loc[man, "true_delta"]).mean())
    assert pr.loc[("all", "all"), "brier"] == pytest.approx(st.overall["brier"].iloc[0])
    assert pr.loc[("all", "all"), "W_mean"] == pytest.approx(st.overall["W_mean"].iloc[0])
    rel = st.reliability[st.reliability["split"] == "pair_type"]
    assert rel["n"].sum() == n
    assert "run_type" not in set(robustness_statistics(f).proper["split"])
