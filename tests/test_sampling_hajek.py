"""statAP with Hájek (ratio) precisions: exact values on a hand example, AP in [0, 1] where statAP's
Horvitz-Thompson precision exceeds it, jackknife influences equal to the exact delete-one changes (nonrelevant
draws included), a Monte Carlo check of the variance, the API option and the study method ``sample-hajek``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayeval.data import RankData
from bayeval.data.run import Run, RunSet
from bayeval.data.sample import StratifiedSample, TopicSample
from bayeval.errors import BayevalInputError
from bayeval.experiments.sampling import SamplingStudyConfig, draw_pool_sample, run_sampling_trial
from bayeval.sampling import corrected_measures
from bayeval.sampling._corrected_kernels import corrected_topic
from bayeval.sampling._hajek_kernels import hajek_topic
from bayeval.synthetic import make_collection


def _topic(x, pi, drawn, orders):
    """The kernel on one sample: documents ``drawn`` (bool, pool order) with labels ``x``, each run ranking the
    whole pool in the order ``orders[s]``."""
    delta = np.where(drawn, 1.0 / pi, 0.0)
    y_doc, w_doc = delta * x, delta
    ranks = np.stack([np.argsort(o)[drawn] + 1 for o in orders])
    return hajek_topic(np.stack([y_doc[o] for o in orders]), np.stack([w_doc[o] for o in orders]), ranks,
                       x[drawn] > 0, pi[drawn])


def test_hand_example():
    """Ranks A, B, C, D; E relevant, not retrieved. Drawn: A (relevant, π ½), B (nonrelevant, π ¼), D (relevant,
    π ½), E (π ¼); C not drawn. P̂_A = 1, P̂_D = (1 + 2)/(1 + 2 + 4) = 3/7, P̂_E = 0; R̂ = 8, N̂ = 2 + 6/7:
    AP̂ = 5/14 (statAP: P̂_D = 3/4, 7/16). Undoing A: P̂_D = 1/5, AP = 0.4/6; B: P̂_D = 1, AP = 4/8; D: 2/6;
    E: (20/7)/4."""
    pi = np.array([0.5, 0.25, 0.5, 0.5, 0.25])
    drawn = np.array([True, True, False, True, True])
    y = np.array([[2.0, 0.0, 0.0, 2.0]])
    w = np.array([[2.0, 4.0, 0.0, 2.0]])
    ranks = np.array([[1, 2, 4, 0]])
    out = hajek_topic(y, w, ranks, np.array([True, False, True, True]), pi[drawn])
    assert out["AP"][0] == pytest.approx(5 / 14, abs=1e-15)
    np.testing.assert_allclose(out["precision"][0], [1.0, 0.0, 3 / 7, 0.0], atol=1e-15)
    assert float(out["R"]) == pytest.approx(8.0)
    undone = np.array([0.4 / 6, 0.5, 1 / 3, 5 / 7])
    np.testing.assert_allclose(out["g"][0], np.sqrt(1 - pi[drawn]) * (5 / 14 - undone), atol=1e-15)
    ht = corrected_topic(y, ranks[:, [0, 2, 3]], 1 / pi[drawn][[0, 2, 3]], pi[drawn][[0, 2, 3]])
    assert ht["AP"][0] == pytest.approx(7 / 16)
    # a ranked document outside the pool (known nonrelevant, weight 1) at rank 3: P̂_D = 3/8
    out = hajek_topic(y, np.array([[2.0, 4.0, 1.0, 2.0]]), ranks, np.array([True, False, True, True]), pi[drawn])
    assert out["precision"][0, 2] == pytest.approx(3 / 8)


def _top_heavy(seed, D=60, top=0.9):
    """A topic whose run ranks many relevant documents first, drawn with small π: statAP's products of 1/π."""
    rng = np.random.default_rng(seed)
    x = (rng.random(D) < np.r_[np.full(15, top), np.full(D - 15, 0.1)]).astype(float)
    pi = np.r_[np.full(15, 0.08), np.full(D - 15, 0.03)]
    orders = [np.arange(D), np.argsort(np.arange(D) + rng.normal(0, 8, D))]
    return x, pi, orders


def test_ap_never_exceeds_one_where_statap_does():
    rng = np.random.default_rng(5)
    over = 0
    for seed in range(40):
        x, pi, orders = _top_heavy(seed)
        drawn = rng.random(len(x)) < 4 * pi
        if not (drawn & (x > 0)).any():
            continue
        out = _topic(x, pi, drawn, orders)
        assert np.all((out["AP"] >= 0) & (out["AP"] <= 1 + 1e-12))
        assert np.all((out["precision"] >= 0) & (out["precision"] <= 1 + 1e-12))
        rel = drawn & (x > 0)
        ranks = np.stack([np.argsort(o)[rel] + 1 for o in orders])
        z = np.where(rel, 1 / pi, 0.0)
        over += int(np.any(corrected_topic(np.stack([z[o] for o in orders]), ranks, 1 / pi[rel], pi[rel])["AP"] > 1))
    assert over >= 10          # the designs are adversarial: statAP exceeds 1 on many of them


