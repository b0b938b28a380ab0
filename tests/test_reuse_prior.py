"""The reuse prior (bayeval.relevance.reuse_prior; docs/notes/calibration-record.md, "Where things stand"): the
held-out runs'
levels of p spread the draws as the prior says, move nothing else, and a top-up's judged draws learn them — with
posterior intervals that cover the true levels as often as they claim."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import held_out_data, study_model
from scipy.special import expit, logit

from bayeval.data.coverage import contributing_runs
from bayeval.errors import BayevalInputError
from bayeval.relevance import HierarchicalEstimator, load_config
from bayeval.relevance.reuse_prior import HeldOutPrior, ReusePrior, level_weights


def test_the_prior_rejects_bad_settings_and_is_off_in_the_old_configurations():
    assert not ReusePrior().active and ReusePrior(mean=-1.0).active
    for kw, arg in (({"run_sd": -1.0}, "run_sd"), ({"run_df": 1.5}, "run_df"), ({"mean": float("nan")}, "mean"),
                    ({"slope_sd": -0.1}, "slope_sd")):
        with pytest.raises(BayevalInputError, match=arg):
            ReusePrior(**kw)
    with pytest.raises(BayevalInputError, match="reuse_run_df"):
        dataclasses.replace(load_config("hier-default").held_out_runs, reuse_run_df=2.0)
    with pytest.raises(BayevalInputError, match="reuse_slope_mean"):
        dataclasses.replace(load_config("hier-default").held_out_runs, reuse_slope_mean=float("inf"))
    h = load_config(study_model("hier-level-shift")).held_out_runs
    assert (h.reuse_mean, h.reuse_common_sd, h.reuse_run_sd, h.reuse_slope_sd) == (0, 0, 0, 0)


def _flat_draws(data, p=0.1, K=4000):
    return [np.full((K, tr.n_docs), p, np.float32) for tr in data]


def test_the_draws_spread_as_the_prior_says_and_move_only_held_out_runs_unjudged_documents():
    """Flat draws p = 0.1: on a document that only held-out runs retrieve, the drawn log-odds shift has mean
    μ + μ_γ x_i and variance σ_b² h_i² + σ_γ² x_i² + σ_w² Σ_s w_is² (g, γ, e independent). With the run draws
    removed (a mutation: run_draws returning 0) the variance falls short and the test fails."""
    data = held_out_data()
    runs = tuple(contributing_runs(data))
    prior = ReusePrior(mean=-0.5, common_sd=0.6, run_sd=0.9, slope_mean=-0.3, slope_sd=0.4)
    draws = _flat_draws(data)
    out, post = HeldOutPrior(prior, runs).apply(data, draws, np.random.default_rng(1))
    assert post is not None and not post.fitted.any()  # no top-up: the prior
    S = len(data.systems)
    checked = 0
    for tr, d in zip(data, out, strict=True):
        w, xw = level_weights(tr, runs, S)
        x = xw.sum(axis=1)
        moved = w.sum(axis=1) > 0
        assert np.all(d[:, ~moved] == np.float32(0.1))  # judged, or retrieved by contributing runs only
        shift = logit(np.clip(d[:, moved].astype(np.float64), 1e-6, 1 - 1e-6)) - logit(0.1)
        h = w[moved].sum(axis=1)
        mean = -0.5 * h - 0.3 * x[moved]
        var = 0.36 * h ** 2 + 0.16 * x[moved] ** 2 + 0.81 * (w[moved] ** 2).sum(axis=1)
        se = np.sqrt(var / d.shape[0])
        assert np.all(np.abs(shift.mean(axis=0) - mean) < 5 * se)
        assert np.all(np.abs(shift.var(axis=0) / var - 1) < 0.15)
        checked += int(moved.sum())
    assert checked > 100
    # judged documents stay fixed
    tr = data[0]
    assert np.asarray(tr.judged).any()
    assert np.all(level_weights(tr, runs, S)[0][np.asarray(tr.judged)] == 0)


def test_an_inactive_prior_returns_the_draws_as_given_and_the_fit_gives_the_prior_levels(held_out_fit):
    data, fit = held_out_fit
    draws = _flat_draws(data, K=10)
    out, post = HeldOutPrior(ReusePrior(), (0, 1)).apply(data, draws, np.random.default_rng(0))
    assert post is None and all(a is b for a, b in zip(out, draws, strict=True))
    est = fit.with_held_out_runs(reuse_run_sd=1.0, reuse_common_sd=0.5).probabilities(draws=50, seed=1)
    assert est.held_out is not None
    f = est.held_out.to_frame()
    assert len(f) == len(data.systems) - len(contributing_runs(data))
    assert np.allclose(f.sd, np.sqrt(1.0 + 0.25)) and np.all(f.topup_judged == 0)


def _simulated_topup(data, runs, levels, slope, rng, per_run=60, base=0.15):
    """A top-up of ``per_run`` documents of each held-out run, judged with the true levels (and rank profile)
    applied to the model's p = ``base``: per topic (indices, y)."""
    S = len(data.systems)
    held = [s for s in range(S) if s not in runs]
    picks = [[] for _ in data]
    for s in held:
        for _ in range(per_run):
            t = int(rng.integers(len(data)))
            w, _ = level_weights(data[t], runs, S)
            cand = np.flatnonzero(w[:, s] > 0)
            if len(cand):
                picks[t].append(int(rng.choice(cand)))
    out = []
    for t, tr in enumerate(data):
        idx = np.unique(np.asarray(picks[t], dtype=np.int64))
        w, xw = level_weights(tr, runs, S)
        eta = logit(base) + w[idx] @ levels + slope * xw[idx].sum(axis=1)
        out.append((idx, (rng.random(len(idx)) < expit(eta)).astype(float)))
    return out


