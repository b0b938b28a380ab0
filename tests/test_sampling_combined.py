"""The empirical-Bayes combination of the model's and the sample's estimates (bayeval.sampling.combined)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bayeval.errors import BayevalInputError
from bayeval.sampling import combine_differences, combine_means
from bayeval.sampling._combined_kernels import (
    fay_herriot_spread,
    group_shift_terms,
    grouped_moment_spread,
    moment_spread,
    weigh,
)


def _pairs(rng, n=200, rho=0.5, sigma_u=0.02):
    """Differences with a design-based error e (se s) and a model that carries ρ·e plus an error of its own."""
    theta = rng.normal(0.0, 0.04, n)
    s = rng.uniform(0.01, 0.03, n)
    e = rng.normal(0.0, s)
    u = rng.normal(0.0, sigma_u, n)
    t = np.full(n, 0.004)                                   # the model's own (far too small) standard error
    return theta, theta + e, s, theta + rho * e + u, t


def test_spread_at_its_limits_gives_the_sample_and_the_model():
    rng = np.random.default_rng(0)
    _, y, s, m, t = _pairs(rng, n=30)
    inf = combine_differences(y, s, m, t, share=0.0, spread=np.inf)
    assert np.array_equal(inf.mean, y) and np.allclose(inf.se, s) and np.all(inf.weight == 1)
    zero = combine_differences(y, s, m, t, share=0.0, spread=0.0, slope=False)
    assert np.array_equal(zero.mean, m) and np.all(zero.se == 0) and np.all(zero.weight == 0)
    assert np.array_equal(zero.p_less(), (m < 0).astype(float))
    c = np.diag(s ** 2) + 1e-5
    runs = combine_means(y, c, m, t, share=0.3, spread=np.inf)
    assert np.allclose(runs.mean, y) and np.allclose(runs.se, np.sqrt(np.diag(c)))


def test_a_fixed_spread_is_the_normal_posterior():
    rng = np.random.default_rng(1)
    _, y, s, m, t = _pairs(rng, n=20)
    sig2 = 0.02 ** 2
    got = combine_differences(y, s, m, t, share=0.0, spread=sig2, slope=False)
    prec = 1 / sig2 + 1 / s ** 2
    assert np.allclose(got.mean, (m / sig2 + y / s ** 2) / prec)
    assert np.allclose(got.se, 1 / np.sqrt(prec))
    assert np.allclose(got.p_less(), stats.norm.cdf(-got.mean * np.sqrt(prec)))
    # with a share ρ the model's estimate is first freed of the sample's error: m̃ = (m - ρy)/(1 - ρ)
    got = combine_differences(y, s, m, t, share=0.5, spread=sig2, slope=False)
    assert np.allclose(got.mean, ((2 * m - y) / sig2 + y / s ** 2) / prec)
    # with the slope the synthetic estimate is β̂ m̃, β̂ the least-squares slope of y on m̃
    x = 2 * m - y
    got = combine_differences(y, s, m, t, share=0.5, spread=np.inf)
    assert got.slope == pytest.approx(np.sum(y * x) / np.sum(x * x))


def test_weigh_is_the_best_linear_combination_of_correlated_estimates():
    # direct error variance 4, synthetic 1, covariance 0.5: w = (1 - 0.5)/(4 + 1 - 1) = 1/8
    mean, var, w = weigh(np.array([1.0]), np.array([4.0]), np.array([0.0]), np.array([1.0]), np.array([0.5]))
    assert w[0] == pytest.approx(0.125) and mean[0] == pytest.approx(0.125)
    grid = np.linspace(0, 1, 1001)
    direct = grid ** 2 * 4 + (1 - grid) ** 2 + 2 * grid * (1 - grid) * 0.5
    assert var[0] == pytest.approx(direct.min(), abs=1e-6)


def test_moment_estimates_recover_the_spread():
    rng = np.random.default_rng(2)
    n = 20000
    s2 = rng.uniform(0.5, 2.0, n)
    r = rng.normal(0, np.sqrt(s2 + 1.5))
    assert moment_spread(r, s2, np.ones(n), centred=False) == pytest.approx(1.5, rel=0.05)
    assert fay_herriot_spread(r, s2) == pytest.approx(1.5, rel=0.05)
    a = rng.uniform(0.2, 3.0, n)
    r = rng.normal(0, np.sqrt(s2 + 0.7 * a)) + 5.0           # a common shift, removed by centring
    assert moment_spread(r, s2, a, centred=True) == pytest.approx(0.7, rel=0.05)
    assert fay_herriot_spread(rng.normal(0, 0.5, 50), np.ones(50)) == 0.0   # residuals smaller than the noise


def _coverage(share_used: float, *, spread="constant", zero=False, reps=60, rho=0.5):
    rng = np.random.default_rng(3)
    hits, briers = [], []
    for _ in range(reps):
        theta, y, s, m, t = _pairs(rng, rho=rho)
        got = combine_differences(y, s, m, t, share=share_used, spread=0.0 if zero else spread)
        lo, hi = got.interval()
        hits.append(np.mean((lo <= theta) & (theta <= hi)))
        briers.append(np.mean((got.p_less() - (theta < 0)) ** 2))
    return float(np.mean(hits)), float(np.mean(briers))


def test_combined_intervals_are_calibrated_in_simulation():
    """Model error σ_u = 0.02, sample se 0.01-0.03, the model carrying half the sample's error: the estimated
    spread gives 95% intervals that cover 93-97% and a Brier score below the sample's alone; the spread set to 0
    (the model trusted) covers far less."""
    cover, brier = _coverage(0.5)
    assert 0.93 <= cover <= 0.97
    rng = np.random.default_rng(3)
    sample_alone = []
    for _ in range(60):
        theta, y, s, *_ = _pairs(rng)
        sample_alone.append(np.mean((stats.norm.cdf(-y / s) - (theta < 0)) ** 2))
    assert brier < np.mean(sample_alone)
    assert _coverage(0.5, spread="model")[0] >= 0.90           # spread ∝ the model's se (constant here)
    assert _coverage(0.5, zero=True)[0] < 0.6
    assert _coverage(0.0)[0] < 0.92                            # the share ignored: the spread is under-estimated


def test_combined_means_cover_with_a_shifted_model_and_a_shared_sample():
    """Runs' means: the sample's errors share a common part (one sample for every run), the model is shifted by
    -0.03 and carries half the sample's error. Coverage 93-97% over 80 samples of 60 runs."""
    rng = np.random.default_rng(4)
    n, hits = 60, []
    for _ in range(80):
        theta = rng.uniform(0.1, 0.4, n)
        s_own = rng.uniform(0.01, 0.02, n)
        common = 0.012
        e = rng.normal(0, s_own) + rng.normal(0, common)
        c = np.diag(s_own ** 2) + common ** 2
        m = theta - 0.03 + 0.5 * e + rng.normal(0, 0.015, n)
        got = combine_means(theta + e, c, m, np.full(n, 0.003))
        lo, hi = got.interval()
        hits.append(np.mean((lo <= theta) & (theta <= hi)))
        assert got.shift == pytest.approx(0.06, abs=0.03)     # -c/(1 - ρ) = 0.03 / 0.5
    assert 0.93 <= np.mean(hits) <= 0.97


