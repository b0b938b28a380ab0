"""Expected RR@k and ΔMRR@k on a RankCube against enumeration of every relevance configuration."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from bayeval.data.qrels import Qrels
from bayeval.data.rankcube import RankCube
from bayeval.data.run import Run, RunSet
from bayeval.errors import BayevalInputError
from bayeval.expected.cube import cell_probabilities, expected_reciprocal_rank_pairs


def _random_runs(rng, n_topics, n_sys, pool, length):
    """``n_sys`` runs of 1..``length`` documents per topic drawn from ``pool`` documents (scores by rank)."""
    runs = []
    for s in range(n_sys):
        rows = []
        for t in range(n_topics):
            docs = rng.choice(pool, size=rng.integers(1, length + 1), replace=False)
            rows += [(str(t), f"d{d}", -float(r)) for r, d in enumerate(docs)]
        runs.append(Run.from_frame(pd.DataFrame(rows, columns=["topic", "docno", "score"]), name=f"s{s}"))
    return runs


def _collection(seed, n_topics=3, n_sys=4, pool=7, length=5):
    rng = np.random.default_rng(seed)
    runs = _random_runs(rng, n_topics, n_sys, pool, length)
    q = pd.DataFrame({"topic": [str(t) for t in range(n_topics) for _ in range(2)],
                      "docno": [f"d{d}" for _ in range(n_topics) for d in rng.choice(pool, 2, replace=False)],
                      "grade": rng.integers(0, 2, 2 * n_topics)})
    return RankCube.from_runs(RunSet(tuple(runs)), Qrels.from_frame(q))


def _enumerate(cube, p_cells, k):
    """Per pair, exact sums over topics of E[Δ_t], Var[Δ_t] by enumerating the topic's documents."""
    n_s, n_t = len(cube.systems), len(cube.topics)
    pairs = list(itertools.combinations(range(n_s), 2))
    se, sv = np.zeros(len(pairs)), np.zeros(len(pairs))
    for t in range(n_t):
        docs = cube.docs[:, t, :k]
        prob = {}
        for s in range(n_s):
            for r in range(k):
                if docs[s, r] >= 0:
                    prob[int(docs[s, r])] = p_cells[s, t, r]
        universe = sorted(prob)
        rr = []  # (configs, S)
        weights = []
        for x in itertools.product([0, 1], repeat=len(universe)):
            rel = dict(zip(universe, x, strict=True))
            w = np.prod([prob[d] if xi else 1 - prob[d] for d, xi in rel.items()])
            row = []
            for s in range(n_s):
                hits = [r for r in range(k) if docs[s, r] >= 0 and rel[int(docs[s, r])]]
                row.append(1.0 / (hits[0] + 1) if hits else 0.0)
            rr.append(row)
            weights.append(w)
        rr, w = np.array(rr), np.array(weights)
        for i, (a, b) in enumerate(pairs):
            d = rr[:, a] - rr[:, b]
            m = w @ d
            se[i] += m
            sv[i] += w @ (d - m) ** 2
    return se / n_t, sv / n_t**2


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("k", [3, 5])
def test_pairs_match_enumeration(seed, k):
    cube = _collection(seed)
    doc_p = (cube.docs % 5 + 1) / 7.0  # a probability per document, the same wherever it is ranked
    res = expected_reciprocal_rank_pairs(cube, doc_p, cutoff=k)
    e, v = _enumerate(cube, cell_probabilities(cube, doc_p, k), k)
    np.testing.assert_allclose(res.delta_expected, e, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.delta_variance, v, rtol=0, atol=1e-12)
    assert np.all((res.p_less >= 0) & (res.p_less <= 1))


