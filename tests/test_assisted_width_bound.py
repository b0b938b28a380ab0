"""The oracle design variance of model-assisted MAP (``bayeval.sampling.oracle``): its derivatives are AP's,
its closed form is the Monte Carlo variance of the estimator over repeated samples, and the oracle weight
minimises it."""

from __future__ import annotations

import numpy as np
import pytest
from test_sampling_assisted import _collection, _draw

from bayeval.data import Qrels, RankData, RelevanceProbabilities, TopicJudgments
from bayeval.errors import BayevalInputError
from bayeval.measures import evaluate
from bayeval.sampling import assisted_measures
from bayeval.sampling._stat_kernels import ap_sums
from bayeval.sampling.oracle import design_variance, design_variance_terms, oracle_weight, truth_slopes


def _world(topics=8):
    runs, truth, preds, design = _collection(seed=3, topics=topics, pool=150, systems=4)
    # top-10 documents drawn at 0.9, the rest at 0.5: (1 - π) matters everywhere
    design = {t: np.where(d < 1, 0.5, 0.9) for t, d in design.items()}
    qrels = Qrels({t: TopicJudgments(d, x) for t, (d, x) in truth.items()})
    sample = _draw(truth, design, np.random.default_rng(2))
    return runs, truth, preds, design, qrels, sample


def test_slopes_are_the_derivatives_of_ap():
    runs, truth, _, _, qrels, sample = _world(topics=3)
    sl = truth_slopes(runs, sample, qrels)
    true_ap = evaluate(RankData.build(runs, qrels), "AP").to_frame()
    for ti, t in enumerate(sl.topics):
        ref = true_ap[true_ap.topic == t].set_index("run").value.reindex(runs.names).to_numpy()
        np.testing.assert_allclose(sl.ap[:, ti], ref, atol=1e-12)
    # central differences of N(x)/R(x) with the labels made continuous
    data = RankData.build(runs, sample.pool())
    tr = data[sl.topics[0]]
    docs = sample[tr.topic].docnos
    where = {d: i for i, d in enumerate(tr.docnos)}
    x = sl.labels[tr.topic]
    rng = np.random.default_rng(0)
    checked = 0
    for j in rng.choice(len(x), 25, replace=False):
        def ap(eps, j=j):
            y = x.copy()
            y[j] += eps
            doc = np.zeros(tr.n_docs)
            doc[[where[d] for d in docs]] = y
            return ap_sums(tr.ranked_values(doc, 0.0))[4] / y.sum()
        fd = (ap(1e-6) - ap(-1e-6)) / 2e-6
        np.testing.assert_allclose(sl.slopes[tr.topic][:, j] * len(sl.topics), fd, rtol=1e-6, atol=1e-9)
        checked += int(np.any(tr.ranks[where[docs[j]]] == 0))
    assert checked > 0   # documents some run does not retrieve were among those checked


@pytest.mark.parametrize("lam", [0.0, 0.7])
def test_closed_form_is_the_monte_carlo_variance(lam):
    runs, truth, preds, design, qrels, sample = _world()
    sl = truth_slopes(runs, sample, qrels)
    probs = RelevanceProbabilities({t: dict(zip(truth[t][0], preds[t], strict=True)) for t in truth})
    v = design_variance(sl, design, preds, lam)
    rng = np.random.default_rng(11)
    est = []
    for _ in range(400):
        ev = assisted_measures(runs, _draw(truth, design, rng), probs, weight=lam, inclusion=design, cutoffs=())
        est.append(ev.mean("AP")[0])
    mc = np.var(np.array(est), axis=0, ddof=1)
    # 400 samples: the Monte Carlo variance is within ±7% (one se) of the design variance
    np.testing.assert_allclose(v, mc, rtol=0.25)
    assert np.sum(v) == pytest.approx(np.sum(mc), rel=0.12)
    # the formula without the finite-population factor (1 - π) is far off: the check has teeth
    wrong = sum((sl.labels[t] - lam * preds[t]) ** 2 / design[t] * sl.slopes[t] ** 2 for t in sl.topics)
    assert np.sum(wrong) > 2 * np.sum(mc)


