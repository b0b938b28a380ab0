"""ΔnDCG@k and ΔR@k for every pair on a RankCube against enumeration of every relevance configuration and against
the per-topic path (compare_systems, expected_measures)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_expected_cube_ap import _add_ratio_topic, _cube_cells, _runs_qrels, _topic_arrays

from bayeval.data.rankcube import RankCube
from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.expected import compare_systems, expected_measures
from bayeval.expected._engine import ideal_dcg_table
from bayeval.expected.cube import cell_probabilities, cells_from_rankdata
from bayeval.expected.cube_ndcg import expected_ndcg_pairs, ideal_dcg_by_topic
from bayeval.expected.cube_recall import expected_recall_pairs


# ---------------------------------------------------------------------------------------------- enumeration
def _configurations(cube, cells, t, relevant_unretrieved):
    """The topic's uncertain documents' configurations: (weight, {code: X}) with judged cells fixed."""
    n_s = cube.docs.shape[0]
    prob = {}
    for s in range(n_s):
        for r in range(cube.lengths[s, t]):
            prob[int(cube.docs[s, t, r])] = cells[s, t, r]
    if relevant_unretrieved:
        rel = cube.judged_grade >= cube.relevance_level
        for d in cube.judged_doc[rel & (cube.judged_topic == t)]:
            prob.setdefault(int(d), 1.0)
    universe = sorted(prob)
    for x in itertools.product([0, 1], repeat=len(universe)):
        w = np.prod([prob[d] if xi else 1 - prob[d] for d, xi in zip(universe, x, strict=True)])
        if w > 0:
            yield w, dict(zip(universe, x, strict=True))


def _pair_sums(values, w, pairs, sys_e, sys_v, se, sv, t, moments):
    for s in range(values.shape[1]):
        sys_e[s, t], sys_v[s, t] = moments(values[:, s])
    for i, (a, b) in enumerate(pairs):
        e, v = moments(values[:, a] - values[:, b])
        se[i] += e
        sv[i] += v


def _enumerate_ndcg(cube, cells, k):
    """Exact E, Var of nDCG@k (trec_eval's gains: the grade when positive; unjudged gain X) per system and topic,
    and of ΔnDCG@k over topics, from every configuration of the unjudged documents."""
    n_s, n_t, _ = cube.docs.shape
    pairs = list(itertools.combinations(range(n_s), 2))
    se, sv = np.zeros(len(pairs)), np.zeros(len(pairs))
    sys_e, sys_v = np.zeros((n_s, n_t)), np.zeros((n_s, n_t))
    for t in range(n_t):
        judged = {int(d): max(int(g), 0) for d, g, tt in zip(cube.judged_doc, cube.judged_grade, cube.judged_topic,
                                                             strict=True) if tt == t}
        cells_t = cells.copy()
        cells_t[:, t][cube.judged[:, t]] = 0.0  # judged cells: their gain is fixed, not drawn
        rows, weights = [], []
        for w, x in _configurations(cube, cells_t, t, False):
            gain = {d: (judged[d] if d in judged else xi) for d, xi in x.items()}
            ideal = sorted(list(judged.values()) + [xi for d, xi in x.items() if d not in judged], reverse=True)[:k]
            idcg = sum(g / np.log2(r + 2) for r, g in enumerate(ideal))
            row = []
            for s in range(n_s):
                dcg = sum(gain[int(cube.docs[s, t, r])] / np.log2(r + 2) for r in range(min(k, cube.lengths[s, t])))
                row.append(dcg / idcg if idcg > 0 else 0.0)
            rows.append(row)
            weights.append(w)
        vals, w = np.array(rows), np.array(weights)

        def moments(y, w=w):
            m = w @ y
            return m, w @ (y - m) ** 2

        _pair_sums(vals, w, pairs, sys_e, sys_v, se, sv, t, moments)
    return sys_e, sys_v, se / n_t, sv / n_t**2


def _enumerate_recall(cube, cells, k, method):
    """E, Var of recall@k = S/R (S relevant in the top k, R over every document of the topic) by ``method`` on the
    exact moments of S and R (the delta method, the papers' form, or the exact moments of S/R)."""
    n_s, n_t, _ = cube.docs.shape
    pairs = list(itertools.combinations(range(n_s), 2))
    se, sv = np.zeros(len(pairs)), np.zeros(len(pairs))
    sys_e, sys_v = np.zeros((n_s, n_t)), np.zeros((n_s, n_t))
    for t in range(n_t):
        rows, weights = [], []
        for w, x in _configurations(cube, cells, t, True):
            hits = [sum(x[int(cube.docs[s, t, r])] for r in range(min(k, cube.lengths[s, t]))) for s in range(n_s)]
            rows.append(hits + [sum(x.values())])
            weights.append(w)
        _add_ratio_topic(rows, weights, t, pairs, method, sys_e, sys_v, se, sv)
    return sys_e, sys_v, se / n_t, sv / n_t**2


def _independent(sys_v, res, n_t):
    """Var of the difference of means were the two systems independent (no covariance term)."""
    return (sys_v[res.index_a] + sys_v[res.index_b]).sum(axis=1) / n_t**2


@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ndcg_pairs_match_enumeration(seed, k):
    """Graded judgments (0, 1, 2), ties, judged documents no run retrieves (they enter the ideal list)."""
    runs, qrels = _runs_qrels(seed, pool=8, length=6, judged=3, pool_judged=10, ties=seed == 1, grades=3)
    cube = RankCube.from_runs(runs, qrels)
    cells = cell_probabilities(cube, _cube_cells(cube))
    res = expected_ndcg_pairs(cube, _cube_cells(cube), cutoff=k)
    e_s, v_s, e, v = _enumerate_ndcg(cube, cells, k)
    np.testing.assert_allclose(res.expected, e_s, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.variance, v_s, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.delta_expected, e, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.delta_variance, v, rtol=0, atol=1e-12)
    assert np.max(np.abs(_independent(v_s, res, len(cube.topics)) - v)) > 1e-4  # the covariance matters


@pytest.mark.parametrize("method", ["delta", "paper", "exact"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_recall_pairs_match_enumeration(seed, method):
    runs, qrels = _runs_qrels(seed, pool=8, length=6, judged=3, pool_judged=10, ties=seed == 1)
    cube = RankCube.from_runs(runs, qrels)
    cells = cell_probabilities(cube, _cube_cells(cube))
    res = expected_recall_pairs(cube, _cube_cells(cube), cutoff=3, method=method)
    e_s, v_s, e, v = _enumerate_recall(cube, cells, 3, method)
    tol = 1e-12 if method != "exact" else 1e-10
    np.testing.assert_allclose(res.expected, e_s, rtol=0, atol=tol)
    np.testing.assert_allclose(res.variance, v_s, rtol=0, atol=tol)
    np.testing.assert_allclose(res.delta_expected, e, rtol=0, atol=tol)
    np.testing.assert_allclose(res.delta_variance, v, rtol=0, atol=tol)
    assert np.max(np.abs(_independent(v_s, res, len(cube.topics)) - v)) > 1e-4


def test_ideal_table_is_the_per_topic_one():
    runs, qrels = _runs_qrels(9, n_topics=6, pool=20, length=8, judged=9, pool_judged=30, grades=4)
    cube = RankCube.from_runs(runs, qrels)
    data = RankData.build(runs, qrels, topics=cube.topics)
    for k in (1, 3, 12):
        table = ideal_dcg_by_topic(cube, k)
        for t, tr in enumerate(data):
            gains = np.where(tr.judged & (tr.grades > 0), tr.grades, 0).astype(float)
            np.testing.assert_allclose(table[t], ideal_dcg_table(gains, tr.judged, k), rtol=0, atol=1e-14)


# ---------------------------------------------------------------------------------------------- per-topic path
def _check(runs, qrels, p_mode, measure, method="delta"):
    cube = RankCube.from_runs(runs, qrels)
    data = RankData.build(runs, qrels, topics=cube.topics)
    name, k = measure
    p_cube = _cube_cells(cube) if p_mode == "doc" else p_mode
    if name == "nDCG":
        res = expected_ndcg_pairs(cube, p_cube, cutoff=k)
    else:
        res = expected_recall_pairs(cube, p_cube, cutoff=k, method=method)
    kw = {"probabilities": _topic_arrays(data)} if p_mode == "doc" else {"default_p": p_mode}
    ref = compare_systems(data, measure=f"{name}@{k}", method=method, progress=False, **kw)
    ev = expected_measures(data, measures=f"{name}@{k}", method=method, progress=False, **kw)
    np.testing.assert_array_equal(res.index_a, ref.index_a)
    for got, want in ((res.delta_expected, ref.all_expected), (res.delta_variance, ref.all_variance),
                      (res.p_less, ref.all_p_less), (res.expected, ev.expected[0]), (res.variance, ev.variance[0]),
                      (res.all_variance, ev.all_variance[0])):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)
    return cube, data, res


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_topics=st.integers(1, 4), n_sys=st.integers(2, 5),
       pool=st.integers(2, 40), length=st.integers(1, 12), ties=st.booleans(), judged=st.integers(0, 4),
       grades=st.sampled_from([2, 3]), p_mode=st.sampled_from([0.0, 1.0, 0.05, 0.5, "doc"]),
       measure=st.sampled_from([("nDCG", 1), ("nDCG", 3), ("nDCG", 10), ("recall", 2), ("recall", 10)]),
       method=st.sampled_from(["delta", "paper"]))
def test_random_shapes_match_compare_systems(seed, n_topics, n_sys, pool, length, ties, judged, grades, p_mode,
                                             measure, method):
    """Ties, shared (small pool) and disjoint (large pool) documents, p = 0/1, topics without relevant mass, graded
    judgments, cutoffs below and beyond the lists."""
    runs, qrels = _runs_qrels(seed, n_topics, n_sys, pool, length, ties, judged, pool + 3, grades=grades)
    if not qrels.topics:
        return
    try:
        RankData.build(runs, qrels)
    except BayevalInputError:
        return  # no topic in common
    _check(runs, qrels, p_mode, measure, method)


def test_long_lists_and_the_recall_fallback_topics():
    """R@100 on lists of 150-200 documents (the Fenwick walk), and small p on topics without a relevant judgment
    (the per-topic engine's quadrature, as compare_systems)."""
    runs, qrels = _runs_qrels(3, n_topics=2, n_sys=3, pool=220, length=200, judged=6, min_length=150)
    cube, _, res = _check(runs, qrels, "doc", ("recall", 140))
    assert cube.lengths.min() > 128
    runs, qrels = _runs_qrels(4, n_topics=3, pool=9, length=6, judged=2, grades=1)  # nothing relevant
    _, _, res = _check(runs, qrels, 0.02, ("recall", 3))
    assert res.exact_topics == 3
    _check(runs, qrels, 0.02, ("nDCG", 3))


# ---------------------------------------------------------------------------------------------- draws, Dask, errors
@pytest.mark.parametrize("measure", ["nDCG@3", "recall@4"])
def test_draws_match_compare_systems_law_of_total_variance(measure):
    runs, qrels = _runs_qrels(6, n_topics=4, n_sys=4, pool=15, length=8, judged=2, grades=3)
    cube = RankCube.from_runs(runs, qrels)
    data = RankData.build(runs, qrels, topics=cube.topics)
    rng = np.random.default_rng(6)
    scale = rng.uniform(0.05, 0.9, (8, 1))  # a shared factor per draw: a real between-draw variance
    arrays = [np.clip(scale * rng.uniform(0, 1, (8, tr.n_docs)), 0, 1) for tr in data]

    def run(cells):
        if measure.startswith("nDCG"):
            return expected_ndcg_pairs(cube, cells, cutoff=3)
        return expected_recall_pairs(cube, cells, cutoff=4)

    res = run(cells_from_rankdata(cube, data, arrays))
    ref = compare_systems(data, arrays, measure=measure, method="delta", progress=False)
    assert res.n_draws == 8 and res.measure == measure
    np.testing.assert_allclose(res.delta_expected, ref.all_expected, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.delta_variance, ref.all_variance, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.p_less, ref.all_p_less, rtol=0, atol=1e-10)
    one = [run(cells_from_rankdata(cube, data, [a[d] for a in arrays])) for d in range(8)]
    within = np.mean([o.delta_variance for o in one], axis=0)
    assert np.max(res.delta_variance - within) > 1e-6  # the between-draw term is there


def test_dask_local_cluster_same_numbers():
    distributed = pytest.importorskip("distributed")
    runs, qrels = _runs_qrels(7, n_topics=9, n_sys=5, pool=12, length=8, judged=2, grades=3)
    cube = RankCube.from_runs(runs, qrels)
    cells = _cube_cells(cube)
    local = [expected_ndcg_pairs(cube, cells, cutoff=5), expected_recall_pairs(cube, cells, cutoff=5)]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        remote = [expected_ndcg_pairs(cube, cells, cutoff=5, scheduler=cluster.scheduler_address, chunks=4),
                  expected_recall_pairs(cube, cells, cutoff=5, scheduler=cluster.scheduler_address, chunks=4)]
    for x, y in zip(local, remote, strict=True):
        for name in ("delta_expected", "delta_variance", "p_less", "expected", "variance"):
            np.testing.assert_allclose(getattr(y, name), getattr(x, name), rtol=0, atol=1e-12)


def test_bad_arguments():
    runs, qrels = _runs_qrels(1)
    cube = RankCube.from_runs(runs, qrels)
    for f in (expected_ndcg_pairs, expected_recall_pairs):
        with pytest.raises(BayevalInputError, match="p_unjudged"):
            f(cube, 1.5)
        with pytest.raises(BayevalInputError, match="cutoff"):
            f(cube, 0.1, cutoff=0)
        with pytest.raises(BayevalInputError, match="pairs"):
            f(cube, 0.1, pairs=np.array([[0, 9]]))
        with pytest.raises(BayevalInputError, match="cube"):
            f("cube", 0.1)
        with pytest.raises(BayevalInputError, match="code_depth"):
            f(RankCube.from_runs(runs, qrels, code_depth=2), 0.1)
        with pytest.raises(BayevalInputError, match="posterior draws"):
            f(cube, np.zeros((3, 2, *cube.docs.shape[1:])))
    with pytest.raises(BayevalInputError, match="method"):
        expected_recall_pairs(cube, 0.1, method="mc")


@pytest.mark.parametrize("measure", ["nDCG@5", "recall@20"])
def test_sparse_study_takes_the_cube_with_the_per_topic_numbers(monkeypatch, measure):
    """``run_sparse_study(measure="nDCG@5" / "recall@20")``: the pairs come from the cube, with compare_systems'
    P(Δ<0) on the same trial."""
    import bayeval.experiments.sparse as study_module
    from bayeval.experiments.sparse import run_sparse_study, sparse_labels
    from bayeval.relevance import estimate_probabilities
    from bayeval.synthetic import make_collection

    calls = []
    real = study_module.expected_cube_pairs

    def counted(*args, **kwargs):
        calls.append(str(args[2]))
        return real(*args, **kwargs)

    monkeypatch.setattr(study_module, "expected_cube_pairs", counted)
    col = make_collection(n_topics=8, n_systems=4, n_docs=80, depth=30, judged_depth=30, seed=4)
    study = run_sparse_study(col.runs, col.qrels, trials=1, seed=3, measure=measure, model="uniform")
    assert calls == [measure]
    rng = np.random.default_rng([3, 0])
    sparse = sparse_labels(col.qrels, rng)
    data = RankData.build(col.runs, sparse)
    est = estimate_probabilities(data, "uniform", seed=int(rng.integers(2**31)))
    ref = compare_systems(data, est, measure=measure, method="delta", progress=False)
    np.testing.assert_allclose(study.pairs["p_less"].to_numpy(), ref.all_p_less, rtol=0, atol=1e-10)
