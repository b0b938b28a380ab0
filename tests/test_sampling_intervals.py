"""Power-scale intervals for a mean whose standard error grows with it: the exponent is the variance-stabilising
one, the bounds are the normal interval on that scale mapped back, the interval covers where the symmetric one
misses above, and the sampling study's ``sample-bcp`` rows and statistics use it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayeval.data import RankData
from bayeval.errors import BayevalInputError
from bayeval.experiments.sampling import (
    SAMPLING_COLUMNS,
    SamplingStudyConfig,
    draw_pool_sample,
    read_sampling_table,
    run_sampling_trial,
    sampling_statistics,
)
from bayeval.measures import evaluate
from bayeval.sampling import corrected_measures, power_bounds, power_exponent, power_interval
from bayeval.synthetic import make_collection

Z = stats.norm.ppf(0.975)


@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.5, 1.0])
def test_exponent_is_one_minus_the_slope_of_log_se_on_log_m(alpha):
    m = np.linspace(0.05, 0.6, 9)
    assert power_exponent(m, 0.02 * m ** alpha) == pytest.approx(1 - alpha, abs=1e-12)
    noisy = 0.02 * m ** alpha * np.exp(np.random.default_rng(3).normal(0, 0.02, m.size))
    assert power_exponent(m, noisy) == pytest.approx(1 - alpha, abs=0.06)


def test_exponent_is_clipped_and_falls_back_to_the_identity():
    m = np.linspace(0.05, 0.6, 9)
    assert power_exponent(m, 0.02 * m ** 1.5) == 0.0          # steeper than proportional: the logarithm
    assert power_exponent(m, 0.02 / m) == 1.0                 # falling: the identity
    assert power_exponent(np.array([0.1, 0.2]), np.array([0.01, 0.02])) == 1.0     # too few runs
    assert power_exponent(np.full(5, 0.2), np.linspace(0.01, 0.05, 5)) == 1.0      # one estimate
    assert power_exponent(np.array([0.0, 0.1, 0.2, 0.3]), np.array([0.0, 0.01, 0.02, 0.03])) == 0.0  # m = 0 out


def test_bounds_are_the_normal_interval_on_the_power_scale():
    m, se = np.array([0.04, 0.2, 0.5]), np.array([0.03, 0.05, 0.04])
    lo, hi = power_bounds(m, se, 1.0)
    np.testing.assert_allclose(lo, np.clip(m - Z * se, 0, 1))
    np.testing.assert_allclose(hi, m + Z * se)
    lo, hi = power_bounds(m, se, 0.5)
    r = np.sqrt(m)
    np.testing.assert_allclose(lo, np.maximum(r - Z * se / (2 * r), 0) ** 2)
    np.testing.assert_allclose(hi, (r + Z * se / (2 * r)) ** 2)
    lo, hi = power_bounds(m, se, 0.0)
    np.testing.assert_allclose(lo, m * np.exp(-Z * se / m))
    np.testing.assert_allclose(hi, m * np.exp(Z * se / m))
    for g in (0.0, 0.3, 0.5, 0.8):
        lo, hi = power_bounds(m, se, g)
        assert np.all((lo <= m) & (m <= hi)) and np.all(hi - m >= m - lo)   # leans upward
    lo, hi = power_bounds(np.array([0.0, 0.99]), np.array([0.01, 0.2]), 0.5)
    assert lo[0] == 0.0 and hi[0] == pytest.approx(Z * 0.01) and hi[1] == 1.0      # m = 0 symmetric; clipped


def test_bad_arguments_are_named():
    with pytest.raises(BayevalInputError, match="level"):
        power_bounds(0.2, 0.01, 0.5, level=1.5)
    with pytest.raises(BayevalInputError, match="exponent"):
        power_bounds(0.2, 0.01, 1.5)
    with pytest.raises(BayevalInputError, match="mean, se"):
        power_exponent(np.ones(3), np.ones(4))
    with pytest.raises(BayevalInputError, match="variance"):
        power_interval(np.ones(3) / 4, -np.ones(3))
    with pytest.raises(BayevalInputError, match="mean, variance"):
        power_interval(np.ones(3) / 4, np.ones(2))


def test_skewed_estimates_are_covered_on_the_stabilising_scale():
    """Runs share one right-skewed sampling error (a gamma factor of mean 1), with se ∝ m: the symmetric interval
    misses above the truth when the sample runs low; the log scale (γ = 0, found from the runs) does not."""
    rng = np.random.default_rng(11)
    truth = np.linspace(0.1, 0.5, 8)
    k, reps = 10.0, 4000
    hit_p = hit_n = above_p = above_n = 0
    for _ in range(reps):
        m = truth * rng.gamma(k, 1 / k) * np.exp(rng.normal(0, 0.01, truth.size))
        lo, hi, g = power_interval(m, (m / np.sqrt(k)) ** 2)
        assert g < 0.05
        hit_p += np.sum((lo <= truth) & (truth <= hi))
        above_p += np.sum(truth > hi)
        lo, hi = power_bounds(m, m / np.sqrt(k), 1.0)
        hit_n += np.sum((lo <= truth) & (truth <= hi))
        above_n += np.sum(truth > hi)
    n = reps * truth.size
    assert hit_n / n < 0.93 and above_n / n > 0.06       # the symmetric interval misses, above the truth
    assert 0.93 <= hit_p / n <= 0.97 and above_p < 0.6 * above_n


@pytest.mark.slow
def test_on_sampled_judgments_the_truth_lies_above_less_often():
    """Bias-corrected statAP on a synthetic collection at a 6% budget, 80 samples: the power-scale interval leaves
    the truth above it less often than the symmetric one, at no loss of coverage (the misses of the symmetric
    interval are on one side)."""
    col = make_collection(n_topics=30, n_systems=10, n_docs=600, depth=60, judged_depth=60, seed=5)
    data = RankData.build(col.runs, None, depth=60)
    frame = evaluate(RankData.build(col.runs, col.qrels, depth=60), "AP").to_frame()
    truth = frame[frame.topic == "all"].set_index("run").value.reindex(col.runs.names).to_numpy()
    rng = np.random.default_rng(8)
    counts = np.zeros((2, 2))          # rows: symmetric, power; columns: covered, truth above
    for _ in range(80):
        sample, incl = draw_pool_sample(data, col.qrels, 0.06, rng)
        m, v = corrected_measures(col.runs, sample, inclusion=incl, depth=60).mean("AP")
        for i, (lo, hi) in enumerate((power_bounds(m, np.sqrt(v), 1.0), power_interval(m, v)[:2])):
            counts[i] += (np.sum((lo <= truth) & (truth <= hi)), np.sum(truth > hi))
    assert counts[1, 1] < 0.7 * counts[0, 1]
    assert counts[1, 0] >= counts[0, 0]


def test_the_study_runs_it_and_reads_older_tables(tmp_path, collection_dir_writer):
    from bayeval.experiments import load_collection
    from bayeval.io.trials import write_table

    col = make_collection(n_topics=6, n_systems=5, n_docs=120, depth=40, judged_depth=40, seed=3)
    loaded = load_collection(collection_dir_writer(col, tmp_path))
    frame = run_sampling_trial(loaded, SamplingStudyConfig(budgets=(0.3,), depth=40, pairs=4,
                                                           methods=("sample-bc", "sample-bcp")), 0)
    runs = frame[frame.kind == "run"]
    bc, bcp = runs[runs.method == "sample-bc"], runs[runs.method == "sample-bcp"]
    np.testing.assert_allclose(bc.estimate.to_numpy(), bcp.estimate.to_numpy())
    np.testing.assert_allclose(bc.se.to_numpy(), bcp.se.to_numpy())
    assert (bc.power == 1.0).all() and bcp.power.between(0, 1).all() and bcp.power.nunique() == 1
    assert (frame[frame.kind == "pair"].power == 1.0).all()
    # the statistics use each row's scale: a truth inside the power interval but above the symmetric one
    row = bc.iloc[[0]].assign(estimate=0.2, se=0.05, truth=0.2 + 1.02 * Z * 0.05)
    st = sampling_statistics(pd.concat([row, row.assign(method="p", power=0.5)]))
    assert st.set_index("method").coverage.to_dict() == {"sample-bc": 0.0, "p": 1.0}
    assert st.set_index("method").above.to_dict() == {"sample-bc": 1.0, "p": 0.0}
    old = tmp_path / "old.parquet"
    write_table(frame, old, [c for c in SAMPLING_COLUMNS if c not in ("power", "settings")])  # before both
    again = read_sampling_table(old)
    assert list(again.columns) == list(SAMPLING_COLUMNS) and (again.power == 1.0).all()
