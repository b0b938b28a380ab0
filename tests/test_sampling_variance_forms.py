"""AP's textbook linearised variance (derivatives at the corrected labels): each influence is
√((1 - π_e)/π_e²) · (x_e - λ p_e) · ∂AP/∂z_e at z, and it is smaller than the delete-one jackknife's
(which the Efron-Stein inequality makes conservative for a nonlinear statistic such as AP's ratio)."""

from __future__ import annotations

import numpy as np
import pytest
from test_sampling_assisted import _mean_ap_draws, _sparse_topic

from bayeval.errors import BayevalInputError
from bayeval.sampling._assisted_kernels import assisted_topic


def _topic(z, x, pi, inc, resid, order, form):
    rk = np.empty(len(x), dtype=np.int64)
    rk[order] = np.arange(1, len(x) + 1)
    return assisted_topic(z[order][None, :], np.array([len(x)]), rk[inc][None, :], resid[inc],
                          ((1 - pi) / pi**2)[inc], float(z.sum()), (), z[inc], x[inc], r_floor=0.0,
                          drop=(resid / pi)[inc] if form == "jackknife" else None, at_z=form == "linearised")


def _form_topic(form):
    """One sparse topic's estimate with ``form``'s variance, λ = 0 (the residual is the label)."""
    return lambda z, x, pi, inc, order: _topic(z, x, pi, inc, x.astype(float), order, form)


def _draw(seed=3, lam=0.6):
    rng = np.random.default_rng(seed)
    x, pi, order = _sparse_topic(rng, D=150)
    x[order[:4]] = 1
    p = np.clip(0.5 * x + 0.2 * rng.random(len(x)), 0, 1)
    inc = rng.random(len(x)) < np.maximum(pi, 0.3)
    resid = x - lam * p
    z = lam * p + np.where(inc, resid / np.where(inc, pi, 1.0), 0.0)
    return x, pi, order, inc, resid, z


def test_linearised_influence_is_the_derivative_at_z():
    x, pi, order, inc, resid, z = _draw()
    out = _topic(z, x, pi, inc, resid, order, "linearised")
    h = 1e-6
    for j, e in enumerate(np.where(inc)[0]):
        up, down = z.copy(), z.copy()
        up[e] += h
        down[e] -= h
        slope = (_topic(up, x, pi, inc, resid, order, "linearised")["AP"][0]
                 - _topic(down, x, pi, inc, resid, order, "linearised")["AP"][0]) / (2 * h)
        w = np.sqrt((1 - pi[e]) / pi[e] ** 2) * resid[e]
        assert out["AP_g"][0, j] == pytest.approx(w * slope, rel=1e-5, abs=1e-9)


@pytest.mark.slow
def test_linearised_variance_understates_where_the_jackknife_does_not():
    # same draws for both forms (same seed): the textbook form under-states the Monte Carlo variance on topics
    # resting on a few heavily weighted documents; the jackknife over-states it a little (Efron-Stein)
    _, est, lin = _mean_ap_draws(300, _form_topic("linearised"))
    _, est_j, jack = _mean_ap_draws(300, _form_topic("jackknife"))
    np.testing.assert_array_equal(est, est_j)
    assert np.mean(lin) < 0.85 * np.var(est)
    assert np.mean(jack) > np.var(est)
    assert np.mean(lin) < np.mean(jack)


def test_unknown_variance_form_is_a_clear_error():
    from bayeval.sampling import assisted_measures

    with pytest.raises(BayevalInputError, match="variance"):
        assisted_measures([], None, None, variance="delta")
