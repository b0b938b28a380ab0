"""expected_measures / compare_systems on small collections, checked against full enumeration.

For each topic the reference enumerates all 2^n relevance outcomes of its documents (judged ones fixed)
and computes every measure from its definition (trec_eval conventions: AP = mean precision at the
relevant documents over R; P@k = hits/k; recall@k = hits/R; Rprec = hits in the top R / R;
nDCG@k with gain = grade (unjudged relevant: 1) and discount 1/log2(r + 1), ideal list from all
gains of the topic).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayeval.data import Qrels, RankData, RelevanceProbabilities, Run, RunSet
from bayeval.errors import BayevalInputError
from bayeval.expected import (
    ExpectedEvaluation,
    PairwiseComparison,
    compare_systems,
    delta_ap_moments,
    expected_measures,
    p_less_normal,
    thin_draws,
)
from bayeval.expected import reference as ref
from bayeval.synthetic import make_collection

# ---------------------------------------------------------------------------------------------
# a small random collection: every topic has at most 11 documents


def make_small(seed: int, n_topics: int = 3, n_sys: int = 4, max_docs: int = 11, graded: bool = True):
    rng = np.random.default_rng(seed)
    names = [f"s{i}" for i in range(n_sys)]
    rows = {s: ([], [], []) for s in names}
    qrows = []
    for t in range(1, n_topics + 1):
        n = int(rng.integers(4, max_docs + 1))
        docs = [f"T{t}D{i}" for i in range(n)]
        for s in names:
            k = int(rng.integers(1, n + 1))
            chosen = rng.permutation(n)[:k]
            for pos, d in enumerate(chosen):
                rows[s][0].append(str(t))
                rows[s][1].append(docs[d])
                rows[s][2].append(float(k - pos))
        judged = rng.permutation(n)[: int(rng.integers(1, n))]
        for d in judged:
            grade = int(rng.choice([-1, 0, 0, 1, 2] if graded else [0, 1]))
            qrows.append((str(t), docs[d], grade))
    runs = RunSet(tuple(Run.from_arrays(s, np.array(r[0], dtype=object), np.array(r[1], dtype=object),
                                        np.array(r[2])) for s, r in rows.items()))
    qrels = Qrels.from_frame(pd.DataFrame(qrows, columns=["topic", "docno", "grade"]))
    return RankData.build(runs, qrels)


def _measure_from_x(tr, s, x, family, k):
    """One system's measure on one outcome x (n,), straight from the definition."""
    order = tr.ranked[s, : tr.lengths[s]]
    rel_total = int(x.sum())
    top = order if k is None else order[:k]
    hits = x[top]
    if family == "AP":
        if rel_total == 0:
            return 0.0
        cum = np.cumsum(hits)
        return float(np.sum(hits * cum / np.arange(1, len(top) + 1)) / rel_total)
    if family == "P":
        return float(hits.sum() / k)
    if family == "recall":
        return float(hits.sum() / rel_total) if rel_total else 0.0
    if family == "Rprec":
        return float(x[order[:rel_total]].sum() / rel_total) if rel_total else 0.0
    if family == "nDCG":
        gains = np.where(tr.judged, np.maximum(tr.grades, 0), x).astype(float)
        disc = 1.0 / np.log2(np.arange(1, len(gains) + 1) + 1.0)
        dcg = float(np.sum(gains[top] * disc[: len(top)]))
        ideal = np.sort(gains)[::-1][: (len(gains) if k is None else k)]
        idcg = float(np.sum(ideal * disc[: len(ideal)]))
        return dcg / idcg if idcg > 0 else 0.0
    raise AssertionError(family)


def _enumerated(tr, p, family, k):
    """(outcome probabilities (2^n,), values (2^n, S))."""
    x = ref.outcomes(tr.n_docs)
    prob = ref.outcome_probabilities(x, p)
    keep = prob > 0
    x, prob = x[keep], prob[keep]
    vals = np.array([[_measure_from_x(tr, s, row, family, k) for s in range(tr.n_systems)] for row in x])
    return prob, vals


MEASURES = [("AP", None), ("AP", 3), ("P", 2), ("P", 5), ("recall", 3), ("recall", 20), ("nDCG", 3),
            ("nDCG", None), ("nDCG", 1)]


def _name(family, k):
    return family if k is None else f"{family}@{k}"


@pytest.fixture(scope="module")
def small():
    return make_small(1)


