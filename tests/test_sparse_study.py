"""The sparse-label study on a small synthetic collection, and its CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayeval.data.qrels import Qrels
from bayeval.experiments.sparse import run_sparse_study, sparse_labels
from bayeval.synthetic import make_collection


def test_sparse_labels_keep_one_relevant_per_topic():
    col = make_collection(n_topics=20, n_systems=3, n_docs=80, depth=30, judged_depth=30, seed=4)
    picks = []
    t0 = max(col.qrels.topics, key=col.qrels.num_rel)
    assert col.qrels.num_rel(t0) > 3
    for seed in range(30):
        s = sparse_labels(col.qrels, np.random.default_rng(seed))
        assert all(len(s[t]) == 1 and s[t].grades[0] >= 1 for t in s.topics)
        assert set(s.topics) == {t for t in col.qrels.topics if col.qrels.num_rel(t) > 0}
        picks.append(s[t0].docnos[0])
    assert len(set(picks)) > 1  # chosen at random, not always the first


def test_study_scores_against_deep_judgments():
    col = make_collection(n_topics=12, n_systems=5, n_docs=120, depth=50, judged_depth=50, seed=3)
    st = run_sparse_study(col.runs, col.qrels, trials=2, seed=1, model="uniform")
    assert list(st.trials["trial"]) == [0, 1] and len(st.pairs) == 2 * 10
    assert st.trials[["tau_trec_eval", "tau_bayeval"]].abs().le(1).all().all()
    assert st.pairs["p_less"].between(0, 1).all()
    # true_delta is Δ on the deep judgments: recompute one by hand
    from bayeval.data.rankdata import RankData
    from bayeval.measures import evaluate

    sparse = sparse_labels(col.qrels, np.random.default_rng([1, 0]))
    truth = evaluate(RankData.build(col.runs, col.qrels, topics=RankData.build(col.runs, sparse).topics),
                     "AP").mean()[0]
    row = st.pairs.iloc[0]
    names = list(col.runs.names)
    assert abs(row.true_delta - (truth[names.index(row.run_a)] - truth[names.index(row.run_b)])) < 1e-12
    assert "Kendall τ" in st.summary()


def test_cli_sparse(tmp_path, collection_dir_writer):
    from conftest import run_cli

    col = make_collection(n_topics=8, n_systems=3, n_docs=60, depth=30, judged_depth=30, seed=2)
    (tmp_path / "col").mkdir()
    d = collection_dir_writer(col, tmp_path / "col")
    code, out, err = run_cli("experiment", "sparse", str(d), "--trials", "1", "--model", "uniform",
                             "--out", str(tmp_path / "pairs.csv"))
    assert code == 0, err
    assert "Kendall τ" in out
    assert len(pd.read_csv(tmp_path / "pairs.csv")) == 3
    code, _, err = run_cli("experiment", "sparse", str(tmp_path / "missing"))
    assert code == 2 and "Traceback" not in err


def test_no_relevant_topic_is_an_error():
    import pytest

    from bayeval.errors import BayevalInputError

    q = Qrels.from_frame(pd.DataFrame({"topic": ["1"], "docno": ["a"], "grade": [0]}))
    with pytest.raises(BayevalInputError, match="no topic has a relevant"):
        sparse_labels(q, np.random.default_rng(0))


def test_trials_on_dask_give_the_same_numbers():
    import pytest

    distributed = pytest.importorskip("distributed")
    col = make_collection(n_topics=8, n_systems=4, n_docs=60, depth=30, judged_depth=30, seed=9)
    local = run_sparse_study(col.runs, col.qrels, trials=2, seed=3, model="rtc")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        remote = run_sparse_study(col.runs, col.qrels, trials=2, seed=3, model="rtc",
                                  scheduler=cluster.scheduler_address)
    pd.testing.assert_frame_equal(remote.pairs, local.pairs, check_exact=False, rtol=0, atol=1e-12)
    cols = ["trial", "topics", "tau_trec_eval", "tau_bayeval", "rmse_trec_eval", "rmse_bayeval"]
    pd.testing.assert_frame_equal(remote.trials[cols], local.trials[cols], check_exact=False, rtol=0, atol=1e-12)


def test_study_mrr_at_k_uses_the_cube_with_posterior_draws():
    """measure RR@k: truth and trec_eval's RR@k against RR on lists cut at k; p_less from the model's draws."""
    from bayeval.data.rankcube import RankCube
    from bayeval.data.rankdata import RankData
    from bayeval.expected.cube import cells_from_rankdata, expected_reciprocal_rank_pairs
    from bayeval.measures import evaluate
    from bayeval.relevance import estimate_probabilities

    col = make_collection(n_topics=12, n_systems=4, n_docs=120, depth=50, judged_depth=50, seed=3)
    st = run_sparse_study(col.runs, col.qrels, trials=1, seed=2, measure="RR@5")
    rng = np.random.default_rng([2, 0])
    sparse = sparse_labels(col.qrels, rng)
    topics = RankCube.from_runs(col.runs, sparse, depth=5).topics
    truth = evaluate(RankData.build(col.runs, col.qrels, topics=topics, depth=5), "RR").mean()[0]
    trec = evaluate(RankData.build(col.runs, sparse, topics=topics, depth=5), "RR").mean()[0]
    names = list(col.runs.names)
    ia = [names.index(a) for a in st.pairs["run_a"]]
    ib = [names.index(b) for b in st.pairs["run_b"]]
    np.testing.assert_allclose(st.pairs["true_delta"], truth[ia] - truth[ib], rtol=0, atol=1e-12)
    np.testing.assert_allclose(st.pairs["sparse_delta"], trec[ia] - trec[ib], rtol=0, atol=1e-12)
    # the study's P(Δ<0) combines the sparse model's posterior draws, not its point p
    cube = RankCube.from_runs(col.runs, sparse, depth=5)
    data = RankData.build(col.runs, sparse, topics=cube.topics)
    est = estimate_probabilities(data, "sparse", seed=int(rng.integers(2**31)))
    pairs = np.column_stack([ia, ib])
    drawn = expected_reciprocal_rank_pairs(cube, cells_from_rankdata(cube, data, est.arrays_for("delta")),
                                           cutoff=5, pairs=pairs)
    point = expected_reciprocal_rank_pairs(cube, cells_from_rankdata(cube, data, est.p), cutoff=5, pairs=pairs)
    np.testing.assert_allclose(st.pairs["p_less"], drawn.p_less, rtol=0, atol=1e-12)
    assert drawn.n_draws == 25 and np.abs(drawn.p_less - point.p_less).max() > 1e-6
