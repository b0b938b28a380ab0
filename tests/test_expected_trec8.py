"""Expected measures on TREC-8 (../shared/data; skipped when absent).

With every unjudged document irrelevant (p = 0) the expectations are the measures themselves, so
they must reproduce the official trec_eval output (4 decimals) per topic; with p = 0.5 the fast
all-pairs kernels must agree with the naive O(n^3) formula and the methods with each other.
"""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from bayeval.data import Qrels, RankData
from bayeval.expected import compare_systems, expected_measures
from bayeval.expected import reference as ref
from bayeval.io import read_qrels, read_run

pytestmark = pytest.mark.data

RUNS = ["8manexT3D1N0", "CL99SD", "Flab8as", "READWARE"]  # READWARE: a short run


def _official(path, measure):
    out = {}
    with gzip.open(path, "rt") as fh:
        for line in fh:
            name, topic, value = line.split()
            if name == measure and topic != "all":
                out[topic] = float(value)
    return out


@pytest.fixture(scope="module")
def trec8(shared_data):
    d = shared_data / "trec8"
    runs = [read_run(d / "runs" / f"input.{tag}.gz") for tag in RUNS]
    qrels = read_qrels(d / "qrels.txt.gz")
    return d, runs, qrels


def test_known_relevance_reproduces_trec_eval(trec8):
    d, runs, qrels = trec8
    data = RankData.build(runs, qrels)
    measures = {"AP": "map", "P@10": "P_10", "recall@10": "recall_10", "nDCG@10": "ndcg_cut_10"}
    for method in ("paper", "delta", "exact"):
        ev = expected_measures(data, default_p=0.0, measures=list(measures), method=method)
        assert np.all(ev.variance <= 1e-15)  # 0 up to rounding (nDCG: E[X^2] - E[X]^2)
        for i, name in enumerate(measures.values()):
            for s, run in enumerate(runs):
                official = _official(d / "trec_eval" / f"eval.{run.name}.gz", name)
                got = dict(zip(data.topics, ev.expected[i, s], strict=True))
                for topic, value in official.items():
                    assert got[topic] == pytest.approx(value, abs=5.1e-5), (method, name, run.name, topic)
    mc = expected_measures(data, default_p=0.0, measures=["R-prec"], method="mc", draws=2, seed=0)
    for s, run in enumerate(runs):
        official = _official(d / "trec_eval" / f"eval.{run.name}.gz", "Rprec")
        got = dict(zip(data.topics, mc.expected[0, s], strict=True))
        assert all(got[t] == pytest.approx(v, abs=5.1e-5) for t, v in official.items())


@pytest.fixture(scope="module")
def shallow(trec8):
    """Depth-100 rankings, judgments of the depth-10 pool of these runs only, p = 0.5 elsewhere."""
    _, runs, qrels = trec8
    topics = ["401", "417", "442"]
    full = RankData.build(runs, qrels, depth=100, topics=topics)
    keep = {}
    for tr in full:
        pool = set()
        for s in range(tr.n_systems):
            pool.update(tr.docnos[tr.ranked[s, :10][tr.ranked[s, :10] >= 0]].tolist())
        tj = qrels[tr.topic]
        keep[tr.topic] = np.fromiter((x in pool for x in tj.docnos), dtype=bool, count=len(tj))
    shallow_qrels = qrels.restrict(keep)
    shallow_qrels = Qrels({t: j for t, j in shallow_qrels.topic_judgments.items() if len(j)}, qrels.relevance_level)
    return RankData.build(runs, shallow_qrels, depth=100, topics=topics)