def test_system_moments_and_constant_p():
    cube = _collection(5)
    res = expected_reciprocal_rank_pairs(cube, 0.25, cutoff=4)
    e, v = _enumerate(cube, cell_probabilities(cube, 0.25, 4), 4)
    np.testing.assert_allclose(res.delta_expected, e, atol=1e-12, rtol=0)
    np.testing.assert_allclose(res.delta_variance, v, atol=1e-12, rtol=0)
    # with p = 0 for unjudged documents E[RR@k] is the observed RR@k of the judged ones
    from bayeval.measures.cube import evaluate_cube

    res0 = expected_reciprocal_rank_pairs(cube, 0.0, cutoff=4)
    np.testing.assert_allclose(res0.expected, evaluate_cube(cube, "RR@4").values[0], atol=1e-12, rtol=0)
    assert np.all(res0.variance == 0)


def test_bad_arguments():
    cube = _collection(1)
    with pytest.raises(BayevalInputError, match="p_unjudged"):
        expected_reciprocal_rank_pairs(cube, 1.5)
    with pytest.raises(BayevalInputError, match="cutoff"):
        expected_reciprocal_rank_pairs(cube, 0.1, cutoff=0)
    with pytest.raises(BayevalInputError, match="pairs"):
        expected_reciprocal_rank_pairs(cube, 0.1, pairs=np.array([[0, 9]]))


def test_cutoff_deeper_than_code_depth_refused():
    from bayeval.synthetic import make_collection

    col = make_collection(n_topics=3, n_systems=3, n_docs=40, depth=20, seed=2)
    cube = RankCube.from_runs(col.runs, col.judgments, code_depth=5)
    with pytest.raises(BayevalInputError, match="code_depth"):
        expected_reciprocal_rank_pairs(cube, 0.1, cutoff=10)
    full = RankCube.from_runs(col.runs, col.judgments)
    np.testing.assert_array_equal(expected_reciprocal_rank_pairs(cube, 0.1, cutoff=5).delta_variance,
                                  expected_reciprocal_rank_pairs(full, 0.1, cutoff=5).delta_variance)


