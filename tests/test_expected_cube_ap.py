"""ΔMAP for every pair on a RankCube against enumeration of every relevance configuration and the per-topic path."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayeval.data.qrels import Qrels
from bayeval.data.rankcube import RankCube
from bayeval.data.rankdata import RankData
from bayeval.data.run import Run, RunSet
from bayeval.errors import BayevalInputError
from bayeval.expected import compare_systems
from bayeval.expected.cube import cell_probabilities, cells_from_rankdata
from bayeval.expected.cube_ap import expected_ap_pairs


def _runs_qrels(seed, n_topics=3, n_sys=4, pool=7, length=5, ties=False, judged=2, pool_judged=None, min_length=1,
                grades=2):
    """Random runs of ``min_length``..``length`` documents over ``pool`` documents; ``judged`` judgments per topic
    drawn from ``pool_judged`` documents (more than ``pool``: some judged documents no run retrieves), grades
    0..``grades`` - 1."""
    rng = np.random.default_rng(seed)
    runs = []
    for s in range(n_sys):
        rows = []
        for t in range(n_topics):
            docs = rng.choice(pool, size=rng.integers(min_length, min(length, pool) + 1), replace=False)
            scores = rng.integers(0, 3, len(docs)).astype(float) if ties else -np.arange(len(docs), dtype=float)
            rows += [(str(t), f"d{d}", sc) for d, sc in zip(docs, scores, strict=True)]
        runs.append(Run.from_frame(pd.DataFrame(rows, columns=["topic", "docno", "score"]), name=f"s{s}"))
    pool_judged = pool_judged or pool
    rows = []
    for t in range(n_topics):
        for d in rng.choice(pool_judged, size=min(judged, pool_judged), replace=False):
            rows.append((str(t), f"d{d}", int(rng.integers(0, grades))))
    return RunSet(tuple(runs)), Qrels.from_frame(pd.DataFrame(rows, columns=["topic", "docno", "grade"]))


def _doc_p(docno: str) -> float:
    """A probability per document name (the same wherever it is ranked)."""
    return ((int(docno[1:]) * 7) % 11 + 1) / 13.0


def _cube_cells(cube, p_of=_doc_p):
    p_code = np.array([p_of(x) for x in cube.docnos.to_pylist()] + [0.0])
    return np.where(cube.docs >= 0, p_code[np.maximum(cube.docs, 0)], 0.0)


def _topic_arrays(data, p_of=_doc_p):
    return [np.array([p_of(str(x)) for x in tr.docnos]) for tr in data]


# ---------------------------------------------------------------------------------------------- enumeration
def _delta(ms, vs, cs, mr, vr):
    """The second-order delta method for E, Var of S/R (docs/expected.md)."""
    return (ms / mr - cs / mr**2 + ms * vr / mr**3,
            vs / mr**2 - 2 * ms * cs / mr**3 + ms**2 * vr / mr**4)


def _ratio_moments(y, ap, w, r_vec, method):
    """E, Var of a numerator y over R (values per configuration, weights w) by ``method``; ``ap`` = y / R."""
    mr = w @ r_vec
    vr = w @ (r_vec - mr) ** 2
    if mr <= 0:
        return 0.0, 0.0
    if method == "exact" or (method == "delta" and vr > mr**2):  # the house uses quadrature: exact moments
        m = w @ ap
        return m, w @ (ap - m) ** 2
    ms = w @ y
    vs = w @ (y - ms) ** 2
    if method == "paper":
        return ms / mr, vs / mr**2
    e, v = _delta(ms, vs, w @ ((y - ms) * (r_vec - mr)), mr, vr)
    return e, max(v, 0.0)


def _add_ratio_topic(rows, weights, t, pairs, method, sys_e, sys_v, se, sv):
    """Add topic ``t``'s ratio moments S/R by ``method`` to the per-system (``sys_e``, ``sys_v``, filled) and per-pair
    (``se``, ``sv``, summed) arrays, from its enumerated configurations: ``rows`` holds per configuration each
    system's S and, last, R; ``weights`` their probabilities."""
    vals, w = np.array(rows, dtype=float), np.array(weights)
    n_s = vals.shape[1] - 1
    s_mat, r_vec = vals[:, :n_s], vals[:, n_s]
    ratio = np.where(r_vec[:, None] > 0, s_mat / np.maximum(r_vec[:, None], 1), 0.0)
    for s in range(n_s):
        sys_e[s, t], sys_v[s, t] = _ratio_moments(s_mat[:, s], ratio[:, s], w, r_vec, method)
    for i, (a, b) in enumerate(pairs):
        e, v = _ratio_moments(s_mat[:, a] - s_mat[:, b], ratio[:, a] - ratio[:, b], w, r_vec, method)
        se[i] += e
        sv[i] += v


