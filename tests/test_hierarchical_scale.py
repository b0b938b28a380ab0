"""The hierarchical model's fit at thousands of topics (docs/scale.md): the bordered negative Hessian's algebra against
the dense matrix, its Gaussian draws against the covariance, the rank coefficients solved once per distinct topic,
and the fit itself equal to the dense computation."""

from __future__ import annotations

import numpy as np
import pytest

from bayeval.data import RankData
from bayeval.relevance import HierarchicalEstimator
from bayeval.relevance._bordered import BorderedDiagonal, cholesky
from bayeval.relevance._kernels import _bt_newton_topics, bt_newton_batch, logistic_newton
from bayeval.relevance.hyperparameters import laplace_value
from bayeval.relevance.rank_coefficients import rank_wins
from bayeval.synthetic import make_collection


def _random_bordered(rng, G: int, b: int, start: int) -> BorderedDiagonal:
    """A positive definite bordered matrix: XᵀX + I of a random design with one diagonal-block column per row."""
    n = 6 * G
    group = rng.integers(0, G, n)
    Xb = rng.normal(size=(n, b))
    d = np.bincount(group, minlength=G) + 1.0
    cross = np.zeros((G, b))
    np.add.at(cross, group, Xb)
    return BorderedDiagonal(start, d, cross, Xb.T @ Xb + np.eye(b))