def _runs(rng, lab, shift_of, n=60, sigma_u=0.008):
    """Runs' means with a shared sampling error and a model shifted by ``shift_of[group]``."""
    theta = rng.uniform(0.1, 0.4, n)
    s_own = rng.uniform(0.01, 0.02, n)
    e = rng.normal(0, s_own) + rng.normal(0, 0.012)
    c = np.diag(s_own ** 2) + 0.012 ** 2
    m = theta - np.asarray(shift_of)[lab] + 0.5 * e + rng.normal(0, sigma_u, n)
    return theta, theta + e, c, m, np.full(n, 0.003)


def _group_coverage(lab, shift_of, use_groups, reps=80):
    rng = np.random.default_rng(5)
    hits = {g: [] for g in np.unique(lab)}
    for _ in range(reps):
        theta, y, c, m, t = _runs(rng, lab, shift_of, n=lab.size)
        lo, hi = combine_means(y, c, m, t, groups=lab if use_groups else None).interval()
        for g in hits:
            hits[g].append(np.mean(((lo <= theta) & (theta <= hi))[lab == g]))
    return {g: float(np.mean(v)) for g, v in hits.items()}


def test_one_group_is_the_common_shift_bit_for_bit():
    rng = np.random.default_rng(8)
    _, y, c, m, t = _runs(rng, np.zeros(60, int), [0.03])
    plain = combine_means(y, c, m, t)
    for labels in (np.zeros(60, int), np.array(["automatic"] * 60)):
        same = combine_means(y, c, m, t, groups=labels)
        for field in ("mean", "se", "weight", "spread", "group_shift"):
            assert np.array_equal(getattr(plain, field), getattr(same, field))
        assert same.shift == plain.shift


def test_a_shift_per_group_covers_where_one_shift_does_not():
    """52 automatic and 8 manual runs; the model under-estimates manual runs by 0.06, automatic ones by 0.03
    (TREC-8's pattern). With the groups both cover 93-97% (95.0 / 95.8% here); with one shift the manual runs
    keep half their extra bias and cover 90.2%."""
    lab = np.r_[np.zeros(52, int), np.ones(8, int)]
    grouped = _group_coverage(lab, [0.03, 0.06], True)
    assert all(0.93 <= v <= 0.97 for v in grouped.values()), grouped
    assert _group_coverage(lab, [0.03, 0.06], False)[1] < 0.92


