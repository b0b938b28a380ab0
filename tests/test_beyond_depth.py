"""p beyond the judged depth (bayeval.relevance.beyond_depth, docs/depth.md): the judged depth and the distance of
each document from it, the held-out band cut at half that depth, the band regression, and the transform of the draws
(the correction moves E[p], the offsets only spread the draws, jointly by topic and collection, growing with the
distance) — worked on hand-made rankings where every figure is written out."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from conftest import study_model
from scipy.special import expit, logit

from bayeval.data import Qrels, RankData, Run, RunSet, pool_qrels
from bayeval.errors import BayevalInputError
from bayeval.expected.extrapolation import best_rank, depth_distance, judged_depth
from bayeval.relevance import estimate_probabilities, load_config
from bayeval.relevance.beyond_depth import BandError, BeyondDepth, band_error, beyond_depth, held_out_band
from bayeval.relevance.config import BeyondDepthPrior

RUNS = {"A": ["a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"],
        "B": ["b1", "b2", "b3", "b4", "a5", "b6", "b7", "b8"],
        "C": ["a1", "b1", "c3", "c4", "c5", "c6", "c7", "c8"]}
RELEVANT = {"a1", "a3", "b1", "b4", "c4", "a5", "b7"}


def _tiny(pool: int = 4) -> RankData:
    """Three runs of 8 documents on one topic, judged to a depth-``pool`` pool of every run."""
    runs = RunSet(tuple(Run.from_arrays(n, np.full(8, "1", object), np.array(d, object), np.arange(8, 0, -1.0))
                        for n, d in RUNS.items()))
    docs = sorted({d for v in RUNS.values() for d in v})
    qrels = Qrels.from_frame(pd.DataFrame({"topic": "1", "docno": docs, "grade": [int(d in RELEVANT) for d in docs]}))
    return RankData.build(runs, pool_qrels(runs, qrels, pool))


def test_judged_depth_best_rank_and_distance_on_hand_made_rankings():
    tr = _tiny()[0]
    # the depth-4 pool: a1-a4, b1-b4, c3, c4; every run's 5th document (a5 for A and B, c5 for C) is unjudged
    assert judged_depth(tr) == 4.0
    idx = {d: i for i, d in enumerate(tr.docnos)}
    r = best_rank(tr)
    assert r[idx["a5"]] == 5 and r[idx["b1"]] == 1 and r[idx["c8"]] == 8  # b1: B's 1, C's 2
    x = depth_distance(tr, 4.0)
    np.testing.assert_allclose([x[idx["a5"]], x[idx["b6"]], x[idx["c8"]]], np.log2([5 / 4, 6 / 4, 8 / 4]))
    assert np.all(x[tr.judged] == 0)  # judged documents are never beyond the judged depth
    assert np.all(depth_distance(tr, 0.0) == 0)  # no judged depth: nothing is beyond it
    # judged to depth 8 (everything): the judged depth is the full lists and nothing lies beyond it
    full = _tiny(8)[0]
    assert judged_depth(full) == 8.0 and not depth_distance(full, 8.0).any()


def test_held_out_band_cuts_the_judgments_at_half_the_judged_depth():
    data = _tiny()
    hb = held_out_band(data)
    tr, half = data[0], hb.half[0]
    # h = 2: kept judged are the documents with best rank <= 2 (a1, a2, b1, b2); the band holds the judged
    # documents with best rank 3-4: a3, a4, b3, b4, c3, c4
    assert sorted(half.docnos[half.judged]) == ["a1", "a2", "b1", "b2"]
    assert sorted(tr.docnos[hb.band[0]]) == ["a3", "a4", "b3", "b4", "c3", "c4"]
    np.testing.assert_array_equal(hb.labels[0], [float(d in RELEVANT) for d in tr.docnos[hb.band[0]]])
    assert np.all(half.grades[~half.judged] == 0) and hb.n_band == 6
    with pytest.raises(BayevalInputError, match="depths"):
        held_out_band(data, depths=[4.0, 4.0])
    with pytest.raises(BayevalInputError, match="data"):
        held_out_band([tr])


def test_band_error_recovers_a_known_level_and_topic_spread():
    rng = np.random.default_rng(3)
    T, n = 60, 400
    topic = np.repeat(np.arange(T), n)
    u = rng.normal(0.0, 0.8, T)
    eta = rng.normal(-2.0, 1.0, T * n)
    y = (rng.random(T * n) < expit(eta - 0.5 + u[topic])).astype(float)
    e = band_error(eta, y, topic)
    # the level is the marginal one (the topics' offsets averaged on the probability scale): the band's p moved
    # by it sums to the band's relevant count (the score equation of the pooled fit, its weak prior aside), and
    # lies above the conditional -0.5 since σ is convex where p is small
    assert expit(eta + e.level).sum() == pytest.approx(y.sum(), rel=1e-3)
    assert -0.5 < e.level < 0.0
    assert 0.6 < e.topic_sd < 1.0 and e.topics == T and e.n == T * n
    assert band_error([], [], []).n == 0
    with pytest.raises(BayevalInputError, match="same length"):
        band_error([0.0], [1.0, 0.0], [0])


def test_a_topic_far_off_the_model_does_not_blow_up_the_spread():
    # one topic has 6 relevant band documents of 129 where the model's p sums to 0.6: its level is about +2.4
    # (a Newton step from 0 without halving overshot to -12,300 and sent the spread to the grid's bound)
    rng = np.random.default_rng(0)
    eta = np.concatenate([np.full(129, logit(0.6 / 129)), rng.normal(-2.5, 0.5, 3000)])
    y = np.concatenate([np.r_[np.ones(6), np.zeros(123)], (rng.random(3000) < expit(rng.normal(-2.5, 0.5, 3000)))])
    topic = np.concatenate([np.zeros(129, int), 1 + np.arange(3000) % 30])
    assert band_error(eta, y, topic).topic_sd < 2.0


def _transform(level=-0.5, tau=0.5, growth="walk", correction="level", floor=0.0):
    return BeyondDepth(np.array([4.0]), BandError(level, 0.0, tau, 100, 1),
                       BeyondDepthPrior(band="half", growth=growth, correction=correction, collection_floor=floor))


def test_the_correction_moves_e_p_and_the_offsets_only_spread_it():
    data = _tiny()
    tr = data[0]
    x = depth_distance(tr, 4.0)
    deep = x > 0
    p = [np.where(tr.judged, tr.relevant.astype(float), 0.2)]
    draws = _transform().draws_from_point(data, p, 20000, np.random.default_rng(1))[0].astype(np.float64)
    # untouched: judged documents and none beyond the judged depth (all unjudged documents are beyond it here)
    assert np.all(draws[:, ~deep] == p[0][~deep].astype(np.float32))
    # E[p] = σ(logit 0.2 − 0.5) = 0.1317 beyond the judged depth (Heagerty's κ keeps the mean, to the probit
    # approximation's accuracy)
    np.testing.assert_allclose(draws[:, deep].mean(axis=0), expit(logit(0.2) - 0.5), atol=0.01)
    point = _transform().point(data, p)[0]
    np.testing.assert_allclose(point[deep], expit(logit(0.2) - 0.5))
    np.testing.assert_array_equal(point[~deep], p[0][~deep])
    # no correction: E[p] stays at 0.2
    nc = _transform(correction="none").draws_from_point(data, p, 20000, np.random.default_rng(1))[0]
    np.testing.assert_allclose(nc[:, deep].mean(axis=0), 0.2, atol=0.01)


def test_the_offsets_are_shared_and_grow_with_the_distance():
    data = _tiny()
    tr = data[0]
    k = np.ceil(depth_distance(tr, 4.0)).astype(int)  # bands: a5, b6, c5, c6 in band 1; a7.., c8 in band 1 (8/4=2)
    p = [np.where(tr.judged, tr.relevant.astype(float), 0.2)]
    bd = _transform(level=0.0, tau=0.0, floor=1.0)  # the collection offset alone: s_c = 1
    eta = logit(bd.draws_from_point(data, p, 4000, np.random.default_rng(2))[0].astype(np.float64))
    one = np.flatnonzero(k == 1)
    # one collection offset per draw shared by every document of a band: within a band the log-odds move together
    assert np.corrcoef(eta[:, one[0]], eta[:, one[-1]])[0, 1] > 0.99
    # the walk: band 1 carries variance s_c² = 1 (plus κ's scaling of logit 0.2)
    kap = np.sqrt(1 + np.pi / 8 * 1.0)
    assert np.var(eta[:, one[0]]) == pytest.approx(1.0, rel=0.1)
    np.testing.assert_allclose(eta[:, one[0]].mean(), kap * logit(0.2), atol=0.1)
    # a longer list: band 3 of the walk has three times band 1's variance; the flat growth keeps band 1's
    runs = RunSet((Run.from_arrays("L", np.full(40, "1", object), np.array([f"d{i}" for i in range(40)], object),
                                   np.arange(40, 0, -1.0)),))
    q = Qrels.from_frame(pd.DataFrame({"topic": "1", "docno": [f"d{i}" for i in range(5)], "grade": 0}))
    long = RankData.build(runs, q)
    assert judged_depth(long[0]) == 5.0
    kk = np.ceil(depth_distance(long[0], 5.0)).astype(int)
    pl = [np.where(long[0].judged, 0.0, 0.2)]
    for growth, ratio in (("walk", 3.0), ("flat", 1.0)):
        t = BeyondDepth(np.array([5.0]), BandError(0.0, 0.0, 0.0, 1, 1),
                        BeyondDepthPrior(band="half", growth=growth, collection_floor=1.0))
        e = logit(t.draws_from_point(long, pl, 6000, np.random.default_rng(4))[0].astype(np.float64))
        v1, v3 = np.var(e[:, np.flatnonzero(kk == 1)[0]]), np.var(e[:, np.flatnonzero(kk == 3)[0]])
        assert v3 / v1 == pytest.approx(ratio, rel=0.15)


def test_beyond_depth_is_off_by_default_and_checks_its_inputs():
    from bayeval.synthetic import make_collection

    col = make_collection(n_topics=3, n_systems=5, n_docs=100, depth=30, judged_depth=6, seed=4)
    data = RankData.build(col.runs, col.judgments)
    est = estimate_probabilities(data, "smoothed")
    assert load_config(study_model("hier-level-shift")).beyond_depth.band == "none"
    off = beyond_depth(data, est, lambda h: None, BeyondDepthPrior())
    assert off is est
    with pytest.raises(BayevalInputError, match="estimate"):
        beyond_depth(data, "p", lambda h: None, BeyondDepthPrior(band="half"))
    for bad in ({"band": "third"}, {"correction": "drift"}, {"growth": "up"}, {"collection_floor": -1.0},
                {"topic_scale": 0.0}, {"draws": 1}):
        with pytest.raises(BayevalInputError, match="beyond_depth"):
            BeyondDepthPrior(**bad)
    # nothing beyond the judged depth (judged to the full depth): the estimate comes back unchanged
    full = RankData.build(col.runs, col.qrels)
    e2 = estimate_probabilities(full, "smoothed")
    assert beyond_depth(full, e2, lambda h: None, BeyondDepthPrior(band="half")) is e2


def test_a_hierarchical_configuration_applies_it_and_refits_on_the_band():
    from bayeval.synthetic import make_collection

    col = make_collection(n_topics=6, n_systems=6, n_docs=200, depth=40, judged_depth=8, base_rate=0.2, seed=2)
    data = RankData.build(col.runs, col.judgments)
    base = load_config(study_model("hier-level-shift"))
    cfg = dataclasses.replace(base, beyond_depth=BeyondDepthPrior(band="half", draws=30), name="with-depth")
    est = estimate_probabilities(data, cfg, seed=1)
    plain = estimate_probabilities(data, base, seed=1)
    assert est.has_draws and est.draws[0].shape == (30, data[0].n_docs) and not plain.has_draws
    for tr, a, b in zip(data, est.p, plain.p, strict=True):
        within = depth_distance(tr, judged_depth(tr)) == 0
        np.testing.assert_allclose(a[within], b[within])  # only documents beyond the judged depth move


def test_depth_share_says_how_much_of_e_rests_beyond_the_judged_depth():
    from bayeval.expected.extrapolation import extrapolation, mostly_extrapolated

    data = _tiny()
    tr = data[0]
    idx = {d: i for i, d in enumerate(tr.docnos)}
    # every unjudged document lies beyond the judged depth (4) here; with p = 0 there, nothing rests on it
    assert np.all(extrapolation(data, default_p=0.0, depth=4).depth_share == 0)
    # p = 1 for a5 alone (rank 5 of A and B, unranked by C): A's and B's E[AP] gain from it, C's only loses (R + 1)
    p = [np.where(tr.judged, tr.relevant.astype(float), 0.0)]
    p[0][idx["a5"]] = 1.0
    ex = extrapolation(data, p, depth=4)
    share = dict(zip(data.systems, ex.depth_share, strict=True))
    assert share["A"] > 0 and share["B"] > 0 and share["C"] < 0
    # A: judged relevant a1, a3 at ranks 1 and 3; R = 5 judged relevant in the pool (a1, a3, b1, b4, c4), 6 with a5
    # at rank 5: E = (1 + 2/3 + 3/5) / 6 with it, (1 + 2/3) / 5 without
    np.testing.assert_allclose(ex.expected[0], (1 + 2 / 3 + 3 / 5) / 6)
    np.testing.assert_allclose(share["A"], 1 - ((1 + 2 / 3) / 5) / ((1 + 2 / 3 + 3 / 5) / 6))
    flags = mostly_extrapolated(ex, 0.3)
    assert flags.tolist() == [bool(s >= 0.3) or bool(b >= 0.3) for s, b in zip(ex.depth_share, ex.beyond_share,
                                                                             strict=True)]
    with pytest.raises(BayevalInputError, match="threshold"):
        mostly_extrapolated(ex, 0.0)


def test_the_point_is_the_expectation_of_the_draws_whatever_their_seed():
    data = _tiny()
    tr = data[0]
    p = [np.where(tr.judged, tr.relevant.astype(float), 0.2)]
    bd = _transform(level=-0.5, tau=1.0, floor=1.0)  # v = k (1 + 1 + 0.25): wide enough for κ to fall short
    exp = bd.expected(data, p)[0]
    draws = bd.draws_from_point(data, p, 40000, np.random.default_rng(5))[0].astype(np.float64)
    deep = depth_distance(tr, 4.0) > 0
    np.testing.assert_allclose(exp[deep], draws[:, deep].mean(axis=0), atol=0.005)
    np.testing.assert_array_equal(exp[~deep], p[0][~deep])
    assert np.all(exp[deep] < expit(logit(0.2) - 0.5))  # the probit approximation's shortfall (docs/depth.md)
    from bayeval.synthetic import make_collection

    col = make_collection(n_topics=4, n_systems=5, n_docs=150, depth=40, judged_depth=8, base_rate=0.2, seed=2)
    data = RankData.build(col.runs, col.judgments)
    cfg = dataclasses.replace(load_config("hier-depth"), name="x")
    a, b = (estimate_probabilities(data, cfg, seed=s) for s in (1, 2))
    for pa, pb in zip(a.p, b.p, strict=True):
        np.testing.assert_array_equal(pa, pb)  # the point does not depend on the draws' seed