@pytest.fixture(scope="module")
def small_p(small):
    rng = np.random.default_rng(2)
    out = []
    for tr in small:
        p = rng.random(tr.n_docs)
        p[rng.random(tr.n_docs) < 0.2] = 1.0
        out.append(p)
    return out


def test_small_collection_has_the_hard_parts(small):
    # judged relevant documents nobody retrieves, graded and negative judgments, unjudged documents
    assert any((tr.relevant & (tr.ranks.max(axis=1) == 0)).any() for tr in small)
    assert any((tr.grades == 2).any() for tr in small) and any((tr.grades < 0).any() for tr in small)
    assert all((~tr.judged).any() for tr in small)


def test_exact_moments_equal_enumeration_for_every_measure(small, small_p):
    specs = [_name(f, k) for f, k in MEASURES]
    ev = expected_measures(small, small_p, measures=specs, method="exact")
    for t, tr in enumerate(small):
        p = tr.probabilities(None)  # judged documents: 1/0
        p[~tr.judged] = small_p[t][~tr.judged]
        for i, (family, k) in enumerate(MEASURES):
            prob, vals = _enumerated(tr, p, family, k)
            e = prob @ vals
            v = prob @ (vals - e) ** 2
            np.testing.assert_allclose(ev.expected[i, :, t], e, atol=1e-9, err_msg=specs[i])
            np.testing.assert_allclose(ev.variance[i, :, t], v, atol=1e-9, err_msg=specs[i])


def test_pairs_exact_equal_enumeration(small, small_p):
    for family, k in MEASURES:
        cmp = compare_systems(small, small_p, measure=_name(family, k), method="exact")
        for t, tr in enumerate(small):
            p = tr.probabilities(None)
            p[~tr.judged] = small_p[t][~tr.judged]
            prob, vals = _enumerated(tr, p, family, k)
            for i, (a, b) in enumerate(zip(cmp.index_a, cmp.index_b, strict=True)):
                d = vals[:, a] - vals[:, b]
                e = prob @ d
                assert cmp.delta_expected[i, t] == pytest.approx(e, abs=1e-9)
                assert cmp.delta_variance[i, t] == pytest.approx(prob @ (d - e) ** 2, abs=1e-9)


def test_all_pairs_agree_with_one_pair_at_a_time(small, small_p):
    # the shared-per-system all-pairs kernels give what the one-pair function gives
    for method in ("paper", "delta", "exact"):
        cmp = compare_systems(small, small_p, method=method)
        for t, tr in enumerate(small):
            p = np.where(tr.judged, tr.relevant.astype(float), small_p[t])
            for i, (a, b) in enumerate(zip(cmp.index_a, cmp.index_b, strict=True)):
                want = delta_ap_moments(tr.ranks[:, a], tr.ranks[:, b], p, method=method)
                assert (cmp.delta_expected[i, t], cmp.delta_variance[i, t]) == pytest.approx(want, abs=1e-12)


def test_many_pairs_reuse_the_scratch_tree_correctly():
    # more pairs than parallel tasks: each task's Fenwick tree is reused pair after pair
    data = make_small(5, n_topics=2, n_sys=14, max_docs=11)
    rng = np.random.default_rng(9)
    probs = [rng.random(tr.n_docs) for tr in data]
    for method in ("paper", "exact"):
        cmp = compare_systems(data, probs, method=method)
        assert len(cmp.index_a) == 91
        for t, tr in enumerate(data):
            p = np.where(tr.judged, tr.relevant.astype(float), probs[t])
            for i, (a, b) in enumerate(zip(cmp.index_a, cmp.index_b, strict=True)):
                want = delta_ap_moments(tr.ranks[:, a], tr.ranks[:, b], p, method=method)
                assert (cmp.delta_expected[i, t], cmp.delta_variance[i, t]) == pytest.approx(want, abs=1e-12)


def test_paper_pairs_match_naive_cubic_formula(small, small_p):
    cmp = compare_systems(small, small_p, method="paper")
    for t, tr in enumerate(small):
        p = np.where(tr.judged, tr.relevant.astype(float), small_p[t])
        for i, (a, b) in enumerate(zip(cmp.index_a, cmp.index_b, strict=True)):
            want = ref.paper_moments_delta(tr.ranks[:, a], tr.ranks[:, b], p)
            assert (cmp.delta_expected[i, t], cmp.delta_variance[i, t]) == pytest.approx(want, abs=1e-9)


