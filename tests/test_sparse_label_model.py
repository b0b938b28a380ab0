"""The sparse-label relevance model (bayeval.relevance.sparse_labels) on a collection whose truth is known."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.experiments.sparse import sparse_labels
from bayeval.relevance import estimate_probabilities, load_config
from bayeval.relevance.sparse_labels import rank_bin_counts, rank_layout, sparse_label_probabilities
from bayeval.synthetic import make_collection

EDGES = (1, 2, 4, 11, 31)


@pytest.fixture(scope="module")
def truth():
    """Complete judgments (every document judged), topics with 1 to ~15 relevant documents."""
    col = make_collection(n_topics=30, n_systems=4, n_docs=80, depth=50, judged_depth=80, base_rate=0.08, seed=3)
    data = RankData.build(col.runs, col.qrels)
    return col, data, rank_layout(data)


def _one_relevant_per_topic(layout, rng):
    """Sparse labels on the layout: one relevant document per topic, uniformly among the topic's relevant."""
    rel = np.flatnonzero(layout.judged_relevant)
    topic = np.searchsorted(layout.offsets, rel, side="right") - 1
    order = np.argsort(topic + rng.random(len(rel)))  # shuffle within each topic
    first = np.unique(topic[order], return_index=True)[1]
    mask = np.zeros(layout.n_docs, bool)
    mask[rel[order][first]] = True
    return dataclasses.replace(layout, judged_relevant=mask)


def _rate_estimates(layout, r_t, n_trials, weigh_by_r):
    rng = np.random.default_rng(11)
    out = []
    for _ in range(n_trials):
        sparse = _one_relevant_per_topic(layout, rng)
        _, c = rank_bin_counts(sparse, EDGES, weights=r_t if weigh_by_r else None)
        out.append(c)
    return np.array(out)


def test_weighted_count_is_unbiased_by_monte_carlo(truth):
    """E[sum_t R_t J_tsb] = sum_t Y_tsb: the relevant documents each run has in each rank bin."""
    _, _, layout = truth
    r_t = np.add.reduceat(layout.judged_relevant.astype(float), layout.offsets[:-1])
    assert r_t.min() >= 1 and r_t.max() > 3  # R_t varies: dropping it would matter
    _, true_count = rank_bin_counts(layout, EDGES)  # every relevant document judged: the truth
    est = _rate_estimates(layout, r_t, 400, weigh_by_r=True)
    se = est.std(axis=0, ddof=1) / np.sqrt(len(est))
    z = np.abs(est.mean(axis=0) - true_count) / np.maximum(se, 1e-9)
    assert np.all(z < 4.5), z.max()


def test_dropping_r_t_biases_the_count(truth):
    """Without R_t (each judged document counted once) the count is far below the truth."""
    _, _, layout = truth
    _, true_count = rank_bin_counts(layout, EDGES)
    est = _rate_estimates(layout, None, 100, weigh_by_r=False).mean(axis=0)
    assert est.sum() < 0.5 * true_count.sum()


def test_unjudged_p_is_the_formula_and_mean_one_gives_trec_eval(truth):
    col, _, _ = truth
    sparse = RankData.build(col.runs, sparse_labels(col.qrels, np.random.default_rng(0)))
    est = sparse_label_probabilities(sparse, relevant_mean=1.0, p_draws=None)
    assert all(np.all(p == 0.0) for p in est.p)  # R = 1: nothing unjudged is relevant (trec_eval)
    # one run, no pooling, R̄ fixed (huge shape): p of a document = (R̄-1)θ/(1-θ) of its bin
    one = RankData.build(col.runs[:1], sparse_labels(col.qrels, np.random.default_rng(0)))
    lay = rank_layout(one)
    n, c = rank_bin_counts(lay, EDGES)
    est = sparse_label_probabilities(one, relevant_mean=4.0, relevant_shape=1e9, bin_edges=EDGES, pooling=0.0,
                                     p_draws=4000, seed=1)
    theta = c[0] / n[0]
    expect = np.clip(3.0 * theta / (1 - theta), 0, 1)
    tr = one[0]
    r = tr.ranking(0)
    bins = np.searchsorted(np.array(EDGES), np.arange(1, len(r) + 1), side="right") - 1
    # the posterior mean of the Beta is θ to within its sd; p is its smooth function
    np.testing.assert_allclose(est.p[0][r], expect[bins], rtol=0.25, atol=0.01)


def test_draws_carry_the_uncertainty_of_r(truth):
    col, _, _ = truth
    sparse = RankData.build(col.runs, sparse_labels(col.qrels, np.random.default_rng(0)))
    sure = sparse_label_probabilities(sparse, relevant_mean=5.0, relevant_shape=1e6, p_draws=300, seed=2)
    unsure = sparse_label_probabilities(sparse, relevant_mean=5.0, relevant_shape=1.0, p_draws=300, seed=2)
    sd = [np.mean([d.std(axis=0).mean() for d in e.draws]) for e in (sure, unsure)]
    assert sd[1] > 1.5 * sd[0]


def test_registered_kind_and_config(truth, tmp_path):
    col, _, _ = truth
    sparse = RankData.build(col.runs, sparse_labels(col.qrels, np.random.default_rng(0)))
    cfg = load_config("sparse")
    assert cfg.kind == "sparse" and cfg.name == "sparse-default"
    est = estimate_probabilities(sparse, "sparse", p_draws=5, seed=0)
    assert est.model == "sparse-default" and est.draws[0].shape == (5, sparse[0].n_docs)
    bad = tmp_path / "bad.toml"
    bad.write_text('kind = "sparse"\nrelevant_mean = 0.5\n')
    with pytest.raises(BayevalInputError, match="relevant_mean"):
        load_config(bad)
    bad.write_text('kind = "sparse"\nbin_edges = [2, 5]\n')
    with pytest.raises(BayevalInputError, match="bin_edges"):
        load_config(bad)


