"""One way for p: a relevance estimate says which p each moment method uses, in one place.

``RelevanceEstimate.arrays_for`` (the policy of :func:`bayeval.data.probabilities.probabilities_for`): the
point p without draws, all posterior draws for Monte Carlo, ``closed_form_draws`` evenly spaced draws for a
closed form. ``bayeval.expected`` takes the estimate itself (the ``ProbabilityEstimate`` protocol), and the
CLI, the report, the confidence and the studies pass it on rather than thinning themselves.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from bayeval.data import RankData
from bayeval.data.probabilities import ProbabilityEstimate, probabilities_for, thin_draws
from bayeval.expected import compare_systems, expected_measures
from bayeval.relevance import bayesian_confidence, estimate_probabilities
from bayeval.synthetic import make_collection


@pytest.fixture(scope="module")
def data():
    col = make_collection(n_topics=3, n_systems=4, n_docs=60, depth=20, judged_depth=4, seed=2)
    return RankData.build(col.runs, col.judgments, depth=20)


@pytest.fixture(scope="module")
def est(data):
    return estimate_probabilities(data, "rtc", fit="laplace", p_draws=60, draws=100, chains=1,
                                  stage_methods={"rank": "map"})


def test_the_policy(est):
    assert isinstance(est, ProbabilityEstimate)
    assert est.has_draws and est.draws[0].shape[0] == 60
    np.testing.assert_array_equal(est.arrays_for(None)[0], est.p[0])
    assert est.arrays_for("mc")[0].shape[0] == 60
    thinned = est.arrays_for("exact")
    assert thinned[0].shape[0] == 25
    # evenly spaced rows, the same in every topic, first and last kept
    np.testing.assert_array_equal(thinned[1], est.draws[1][np.unique(np.linspace(0, 59, 25).round().astype(int))])
    assert replace(est, closed_form_draws=10).arrays_for("delta")[0].shape[0] == 10
    # a point estimate gives its p whatever the method
    assert probabilities_for("mc", [np.zeros(3)])[0].shape == (3,)


@pytest.mark.parametrize("method", ["exact", "delta"])
def test_expected_takes_the_estimate(data, est, method):
    """Passing the estimate is passing the arrays its policy chooses; not thinning would differ."""
    by_est = compare_systems(data, est, method=method)
    by_arrays = compare_systems(data, thin_draws(est.draws, 25), method=method)
    np.testing.assert_allclose(by_est.all_p_less, by_arrays.all_p_less, rtol=1e-12)
    all_draws = compare_systems(data, list(est.draws), method=method)
    assert not np.allclose(by_est.all_variance, all_draws.all_variance, rtol=1e-9, atol=0)
    ev = expected_measures(data, est, method=method)
    np.testing.assert_allclose(ev.all_expected, expected_measures(data, thin_draws(est.draws, 25),
                                                                  method=method).all_expected, rtol=1e-12)


def test_confidence_takes_the_same_path(data, est):
    bc = bayesian_confidence(data, est, method="exact", plugin_method="exact")
    np.testing.assert_allclose(bc.bayesian.all_p_less, compare_systems(data, est, method="exact").all_p_less,
                               rtol=1e-12)
    np.testing.assert_allclose(bc.plugin.all_p_less, compare_systems(data, list(est.p), method="exact").all_p_less,
                               rtol=1e-12)
    bc10 = bayesian_confidence(data, est, method="delta", closed_form_draws=10)
    np.testing.assert_allclose(bc10.bayesian.all_p_less,
                               compare_systems(data, thin_draws(est.draws, 10), method="delta").all_p_less,
                               rtol=1e-12)