@pytest.mark.parametrize("start", [0, 2, 5])
def test_bordered_algebra_equals_the_dense_matrix(start):
    rng = np.random.default_rng(start)
    H = _random_bordered(rng, G=40, b=5, start=start)
    D = np.asarray(H)
    assert np.allclose(D, D.T) and D.shape == (45, 45)
    np.testing.assert_array_equal(D[np.arange(start, start + 40), np.arange(start, start + 40)], H.d)
    f = H.factor()
    g = rng.normal(size=(45, 3))
    np.testing.assert_allclose(f.solve(g), np.linalg.solve(D, g), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(f.solve(g[:, 0]), np.linalg.solve(D, g[:, 0]), rtol=1e-10, atol=1e-12)
    assert f.logdet() == pytest.approx(np.linalg.slogdet(D)[1], rel=1e-12)
    Ci = np.linalg.inv(D)
    np.testing.assert_allclose(f.dense_inverse(), Ci, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(f.inverse_diag(), np.diag(Ci), rtol=1e-10)
    dd, cross, cov_bb = f.inverse_parts()
    idx = np.arange(start, start + 40)
    border = np.r_[np.arange(start), np.arange(start + 40, 45)]
    np.testing.assert_allclose(dd, np.diag(Ci)[idx], rtol=1e-10)
    np.testing.assert_allclose(cross, Ci[np.ix_(idx, border)], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(cov_bb, Ci[np.ix_(border, border)], rtol=1e-10)
    x = rng.normal(size=45)
    np.testing.assert_allclose(H.dot(x), D @ x, rtol=1e-12, atol=1e-12)
    v = rng.random(45)
    np.testing.assert_allclose(np.asarray(H.plus_diagonal(v)), D + np.diag(v), rtol=1e-15)
    # the Laplace value (log determinant) and the generic factor agree with the dense path
    assert laplace_value(-3.0, H)[0] == pytest.approx(laplace_value(-3.0, D)[0], rel=1e-12)
    np.testing.assert_allclose(cholesky(D).solve(g), f.solve(g), rtol=1e-10, atol=1e-12)
    with pytest.raises(np.linalg.LinAlgError):
        BorderedDiagonal(start, -H.d, H.cross, H.border).factor()


def test_bordered_draws_have_the_inverse_as_covariance():
    """Monte Carlo: 40,000 draws from N(m, H⁻¹) through the Schur complement have mean m and covariance H⁻¹, the
    cross block included (red when the conditional mean −Y x_B of the diagonal block is dropped: the cross
    covariance is then 0)."""
    rng = np.random.default_rng(7)
    H = _random_bordered(rng, G=12, b=3, start=2)
    Ci = np.linalg.inv(np.asarray(H))
    m = rng.normal(size=15)
    n = 40_000
    X = H.factor().draws(m, n, np.random.default_rng(8))
    assert X.shape == (n, 15)
    se_mean = np.sqrt(np.diag(Ci) / n)
    assert np.all(np.abs(X.mean(axis=0) - m) < 5 * se_mean)
    cov = np.cov(X, rowvar=False)
    se_cov = np.sqrt((np.outer(np.diag(Ci), np.diag(Ci)) + Ci ** 2) / n)
    assert np.all(np.abs(cov - Ci) < 5 * se_cov)
    assert np.abs(Ci[2:14, [0, 1, 14]]).max() > 20 * se_cov[2:14, [0, 1, 14]].max()  # the cross block matters


def test_rank_coefficients_of_repeated_topics_are_solved_once_to_the_last_bit():
    rng = np.random.default_rng(1)
    K = 21
    kinds = np.stack([rank_wins(20, 1.0, rng.integers(5, 25, size=8)) for _ in range(3)])
    wins = kinds[rng.integers(0, 3, size=40)]
    a, b = rng.choice([2.0, 3.0], size=40), np.ones(40)
    x0 = np.log(a / b)[:, None] * np.ones((40, K))
    shared = bt_newton_batch(wins, a, b, x0=x0)
    each = _bt_newton_topics(wins, a, b, x0, 100, 1e-12)
    for got, ref in zip(shared[:3], each[:3], strict=True):
        np.testing.assert_array_equal(got, ref)
    for t in (0, 17, 39):  # and what a topic reaches alone
        alone = _bt_newton_topics(wins[t:t + 1], a[t:t + 1], b[t:t + 1], x0[t:t + 1], 100, 1e-12)
        np.testing.assert_array_equal(alone[0][0], shared[0][t])


def test_bordered_newton_and_laplace_equal_the_dense_computation():
    """The hierarchical model's inner mode, its negative Hessian and the Laplace log marginal likelihood (value and
    gradient) by the bordered algebra equal those of the dense matrix (the computation before the bordered path)."""
    col = make_collection(n_topics=50, n_systems=8, n_docs=80, depth=40, judged_depth=6, seed=4)
    m = HierarchicalEstimator("hier-default").model(RankData.build(col.runs, col.judgments, depth=40))[0]
    h = np.array([0.6, 0.5, 1.2])
    E = m._effects_design(h)
    assert E.bordered
    dense = E.from_parts(E.F, E.group, E.n_groups, E.W)  # the same design, dense Hessian
    prior = m.latent_prior(h)
    w = np.ones(len(m.y))
    rb = logistic_newton(E, m.y, w, prior, tol=1e-10, lagged=True)
    rd = logistic_newton(dense, m.y, w, prior, tol=1e-10, lagged=True)
    assert isinstance(rb.neg_hessian, BorderedDiagonal) and isinstance(rd.neg_hessian, np.ndarray)
    np.testing.assert_allclose(rb.x, rd.x, atol=1e-8)
    np.testing.assert_allclose(np.asarray(rb.neg_hessian), rd.neg_hessian, rtol=1e-8, atol=1e-10)
    assert laplace_value(rb.logpost, rb.neg_hessian)[0] == pytest.approx(laplace_value(rd.logpost, rd.neg_hessian)[0],
                                                                         abs=1e-7)
    # the analytic gradient through the factor is the finite difference of the bordered value
    val, g, x, _, ok, _, _, _ = m.log_marginal_grad(h)
    e = 1e-5
    fd = [(m.log_marginal(h * np.exp(e * np.eye(3)[i]), x)[0] - m.log_marginal(h * np.exp(-e * np.eye(3)[i]), x)[0])
          / (2 * e) for i in range(3)]
    assert ok and np.allclose(g, fd, rtol=1e-5, atol=1e-5)


def test_fit_at_many_topics_keeps_the_hessian_bordered_and_draws():
    """2,000 topics × 5 runs (beyond the dense draws of small models): the mode's negative Hessian stays bordered
    (no P × P array), its sd is finite, and Laplace draws of p come out for every topic."""
    col = make_collection(n_topics=2000, n_systems=5, n_docs=30, depth=10, judged_depth=1, seed=9)
    data = RankData.build(col.runs, col.judgments)
    fit = HierarchicalEstimator("hier-default").fit(data, "laplace", seed=1, draws=40, chains=1)
    H = fit.fit.mode.blocks[0][1]
    assert isinstance(H, BorderedDiagonal) and len(H.d) == 2000
    sd = fit.fit.mode.sd()
    assert np.all(np.isfinite(sd)) and np.all(sd[:2 + 2000 + 5] > 0)
    est = fit.probabilities(draws=20, seed=2)
    assert len(est.draws) == 2000 and est.draws[0].shape[0] == 20
    assert all(np.all((d >= 0) & (d <= 1)) for d in est.draws)