def test_a_topup_learns_the_levels_and_its_intervals_cover_them_as_often_as_they_claim():
    """True levels drawn from the prior, a top-up of 60 documents a held-out run judged with them: the posterior
    means follow the true levels, and the 80% posterior intervals of g + e_s cover the true level in 80% of
    (run, repetition) cases (binomial 3-sd band). Removing the update (the mutation: the prior's covariance
    kept, mean 0) makes the coverage test fail."""
    data = held_out_data()
    runs = tuple(contributing_runs(data))
    S = len(data.systems)
    held = [s for s in range(S) if s not in runs]
    prior = ReusePrior(mean=0.0, common_sd=0.5, run_sd=1.0, slope_mean=0.0, slope_sd=0.3)
    comp = HeldOutPrior(prior, runs)
    rng = np.random.default_rng(11)
    p_mean = [np.full(tr.n_docs, 0.15) for tr in data]
    hits, n, corr = 0, 0, []
    for _ in range(40):
        g, gam = rng.normal(0, 0.5), rng.normal(0, 0.3)
        lv = np.zeros(S)
        lv[held] = g + rng.normal(0, 1.0, len(held))
        sampled = _simulated_topup(data, runs, lv, gam, rng)
        post = comp.posterior(data, p_mean, sampled)
        assert post.fitted[0] and post.fitted[1] and post.evidence[held].min() > 20
        m, sd = post.level_mean[held], post.level_sd[held]
        hits += int(np.sum(np.abs(lv[held] - m) <= 1.2816 * sd))
        n += len(held)
        corr.append(np.corrcoef(m, lv[held])[0, 1])
    assert np.mean(corr) > 0.8
    assert abs(hits / n - 0.8) < 3 * np.sqrt(0.8 * 0.2 / n)


def test_the_point_p_is_the_mean_of_the_draws():
    data = held_out_data()
    runs = tuple(contributing_runs(data))
    comp = HeldOutPrior(ReusePrior(mean=-0.4, common_sd=0.5, run_sd=0.8, slope_mean=-0.2, slope_sd=0.3), runs)
    p = [np.full(tr.n_docs, 0.1) for tr in data]
    draws, _ = comp.apply(data, [np.tile(q.astype(np.float32), (6000, 1)) for q in p], np.random.default_rng(2))
    point, _ = comp.point(data, p)
    for d, q in zip(draws, point, strict=True):
        assert np.max(np.abs(d.mean(axis=0) - q)) < 0.012  # the probit approximation (MacKay 1992)


