"""The rank decay learned across topics (bayeval.relevance.rank_decay)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import study_model
from scipy.special import expit

from bayeval.data import RankData
from bayeval.relevance.config import load_config
from bayeval.relevance.rank_coefficients import RankCoefficients
from bayeval.relevance.rank_decay import fit_rank_decay, prefix_observations
from bayeval.relevance.rtc import RTCEstimator
from bayeval.synthetic import make_collection


def test_decay_regression_recovers_a_known_decay():
    """Simulated (topic, rank, relevant) from logit m = -0.5 + u_t - 0.8 log r: the fit recovers the slope."""
    rng = np.random.default_rng(0)
    T, n = 30, 400
    u = rng.normal(0, 0.5, T)
    topic = np.repeat(np.arange(T), n)
    rank = np.tile(np.arange(1, n + 1) % 40 + 1, T).astype(float)
    y = (rng.random(T * n) < expit(-0.5 + u[topic] - 0.8 * np.log(rank))).astype(float)
    fit = fit_rank_decay(topic, rank, y, T, topic_sd=1.0)
    assert fit.beta == pytest.approx(-0.8, abs=0.08)
    assert np.corrcoef(fit.offsets, u)[0, 1] > 0.8
    m = fit.mean(40)
    assert m.shape == (T, 41) and np.all(np.diff(m, axis=1) < 0)


def test_decay_never_grows_with_rank():
    """Data where relevance grows with rank: the constrained fit gives β = 0, not a rising prior."""
    rng = np.random.default_rng(1)
    topic = np.repeat(np.arange(5), 50)
    rank = np.tile(np.arange(1, 6), 50).astype(float)
    y = (rng.random(250) < expit(-2 + 0.8 * np.log(rank))).astype(float)
    fit = fit_rank_decay(topic, rank, y, 5)
    assert fit.beta == 0.0
    assert np.all(np.diff(fit.mean(20), axis=1) == 0)


def test_prefix_observations_are_the_completely_judged_prefixes():
    col = make_collection(n_topics=4, n_systems=5, n_docs=100, depth=30, judged_depth=5, seed=2)
    data = RankData.build(col.runs, col.judgments)
    t, r, y = prefix_observations(data, 30)
    # every run's top 5 is judged (a depth-5 pool of all runs): at least 5 observations per run and topic
    assert len(t) >= 4 * 5 * 5 and r.min() == 1
    for k, tr in enumerate(data):
        rel = np.asarray(tr.relevant)
        first = tr.ranked[:, 0]
        assert y[(t == k) & (r == 1)].sum() == rel[first].sum()


def test_learned_decay_changes_only_the_shape_of_the_rank_prior():
    col = make_collection(n_topics=6, n_systems=6, n_docs=200, depth=50, judged_depth=5, seed=3)
    data = RankData.build(col.runs, col.judgments)
    flat = RankCoefficients.from_rankdata(data, load_config("rtc-default").rank, depth=50)
    learned = RankCoefficients.from_rankdata(data, load_config(study_model("rtc-decay")).rank, depth=50)
    assert learned.prior_a.shape == (6, 51)
    np.testing.assert_allclose(learned.prior_a + learned.prior_b,
                               np.broadcast_to((flat.prior_a + flat.prior_b)[:, None], (6, 51)))
    assert np.all(np.diff(learned.prior_a / (learned.prior_a + learned.prior_b), axis=1) <= 0)
    # the mode is the mode: a small step lowers the log posterior
    th = learned.find_map()["theta"]
    lp = learned.log_posterior(th)
    rng = np.random.default_rng(1)
    for _ in range(3):
        assert learned.log_posterior(th + 1e-3 * rng.standard_normal(th.shape)) < lp
    # the chain runs end to end with it
    est = RTCEstimator(study_model("rtc-decay")).estimate(data)
    assert all(((p >= 0) & (p <= 1)).all() for p in est.p)