def test_oracle_weight_minimises_the_variance():
    runs, truth, preds, design, qrels, sample = _world()
    sl = truth_slopes(runs, sample, qrels)
    lam = oracle_weight(sl, design, preds)
    best = design_variance(sl, design, preds, lam).sum()
    for other in np.linspace(-0.5, 2.0, 26):
        assert best <= design_variance(sl, design, preds, other).sum() + 1e-18
    per = oracle_weight(sl, design, preds, per_topic=True)
    assert set(per) == set(sl.topics)
    assert design_variance(sl, design, preds, per).sum() <= best + 1e-18
    # a model that knows the truth leaves no variance at λ = 1, and λ* = 1 for it
    assert oracle_weight(sl, design, sl.labels) == pytest.approx(1.0)
    assert np.all(design_variance(sl, design, sl.labels, 1.0) == 0.0)
    # λ = 0 is statAP: the predictions do not matter
    np.testing.assert_array_equal(design_variance(sl, design, preds, 0.0), design_variance(sl, design, None))
    terms = design_variance_terms(sl, design, preds, lam)
    np.testing.assert_allclose(sum(v.sum(axis=1) for v in terms.values()), design_variance(sl, design, preds, lam))


def test_bad_input_names_the_argument():
    runs, truth, preds, design, qrels, sample = _world(topics=2)
    sl = truth_slopes(runs, sample, qrels)
    t = sl.topics[0]
    with pytest.raises(BayevalInputError, match="inclusion: no values for topic"):
        design_variance(sl, {sl.topics[1]: design[sl.topics[1]]}, preds, 0.5)
    with pytest.raises(BayevalInputError, match="inclusion: topic .* probabilities in"):
        design_variance(sl, {**design, t: np.zeros_like(design[t])}, preds, 0.5)
    with pytest.raises(BayevalInputError, match="predictions: topic .* one per pooled document"):
        design_variance(sl, design, {**preds, t: preds[t][:3]}, 0.5)
    with pytest.raises(BayevalInputError, match="weight: no weight for topic"):
        design_variance(sl, design, preds, {t: 0.5})
    with pytest.raises(BayevalInputError, match="weight: must be finite"):
        design_variance(sl, design, preds, float("nan"))
    with pytest.raises(BayevalInputError, match="truth: expected Qrels"):
        truth_slopes(runs, sample, {t: 1})


def _sparse_overpredicted():
    """Sparse topics (a third of the relevant documents of the base collection kept) whose model still predicts
    the original relevance — it over-predicts — and documents past the top 10 drawn at 0.15: a difference
    estimator's R̂ of a topic can come near 0, where its AP derivatives explode."""
    runs, truth, preds, design = _collection(seed=3, topics=12, pool=150, systems=4)
    rng = np.random.default_rng(9)
    truth = {t: (d, (x * (rng.random(len(x)) < 0.3)).astype(int)) for t, (d, x) in truth.items()}
    design = {t: np.where(d < 1, 0.15, 0.6) for t, d in design.items()}
    return runs, truth, preds, design, Qrels({t: TopicJudgments(d, x) for t, (d, x) in truth.items()}), rng


@pytest.mark.parametrize("world", ["base", "sparse"])
def test_model_tuning_reaches_the_oracle_weight(world):
    if world == "base":
        runs, truth, preds, design, qrels, _ = _world()
        rng = np.random.default_rng(4)
    else:
        runs, truth, preds, design, qrels, rng = _sparse_overpredicted()
    probs = RelevanceProbabilities({t: dict(zip(truth[t][0], preds[t], strict=True)) for t in truth})
    sl = truth_slopes(runs, _draw(truth, design, rng), qrels)
    best = oracle_weight(sl, design, preds)
    se0 = np.sqrt(design_variance(sl, design, None)).mean()
    oracle = np.sqrt(design_variance(sl, design, preds, best)).mean() / se0
    lams = [assisted_measures(runs, _draw(truth, design, rng), probs, inclusion=design, cutoffs=(), shrink=0.0,
                              tuning="model").weight for _ in range(40)]
    ratio = np.mean([np.sqrt(design_variance(sl, design, preds, lam)).mean() / se0 for lam in lams])
    # the tuned weight's design width within 0.03 of the oracle weight's (the variance is flat near λ*)
    assert ratio <= oracle + 0.03
    assert abs(np.mean(lams) - best) < 0.15


def test_tuning_is_checked():
    runs, truth, preds, design, qrels, sample = _world(topics=2)
    with pytest.raises(BayevalInputError, match="tuning: one of corrected, model"):
        assisted_measures(runs, sample, None, inclusion=design, tuning="truth")