def test_monte_carlo_within_four_standard_errors(small, small_p):
    draws = 4000
    specs = [_name(f, k) for f, k in MEASURES] + ["R-prec"]
    mc = expected_measures(small, small_p, measures=specs, method="mc", draws=draws, seed=7)
    for t, tr in enumerate(small):
        p = np.where(tr.judged, tr.relevant.astype(float), small_p[t])
        for i, (family, k) in enumerate([*MEASURES, ("Rprec", None)]):
            prob, vals = _enumerated(tr, p, family, k)
            e = prob @ vals
            v = prob @ (vals - e) ** 2
            m4 = prob @ (vals - e) ** 4
            se_mean = np.sqrt(v / draws) + 1e-12
            # Var of the sample variance: (m4 - v^2 (N - 3)/(N - 1)) / N. Where m4 ~ v^2 (two-point
            # values) the error is second order, v Z^2 / N with Z^2 ~ chi2(1): allow 16 v / N for it.
            se_var = np.sqrt(np.maximum(m4 - v**2 * (draws - 3) / (draws - 1), 0) / draws)
            assert np.all(np.abs(mc.expected[i, :, t] - e) <= 4 * se_mean), specs[i]
            assert np.all(np.abs(mc.variance[i, :, t] - v) <= 4 * se_var + 16 * v / draws + 1e-12), specs[i]


def test_monte_carlo_pairs_p_less_is_a_frequency(small, small_p):
    draws = 3000
    mc = compare_systems(small, small_p, method="mc", draws=draws, seed=3)
    for t, tr in enumerate(small):
        p = np.where(tr.judged, tr.relevant.astype(float), small_p[t])
        prob, vals = _enumerated(tr, p, "AP", None)
        for i, (a, b) in enumerate(zip(mc.index_a, mc.index_b, strict=True)):
            d = vals[:, a] - vals[:, b]
            want = prob[d < 0].sum() + 0.5 * prob[d == 0].sum()  # ties count one half
            assert abs(mc.p_less[i, t] - want) <= 4 * np.sqrt(want * (1 - want) / draws) + 1e-12


def test_rprec_needs_monte_carlo(small):
    with pytest.raises(BayevalInputError, match="^measures: R-prec"):
        expected_measures(small, measures=["Rprec"], method="exact")
    with pytest.raises(BayevalInputError, match="^measure: R-prec"):
        compare_systems(small, measure="R-prec", method="delta")


# ---------------------------------------------------------------------------------------------
# over topics, results, p_less rules


def test_means_over_topics(small, small_p):
    ev = expected_measures(small, small_p, measures=["AP", "P@5"], method="delta")
    np.testing.assert_allclose(ev.all_expected, ev.expected.mean(axis=2))
    np.testing.assert_allclose(ev.all_variance, ev.variance.sum(axis=2) / len(small) ** 2)
    cmp = compare_systems(small, small_p, method="delta")
    np.testing.assert_allclose(cmp.all_expected, cmp.delta_expected.mean(axis=1))
    np.testing.assert_allclose(cmp.all_variance, cmp.delta_variance.sum(axis=1) / len(small) ** 2)
    np.testing.assert_allclose(cmp.all_p_less, p_less_normal(cmp.all_expected, cmp.all_variance))
    # ΔMAP expectation = difference of the systems' E[MAP]
    e = ev.all_expected[0]
    np.testing.assert_allclose(cmp.all_expected, e[cmp.index_a] - e[cmp.index_b], atol=1e-12)


def test_p_less_normal_and_zero_variance():
    # Φ(-E/sd); with sd = 0 the sign is certain (1 if E < 0, 0 if E > 0), and a tie splits evenly
    got = p_less_normal(np.array([-0.1, 0.1, 0.0, 0.0, -0.2, 0.3]), np.array([0.01, 0.01, 0.01, 0.0, 0.0, 0.0]))
    np.testing.assert_allclose(got, [0.841344746, 0.158655254, 0.5, 0.5, 1.0, 0.0], atol=1e-9)