def _enumerate(cube, cells, method):
    """Per system and topic E, Var of AP, and per pair E, Var of ΔMAP, by enumerating each topic's documents.

    S (AP × R) from its definition, the sum of precision at every relevant rank; the moments of S and R are
    exact; the delta method and the papers' closed form applied to them, or the exact moments of S/R
    (``"exact"``, and ``"delta"`` where the house uses quadrature: Var R > E[R]²).
    """
    n_s, n_t, width = cube.docs.shape
    pairs = list(itertools.combinations(range(n_s), 2))
    se, sv = np.zeros(len(pairs)), np.zeros(len(pairs))
    sys_e, sys_v = np.zeros((n_s, n_t)), np.zeros((n_s, n_t))
    rel_doc = cube.judged_doc[(cube.judged_grade >= cube.relevance_level)]
    rel_top = cube.judged_topic[(cube.judged_grade >= cube.relevance_level)]
    for t in range(n_t):
        prob = {}
        for s in range(n_s):
            for r in range(cube.lengths[s, t]):
                prob[int(cube.docs[s, t, r])] = cells[s, t, r]
        for d in rel_doc[rel_top == t]:
            prob.setdefault(int(d), 1.0)
        universe = sorted(prob)
        rows, weights = [], []
        for x in itertools.product([0, 1], repeat=len(universe)):
            w = np.prod([prob[d] if xi else 1 - prob[d] for d, xi in zip(universe, x, strict=True)])
            if w == 0:
                continue
            rel = dict(zip(universe, x, strict=True))
            row = []
            for s in range(n_s):
                hits, total = 0, 0.0
                for r in range(cube.lengths[s, t]):
                    if rel[int(cube.docs[s, t, r])]:
                        hits += 1
                        total += hits / (r + 1)
                row.append(total)
            rows.append(row + [sum(x)])
            weights.append(w)
        _add_ratio_topic(rows, weights, t, pairs, method, sys_e, sys_v, se, sv)
    return sys_e, sys_v, se / n_t, sv / n_t**2


