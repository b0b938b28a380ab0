"""Inverse-probability-weighted recalibration of a model's p: it recovers the calibration map of the whole pool
when the design over-samples documents that are relevant more often than their p says; unweighted, it does not."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize
from scipy.special import expit, logit

from bayeval.data import RelevanceProbabilities, StratifiedSample
from bayeval.data.sample import TopicSample
from bayeval.errors import BayevalInputError
from bayeval.sampling.recalibration import recalibrate


def _population(seed=0, topics=20, n=1500):
    """Pools where relevance depends on p and on a 'top' flag the design favours (top documents: π = 0.5,
    others 0.05); returns the sample, inclusion, predictions and the pool's own best map (fitted on all)."""
    rng = np.random.default_rng(seed)
    samples, incl, preds, all_l, all_x = {}, {}, {}, [], []
    for t in range(topics):
        docs = np.array([f"t{t}d{i}" for i in range(n)], dtype=object)
        top = rng.random(n) < 0.1
        p = np.clip(rng.beta(1, 4, n), 0.001, 0.999)
        x = (rng.random(n) < expit(-0.5 + 1.2 * logit(p) + 2.0 * top)).astype(int)
        pi = np.where(top, 0.5, 0.05)
        take = rng.random(n) < pi
        samples[str(t)] = TopicSample(docs, top.astype(np.int32), ("deep", "top"), np.where(take, x, -1))
        incl[str(t)] = pi
        preds[str(t)] = dict(zip(docs, p.tolist(), strict=True))
        all_l.append(logit(p))
        all_x.append(x)
    return StratifiedSample(samples), incl, RelevanceProbabilities(preds), np.concatenate(all_l), \
        np.concatenate(all_x)


def test_weighted_fit_recovers_the_pool_map():
    sample, incl, preds, lg, x = _population()
    # the pool's best map, fitted on every document
    def nll(th):
        eta = th[0] + th[1] * lg
        return np.mean(np.logaddexp(0, eta) - x * eta)

    a_star, b_star = optimize.minimize(nll, [0.0, 1.0]).x
    fit = recalibrate(preds, sample, inclusion=incl)
    naive = recalibrate(preds, sample, inclusion=incl, weighted=False)
    assert fit.intercept == pytest.approx(a_star, abs=0.15)
    assert fit.slope == pytest.approx(b_star, abs=0.08)
    assert abs(naive.intercept - a_star) > 0.4  # the sample over-represents top documents
    # the recalibrated p of the whole pool sums to about its relevant count; the raw p does not
    q = fit(expit(lg))
    assert q.sum() == pytest.approx(x.sum(), rel=0.05)
    assert abs(expit(lg).sum() - x.sum()) > 0.2 * x.sum()
    out = fit.apply(preds)
    t0 = next(iter(preds.by_topic))
    k = next(iter(preds.by_topic[t0]))
    assert out.by_topic[t0][k] == pytest.approx(float(fit(np.array([preds.by_topic[t0][k]]))[0]))


def test_needs_both_labels():
    docs = np.array(["a", "b"], dtype=object)
    sample = StratifiedSample({"1": TopicSample(docs, np.zeros(2, np.int32), ("s",), np.array([0, 0]))})
    with pytest.raises(BayevalInputError, match="relevant and nonrelevant"):
        recalibrate(RelevanceProbabilities({"1": {"a": 0.2, "b": 0.4}}), sample)


def test_recalibration_reaches_the_bayesian_path():
    from bayeval.data import RankData
    from bayeval.expected import expected_measures
    from bayeval.relevance import estimate_probabilities
    from bayeval.sampling.recalibration import Recalibration
    from bayeval.synthetic import make_collection

    col = make_collection(n_topics=3, n_systems=3, n_docs=60, depth=20, judged_depth=4, seed=2)
    data = RankData.build(col.runs, col.judgments)
    est = estimate_probabilities(data, "smoothed")
    lower = Recalibration(-2.0, 1.0, 10).estimate(est)
    for p0, p1 in zip(est.p, lower.p, strict=True):
        np.testing.assert_allclose(p1, Recalibration(-2.0, 1.0, 10)(p0))
    before = expected_measures(data, est, measures="P@10", method="delta").all_expected[0]
    after = expected_measures(data, lower, measures="P@10", method="delta").all_expected[0]
    assert np.all(after < before)   # unjudged documents less likely relevant: every run's E[P@10] falls
    with pytest.raises(Exception, match="estimate"):
        Recalibration(0.0, 1.0, 1).estimate(object())