def test_sparse_study_uses_the_model_and_m_one_is_trec_eval():
    """The study's default model; with R̄ = 1 its expected measure is trec_eval's on the sparse labels."""
    from bayeval.experiments.sparse import run_sparse_study
    from bayeval.relevance.config import SparseLabelConfig

    col = make_collection(n_topics=12, n_systems=4, n_docs=60, depth=30, judged_depth=60, seed=5)
    st = run_sparse_study(col.runs, col.qrels, trials=1, seed=2)
    assert st.model == "sparse" and np.isfinite(st.trials["tau_bayeval"]).all()
    flat = run_sparse_study(col.runs, col.qrels, trials=1, seed=2, model=SparseLabelConfig(relevant_mean=1.0))
    assert flat.trials["rmse_bayeval"].iloc[0] == pytest.approx(flat.trials["rmse_trec_eval"].iloc[0], abs=1e-9)


def _cell_rates_and_class_targets(layout, seed, *, relevant_mean, pooling):
    """The point problem the projected combination solves (the model's own draws, replayed from ``seed``)."""
    from bayeval.relevance.sparse_labels import SparseLabelModel, vote_class

    fit = SparseLabelModel.fit(layout, relevant_mean=relevant_mean, relevant_shape=0.5, bin_edges=EDGES,
                               pooling=pooling)
    rng = np.random.default_rng(seed)
    theta, rbar = fit.draw_parts(1000, rng)
    rates = fit.unjudged_rate(theta, rbar).reshape(1000, -1)
    count = np.bincount(layout.doc, minlength=layout.n_docs)
    retrieved = np.flatnonzero(count > 0)
    cls = vote_class(count[retrieved])
    size = np.bincount(cls).astype(float)
    hits = np.bincount(cls[layout.judged_relevant[retrieved]], minlength=len(size)).astype(float)
    pooled, strength = hits.sum() / size.sum(), pooling * size.mean()
    theta_v = rng.beta(hits + strength * pooled, size - hits + strength * (1 - pooled), size=(1000, 1, len(size)))
    class_rates = fit.unjudged_rate(theta_v, rbar).reshape(1000, -1)
    return rates.mean(axis=0), class_rates.mean(axis=0), cls, retrieved


def test_projected_p_keeps_every_cells_rate_and_class_count(truth):
    """combine='projected': over each run-and-bin cell the mean p of its unjudged positions is the cell's rate,
    and each vote class holds its estimated relevant count; the mean of the runs' rates keeps neither."""
    col, _, _ = truth
    sparse = RankData.build(col.runs, sparse_labels(col.qrels, np.random.default_rng(4)))
    lay = rank_layout(sparse)
    rates, class_rates, cls, retrieved = _cell_rates_and_class_targets(lay, 7, relevant_mean=8.0, pooling=0.1)
    cell = lay.system * len(EDGES) + np.searchsorted(np.array(EDGES) - 1, lay.rank, side="right") - 1
    unj = ~lay.judged_relevant[lay.doc]
    n_unj = np.bincount(cell[unj], minlength=rates.size)
    unj_doc = ~lay.judged_relevant[retrieved]
    misfits = {}
    for combine in ("projected", "mean"):
        est = sparse_label_probabilities(sparse, relevant_mean=8.0, relevant_shape=0.5, bin_edges=EDGES,
                                         pooling=0.1, combine=combine, projection_ridge=1e-7, p_draws=None, seed=7)
        p = np.concatenate(est.p)
        cell_mean = np.bincount(cell[unj], weights=p[lay.doc[unj]], minlength=rates.size) / np.maximum(n_unj, 1)
        class_sum = np.bincount(cls[unj_doc], weights=p[retrieved[unj_doc]], minlength=len(class_rates))
        class_target = class_rates * np.bincount(cls[unj_doc], minlength=len(class_rates))
        misfits[combine] = (np.max(np.abs(cell_mean - rates)[n_unj > 0]),
                            np.max(np.abs(class_sum - class_target) / np.maximum(class_target, 1)))
    assert misfits["projected"][0] < 1e-4 and misfits["projected"][1] < 1e-4, misfits
    assert misfits["mean"][0] > 0.02 and misfits["mean"][1] > 0.05, misfits


def test_projected_with_one_run_and_no_classes_is_the_mean(truth):
    """One run: no document is shared, so nothing is corrected (point and draws)."""
    col, _, _ = truth
    one = RankData.build(col.runs[:1], sparse_labels(col.qrels, np.random.default_rng(0)))
    kw = {"relevant_mean": 5.0, "bin_edges": EDGES, "p_draws": 20, "seed": 3, "vote_classes": False}
    mean = sparse_label_probabilities(one, combine="mean", **kw)
    proj = sparse_label_probabilities(one, combine="projected", **kw)
    for a, b, da, db in zip(mean.p, proj.p, mean.draws, proj.draws, strict=True):
        j = np.asarray(one[0].judged)
        np.testing.assert_allclose(a[~j], b[~j], atol=1e-6)
        np.testing.assert_allclose(da[:, ~j], db[:, ~j], atol=1e-5)


def test_combine_is_a_configuration_key(tmp_path):
    path = tmp_path / "proj.toml"
    path.write_text('kind = "sparse"\nrelevant_mean = 60.0\ncombine = "projected"\nprojection_ridge = 0.1\n')
    cfg = load_config(path)
    assert cfg.combine == "projected" and cfg.vote_classes and cfg.projection_ridge == 0.1
    path.write_text('kind = "sparse"\ncombine = "sum"\n')
    with pytest.raises(BayevalInputError, match="combine"):
        load_config(path)
