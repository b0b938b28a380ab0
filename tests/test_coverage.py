"""Coverage on the synthetic generator, which knows the truth: do bayeval's 95% intervals of MAP contain the true MAP
about 95% of the time, and is P(ΔMAP < 0) calibrated? (docs/expected.md; the settings of ``bayeval demo``.)"""

from __future__ import annotations

import numpy as np
import pytest

from bayeval.data import RankData
from bayeval.expected import compare_systems, expected_measures
from bayeval.measures import evaluate
from bayeval.relevance import estimate_probabilities
from bayeval.stats import forecast_scores, reliability_bins
from bayeval.synthetic import make_collection

DEMO = {"n_topics": 25, "n_systems": 8, "n_docs": 400, "depth": 100, "judged_depth": 5}
SMALL = {"n_topics": 12, "n_systems": 6, "n_docs": 200, "depth": 50, "judged_depth": 5}


def _study(settings, seeds, *, sampled: bool, p_draws: int = 100):
    """Over seeds: z = (true MAP − E[MAP]) / sd per system, and P(ΔMAP < 0) with the true ΔMAP per pair."""
    z, p_less, delta = [], [], []
    for seed in seeds:
        col = make_collection(seed=seed, **settings)
        shallow = RankData.build(col.runs, col.judgments)
        true_map = evaluate(RankData.build(col.runs, col.qrels), ["AP"]).mean()[0]
        est = estimate_probabilities(shallow, "rtc", fit="laplace" if sampled else "map", seed=seed,
                                     p_draws=p_draws if sampled else None, depth=min(settings["depth"], 100),
                                     stage_methods={"rank": "map"} if sampled else None)
        probs = est.arrays(draws=sampled)
        ev = expected_measures(shallow, probs, method="delta")
        z.extend((true_map - ev.all_expected[0]) / np.sqrt(ev.all_variance[0]))
        cmp = compare_systems(shallow, probs, method="delta")
        p_less.extend(cmp.all_p_less)
        delta.extend(true_map[cmp.index_a] - true_map[cmp.index_b])
    return np.array(z), np.array(p_less), np.array(delta)


def test_model_intervals_cover_the_true_map_and_the_point_estimate_does_not():
    """4 seeds × 6 systems: the Laplace posterior's 95% intervals contain the true MAP at least 21 times of 24
    (measured: 23); with the MAP point p (no parameter uncertainty) they do far less often (measured: 9 of 24)."""
    seeds = range(20, 24)
    z, p_less, delta = _study(SMALL, seeds, sampled=True)
    covered = np.abs(z) <= 1.959963984540054
    assert covered.sum() >= 21
    assert reliability_bins(p_less, delta)["consistent"].all()
    z_point, _, _ = _study(SMALL, seeds, sampled=False)
    assert (np.abs(z_point) <= 1.959963984540054).sum() <= 16


@pytest.mark.slow
def test_demo_settings_intervals_cover_and_p_less_is_calibrated():
    """The demo's settings over 8 seeds (64 systems, 224 pairs): at least 95% of the 95% intervals contain the true
    MAP (measured 64 of 64; the intervals are conservative, sd of z ≈ 0.6), and every reliability bin of
    P(ΔMAP < 0) holds its bin's probability within the Wilson 95% interval of its frequency."""
    z, p_less, delta = _study(DEMO, range(3, 11), sampled=True)
    assert np.mean(np.abs(z) <= 1.959963984540054) >= 0.95
    assert reliability_bins(p_less, delta)["consistent"].all()
    s = forecast_scores(p_less, delta)
    assert s.right_95 >= 0.95 and s.share_95 >= 0.5