def test_all_pairs_paper_matches_naive_formula_on_real_rankings(shallow):
    cmp = compare_systems(shallow, default_p=0.5, method="paper")
    for t, tr in enumerate(shallow):
        p = tr.probabilities(None, 0.5)
        mu = p.sum()
        for i, (a, b) in enumerate(zip(cmp.index_a, cmp.index_b, strict=True)):
            r = tr.ranks
            docs = np.flatnonzero((r[:, a] > 0) | (r[:, b] > 0))  # c_ij = 0 elsewhere
            wa = np.where(r[docs, a] > 0, 1.0 / np.maximum(r[docs, a], 1), 0.0)
            wb = np.where(r[docs, b] > 0, 1.0 / np.maximum(r[docs, b], 1), 0.0)
            es, var = ref.paper_moments_delta_naive(wa, wb, p[docs])
            assert cmp.delta_expected[i, t] == pytest.approx(es / mu, abs=1e-12)
            assert cmp.delta_variance[i, t] == pytest.approx(var / mu**2, rel=1e-9, abs=1e-15)


def test_methods_agree_where_they_should(shallow):
    exact = compare_systems(shallow, default_p=0.5, method="exact")
    delta = compare_systems(shallow, default_p=0.5, method="delta")
    paper = compare_systems(shallow, default_p=0.5, method="paper")
    mc = compare_systems(shallow, default_p=0.5, method="mc", draws=4000, seed=1)
    # delta within a few percent of exact
    np.testing.assert_allclose(delta.delta_expected, exact.delta_expected, rtol=0.02, atol=1e-4)
    np.testing.assert_allclose(delta.delta_variance, exact.delta_variance, rtol=0.1, atol=1e-6)
    # for ΔAP, Cov(D, R) = Cov(S_a, R) - Cov(S_b, R) largely cancels: the paper's Var[ΔAP] is close
    # (off by up to ~20% here), while its Var[AP] of one system is far too large (below)
    ratio = paper.delta_variance / exact.delta_variance
    assert 0.9 < np.median(ratio) < 1.1 and ratio.max() > 1.1
    se = np.sqrt(exact.delta_variance / 4000)
    assert np.all(np.abs(mc.delta_expected - exact.delta_expected) <= 4 * se + 1e-9)
    one = {m: expected_measures(shallow, default_p=0.5, method=m) for m in ("paper", "exact", "delta")}
    assert np.median(one["paper"].variance / one["exact"].variance) > 1.25
    np.testing.assert_allclose(one["delta"].variance, one["exact"].variance, rtol=0.05)


@pytest.mark.slow
def test_all_pairs_of_all_runs_full_depth(shared_data):
    """All 8,256 pairs at full depth: random cells against the naive formula, delta against exact."""
    from bayeval.io import read_runs

    d = shared_data / "trec8"
    data = RankData.build(read_runs(d / "runs"), read_qrels(d / "qrels.txt.gz"), topics=["403", "421"])
    paper = compare_systems(data, default_p=0.5, method="paper")
    rng = np.random.default_rng(0)
    for i in rng.choice(len(paper.index_a), 2, replace=False):  # the naive formula: ~5 s per cell
        a, b = paper.index_a[i], paper.index_b[i]
        for t, tr in enumerate(data):
            p = tr.probabilities(None, 0.5)
            r = tr.ranks
            docs = np.flatnonzero((r[:, a] > 0) | (r[:, b] > 0))
            wa = np.where(r[docs, a] > 0, 1.0 / np.maximum(r[docs, a], 1), 0.0)
            wb = np.where(r[docs, b] > 0, 1.0 / np.maximum(r[docs, b], 1), 0.0)
            es, var = ref.paper_moments_delta_naive(wa, wb, p[docs])
            assert paper.delta_expected[i, t] == pytest.approx(es / p.sum(), abs=1e-12)
            assert paper.delta_variance[i, t] == pytest.approx(var / p.sum() ** 2, rel=1e-9, abs=1e-15)
    delta = compare_systems(data, default_p=0.5, method="delta")
    exact = compare_systems(data, default_p=0.5, method="exact")
    np.testing.assert_allclose(delta.delta_expected, exact.delta_expected, atol=2e-4)
    np.testing.assert_allclose(delta.delta_variance, exact.delta_variance, rtol=0.1, atol=1e-7)
