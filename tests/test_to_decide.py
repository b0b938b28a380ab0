"""What would decide it (bayeval.selection.to_decide): the preposterior first passage equals brute-force Bayesian
updating in the conjugate case, and the judgments to decide a pair are 0 when decided, absent when no held-out run
can decide it, and fewer for a pair the levels leave less in doubt."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import held_out_data
from scipy import stats

from bayeval.errors import BayevalInputError
from bayeval.relevance import HierarchicalEstimator, load_config
from bayeval.relevance.unseen import with_unseen
from bayeval.selection.to_decide import first_passage, judgments_to_decide


@pytest.mark.parametrize("c, s0, so, se", [(0.0, 1.0, 2.0, 0.2), (0.8, 1.0, 1.0, 0.5), (-0.3, 0.6, 0.8, 0.1)])
def test_the_first_passage_is_that_of_sequential_bayesian_updating(c, s0, so, se):
    """θ ~ N(0, s0²); each round observes x_k ~ N(θ, so²); Δ = c + θ + ε, ε ~ N(0, se²) not learned. Brute force:
    draw θ, the x's, update the conjugate posterior each round, stop when |E[Δ]| ≥ z √Var[Δ]. The mean stopping
    round (capped at 8) and the share decided by the cap equal first_passage's within their Monte Carlo error.
    With the martingale's increments taken from the posterior variance instead of the prior's minus it (the
    mutation: tau = post_var) the means part and the test fails."""
    K, n = 8, 40000
    rng = np.random.default_rng(7)
    v = 1.0 / (1.0 / s0 ** 2 + np.arange(1, K + 1) / so ** 2)
    theta = rng.normal(0, s0, n)
    x = theta[:, None] + rng.normal(0, so, (n, K))
    mu = np.cumsum(x, axis=1) / so ** 2 * v[None, :]  # posterior mean of θ after k rounds (prior mean 0)
    z = stats.norm.ppf(0.95)
    hit = np.abs(c + mu) >= z * np.sqrt(v + se ** 2)[None, :]
    first = np.where(hit.any(axis=1), hit.argmax(axis=1) + 1, K)
    want, want_by = first.mean(), hit.any(axis=1).mean()
    got, got_by = first_passage(c, s0 ** 2, v, se ** 2, 0.95, n, np.random.default_rng(8))
    se_mean = np.sqrt(2 * first.var() / n)
    assert abs(got - want) < 4 * se_mean + 1e-9
    assert abs(got_by - want_by) < 4 * np.sqrt(2 * want_by * (1 - want_by) / n) + 1e-9


@pytest.fixture(scope="module")
def reuse_estimate():
    data = held_out_data()
    cfg = load_config("hier-default")
    cfg = dataclasses.replace(cfg, held_out_runs=dataclasses.replace(cfg.held_out_runs, reuse_common_sd=0.8,
                                                                      reuse_run_sd=1.0, reuse_slope_sd=0.3))
    est = HierarchicalEstimator(cfg).estimate(data, "laplace", p_draws=100, seed=2, draws=100, chains=1)
    return with_unseen(data, est, seed=2)


def test_each_undecided_pair_with_a_held_out_run_gets_a_run_and_a_number(reuse_estimate):
    data, est = reuse_estimate
    r = judgments_to_decide(data, est, max_rounds=5, paths=2000)
    f = r.to_frame()
    assert len(f) == len(data.systems) * (len(data.systems) - 1) // 2
    assert (f[f.decided].judgments == 0).all() and (f[f.decided].topup_run == "").all()
    held = set(data.systems) - {data.systems[s] for s in est.held_out.contributing}
    und = f[~f.decided]
    both_judged = und[~und.run_a.isin(held) & ~und.run_b.isin(held)]
    assert both_judged.judgments.isna().all() and (both_judged.topup_run == "").all()
    mine = und[und.run_a.isin(held) | und.run_b.isin(held)]
    assert len(mine) > 3 and (mine.topup_run != "").all()
    assert all(t in (a, b) for t, a, b in zip(mine.topup_run, mine.run_a, mine.run_b, strict=True))
    topics = len(data)
    assert ((mine.judgments > 0) & (mine.judgments <= 5 * topics)).all()
    # a pair nearer a decision (|P - 1/2| larger) needs no more judgments on average than one at a coin toss
    near = mine[(mine.p_less - 0.5).abs() > 0.3].judgments.mean()
    far = mine[(mine.p_less - 0.5).abs() < 0.15].judgments.mean()
    assert not (np.isfinite(near) and np.isfinite(far)) or near <= far


def test_it_needs_the_reuse_prior_and_sane_arguments(held_out_fit, reuse_estimate):
    data, fit = held_out_fit
    est = fit.probabilities(draws=20, seed=1)
    with pytest.raises(BayevalInputError, match="reuse prior"):
        judgments_to_decide(data, est)
    d2, e2 = reuse_estimate
    with pytest.raises(BayevalInputError, match="alpha"):
        judgments_to_decide(d2, e2, alpha=0.4)
    with pytest.raises(BayevalInputError, match="max_rounds"):
        judgments_to_decide(d2, e2, max_rounds=0)