def test_the_hierarchical_estimate_with_a_topup_learns_from_it_and_keeps_the_judgments(held_out_fit):
    """``estimate(..., topup=)`` fits without the draws' judgments, learns the held-out runs' levels from them
    and returns an estimate aligned with the data that holds them."""
    import pandas as pd

    from bayeval.data import Qrels, RankData
    from bayeval.relevance.topup import TopUpSample
    from bayeval.selection.topup import draw_topup
    from bayeval.synthetic import make_collection

    col = make_collection(n_topics=12, n_systems=10, n_docs=300, depth=50, judged_depth=10, seed=300,
                          independent=3)
    data = held_out_data()
    runs = list(data.systems)
    held = [r for k, r in enumerate(runs) if k not in set(contributing_runs(data).tolist())]
    s = draw_topup(data, held[:3], 2, depth=50, rng=np.random.default_rng(0))
    f = s.frame.assign(grade=[max(col.qrels.grade_of(t, d) or 0, 0) for t, d in zip(s.frame.topic, s.frame.docno,
                                                                                   strict=True)])
    sample = TopUpSample(f)
    base = pd.concat([pd.DataFrame({"topic": tr.topic, "docno": tr.docnos[tr.judged], "grade": tr.grades[tr.judged]})
                      for tr in data])
    both = Qrels.from_frame(pd.concat([base, sample.qrels().to_frame()], ignore_index=True))
    full = RankData.build(col.runs, both, depth=50)
    cfg = dataclasses.replace(load_config("hier-default"), held_out_runs=dataclasses.replace(
        load_config("hier-default").held_out_runs, reuse_run_sd=1.0, reuse_common_sd=0.5))
    est = HierarchicalEstimator(cfg).estimate(full, "laplace", p_draws=20, seed=1, draws=100, chains=1, topup=sample)
    assert all(np.array_equal(j, np.asarray(tr.judged)) for j, tr in zip(est.judged, full, strict=True))
    ev = est.held_out.to_frame().set_index("run")
    assert ev.loc[held[:3], "topup_judged"].min() > ev.loc[held[3:], "topup_judged"].max()
    assert ev.loc[held[:3], "sd"].max() < ev.loc[held[3:], "sd"].min()
    bad = TopUpSample(f.assign(grade=np.where(f.grade > 0, 0, 1)))
    with pytest.raises(BayevalInputError, match="judged otherwise"):
        HierarchicalEstimator(cfg).estimate(full, "laplace", p_draws=5, seed=1, draws=20, chains=1, topup=bad)


@pytest.mark.parametrize("df", [0.0, 4.0])
def test_a_topup_with_no_relevant_document_gives_a_finite_lower_level(df):
    """Sixty judged draws, none relevant: the level's mode is finite and below 0 under the Normal and the
    Student-t prior (whose log posterior is not concave: the Newton steps are halved)."""
    data = held_out_data()
    runs = tuple(contributing_runs(data))
    comp = HeldOutPrior(ReusePrior(0.0, 0.5, 1.0, df, 0.0, 0.3), runs)
    rng = np.random.default_rng(3)
    sampled = _simulated_topup(data, runs, np.full(len(data.systems), -40.0), 0.0, rng)
    assert sum(int(y.sum()) for _, y in sampled) == 0
    post = comp.posterior(data, [np.full(tr.n_docs, 0.3) for tr in data], sampled)
    held = [s for s in range(len(data.systems)) if s not in runs]
    assert np.all(np.isfinite(post.mean)) and np.all(post.level_mean[held] < -0.3)
    assert np.all(np.isfinite(post.cov)) and np.all(post.level_sd[held] > 0)
