"""Consensus weights of the sparse-label model: a topic's judged document weighs m_t^-alpha in the counts."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import study_model

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.experiments.sparse import sparse_labels
from bayeval.relevance import estimate_probabilities, load_config
from bayeval.relevance.sparse_labels import (
    RankLayout,
    SparseLabelModel,
    consensus_weights,
    rank_layout,
    shared_shares,
    sparse_label_probabilities,
    topic_weights,
)
from bayeval.synthetic import make_collection

N_EACH = 100  # narrow topics, and as many broad ones


def _two_kinds_of_topics() -> tuple[RankLayout, np.ndarray]:
    """A strong and a weak run (depth 40) over narrow topics (2 relevant documents, both runs rank them 1-2)
    and broad ones (40 relevant: the strong run ranks 20 of them 1-20, the weak run none). Returns the layout
    with every relevant document marked, and each topic's kind (True: narrow)."""
    system, rank, doc, topic, rel, offsets = [], [], [], [], [], [0]
    narrow = np.array([True] * N_EACH + [False] * N_EACH)
    for t, is_narrow in enumerate(narrow):
        if is_narrow:
            lists, n_docs, n_rel = (list(range(40)), [0, 1] + list(range(40, 78))), 78, 2
        else:
            lists, n_docs, n_rel = (list(range(20)) + list(range(40, 60)), list(range(60, 100))), 100, 40
        for s, lst in enumerate(lists):
            system += [s] * 40
            rank += list(range(40))
            doc += [offsets[-1] + d for d in lst]
            topic += [t] * 40
        rel += [True] * n_rel + [False] * (n_docs - n_rel)
        offsets.append(offsets[-1] + n_docs)
    arr = lambda x: np.asarray(x, dtype=np.int64)  # noqa: E731
    lay = RankLayout(2, len(narrow), offsets[-1], arr(offsets), arr(system), arr(rank), arr(doc), arr(topic),
                     np.asarray(rel, dtype=bool))
    return lay, narrow


def _one_judged(lay: RankLayout, rng: np.random.Generator) -> RankLayout:
    """One relevant document per topic marked, uniformly among the topic's relevant ones (retrieved or not)."""
    rel = np.flatnonzero(lay.judged_relevant)
    topic = np.searchsorted(lay.offsets, rel, side="right") - 1
    order = np.argsort(topic + rng.random(len(rel)))
    first = np.unique(topic[order], return_index=True)[1]
    mask = np.zeros(lay.n_docs, bool)
    mask[rel[order][first]] = True
    return dataclasses.replace(lay, judged_relevant=mask)


def _over_credit(power: float, n_trials: int = 60) -> np.ndarray:
    """Per run, the mean over sparse-label draws of (mean R times the weighted judged count) / true relevant
    count: the over-credit of each run's rate estimate when every R_t is replaced by the mean."""
    lay, narrow = _two_kinds_of_topics()
    true = np.array([2 * N_EACH + 20 * N_EACH, 2 * N_EACH], dtype=np.float64)
    r_mean = (2 + 40) / 2
    rng = np.random.default_rng(5)
    out = []
    for _ in range(n_trials):
        sp = _one_judged(lay, rng)
        fit = SparseLabelModel.fit(sp, relevant_mean=r_mean, relevant_shape=1.0, bin_edges=(1,), pooling=0.0,
                                   weights=consensus_weights(sp, power))
        theta = (fit.a / (fit.a + fit.b))[:, 0]
        out.append(r_mean * theta * 40 * lay.n_topics / true)
    return np.mean(out, axis=0)


def test_consensus_weights_shrink_the_weak_runs_over_credit():
    """Replacing R_t by its mean over-credits the run whose relevant documents lie only in narrow topics (few
    relevant, retrieved by every run) far more than the run that also finds them in broad topics; weighting
    each judged document by m_t^-alpha (m_t: the runs retrieving it) narrows that gap, more for larger alpha."""
    plain, half, full = _over_credit(0.0), _over_credit(0.5), _over_credit(1.0)
    gap = lambda x: x[1] / x[0]  # noqa: E731
    assert gap(plain) > 6.0, plain  # (42/2 · 1/2) / (21 · 1.5/22) ≈ 7.3
    assert gap(half) < 0.9 * gap(plain), (half, plain)
    assert gap(full) < 0.9 * gap(half), (full, half)


def test_consensus_weights_are_m_to_the_minus_alpha_with_mean_one():
    lay, narrow = _two_kinds_of_topics()
    sp = _one_judged(lay, np.random.default_rng(0))
    assert consensus_weights(sp, 0.0) is None
    w = consensus_weights(sp, 0.5)
    hit = sp.judged_relevant[sp.doc]
    m = np.bincount(sp.topic[hit], minlength=sp.n_topics)
    seen = m > 0
    np.testing.assert_allclose(w[seen].mean(), 1.0)
    np.testing.assert_allclose(w[seen] * np.sqrt(m[seen]), (w[seen] * np.sqrt(m[seen]))[0])
    assert (w[~seen] == 0).all() and seen[narrow].all()
    with pytest.raises(BayevalInputError, match="consensus_power"):
        consensus_weights(sp, -1.0)


@pytest.fixture(scope="module")
def sparse_data():
    col = make_collection(n_topics=120, n_systems=4, n_docs=80, depth=50, judged_depth=80, base_rate=0.08, seed=3)
    return RankData.build(col.runs, sparse_labels(col.qrels, np.random.default_rng(1)))