def test_dask_local_cluster_same_numbers():
    distributed = pytest.importorskip("distributed")
    cube = _collection(7, n_topics=9, n_sys=5)
    doc_p = (cube.docs % 3 + 1) / 5.0
    local = expected_reciprocal_rank_pairs(cube, doc_p, cutoff=4)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        remote = expected_reciprocal_rank_pairs(cube, doc_p, cutoff=4, scheduler=cluster.scheduler_address,
                                                chunks=4)
    np.testing.assert_allclose(remote.delta_expected, local.delta_expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(remote.delta_variance, local.delta_variance, rtol=0, atol=1e-12)
    np.testing.assert_allclose(remote.p_less, local.p_less, rtol=0, atol=1e-12)


def test_dask_bad_address():
    pytest.importorskip("distributed")
    cube = _collection(1)
    with pytest.raises(BayevalInputError, match="scheduler: cannot connect"):
        expected_reciprocal_rank_pairs(cube, 0.1, cutoff=3, scheduler="tcp://127.0.0.1:9",
                                       connect_timeout=2)


def _runs_qrels(seed, n_topics=3, n_sys=4, pool=7, length=5):
    rng = np.random.default_rng(seed)
    runs = _random_runs(rng, n_topics, n_sys, pool, length)
    q = pd.DataFrame({"topic": [str(t) for t in range(n_topics)], "docno": [f"d{rng.integers(pool)}"
                                                                             for _ in range(n_topics)],
                      "grade": rng.integers(0, 2, n_topics)})
    return RunSet(tuple(runs)), Qrels.from_frame(q)


def _doc_draws(cube, n_draws, seed):
    """Posterior draws of p per document code (the same p wherever a document is ranked), laid on the cells."""
    rng = np.random.default_rng(seed)
    # a shared factor per draw makes the draws move together across topics: a real between-draw variance
    scale = rng.uniform(0.2, 1.0, (n_draws, 1))
    p_doc = scale * rng.uniform(0.0, 1.0, (n_draws, len(cube.docnos) + 1))
    return np.where(cube.docs[None] >= 0, p_doc[:, np.maximum(cube.docs, 0)], 0.0)


@pytest.mark.parametrize(("seed", "k"), [(3, 5), (4, 3)])
def test_pairs_with_draws_match_law_of_total_variance(seed, k):
    """Draws path = enumeration per draw, combined as compare_systems combines draws (docs/scale.md)."""
    cube = _collection(seed)
    draws = _doc_draws(cube, 6, seed)
    res = expected_reciprocal_rank_pairs(cube, draws, cutoff=k)
    n_t = len(cube.topics)
    per = [_enumerate(cube, cell_probabilities(cube, row, k), k) for row in draws]
    se = np.array([x[0] for x in per])  # per draw: E_d[ΔMRR] (the enumeration divides by T)
    within = np.mean([x[1] for x in per], axis=0)  # mean over draws of Var_d[ΔMRR] (divided by T²)
    between = se.var(axis=0)
    assert res.n_draws == 6
    assert np.all(between > 1e-5)  # the draws matter: dropping the between-draw term changes Var
    np.testing.assert_allclose(res.delta_expected, se.mean(axis=0), rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.delta_variance, within + between, rtol=0, atol=1e-10)
    assert np.max(np.abs(res.delta_variance - within)) > 1e-5
    z = se.mean(axis=0) / np.sqrt(within + between)
    from scipy.stats import norm

    np.testing.assert_allclose(res.p_less, norm.cdf(-z), rtol=0, atol=1e-10)
    # per system: E and Var of RR@k per topic by the same law, against the one-p path per draw
    one = [expected_reciprocal_rank_pairs(cube, row, cutoff=k) for row in draws]
    e_d = np.array([o.expected for o in one])
    v_d = np.array([o.variance for o in one])
    np.testing.assert_allclose(res.expected, e_d.mean(axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.variance, v_d.mean(axis=0) + e_d.var(axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.all_variance, v_d.mean(axis=0).sum(axis=1) / n_t**2
                               + e_d.mean(axis=2).var(axis=0), rtol=0, atol=1e-12)


def test_pairs_with_draws_thins_like_closed_forms():
    """200 draws are thinned to 25 evenly spaced ones, as every closed form in bayeval does."""
    from bayeval.data.probabilities import thin_draws

    cube = _collection(7)
    draws = _doc_draws(cube, 200, 7)
    res = expected_reciprocal_rank_pairs(cube, draws, cutoff=4)
    keep = thin_draws([draws.reshape(200, -1)], 25)[0].reshape(-1, *draws.shape[1:])
    ref = expected_reciprocal_rank_pairs(cube, keep, cutoff=4, closed_form_draws=200)
    assert res.n_draws == 25 and ref.n_draws == 25
    np.testing.assert_array_equal(res.delta_variance, ref.delta_variance)
    with pytest.raises(BayevalInputError, match="posterior draws"):
        expected_reciprocal_rank_pairs(cube, draws[:, :, :, :2], cutoff=2)


def test_cells_from_rankdata_lays_each_documents_p_on_its_cells():
    from bayeval.data.rankdata import RankData
    from bayeval.expected.cube import cells_from_rankdata

    runs, qrels = _runs_qrels(5)
    cube = RankCube.from_runs(runs, qrels)
    data = RankData.build(runs, qrels, topics=cube.topics)
    rng = np.random.default_rng(5)
    arrays = [rng.uniform(size=(3, tr.n_docs)) for tr in data]
    cells = cells_from_rankdata(cube, data, arrays)
    assert cells.shape == (3, *cube.docs.shape)
    names = np.asarray(cube.docnos.to_pylist(), dtype=object)
    for t, tr in enumerate(data):
        for s in range(len(cube.systems)):
            for r in range(cube.docs.shape[2]):
                code = cube.docs[s, t, r]
                if code < 0:
                    assert np.all(cells[:, s, t, r] == 0)
                    continue
                i = int(np.flatnonzero(np.asarray(tr.docnos) == names[code])[0])
                np.testing.assert_array_equal(cells[:, s, t, r], arrays[t][:, i])
    with pytest.raises(BayevalInputError, match="systems and topics"):
        cells_from_rankdata(cube, RankData.build(runs, qrels, topics=cube.topics[:1]), arrays[:1])