@pytest.mark.parametrize("method", ["delta", "paper", "exact"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pairs_match_enumeration(seed, method):
    runs, qrels = _runs_qrels(seed, pool=8, length=6, judged=3, pool_judged=10, ties=seed == 1)
    cube = RankCube.from_runs(runs, qrels)
    cells = cell_probabilities(cube, _cube_cells(cube))
    res = expected_ap_pairs(cube, _cube_cells(cube), method=method)
    e_s, v_s, e, v = _enumerate(cube, cells, method)
    tol = 1e-12 if method != "exact" else 1e-10
    np.testing.assert_allclose(res.expected, e_s, rtol=0, atol=tol)
    np.testing.assert_allclose(res.variance, v_s, rtol=0, atol=tol)
    np.testing.assert_allclose(res.delta_expected, e, rtol=0, atol=tol)
    np.testing.assert_allclose(res.delta_variance, v, rtol=0, atol=tol)
    # the covariance of two systems that share documents matters here: Var[ΔMAP] is not Var_a + Var_b
    indep = (v_s[res.index_a] + v_s[res.index_b]).sum(axis=1) / len(cube.topics) ** 2
    assert np.max(np.abs(indep - v)) > 1e-4


def test_no_relevant_mass_and_fallback_topics_match_enumeration():
    """A topic whose judgments are all non-relevant: with p = 0 no document can be relevant (every AP 0); with
    small p the delta method's expansion fails there and the house uses quadrature, as the cube path does."""
    runs, _ = _runs_qrels(4, n_topics=3, pool=6, length=5, judged=2)
    rows = [("0", "d0", 0), ("0", "d1", 0), ("1", "d2", 1), ("2", "d3", 0)]
    qrels = Qrels.from_frame(pd.DataFrame(rows, columns=["topic", "docno", "grade"]))
    cube = RankCube.from_runs(runs, qrels)
    for p in (0.0, 0.02):
        res = expected_ap_pairs(cube, p)
        e_s, v_s, e, v = _enumerate(cube, cell_probabilities(cube, p), "delta")
        np.testing.assert_allclose(res.expected, e_s, rtol=0, atol=1e-12)
        np.testing.assert_allclose(res.delta_variance, v, rtol=0, atol=1e-12)
        np.testing.assert_allclose(res.delta_expected, e, rtol=0, atol=1e-12)
    assert res.exact_topics == 2  # topics 0 and 2 have no relevant judgment: quadrature
    assert np.all(expected_ap_pairs(cube, 0.0).expected[:, [0, 2]] == 0)


# ---------------------------------------------------------------------------------------------- per-topic path
def _check_against_compare_systems(runs, qrels, p_mode, method):
    cube = RankCube.from_runs(runs, qrels)
    data = RankData.build(runs, qrels, topics=cube.topics)
    if p_mode == "doc":
        res = expected_ap_pairs(cube, _cube_cells(cube), method=method)
        ref = compare_systems(data, _topic_arrays(data), measure="AP", method=method, progress=False)
    else:
        res = expected_ap_pairs(cube, p_mode, method=method)
        ref = compare_systems(data, default_p=p_mode, measure="AP", method=method, progress=False)
    np.testing.assert_array_equal(res.index_a, ref.index_a)
    np.testing.assert_allclose(res.delta_expected, ref.all_expected, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.delta_variance, ref.all_variance, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.p_less, ref.all_p_less, rtol=0, atol=1e-10)
    return cube, data, res


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_topics=st.integers(1, 4), n_sys=st.integers(2, 5),
       pool=st.integers(2, 40), length=st.integers(1, 12), ties=st.booleans(), judged=st.integers(0, 4),
       p_mode=st.sampled_from([0.0, 1.0, 0.05, 0.5, "doc"]), method=st.sampled_from(["delta", "paper"]))
def test_random_shapes_match_compare_systems(seed, n_topics, n_sys, pool, length, ties, judged, p_mode, method):
    """Ties, shared (small pool) and disjoint (large pool) documents, p = 0/1, topics without relevant mass."""
    runs, qrels = _runs_qrels(seed, n_topics, n_sys, pool, length, ties, judged, pool + 3)
    if not qrels.topics:
        return
    try:
        RankData.build(runs, qrels)
    except BayevalInputError:
        return  # no topic in common
    _check_against_compare_systems(runs, qrels, p_mode, method)


def test_per_system_moments_match_expected_measures():
    from bayeval.expected import expected_measures

    runs, qrels = _runs_qrels(11, n_topics=5, n_sys=4, pool=30, length=12, judged=3)
    cube, data, res = _check_against_compare_systems(runs, qrels, "doc", "delta")
    ev = expected_measures(data, _topic_arrays(data), measures=["AP"], method="delta", progress=False)
    np.testing.assert_allclose(res.expected, ev.expected[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.variance, ev.variance[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.all_variance, ev.all_variance[0], rtol=0, atol=1e-12)


def test_long_lists_take_the_fenwick_walk_with_the_same_numbers():
    """Beyond 128 documents the pair covariance is the per-topic kernel's Fenwick walk."""
    runs, qrels = _runs_qrels(3, n_topics=2, n_sys=3, pool=220, length=200, judged=6, min_length=150)
    cube, _, res = _check_against_compare_systems(runs, qrels, "doc", "delta")
    assert cube.lengths.min() > 128


def test_exact_method_matches_compare_systems():
    runs, qrels = _runs_qrels(5, n_topics=3, n_sys=4, pool=12, length=8, judged=3)
    _, _, res = _check_against_compare_systems(runs, qrels, 0.1, "exact")
    assert res.exact_topics == 3 and res.method == "exact"


# ---------------------------------------------------------------------------------------------- draws, Dask, errors
def test_draws_match_compare_systems_law_of_total_variance():
    """Posterior draws per topic: the same E, Var and P(Δ<0) as compare_systems with the same draws."""
    runs, qrels = _runs_qrels(6, n_topics=4, n_sys=4, pool=15, length=8, judged=2)
    cube = RankCube.from_runs(runs, qrels)
    data = RankData.build(runs, qrels, topics=cube.topics)
    rng = np.random.default_rng(6)
    scale = rng.uniform(0.05, 0.9, (8, 1))  # a shared factor per draw: a real between-draw variance
    arrays = [np.clip(scale * rng.uniform(0, 1, (8, tr.n_docs)), 0, 1) for tr in data]
    res = expected_ap_pairs(cube, cells_from_rankdata(cube, data, arrays))
    ref = compare_systems(data, arrays, measure="AP", method="delta", progress=False)
    assert res.n_draws == 8
    np.testing.assert_allclose(res.delta_expected, ref.all_expected, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.delta_variance, ref.all_variance, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.p_less, ref.all_p_less, rtol=0, atol=1e-10)
    one = [expected_ap_pairs(cube, cells_from_rankdata(cube, data, [a[d] for a in arrays])) for d in range(8)]
    within = np.mean([o.delta_variance for o in one], axis=0)
    assert np.max(res.delta_variance - within) > 1e-6  # the between-draw term is there


def test_dask_local_cluster_same_numbers():
    distributed = pytest.importorskip("distributed")
    runs, qrels = _runs_qrels(7, n_topics=9, n_sys=5, pool=12, length=8, judged=2)
    cube = RankCube.from_runs(runs, qrels)
    cells = _cube_cells(cube)
    local = expected_ap_pairs(cube, cells)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        remote = expected_ap_pairs(cube, cells, scheduler=cluster.scheduler_address, chunks=4)
    for name in ("delta_expected", "delta_variance", "p_less", "expected", "variance"):
        np.testing.assert_allclose(getattr(remote, name), getattr(local, name), rtol=0, atol=1e-12)


def test_bad_arguments():
    runs, qrels = _runs_qrels(1)
    cube = RankCube.from_runs(runs, qrels)
    with pytest.raises(BayevalInputError, match="p_unjudged"):
        expected_ap_pairs(cube, 1.5)
    with pytest.raises(BayevalInputError, match="method"):
        expected_ap_pairs(cube, 0.1, method="mc")
    with pytest.raises(BayevalInputError, match="pairs"):
        expected_ap_pairs(cube, 0.1, pairs=np.array([[0, 9]]))
    with pytest.raises(BayevalInputError, match="cube"):
        expected_ap_pairs("cube", 0.1)
    with pytest.raises(BayevalInputError, match="code_depth"):
        expected_ap_pairs(RankCube.from_runs(runs, qrels, code_depth=2), 0.1)
    with pytest.raises(BayevalInputError, match="posterior draws"):
        expected_ap_pairs(cube, np.zeros((3, 2, *cube.docs.shape[1:])))


def test_sparse_study_ap_pairs_come_from_the_cube_with_the_per_topic_numbers(monkeypatch):
    """``run_sparse_study(measure="AP")`` takes the cube path: P(ΔMAP<0) equal to compare_systems' on the trial."""
    import bayeval.experiments.sparse as study_module
    from bayeval.expected.cube_measures import expected_cube_pairs
    from bayeval.experiments.sparse import run_sparse_study, sparse_labels
    from bayeval.relevance import estimate_probabilities
    from bayeval.synthetic import make_collection

    calls = []

    def counted(*args, **kwargs):
        calls.append((str(args[2]), kwargs.get("method")))
        return expected_cube_pairs(*args, **kwargs)

    monkeypatch.setattr(study_module, "expected_cube_pairs", counted)
    col = make_collection(n_topics=8, n_systems=4, n_docs=80, depth=30, judged_depth=30, seed=4)
    study = run_sparse_study(col.runs, col.qrels, trials=1, seed=3, measure="AP", model="uniform")
    assert calls == [("AP", "delta")]
    rng = np.random.default_rng([3, 0])
    sparse = sparse_labels(col.qrels, rng)
    data = RankData.build(col.runs, sparse)
    est = estimate_probabilities(data, "uniform", seed=int(rng.integers(2**31)))
    ref = compare_systems(data, est, measure="AP", method="delta", progress=False)
    np.testing.assert_allclose(study.pairs["p_less"].to_numpy(), ref.all_p_less, rtol=0, atol=1e-10)


def test_the_cube_door_takes_measures_in_any_spelling():
    """expected_cube_pairs: one door, the house's vocabulary — each name runs its cube path with the same numbers,
    AP@k (the ratio kernel with a cutoff) equals compare_systems, and what the cube lacks is refused by name."""
    from bayeval.data import RankData
    from bayeval.errors import BayevalInputError
    from bayeval.expected import compare_systems
    from bayeval.expected.cube import expected_reciprocal_rank_pairs
    from bayeval.expected.cube_measures import expected_cube_pairs
    from bayeval.expected.cube_ndcg import expected_ndcg_pairs
    from bayeval.expected.cube_recall import expected_recall_pairs
    from bayeval.synthetic import make_collection

    col = make_collection(n_topics=6, n_systems=4, n_docs=60, depth=30, judged_depth=3, graded=True, seed=3)
    cube = RankCube.from_runs(col.runs, col.judgments)
    direct = {"MRR@10": expected_reciprocal_rank_pairs(cube, 0.1, cutoff=10),
              "map": expected_ap_pairs(cube, 0.1, method="paper"),
              "R@20": expected_recall_pairs(cube, 0.1, cutoff=20, method="paper"),
              "ndcg_cut_5": expected_ndcg_pairs(cube, 0.1, cutoff=5)}
    for name, ref in direct.items():
        got = expected_cube_pairs(cube, 0.1, name, method="paper")
        np.testing.assert_array_equal(got.delta_expected, ref.delta_expected)
        np.testing.assert_array_equal(got.delta_variance, ref.delta_variance)
    data = RankData.build(col.runs, col.judgments)
    for method in ("delta", "paper", "exact"):
        got = expected_cube_pairs(cube, 0.1, "AP@10", method=method)
        ref = compare_systems(data, default_p=0.1, measure="AP@10", method=method, progress=False)
        assert got.measure == "AP@10"
        np.testing.assert_allclose(got.delta_expected, ref.all_expected, atol=1e-12, rtol=0)
        np.testing.assert_allclose(got.delta_variance, ref.all_variance, atol=1e-12, rtol=0)
    for name, fragment in (("nDCG", "nDCG@k"), ("bpref", "no expected value on a rank cube"),
                           ("P(rel=2)@10", "no rel="), ("RR", "RR@k")):
        with pytest.raises(BayevalInputError, match=re.escape(fragment)):
            expected_cube_pairs(cube, 0.1, name)