def test_known_relevance_gives_certain_order(small):
    # every unjudged document irrelevant (default_p = 0): no randomness, p_less in {0, 0.5, 1}
    for method in ("paper", "delta", "exact", "mc"):
        cmp = compare_systems(small, default_p=0.0, method=method, draws=10, seed=1)
        assert np.all(cmp.delta_variance <= 1e-15)
        assert set(np.unique(cmp.p_less)) <= {0.0, 0.5, 1.0}
        want = np.where(cmp.delta_expected < -1e-12, 1.0, np.where(cmp.delta_expected > 1e-12, 0.0, 0.5))
        np.testing.assert_array_equal(cmp.p_less, want)


def test_frames_and_results(small, small_p):
    ev = expected_measures(small, small_p, measures=["AP", "nDCG@3"], method="exact")
    assert isinstance(ev, ExpectedEvaluation)
    f = ev.to_frame()
    # the layout of bayeval.measures.Evaluation.to_frame, with expected and variance for value
    assert list(f.columns) == ["run", "topic", "measure", "expected", "variance"]
    assert len(f) == 2 * len(small.systems) * (len(small) + 1)
    assert list(f.run.unique()) == list(small.systems)
    row = f[(f.measure == "nDCG@3") & (f.run == "s1") & (f.topic == small.topics[1])]
    assert row.expected.item() == pytest.approx(ev.expected[1, 1, 1])
    row = f[(f.measure == "AP") & (f.run == "s2") & (f.topic == "all")]
    assert row.variance.item() == pytest.approx(ev.all_variance[0, 2])
    means = ev.to_frame(per_topic=False)
    assert set(means.topic) == {"all"} and len(means) == 2 * len(small.systems)
    lower, upper = ev.confidence_interval(0.9)
    assert lower.shape == upper.shape == (2, len(small.systems))
    assert np.all(lower <= ev.all_expected + 1e-12) and np.all(upper >= ev.all_expected - 1e-12)
    lower, upper = ev.confidence_interval(0.9, per_topic=True)
    assert lower.shape == ev.expected.shape and lower.min() >= 0 and upper.max() <= 1
    sd = np.sqrt(ev.variance)
    inside = (lower > 0) & (upper < 1)
    np.testing.assert_allclose((upper - lower)[inside], 2 * 1.644853627 * sd[inside], rtol=1e-8)
    assert "AP" in ev.summary() and "s0" in ev.summary()
    with pytest.raises(ValueError):
        ev.expected[0, 0, 0] = 1.0  # frozen
    with pytest.raises(AttributeError):
        ev.method = "paper"

    cmp = compare_systems(small, small_p, method="exact", pairs=[("s0", "s1"), (2, 3)])
    assert isinstance(cmp, PairwiseComparison)
    assert cmp.pairs == [("s0", "s1"), ("s2", "s3")]
    f = cmp.to_frame()
    assert list(f.columns) == ["run_a", "run_b", "topic", "measure", "delta_expected", "delta_variance", "p_less"]
    assert len(f) == 2 * (len(small) + 1)
    all_rows = f[f.topic == "all"]
    np.testing.assert_allclose(all_rows.delta_expected, cmp.all_expected)
    np.testing.assert_allclose(all_rows.p_less, cmp.all_p_less)
    assert cmp.to_frame(per_topic=False).equals(all_rows.reset_index(drop=True))
    lower, upper = cmp.confidence_interval(0.95)
    sd = np.sqrt(cmp.all_variance)
    np.testing.assert_allclose(upper - lower, np.minimum(2 * 1.959963985 * sd, 2), atol=1e-6)
    assert cmp.confidence_interval(0.95, per_topic=True)[0].shape == cmp.p_less.shape
    assert "pairs" in cmp.summary()
    np.testing.assert_allclose(cmp.confidence, np.maximum(cmp.all_p_less, 1 - cmp.all_p_less))


def test_default_pairs_are_all_pairs(small):
    cmp = compare_systems(small, method="paper")
    n = len(small.systems)
    assert len(cmp.index_a) == n * (n - 1) // 2
    assert np.all(cmp.index_a < cmp.index_b)
    some = compare_systems(small, method="paper", pairs=np.array([[3, 0], [1, 2]]))
    assert some.pairs == [("s3", "s0"), ("s1", "s2")]
    i = [k for k, p in enumerate(cmp.pairs) if p == ("s0", "s3")][0]
    np.testing.assert_allclose(some.delta_expected[0], -cmp.delta_expected[i], atol=1e-15)
    np.testing.assert_allclose(some.p_less[0], 1.0 - cmp.p_less[i], atol=1e-12)