def test_joint_draws_centre_on_the_weighted_beta_posterior(sparse_data):
    """With consensus weights the joint draws (share_draws = "topics") centre on the weighted counts' Beta
    posterior, as the independent draws do: both count each judged document with its topic's weight."""
    edges = (1, 2, 4, 11, 31)
    lay = rank_layout(sparse_data)
    w = consensus_weights(lay, 1.0)
    fit = SparseLabelModel.fit(lay, relevant_mean=5.0, relevant_shape=0.5, bin_edges=edges, pooling=1.0, weights=w)
    cell = lay.system * len(edges) + np.searchsorted(np.array(edges) - 1, lay.rank, side="right") - 1
    n_cells = lay.n_systems * len(edges)
    tw = topic_weights(lay.n_topics, 3000, np.random.default_rng(0))
    theta = shared_shares(cell, lay.judged_relevant[lay.doc], lay.n_topics, n_cells, lay.topic, tw, 1.0,
                          pool_by=np.arange(n_cells) % len(edges), hit_weights=w)
    np.testing.assert_allclose(theta.mean(axis=0), (fit.a / (fit.a + fit.b)).ravel(), rtol=0.04, atol=3e-4)
    unweighted = SparseLabelModel.fit(lay, relevant_mean=5.0, relevant_shape=0.5, bin_edges=edges, pooling=1.0)
    assert np.abs(fit.a / (fit.a + fit.b) - unweighted.a / (unweighted.a + unweighted.b)).max() > 0.01


@pytest.mark.parametrize("combine", ["mean", "projected"])
def test_consensus_power_is_a_configuration_key_and_zero_is_off(sparse_data, combine, tmp_path):
    base = dataclasses.replace(load_config(study_model("sparse-trec")), combine=combine)
    on = dataclasses.replace(base, consensus_power=0.5)
    p0 = np.concatenate(estimate_probabilities(sparse_data, base, p_draws=20, seed=2).p)
    p1 = np.concatenate(estimate_probabilities(sparse_data, on, p_draws=20, seed=2).p)
    direct = np.concatenate(sparse_label_probabilities(
        sparse_data, relevant_mean=60.0, relevant_shape=0.5, combine=combine, share_draws="topics",
        consensus_power=0.0, p_draws=20, seed=2).p)
    np.testing.assert_allclose(p0, direct, atol=1e-6)
    assert np.abs(p1 - p0).max() > 1e-3
    f = tmp_path / "m.toml"
    f.write_text('kind = "sparse"\nconsensus_power = 0.5\n')
    assert load_config(str(f)).consensus_power == 0.5
    f.write_text('kind = "sparse"\nconsensus_power = -1\n')
    with pytest.raises(BayevalInputError, match="consensus_power"):
        load_config(str(f))


def test_projected_classes_hold_their_unjudged_count_under_consensus_weights():
    """With consensus weights and the projected combination, each vote class's unjudged documents hold its rate
    times their number (a count, not size minus the weighted judged count), and every cell its weighted rate."""
    from bayeval.relevance.sparse_labels import vote_class

    col = make_collection(n_topics=40, n_systems=4, n_docs=80, depth=50, judged_depth=80, base_rate=0.08, seed=3)
    sparse = RankData.build(col.runs, sparse_labels(col.qrels, np.random.default_rng(4)))
    lay = rank_layout(sparse)
    edges, mu, kappa, seed = (1, 2, 4, 11, 31), 8.0, 0.1, 7
    w = consensus_weights(lay, 1.0)
    # the point problem, replayed from the model's seed (as the model draws it with share_draws = "cells")
    fit = SparseLabelModel.fit(lay, relevant_mean=mu, relevant_shape=0.5, bin_edges=edges, pooling=kappa, weights=w)
    rng = np.random.default_rng(seed)
    theta, rbar = fit.draw_parts(1000, rng)
    rates = fit.unjudged_rate(theta, rbar).reshape(1000, -1).mean(axis=0)
    count = np.bincount(lay.doc, minlength=lay.n_docs)
    retrieved = np.flatnonzero(count > 0)
    cls = vote_class(count[retrieved])
    size = np.bincount(cls).astype(float)
    judged = lay.judged_relevant[retrieved]
    doc_topic = np.repeat(np.arange(lay.n_topics), np.diff(lay.offsets))
    hits = np.bincount(cls[judged], weights=w[doc_topic[retrieved][judged]], minlength=len(size))
    pooled, strength = hits.sum() / size.sum(), kappa * size.mean()
    theta_v = rng.beta(hits + strength * pooled, size - hits + strength * (1 - pooled), size=(1000, 1, len(size)))
    class_rates = fit.unjudged_rate(theta_v, rbar).reshape(1000, -1).mean(axis=0)
    est = sparse_label_probabilities(sparse, relevant_mean=mu, relevant_shape=0.5, bin_edges=edges, pooling=kappa,
                                     combine="projected", projection_ridge=1e-7, consensus_power=1.0, p_draws=None,
                                     seed=seed)
    p = np.concatenate(est.p)
    cell = lay.system * len(edges) + np.searchsorted(np.array(edges) - 1, lay.rank, side="right") - 1
    unj = ~lay.judged_relevant[lay.doc]
    n_unj = np.bincount(cell[unj], minlength=rates.size)
    cell_mean = np.bincount(cell[unj], weights=p[lay.doc[unj]], minlength=rates.size) / np.maximum(n_unj, 1)
    assert np.max(np.abs(cell_mean - rates)[n_unj > 0]) < 1e-4
    unj_doc = ~judged
    class_sum = np.bincount(cls[unj_doc], weights=p[retrieved[unj_doc]], minlength=len(size))
    target = class_rates * np.bincount(cls[unj_doc], minlength=len(size))
    np.testing.assert_allclose(class_sum, target, rtol=1e-4, atol=1e-6)
    wrong = class_rates * (size - hits)  # the weighted judged count subtracted instead
    assert np.max(np.abs(wrong - target) / np.maximum(target, 1e-12)) > 1e-3
