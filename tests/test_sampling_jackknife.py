"""The delete-one Poisson jackknife variance of AP: each influence is the exact change of the estimate when one
draw is undone, it is the Horvitz-Thompson variance for a linear statistic, and its intervals cover by Monte
Carlo on sparse synthetic topics."""

from __future__ import annotations

import numpy as np
import pytest
from test_sampling_assisted import _mean_ap_draws, _sparse_topic

from bayeval.sampling._assisted_kernels import assisted_topic


def _topic(z, x, pi, inc, resid, order, jackknife):
    rk = np.empty(len(x), dtype=np.int64)
    rk[order] = np.arange(1, len(x) + 1)
    return assisted_topic(z[order][None, :], np.array([len(x)]), rk[inc][None, :], resid[inc],
                          ((1 - pi) / pi**2)[inc], float(z.sum()), (), z[inc], x[inc],
                          r_floor=float(x[inc].sum()), drop=(resid / pi)[inc] if jackknife else None)


def test_influence_is_the_exact_delete_one_change():
    rng = np.random.default_rng(8)
    x, pi, order = _sparse_topic(rng, D=120)
    x[order[:3]] = 1
    p = np.clip(0.5 * x + 0.2 * rng.random(len(x)), 0, 1)
    lam = 0.6
    inc = rng.random(len(x)) < np.maximum(pi, 0.3)
    resid = x - lam * p
    z = lam * p + np.where(inc, resid / np.where(inc, pi, 1.0), 0.0)
    out = _topic(z, x, pi, inc, resid, order, jackknife=True)
    for j, e in enumerate(np.where(inc)[0]):
        undone = inc.copy()
        undone[e] = False
        z_e = lam * p + np.where(undone, resid / np.where(undone, pi, 1.0), 0.0)
        ap_e = _topic(z_e, x, pi, undone, resid, order, jackknife=True)["AP"][0]
        assert out["AP_g"][0, j] == pytest.approx(np.sqrt(1 - pi[e]) * (out["AP"][0] - ap_e), abs=1e-12)


def test_jackknife_covers_on_sparse_topics():
    truth, est, var = _mean_ap_draws(
        500, lambda z, x, pi, inc, order: _topic(z, x, pi, inc, x.astype(float), order, jackknife=True))
    cover = np.mean(np.abs(est - truth) <= 1.959964 * np.sqrt(var))
    assert 0.93 <= cover <= 0.99
    assert np.mean(var) == pytest.approx(np.var(est), rel=0.5)
