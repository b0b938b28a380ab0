"""Held-out run levels (bayeval.relevance.run_level; docs/notes/calibration-record.md, revision 6): a run whose judged
documents
are relevant more often than the model predicts gets a positive level, shrunk towards 0 with little evidence and
across runs; the level moves p (and E[MAP]) of the documents only held-out runs retrieve, and nothing else."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import held_out_data, study_model
from scipy.special import expit, logit

from bayeval.data.coverage import contributing_runs
from bayeval.errors import BayevalInputError
from bayeval.expected import expected_measures
from bayeval.relevance import HierarchicalEstimator, load_config
from bayeval.relevance.run_level import HeldOutLevel, judged_evidence, run_levels
from bayeval.relevance.run_shift import shift_weights


def _with_level(fit, sd: float):
    return fit.with_held_out_runs(run_level_sd=sd)


def test_the_level_is_off_in_the_default_and_rejects_bad_input():
    assert load_config("hier-default").held_out_runs.run_level_sd == 0
    assert load_config(study_model("hier-level")).held_out_runs.run_level_sd > 0
    with pytest.raises(BayevalInputError, match="sd"):
        HeldOutLevel(-1.0, ())
    with pytest.raises(BayevalInputError, match="sd"):
        run_levels([np.zeros(3)], [np.zeros(3)], 0.0)
    with pytest.raises(BayevalInputError, match="judgments"):
        run_levels([np.zeros(3)], [], 1.0)
    with pytest.raises(BayevalInputError, match="run_level_sd"):
        dataclasses.replace(load_config("hier-default").held_out_runs, run_level_sd=float("nan"))
    assert load_config(study_model("hier-level-shift")).held_out_runs.run_level_spread == "empirical_bayes"
    with pytest.raises(BayevalInputError, match="run_level_spread"):
        dataclasses.replace(load_config("hier-default").held_out_runs, run_level_spread="pooled")
    with pytest.raises(BayevalInputError, match="spread"):
        run_levels([np.zeros(3)], [np.zeros(3)], 1.0, spread="pooled")
    with pytest.raises(BayevalInputError, match="spread"):
        HeldOutLevel(1.0, (), "pooled")


def test_a_fixed_spread_keeps_each_runs_own_level_where_empirical_bayes_pools_it_to_zero():
    """Eight runs with 60 judged documents each and a real excess (−0.6 … 0.6) that the empirical-Bayes spread
    does not resolve (τ̂ = 0: every level 0). With ``spread="fixed"`` τ is the scale itself, each run's level is
    its own N(0, 1) posterior (another run's judgments do not move it) and the levels follow the excess."""
    rng = np.random.default_rng(5)
    d_true = np.linspace(-0.6, 0.6, 8)
    o = [rng.normal(-0.5, 1.0, size=60) for _ in d_true]
    y = [(rng.random(60) < expit(oi + d)).astype(float) for oi, d in zip(o, d_true, strict=True)]
    m_eb, _, tau_eb = run_levels(o, y, 1.0)
    assert tau_eb == 0 and np.all(m_eb == 0)
    m_fx, v_fx, tau_fx = run_levels(o, y, 1.0, spread="fixed")
    assert tau_fx == 1.0
    assert np.corrcoef(m_fx, d_true)[0, 1] > 0.6 and m_fx.std() > 0.15
    assert np.all((v_fx > 0) & (v_fx < 1.0))  # the N(0, 1) prior sharpened by each run's own documents
    flipped = list(y)
    flipped[1] = 1.0 - y[1]
    m2, _, _ = run_levels(o, flipped, 1.0, spread="fixed")
    assert np.array_equal(np.delete(m2, 1), np.delete(m_fx, 1)) and m2[1] != m_fx[1]


def test_levels_recover_each_runs_excess_and_shrink_with_little_evidence():
    """Twelve runs whose judged documents are relevant at logit(p̄) + d_s: the levels follow d_s, a run with 8
    documents is pulled towards 0 more than the same excess with 400, and the spread τ is learned."""
    rng = np.random.default_rng(4)
    d_true = np.repeat([-1.0, -0.5, 0.5, 1.0], 3)
    n = np.array([400, 400, 8] * 4)
    o = [rng.normal(-1.5, 1.0, size=k) for k in n]
    y = [(rng.random(k) < expit(oi + d)).astype(float) for oi, d, k in zip(o, d_true, n, strict=True)]
    mean, var, tau = run_levels(o, y, 1.0)
    big = n == 400
    assert np.corrcoef(mean[big], d_true[big])[0, 1] > 0.95
    assert np.all(np.sign(mean[big]) == np.sign(d_true[big]))
    assert 0.4 < tau < 1.5
    # shrinkage: the 8-document runs lie closer to 0 relative to their own maximum than the 400-document ones
    assert np.all(var[~big] > 3 * var[big].max())
    # all documents relevant exactly as predicted: the spread goes to 0 and so do the levels
    y0 = [(rng.random(len(oi)) < expit(oi)).astype(float) for oi in o[:6]]
    m0, _, tau0 = run_levels(o[:6], y0, 1.0)
    assert tau0 < 0.3 and np.abs(m0).max() < 0.2


def test_the_fit_passes_the_fixed_spread_to_its_levels(held_out_fit):
    data, fit = held_out_fit
    draws = fit.probabilities(draws=100, seed=5).draws
    lev = fit.with_held_out_runs(run_level_sd=0.7, run_level_spread="fixed").held_out_level()
    assert lev.spread == "fixed"
    mean, var, tau = lev.levels(data, draws)
    assert tau == 0.7 and np.abs(mean).max() > 0


def test_a_run_better_than_predicted_on_its_judged_documents_raises_its_own_documents(held_out_fit):
    data, fit = held_out_fit
    base = fit.probabilities(draws=300, seed=5)
    lev = _with_level(fit, 1.0)
    moved = lev.probabilities(draws=300, seed=5)
    runs = contributing_runs(data)
    assert sorted(runs.tolist()) == [0, 1]
    mean, var, tau = lev.held_out_level().levels(data, base.draws)
    assert tau > 0 and np.abs(mean[2:]).max() > 0.05
    S = len(data.systems)
    for s in range(2, S):
        shifts = []
        for tr, b, m in zip(data, base.draws, moved.draws, strict=True):
            w = shift_weights(tr, tuple(runs), S)
            tg = w.sum(axis=1) > 0
            assert np.array_equal(b[:, ~tg], m[:, ~tg])  # judged and contributing runs' documents untouched
            only = w[:, s] == 1.0  # retrieved by s alone
            if only.any():
                shifts.append(logit(m[:, only].mean(axis=0)) - logit(b[:, only].mean(axis=0)))
        if shifts and abs(mean[s]) > 0.1:
            assert np.sign(np.mean(np.concatenate(shifts))) == np.sign(mean[s])
            assert abs(np.mean(np.concatenate(shifts))) > 0.3 * abs(mean[s])  # E[p] moves, unlike the shift


def test_e_map_of_held_out_runs_moves_with_their_levels_and_not_at_scale_zero(held_out_fit):
    data, fit = held_out_fit
    base = fit.probabilities(draws=200, seed=7)
    same = _with_level(fit, 0.0).probabilities(draws=200, seed=7)
    assert all(np.array_equal(a, b) for a, b in zip(base.draws, same.draws, strict=True))
    moved = _with_level(fit, 1.0).probabilities(draws=200, seed=7)
    mean, _, _ = _with_level(fit, 1.0).held_out_level().levels(data, base.draws)

    def emap(est):
        ev = expected_measures(data, est.arrays(draws=True), measures=["AP"], method="mc", seed=0, progress=False)
        return np.asarray(ev.all_expected[0], dtype=float)

    d = emap(moved) - emap(base)
    held = np.arange(2, len(data.systems))
    strong = held[np.abs(mean[held]) > 0.2]
    assert len(strong) >= 2
    assert np.all(np.sign(d[strong]) == np.sign(mean[strong]))


def test_judged_evidence_collects_each_runs_judged_documents(held_out_fit):
    data, fit = held_out_fit
    p = [np.full(tr.n_docs, 0.25) for tr in data]
    o, y = judged_evidence(data, p)
    S = len(data.systems)
    for s in range(S):
        n = sum(int(np.sum(np.asarray(tr.judged) & (np.asarray(tr.ranks)[:, s] > 0))) for tr in data)
        r = sum(int(np.sum(np.asarray(tr.relevant) & (np.asarray(tr.ranks)[:, s] > 0))) for tr in data)
        assert len(o[s]) == n and int(y[s].sum()) == r
        assert np.allclose(o[s], logit(0.25))


def test_point_p_moves_with_the_levels_and_agrees_with_the_mean_of_the_draws():
    """A fit without draws (the fast path's point p) gets the levels too, integrated out, so that ``estimate`` and
    ``evaluate`` at ``--fit map`` see what the draws see (a collection whose held-out runs have clear levels)."""
    data = held_out_data(1)
    fit = HierarchicalEstimator("hier-default").fit(data, "laplace", seed=3, draws=200, chains=1)
    lev = _with_level(fit, 1.0)
    p0, p1 = fit.probabilities(draws=None).p, lev.probabilities(draws=None).p
    runs = tuple(contributing_runs(data))
    S = len(data.systems)
    mean, _, tau = run_levels(*judged_evidence(data, p0), 1.0)
    assert tau > 0.2 and np.sum(np.abs(mean[2:]) > 0.2) >= 2
    targets = [shift_weights(tr, runs, S).sum(axis=1) > 0 for tr in data]
    for a, b, tg in zip(p0, p1, targets, strict=True):
        assert np.array_equal(a[~tg], b[~tg])
    for s in np.flatnonzero(np.abs(mean) > 0.2):
        only = [shift_weights(tr, runs, S)[:, s] == 1.0 for tr in data]
        d = np.concatenate([logit(b[o]) - logit(a[o]) for a, b, o in zip(p0, p1, only, strict=True)])
        assert d.size and np.sign(d.mean()) == np.sign(mean[s]), s
    # the change of the target documents' mean p: the point's against the draws' (same fit, same levels)
    d0 = lev.probabilities(draws=400, seed=9).p
    b0 = fit.probabilities(draws=400, seed=9).p
    dp = np.mean(np.concatenate([b[tg] - a[tg] for a, b, tg in zip(p0, p1, targets, strict=True)]))
    dd = np.mean(np.concatenate([b[tg] - a[tg] for a, b, tg in zip(b0, d0, targets, strict=True)]))
    # measured: +0.028 against +0.015 (the point's levels are learned from the point p, the draws' from their mean)
    assert np.sign(dp) == np.sign(dd) and 0.4 < dp / dd < 2.5, (dp, dd)


def test_the_study_variants_name_levels_and_shifts(tmp_path):
    """``calibration_study.py`` writes ``hier~l1~s2+unseen`` as hier-default with both scales — the shipped
    ``hier-level-shift`` —, ``hier~f1~s2+unseen`` as the same with a fixed spread, and names a bad modifier."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "studies"))
    from calibration_study import _variant

    kw = _variant("hier~l1~s2+unseen", tmp_path)
    cfg = load_config(kw["bayes_config"]).held_out_runs
    shipped = load_config(study_model("hier-level-shift")).held_out_runs
    assert kw["unseen"] and (cfg.run_level_sd, cfg.run_shift_sd) == (1.0, 2.0)
    assert dataclasses.replace(cfg) == shipped
    with pytest.raises(SystemExit, match="unknown modifier"):
        _variant("hier~q1+unseen", tmp_path)
    with pytest.raises(SystemExit, match="must be a number"):
        _variant("hier~lx", tmp_path)
    fixed = load_config(_variant("hier~f1~s2+unseen", tmp_path)["bayes_config"]).held_out_runs
    assert dataclasses.replace(fixed, run_level_spread="empirical_bayes") == shipped
    assert fixed.run_level_spread == "fixed"
    with pytest.raises(SystemExit, match="set twice"):
        _variant("hier~f1~l1+unseen", tmp_path)