def test_probabilities_forms_agree(small):
    # RelevanceProbabilities, per-topic arrays and a topic mapping give the same answer
    rng = np.random.default_rng(4)
    by_topic = {}
    arrays = []
    for tr in small:
        p = rng.random(tr.n_docs)
        arrays.append(p)
        by_topic[tr.topic] = dict(zip(tr.docnos.tolist(), p.tolist(), strict=True))
    a = expected_measures(small, RelevanceProbabilities(by_topic), method="exact")
    b = expected_measures(small, arrays, method="exact")
    c = expected_measures(small, dict(zip(small.topics, arrays, strict=True)), method="exact")
    np.testing.assert_allclose(a.expected, b.expected)
    np.testing.assert_allclose(a.variance, c.variance)


def test_posterior_draws_hook(small):
    # rows of 0/1 probabilities: each Monte Carlo draw is one row exactly, so E = mean over rows
    rng = np.random.default_rng(6)
    rows = 7
    draws = [np.where(rng.random((rows, tr.n_docs)) < 0.4, 1.0, 0.0) for tr in small]
    ev = expected_measures(small, draws, method="mc", seed=0)
    assert ev.draws == rows
    cmp = compare_systems(small, draws, method="mc", seed=0)
    per_row = np.zeros((rows, len(small.systems), len(small)))
    for t, tr in enumerate(small):
        for d in range(rows):
            x = np.where(tr.judged, tr.relevant.astype(float), draws[t][d])
            per_row[d, :, t] = [_measure_from_x(tr, s, x, "AP", None) for s in range(tr.n_systems)]
    np.testing.assert_allclose(ev.expected[0], per_row.mean(axis=0), atol=1e-12)
    map_rows = per_row.mean(axis=2)
    np.testing.assert_allclose(ev.all_expected[0], map_rows.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(ev.all_variance[0], map_rows.var(axis=0, ddof=1), atol=1e-12)
    d = map_rows[:, cmp.index_a] - map_rows[:, cmp.index_b]
    np.testing.assert_allclose(cmp.all_p_less, (d < 0).mean(axis=0) + 0.5 * (d == 0).mean(axis=0), atol=1e-12)
    # the closed forms over the same rows: each row is certain (Var_d = 0, E_d = AP of the row), so by the law of
    # total variance E = mean over rows and Var = variance over rows (ddof 0), per topic and for MAP
    for method in ("exact", "delta", "paper"):
        ev = expected_measures(small, draws, method=method)
        np.testing.assert_allclose(ev.expected[0], per_row.mean(axis=0), atol=1e-12)
        np.testing.assert_allclose(ev.variance[0], per_row.var(axis=0), atol=1e-12)
        np.testing.assert_allclose(ev.all_variance[0], map_rows.var(axis=0), atol=1e-12)
        cmp = compare_systems(small, draws, method=method)
        np.testing.assert_allclose(cmp.all_expected, d.mean(axis=0), atol=1e-12)
        np.testing.assert_allclose(cmp.all_variance, d.var(axis=0), atol=1e-12)


def _shared_shift_draws(data, rows, seed, sd=1.0):
    """Posterior-like draws of p: a logit shift per draw shared by every topic, plus document noise."""
    rng = np.random.default_rng(seed)
    shift = rng.normal(0.0, sd, rows)
    return [1 / (1 + np.exp(-(-1.7 + shift[:, None] + rng.normal(0, 0.5, (rows, tr.n_docs))))) for tr in data]


@pytest.mark.parametrize("method", ["exact", "delta", "paper"])
def test_closed_forms_over_draws_are_the_law_of_total_variance(small, method):
    """E = mean_d E_d; Var = mean_d Var_d + var_d E_d, per topic and for ΔMAP (var over draws of the per-draw
    mean over topics), checked against one closed-form call per draw."""
    draws = _shared_shift_draws(small, 12, seed=3)
    cmp = compare_systems(small, draws, method=method)
    per = [compare_systems(small, [p[d] for p in draws], method=method) for d in range(12)]
    e_d = np.array([c.delta_expected for c in per])
    v_d = np.array([c.delta_variance for c in per])
    np.testing.assert_allclose(cmp.delta_expected, e_d.mean(0), atol=1e-12)
    np.testing.assert_allclose(cmp.delta_variance, v_d.mean(0) + e_d.var(0), atol=1e-12)
    mean_e_d = np.array([c.all_expected for c in per])
    mean_v_d = np.array([c.all_variance for c in per])
    np.testing.assert_allclose(cmp.all_expected, mean_e_d.mean(0), atol=1e-12)
    np.testing.assert_allclose(cmp.all_variance, mean_v_d.mean(0) + mean_e_d.var(0), atol=1e-12)
    ev = expected_measures(small, draws, method=method, measures=["AP", "P@5"])
    per_ev = [expected_measures(small, [p[d] for p in draws], method=method, measures=["AP", "P@5"])
              for d in range(12)]
    all_e = np.array([x.all_expected for x in per_ev])
    np.testing.assert_allclose(ev.all_variance, np.mean([x.all_variance for x in per_ev], 0) + all_e.var(0),
                               atol=1e-12)


def test_exact_over_draws_equals_monte_carlo_over_the_same_draws():
    """Exact quadrature per draw + the law of total variance gives the moments Monte Carlo over the same posterior
    draws estimates: E[ΔMAP] within 4 MC standard errors sqrt(Var/N), Var[ΔMAP] within 4 * Var * sqrt(2/N)."""
    col = make_collection(n_topics=6, n_systems=4, n_docs=60, depth=20, judged_depth=4, seed=3)
    small = RankData.build(col.runs, col.judgments, depth=20)
    draws = _shared_shift_draws(small, 200, seed=5)
    n = 100_000
    ex = compare_systems(small, draws, method="exact")
    mc = compare_systems(small, draws, method="mc", draws=n, seed=7)
    assert np.all(np.abs(ex.all_expected - mc.all_expected) < 4 * np.sqrt(ex.all_variance / n))
    assert np.all(np.abs(ex.all_variance - mc.all_variance) < 4 * ex.all_variance * np.sqrt(2 / n))
    ev = expected_measures(small, draws, method="exact")
    evm = expected_measures(small, draws, method="mc", draws=n, seed=8)
    assert np.all(np.abs(ev.all_expected - evm.all_expected) < 4 * np.sqrt(ev.all_variance / n))
    assert np.all(np.abs(ev.all_variance - evm.all_variance) < 4 * ev.all_variance * np.sqrt(2 / n))
    # the draws' shared shift is real uncertainty: the point p (mean of the draws) misses much of the variance
    point = compare_systems(small, [p.mean(0) for p in draws], method="exact")
    assert ex.all_variance.sum() > 1.5 * point.all_variance.sum()


def test_monte_carlo_is_reproducible(small):
    a = compare_systems(small, method="mc", draws=200, seed=11)
    b = compare_systems(small, method="mc", draws=200, seed=np.random.default_rng(11))
    np.testing.assert_array_equal(a.delta_expected, b.delta_expected)
    c = compare_systems(small, method="mc", draws=200, seed=12)
    assert not np.array_equal(a.delta_expected, c.delta_expected)


def test_progress_bar_can_be_forced(small, capsys):
    cmp = compare_systems(small, method="delta", progress=True)
    assert cmp.p_less.shape == (6, len(small))
    ev = expected_measures(small, method="delta", progress=False)
    assert ev.expected.shape == (1, 4, len(small))


def test_exact_ndcg_refuses_hopeless_work(small, monkeypatch):
    from bayeval.expected import _engine

    monkeypatch.setattr(_engine, "NDCG_WORK_LIMIT", 1.0)
    with pytest.raises(BayevalInputError, match=r"^measures: exact nDCG .*\(nDCG@k\)"):
        expected_measures(small, measures=["nDCG"], method="exact")
    with pytest.raises(BayevalInputError, match=r"^measure: exact nDCG"):
        compare_systems(small, measure="nDCG", method="delta")
    assert expected_measures(small, measures=["nDCG"], method="mc", draws=20, seed=0).draws == 20


def test_bad_arguments_name_themselves(small):
    cases = [
        (dict(method="bayes"), "^method:"),
        (dict(default_p=1.5), "^default_p:"),
        (dict(measures=["MAP@x"]), "^measures:"),
        (dict(measures=["foo"]), "^measures: unknown"),
        (dict(measures=["P"]), "^measures: P needs a cutoff"),
        (dict(measures=["bpref"]), "^measures: no expected value for 'bpref'"),
        (dict(measures=["P@10(j)"]), "^measures: no expected value"),
        (dict(measures=["AP", "map"]), "^measures: duplicates"),
        (dict(nodes=-3, method="exact"), "^nodes:"),
        (dict(method="mc", draws=1), "^draws:"),
        (dict(probabilities=[np.full(tr.n_docs, 2.0) for tr in small]), "^probabilities: .*outside"),
        (dict(probabilities=[np.zeros(3)]), "^probabilities: expected one array per topic"),
        (dict(probabilities=[np.zeros(tr.n_docs + 1) for tr in small]), "^probabilities: .*shape"),
        (dict(probabilities="p.txt"), "^probabilities: expected None"),
    ]
    for kwargs, pattern in cases:
        with pytest.raises(BayevalInputError, match=pattern):
            expected_measures(small, **kwargs)
    with pytest.raises(BayevalInputError, match="^pairs: unknown system"):
        compare_systems(small, pairs=[("s0", "nope")])
    with pytest.raises(BayevalInputError, match="^pairs:"):
        compare_systems(small, pairs=["s0"])
    with pytest.raises(BayevalInputError, match="^data:"):
        compare_systems([1, 2])
    with pytest.raises(BayevalInputError, match="^seed:"):
        compare_systems(small, method="mc", seed="x")
    ev = expected_measures(small)
    with pytest.raises(BayevalInputError, match="^level:"):
        ev.confidence_interval(1.5)


def test_delta_method_uses_exact_quadrature_where_r_is_mostly_zero():
    """Var R > μ_R² (no judged relevant document, p small): the expansion about μ_R fails (its variance grows like
    1/μ_R) and the delta method gives the exact moments; where R is concentrated it is its own approximation."""
    ra, rb = [1, 2, 3, 0, 0], [3, 2, 1, 0, 0]
    rare = np.full(5, 0.01)  # μ_R = 0.05, Var R = 0.0495 > 0.0025
    exact = delta_ap_moments(ra, rb, rare, method="exact")
    assert delta_ap_moments(ra, rb, rare, method="delta") == pytest.approx(exact, rel=1e-9, abs=1e-15)
    assert exact[1] < 0.01
    common = np.array([0.9, 0.3, 0.6, 0.5, 0.8])  # μ_R = 3.1, Var R = 0.99
    d, e = delta_ap_moments(ra, rb, common, method="delta"), delta_ap_moments(ra, rb, common, method="exact")
    assert d != pytest.approx(e, rel=1e-9) and d == pytest.approx(e, abs=0.02)


def test_thin_draws_keeps_evenly_spaced_rows_shared_by_every_topic():
    draws = [np.arange(200.0)[:, None] * np.ones((1, 3)), np.arange(200.0)[:, None] * np.ones((1, 4))]
    thin = thin_draws(draws, 5)
    np.testing.assert_array_equal(thin[0][:, 0], [0, 50, 100, 149, 199])  # linspace(0, 199, 5) rounded
    np.testing.assert_array_equal(thin[1][:, 0], thin[0][:, 0])
    assert thin_draws(draws, 300)[0].shape == (200, 3) and thin_draws([np.ones(3)], 5)[0].shape == (3,)
    with pytest.raises(BayevalInputError, match="closed_form_draws"):
        thin_draws(draws, 1)


def test_every_moment_method_is_registered_and_only_monte_carlo_takes_r_prec():
    """The moment vocabulary and the API's table agree: each named method runs under its own name, R-prec
    (no closed form) is Monte Carlo's alone, and the one-ranking functions refuse Monte Carlo."""
    from bayeval.expected import ap_moments
    from bayeval.methods import CLOSED_FORM_METHODS, MOMENT_METHODS

    col = make_collection(n_topics=2, n_systems=3, n_docs=40, depth=15, judged_depth=5, seed=4)
    data = RankData.build(col.runs, col.judgments)
    for method in MOMENT_METHODS:
        assert expected_measures(data, default_p=0.2, method=method, draws=50).method == method
        assert compare_systems(data, default_p=0.2, method=method, draws=50).method == method
        if method in CLOSED_FORM_METHODS:
            with pytest.raises(BayevalInputError, match="R-prec"):
                expected_measures(data, default_p=0.2, measures=["R-prec"], method=method)
            ap_moments([1, 2, 0], [0.5, 0.5, 0.5], method=method)
        else:
            expected_measures(data, default_p=0.2, measures=["R-prec"], method=method, draws=50)
            with pytest.raises(BayevalInputError, match="analytic"):
                ap_moments([1, 2, 0], [0.5, 0.5, 0.5], method=method)