def test_a_small_group_leans_on_the_sample():
    """A group of 3 runs: its shift is uncertain, and that uncertainty is carried (coverage stays >= 93%); a
    group of one run gets the sample's estimate and standard error exactly."""
    lab = np.r_[np.zeros(57, int), np.ones(3, int)]
    assert _group_coverage(lab, [0.03, 0.06], True)[1] >= 0.93
    rng = np.random.default_rng(9)
    _, y, c, m, t = _runs(rng, np.zeros(60, int), [0.03])
    alone = np.zeros(60, int)
    alone[7] = 1
    got = combine_means(y, c, m, t, groups=alone)
    assert got.mean[7] == pytest.approx(y[7], abs=1e-15)
    assert got.se[7] == pytest.approx(np.sqrt(c[7, 7]), rel=1e-12)
    assert got.weight[7] == 1.0


def test_grouped_moments_recover_the_spread():
    """Two groups with different shifts: the within-group moment equation recovers k² (the pooled one would
    take the shifts' difference for spread)."""
    rng = np.random.default_rng(3)
    n, k2s = 400, []
    lab = np.r_[np.zeros(300, int), np.ones(100, int)]
    for _ in range(200):
        s2 = rng.uniform(0.01, 0.03, n) ** 2
        c = np.diag(s2)
        scale = np.full(n, 0.02 ** 2)
        r = rng.normal(0, np.sqrt(s2)) + rng.normal(0, 0.02 * 2.0, n) + np.where(lab, 0.1, 0.0)
        shift, common, cross, size = group_shift_terms(r, c, lab)
        assert np.allclose(common, np.where(lab, s2[lab == 1].sum() / 100 ** 2, s2[lab == 0].sum() / 300 ** 2))
        assert np.allclose(cross, s2 / size) and np.allclose(shift, np.where(lab, r[lab == 1].mean(),
                                                                             r[lab == 0].mean()))
        k2s.append(grouped_moment_spread(r, s2, scale, lab, common))
    assert np.mean(k2s) == pytest.approx(4.0, rel=0.05)


@pytest.mark.parametrize("kwargs, name", [
    (dict(share=1.0), "share"), (dict(share=-0.1), "share"), (dict(spread="wide"), "spread"),
    (dict(spread=-1.0), "spread"), (dict(estimator="ml"), "estimator"), (dict(groups=[1, 2]), "groups")])
def test_bad_settings_are_named(kwargs, name):
    y = np.array([0.1, -0.1, 0.2])
    with pytest.raises(BayevalInputError, match=name):
        combine_differences(y, np.full(3, 0.01), y, np.full(3, 0.01), **kwargs)


def test_bad_arrays_are_named():
    y = np.array([0.1, -0.1, 0.2])
    with pytest.raises(BayevalInputError, match="model_delta"):
        combine_differences(y, np.full(3, 0.01), y[:2], np.full(2, 0.01))
    with pytest.raises(BayevalInputError, match="sample_se"):
        combine_differences(y, -np.ones(3), y, np.ones(3))
    with pytest.raises(BayevalInputError, match="sample_covariance"):
        combine_means(y, np.eye(2), y, np.ones(3))
    with pytest.raises(BayevalInputError, match="at least 3"):
        combine_means(y[:2], np.eye(2), y[:2], np.ones(2))
    with pytest.raises(BayevalInputError, match="estimator"):
        combine_means(y, np.eye(3), y, np.ones(3), estimator="fay-herriot")
    with pytest.raises(BayevalInputError, match="groups: one label per run"):
        combine_means(y, np.eye(3), y, np.ones(3), groups=["manual", "automatic"])
    with pytest.raises(BayevalInputError, match="groups: labels of one comparable kind"):
        combine_means(y, np.eye(3), y, np.ones(3), groups=np.array(["manual", 1, None], dtype=object))
    with pytest.raises(BayevalInputError, match="spread"):
        combine_means(y, np.eye(3), y, np.ones(3), groups=[0, 0, 1], spread="wide")


def test_the_slope_rescales_a_model_that_compresses_the_differences():
    """The model gives 0.8·θ (plus its share of the sample's error and its own): with the regression on the
    model the Brier score of P(Δ < 0) is lower than with β = 1 (0.058 against 0.067 here), both calibrated."""
    out = {}
    for slope in (True, False):
        rng = np.random.default_rng(5)
        hits, briers = [], []
        for _ in range(60):
            theta = rng.normal(0.0, 0.04, 200)
            s = rng.uniform(0.01, 0.03, 200)
            e = rng.normal(0.0, s)
            got = combine_differences(theta + e, s, 0.8 * theta + 0.5 * e + rng.normal(0, 0.004, 200),
                                      np.full(200, 0.004), slope=slope)
            lo, hi = got.interval()
            hits.append(np.mean((lo <= theta) & (theta <= hi)))
            briers.append(np.mean((got.p_less() - (theta < 0)) ** 2))
        out[slope] = (np.mean(hits), np.mean(briers))
    assert 0.93 <= out[True][0] <= 0.97
    assert out[True][1] < out[False][1] - 0.005
