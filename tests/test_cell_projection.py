"""The I-projection of a prior p onto cells' relevant counts (bayeval.relevance.cell_projection)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import linalg, sparse

from bayeval.errors import BayevalInputError
from bayeval.relevance.cell_projection import project_onto_cells, refine_draws, tilt


def _overlapping(seed=0, n_docs=400, n_cells=12):
    """Documents in 1-4 random cells each; a true relevance whose cell counts are the targets."""
    rng = np.random.default_rng(seed)
    rows, cols = [], []
    for d in range(n_docs):
        c = rng.choice(n_cells, size=rng.integers(1, 5), replace=False)
        rows += [d] * len(c)
        cols += list(c)
    x = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_docs, n_cells))
    truth = rng.random(n_docs) < 0.1 + 0.6 * (x @ rng.random(n_cells) / np.maximum(x.sum(axis=1).A1, 1))
    prior = np.clip(rng.random(n_docs) * 0.5, 0.02, 0.98)
    return x, prior, x.T @ truth.astype(float)


def _kl(p, q):
    return float(np.sum(p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q))))


def test_every_cell_gets_its_count():
    x, prior, m = _overlapping()
    r = project_onto_cells(x, prior, m, ridge=0.0, tol=1e-10)
    np.testing.assert_allclose(x.T @ r.p, m, atol=1e-7)
    assert np.max(np.abs(x.T @ prior - m)) > 5  # the prior was far from it


def test_it_is_the_closest_p_that_does():
    """Minimum KL to the prior among the p with the cells' counts: every feasible move away from it costs KL."""
    x, prior, m = _overlapping(seed=1)
    p = project_onto_cells(x, prior, m, ridge=0.0, tol=1e-12).p
    null = linalg.null_space(x.T.toarray())  # directions that keep every cell's sum
    rng = np.random.default_rng(2)
    base = _kl(p, prior)
    for _ in range(20):
        q = p + 1e-3 * null @ rng.standard_normal(null.shape[1])
        assert np.all((q > 0) & (q < 1))
        np.testing.assert_allclose(x.T @ q, m, atol=1e-6)
        assert _kl(q, prior) > base


def test_a_prior_that_already_fits_is_kept_and_identical_runs_average():
    # two runs holding the same documents with the same rate: nothing to correct
    x = sparse.csr_matrix(np.ones((4, 2)))
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    r = project_onto_cells(x, prior, x.T @ prior)
    np.testing.assert_allclose(r.p, prior, atol=1e-9)
    np.testing.assert_allclose(r.beta, 0.0, atol=1e-7)
    # the same documents with rates 0.2 and 0.4: no p fits both; the ridge gives their mean, 0.3
    r = project_onto_cells(x, np.full(4, 0.3), np.array([0.8, 1.6]), ridge=1e-3)
    np.testing.assert_allclose(r.p, 0.3, atol=2e-3)


def test_a_cell_alone_gets_its_rate_and_a_large_ridge_the_prior():
    x = sparse.csr_matrix((np.ones(6), ([0, 1, 2, 3, 4, 5], [0, 0, 0, 1, 1, 1])), shape=(6, 2))
    prior = np.full(6, 0.5)
    r = project_onto_cells(x, prior, np.array([0.3, 2.4]), ridge=0.0, tol=1e-12)
    np.testing.assert_allclose(r.p, [0.1] * 3 + [0.8] * 3, atol=1e-9)
    far = project_onto_cells(x, prior, np.array([0.3, 2.4]), ridge=1e6)
    np.testing.assert_allclose(far.p, prior, atol=1e-5)


def test_tilt_reproduces_the_projection_and_applies_to_many_priors():
    x, prior, m = _overlapping(seed=3)
    r = project_onto_cells(x, prior, m)
    np.testing.assert_allclose(tilt(x, prior, r.beta), r.p, atol=1e-12)
    many = tilt(x, np.vstack([prior, prior * 0.5]), r.beta)
    assert many.shape == (2, len(prior)) and np.all(many[1] < many[0])


def test_draws_move_towards_their_own_projection():
    """Chord steps from the point's corrections reach each draw's own projection; no step is the tilt."""
    x, prior, m = _overlapping(seed=4)
    rng = np.random.default_rng(5)
    priors = np.clip(prior * rng.uniform(0.5, 1.5, size=(6, 1)), 0.01, 0.99)
    targets = np.clip(m * rng.uniform(0.7, 1.3, size=(6, len(m))), 0, np.asarray(x.sum(axis=0)).ravel())
    point = project_onto_cells(x, priors.mean(axis=0), targets.mean(axis=0), ridge=0.01)
    exact = np.array([project_onto_cells(x, p, t, ridge=0.01).p for p, t in zip(priors, targets, strict=True)])
    far = np.abs(refine_draws(x, point, priors, targets, ridge=0.01, steps=0) - exact).max()
    np.testing.assert_allclose(refine_draws(x, point, priors, targets, ridge=0.01, steps=0),
                               tilt(x, priors, point.beta), atol=1e-12)
    assert far > 0.05
    err = [np.abs(refine_draws(x, point, priors, targets, ridge=0.01, steps=k) - exact).max() for k in (1, 3, 30)]
    assert err[0] < 0.5 * far and err[1] < err[0] and err[2] < 1e-6, (far, err)


def test_bad_input_is_named():
    x = sparse.csr_matrix(np.ones((3, 2)))
    with pytest.raises(BayevalInputError, match="prior"):
        project_onto_cells(x, [0.5, 0.5], [1.0, 1.0])
    with pytest.raises(BayevalInputError, match="targets"):
        project_onto_cells(x, [0.5] * 3, [1.0, 4.0])
    with pytest.raises(BayevalInputError, match="ridge"):
        project_onto_cells(x, [0.5] * 3, [1.0, 1.0], ridge=-1)
    point = project_onto_cells(x, [0.5] * 3, [1.0, 1.0])
    with pytest.raises(BayevalInputError, match="priors, targets"):
        refine_draws(x, point, np.full((2, 3), 0.5), np.ones((3, 2)))
    with pytest.raises(BayevalInputError, match="steps"):
        refine_draws(x, point, np.full((2, 3), 0.5), np.ones((2, 2)), steps=-1)