def test_influences_are_the_exact_delete_one_changes():
    x, pi, orders = _top_heavy(3, top=0.5)
    drawn = np.random.default_rng(4).random(len(x)) < 6 * pi
    out = _topic(x, pi, drawn, orders)
    # nonrelevant draws above relevant ones move the estimate: their influences are not 0
    assert np.abs(out["g"][:, x[drawn] == 0]).max() > 0.01 and (drawn & (x > 0)).sum() >= 3
    for j, e in enumerate(np.flatnonzero(drawn)):
        undone = drawn.copy()
        undone[e] = False
        again = _topic(x, pi, undone, orders)
        assert out["g"][:, j] == pytest.approx(np.sqrt(1 - pi[e]) * (out["AP"] - again["AP"]), abs=1e-12)


def test_jackknife_variance_by_monte_carlo():
    """Mean AP over 12 topics of two runs, π 0.48 in the top 15 and 0.18 below, 600 samples: the mean jackknife
    variance is 1.15-1.2x the Monte Carlo variance of the estimate (asserted within [0.9, 1.4]; with the
    nonrelevant draws' influences left out it is 0.68-0.86x), and the normal interval around the estimate's own
    mean covers 95.5-96% (the estimator's bias is not the variance's business). With π a half of that the
    jackknife over-states the variance about 2x (a topic's few draws above a rank weigh 1/π each: undoing one
    moves a ratio further than its linear part)."""
    rng = np.random.default_rng(17)
    tops = [_top_heavy(100 + t, D=80) for t in range(12)]
    tops = [(x, np.clip(6 * pi, 0, 1), o) for x, pi, o in tops]
    est, var = [], []
    for _ in range(600):
        m, v, k = np.zeros(2), np.zeros(2), 0
        for x, pi, orders in tops:
            drawn = rng.random(len(x)) < pi
            if not (drawn & (x > 0)).any():
                continue
            out = _topic(x, pi, drawn, orders)
            m += out["AP"]
            v += np.sum(out["g"] ** 2, axis=1)
            k += 1
        est.append(m / k)
        var.append(v / k**2)
    est, var = np.array(est), np.array(var)
    ratio = var.mean(axis=0) / est.var(axis=0)
    assert np.all((ratio > 0.9) & (ratio < 1.4)), ratio
    cover = np.mean(np.abs(est - est.mean(axis=0)) <= 1.959964 * np.sqrt(var), axis=0)
    assert np.all((cover > 0.93) & (cover < 0.985)), cover


@pytest.fixture(scope="module")
def drawn():
    col = make_collection(n_topics=8, n_systems=5, n_docs=200, depth=60, judged_depth=60, seed=11)
    data = RankData.build(col.runs, None, depth=60)
    sample, incl = draw_pool_sample(data, col.qrels, 0.15, np.random.default_rng(2))
    return col, sample, incl


def test_the_api_option(drawn):
    col, sample, incl = drawn
    ev = corrected_measures(col.runs, sample, inclusion=incl, depth=60, precision="hajek")
    m, v = ev.mean("AP")
    vals = ev.values["AP"]
    assert np.all((vals[~np.isnan(vals)] >= 0) & (vals[~np.isnan(vals)] <= 1)) and np.all(v > 0)
    assert not np.allclose(m, corrected_measures(col.runs, sample, inclusion=incl, depth=60).mean("AP")[0])
    with pytest.raises(BayevalInputError, match="precision"):
        corrected_measures(col.runs, sample, precision="hajk")
    with pytest.raises(BayevalInputError, match="correction: only 'none'"):
        corrected_measures(col.runs, sample, precision="hajek", correction="taylor")


def test_a_ranked_document_outside_the_pool_counts_as_a_known_nonrelevant_one():
    """The hand example's ranking through the API, with C ranked but not pooled: P̂_D = 3/8."""
    run = Run.from_frame(pd.DataFrame({"topic": "1", "docno": ["A", "B", "C", "D"], "score": [4.0, 3, 2, 1]}), "r")
    ts = TopicSample(np.array(["A", "B", "D", "E"], dtype=object), np.array(["1", "1", "1", "1"], dtype=object),
                     ("1",), np.array([1, 0, 1, 1]))
    incl = {"1": np.array([0.5, 0.25, 0.5, 0.25])}
    ev = corrected_measures(RunSet((run,)), StratifiedSample({"1": ts}), inclusion=incl, precision="hajek")
    assert ev.values["AP"][0, 0] == pytest.approx((2 + 2 * 3 / 8) / 8)


def test_the_study_runs_it(tmp_path, collection_dir_writer):
    from bayeval.experiments import load_collection

    col = make_collection(n_topics=6, n_systems=5, n_docs=120, depth=40, judged_depth=40, seed=3)
    loaded = load_collection(collection_dir_writer(col, tmp_path))
    frame = run_sampling_trial(loaded, SamplingStudyConfig(budgets=(0.3,), depth=40, pairs=4,
                                                           methods=("sample-bcp", "sample-hajek")), 0)
    runs = frame[frame.kind == "run"]
    a = runs[runs.method == "sample-bcp"].estimate.to_numpy()
    b = runs[runs.method == "sample-hajek"].estimate.to_numpy()
    assert a.shape == b.shape and not np.allclose(a, b)
    assert np.all((b >= 0) & (b <= 1))
    assert (runs[runs.method == "sample-hajek"].power < 1).any()   # the power-scale interval, as sample-bcp's
