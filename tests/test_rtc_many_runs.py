"""The RTC chain stays identified as runs are added (docs/notes/calibration-record.md, "No collapse with many runs").

The same depth-10 judgments (a pool of four runs) are used with 4 and with 36 runs: the spread across
posterior draws of the mean p of the unjudged documents must not grow with the runs added.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from bayeval.data.qrels import pool_qrels
from bayeval.data.rankdata import RankData
from bayeval.data.run import RunSet
from bayeval.relevance.calibration import PlattCalibration
from bayeval.relevance.config import CalibrationPrior, load_config
from bayeval.relevance.rtc import RTCEstimator
from bayeval.synthetic import make_collection


@pytest.fixture(scope="module")
def many_runs():
    col = make_collection(n_topics=10, n_systems=36, n_docs=300, depth=50, judged_depth=10, seed=5)
    runs = list(col.runs)
    return runs, pool_qrels(RunSet(runs[:4]), col.qrels, 10)


def _mean_p_range(runs, judgments, config="rtc-default") -> tuple[float, float]:
    data = RankData.build(RunSet(runs), judgments)
    fit = RTCEstimator(config).fit(data, "laplace", seed=1, draws=100, chains=4)
    est = fit.probabilities(draws=200, seed=1)
    m = np.concatenate([d[:, ~j] for d, j in zip(est.draws, est.judged, strict=True)], axis=1).mean(axis=1)
    lo, hi = np.percentile(m, [5, 95])
    return float(lo), float(hi)


def test_spread_of_mean_p_does_not_grow_with_runs(many_runs):
    runs, judg = many_runs
    lo4, hi4 = _mean_p_range(runs[:4], judg)
    lo36, hi36 = _mean_p_range(runs, judg)
    assert hi36 - lo36 <= hi4 - lo4, ((lo4, hi4), (lo36, hi36))
    assert 0.0 < lo36 < hi36 < 0.5


def test_carrying_the_calibration_posterior_collapses(many_runs):
    """The failure the fixed stage removes: calibration drawn independently of the aggregation."""
    runs, judg = many_runs
    base = load_config("rtc-default")
    carried = dataclasses.replace(base, calibration=dataclasses.replace(base.calibration, fixed_below=0.0))
    lo4, hi4 = _mean_p_range(runs[:4], judg, carried)
    lo36, hi36 = _mean_p_range(runs, judg, carried)
    assert hi36 - lo36 > 2 * (hi4 - lo4)


def test_only_thin_calibrations_are_fixed(many_runs):
    """The four pooled runs (complete prefix 10) keep their calibration's posterior; the others stay at the mode."""
    runs, judg = many_runs
    fit = RTCEstimator("rtc-default").fit(RankData.build(RunSet(runs[:8]), judg), "laplace", seed=0, draws=10)
    assert fit.method == "laplace"
    assert fit.thin_calibrations.tolist() == [False] * 4 + [True] * 4


def test_pooled_calibration_shrinks_a_system_without_cells_to_the_pooled_fit():
    # system 0 has cells, system 1 none: pooled, system 1 gets the pooled centre; system 0 (which holds
    # every cell) stays close to it (the centre was fitted under the wide Normal(0, 10) priors)
    x = np.array([2.0, 0.0, -2.0])
    prior = CalibrationPrior(smoothing=0.5, pooled_intercept_sd=0.5, pooled_slope_sd=0.1)
    m = PlattCalibration(np.zeros(3, np.int64), x, np.array([8.0, 3.0, 1.0]), np.array([2.0, 7.0, 9.0]),
                         np.zeros(3, np.int64), x, ("a", "b"), prior)
    a0, b0 = m.pooled_centre
    mode = m.find_map()
    assert mode["A"][1] == pytest.approx(a0) and mode["B"][1] == pytest.approx(b0)
    assert mode["A"][0] == pytest.approx(a0, abs=1e-2) and mode["B"][0] == pytest.approx(b0, abs=1e-2)
    # the mode maximises the log posterior: a small step in any direction lowers it
    lp = m.log_posterior(mode["A"], mode["B"])
    for d in np.eye(4) * 1e-3:
        assert m.log_posterior(mode["A"] + d[:2], mode["B"] + d[2:]) < lp
    # unpooled, the same data give the same fit to system 0 (the pooled fit), but system 1 stays at 0
    flat = dataclasses.replace(m, prior=dataclasses.replace(prior, pooled_intercept_sd=None, pooled_slope_sd=None))
    assert flat.find_map()["A"][1] == 0.0
