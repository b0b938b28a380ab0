"""Joint posterior draws of the sparse-label model's cell shares (``share_draws="topics"``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import study_model

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.experiments.sparse import sparse_labels
from bayeval.relevance import load_config
from bayeval.relevance.sparse_labels import (
    SparseLabelModel,
    rank_layout,
    shared_shares,
    sparse_label_probabilities,
    topic_weights,
)
from bayeval.synthetic import make_collection

EDGES = (1, 2, 3, 4, 6, 11, 21, 51)


@pytest.fixture(scope="module")
def sparse_layout():
    """300 topics, 4 runs and a copy of run 0 (run 4), one judged relevant document per topic."""
    col = make_collection(n_topics=300, n_systems=4, n_docs=80, depth=50, judged_depth=80, base_rate=0.08, seed=3)
    runs = list(col.runs) + [dataclasses.replace(col.runs[0], name="copy0")]
    data = RankData.build(runs, sparse_labels(col.qrels, np.random.default_rng(1)))
    lay = rank_layout(data)
    cell = lay.system * len(EDGES) + np.searchsorted(np.array(EDGES) - 1, lay.rank, side="right") - 1
    return data, lay, cell


def _draws(lay, cell, pooling, n_draws=3000, seed=0):
    n_cells = lay.n_systems * len(EDGES)
    w = topic_weights(lay.n_topics, n_draws, np.random.default_rng(seed))
    return shared_shares(cell, lay.judged_relevant[lay.doc], lay.n_topics, n_cells, lay.topic, w, pooling,
                         pool_by=np.arange(n_cells) % len(EDGES))


def test_topic_weights_are_a_scaled_flat_dirichlet():
    w = topic_weights(50, 4000, np.random.default_rng(0))
    np.testing.assert_allclose(w.sum(axis=1), 50.0)
    assert (w > 0).all() and abs(w.var() - 50 / 51) < 0.05  # Var of T·Dirichlet(1,…,1) is (T−1)/(T+1)


def test_joint_draws_centre_on_the_beta_posterior_and_spread_like_it(sparse_layout):
    """Each cell's mean over the joint draws is its Beta posterior mean (the pooling per rank bin included),
    and its spread is the Beta's: only the dependence between cells changes."""
    _, lay, cell = sparse_layout
    fit = SparseLabelModel.fit(lay, relevant_mean=5.0, relevant_shape=0.5, bin_edges=EDGES, pooling=1.0)
    theta = _draws(lay, cell, 1.0)
    beta_mean = (fit.a / (fit.a + fit.b)).ravel()
    beta_sd = np.sqrt(fit.a * fit.b / ((fit.a + fit.b) ** 2 * (fit.a + fit.b + 1))).ravel()
    np.testing.assert_allclose(theta.mean(axis=0), beta_mean, rtol=0.03, atol=2e-4)
    ratio = theta.std(axis=0) / beta_sd
    assert 0.75 < np.median(ratio) < 1.25, ratio


def test_runs_that_share_judged_documents_move_together(sparse_layout):
    """A run and its copy get the same draw of every cell; overlapping runs are positively correlated. With
    each cell's Beta drawn on its own, the copy's cells are independent of the run's."""
    data, lay, cell = sparse_layout
    theta = _draws(lay, cell, 0.1).reshape(-1, lay.n_systems, len(EDGES))
    copy = lay.n_systems - 1
    np.testing.assert_allclose(theta[:, 0], theta[:, copy], atol=1e-12)
    fit = SparseLabelModel.fit(lay, relevant_mean=5.0, relevant_shape=0.5, bin_edges=EDGES, pooling=0.1)
    ind, _ = fit.draw_parts(3000, np.random.default_rng(0))
    assert np.abs(ind[:, 0] - ind[:, copy]).mean() > 0.003


@pytest.mark.parametrize("combine", ["mean", "projected"])
def test_the_models_draws_of_two_overlapping_runs_move_together(sparse_layout, combine):
    """End to end: over the draws of p, the mean p over run 0's positions and over run 1's move together more
    when the cells share their draws (the difference is narrower) while each alone spreads about as much."""
    data, lay, _ = sparse_layout
    spread = {}
    for share in ("topics", "cells"):
        est = sparse_label_probabilities(data, relevant_mean=5.0, relevant_shape=50.0, bin_edges=EDGES,
                                         combine=combine, share_draws=share, p_draws=200, seed=2)
        draws = np.concatenate(est.draws, axis=1).astype(np.float64)
        m0 = draws[:, lay.doc[lay.system == 0]].mean(axis=1)
        m1 = draws[:, lay.doc[lay.system == 1]].mean(axis=1)
        spread[share] = (float(m0.std()), float((m0 - m1).std()))
    assert 0.6 < spread["topics"][0] / spread["cells"][0] < 1.6, spread
    assert spread["topics"][1] < 0.8 * spread["cells"][1], spread


def test_share_draws_is_a_configuration_key(tmp_path):
    path = tmp_path / "joint.toml"
    path.write_text('kind = "sparse"\ncombine = "projected"\nshare_draws = "topics"\n')
    assert load_config(path).share_draws == "topics"
    assert load_config(study_model("sparse-trec")).share_draws == "topics"
    assert load_config("sparse").share_draws == "cells"
    path.write_text('kind = "sparse"\nshare_draws = "documents"\n')
    with pytest.raises(BayevalInputError, match="share_draws"):
        load_config(path)
