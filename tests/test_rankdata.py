"""RankData: the shared per-topic documents × systems representation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayeval.data import pool_qrels
from bayeval.data.probabilities import RelevanceProbabilities
from bayeval.data.qrels import Qrels
from bayeval.data.rankdata import RankData
from bayeval.data.run import Run, RunSet
from bayeval.errors import BayevalInputError
from bayeval.synthetic import make_collection


def _run(name, rows):
    t, d, s = zip(*rows, strict=True)
    return Run.from_arrays(name, np.array(t, dtype=object), np.array(d, dtype=object), np.array(s, float))


@pytest.fixture
def small():
    a = _run("A", [("1", "x", 3), ("1", "y", 2), ("1", "z", 1), ("2", "x", 1)])
    b = _run("B", [("1", "z", 5), ("1", "w", 4)])
    q = Qrels.from_frame(pd.DataFrame({"topic": ["1", "1", "1", "3"], "docno": ["x", "v", "w", "x"],
                                       "grade": [1, 2, 0, 1]}))
    return RunSet((a, b)), q


def test_universe_ranks_and_judgments(small):
    runs, q = small
    rd = RankData.build(runs, q)
    # topic 2 has no qrels and topic 3 no results: trec_eval evaluates only topic 1
    assert rd.topics == ("1",)
    tr = rd["1"]
    docs = tr.docnos.tolist()
    # the universe is every retrieved doc plus the judged-but-unretrieved 'v'
    assert sorted(docs) == ["v", "w", "x", "y", "z"]
    rank = {d: tuple(tr.ranks[i]) for i, d in enumerate(docs)}
    assert rank == {"x": (1, 0), "y": (2, 0), "z": (3, 1), "w": (0, 2), "v": (0, 0)}
    assert tr.lengths.tolist() == [3, 2]
    assert [docs[i] for i in tr.ranking("B")] == ["z", "w"]
    assert tr.num_rel == 2 and tr.num_nonrel == 1
    judged = {d for d, j in zip(docs, tr.judged, strict=True) if j}
    assert judged == {"x", "v", "w"}
    # ranked_values lays per-document values out in rank order, fill past the end
    g = tr.ranked_values(tr.grades, fill=-9)
    assert g.tolist() == [[1, 0, 0], [0, 0, -9]]


def test_depth_truncates_runs_but_keeps_judged_docs(small):
    runs, q = small
    tr = RankData.build(runs, q, depth=1)["1"]
    assert sorted(tr.docnos.tolist()) == ["v", "w", "x", "z"]  # y (rank 2 of A) dropped; w is judged
    assert tr.lengths.tolist() == [1, 1]
    assert tr.has_results.tolist() == [True, True]


def test_probabilities_override_judged(small):
    runs, q = small
    tr = RankData.build(runs, q)["1"]
    probs = RelevanceProbabilities({"1": {"y": 0.2, "x": 0.0}})
    p = dict(zip(tr.docnos, tr.probabilities(probs, default=0.4), strict=True))
    assert p == {"x": 1.0, "y": 0.2, "z": 0.4, "w": 0.0, "v": 1.0}
    with pytest.raises(BayevalInputError, match="default_p"):
        tr.probabilities(default=1.5)


def test_bad_arguments(small):
    runs, q = small
    with pytest.raises(BayevalInputError, match="depth"):
        RankData.build(runs, q, depth=0)
    with pytest.raises(BayevalInputError, match="no topic in common"):
        RankData.build(runs, Qrels.from_frame(pd.DataFrame({"topic": ["9"], "docno": ["a"], "grade": [1]})))


def test_synthetic_collection_is_reproducible_and_pooled():
    a = make_collection(n_topics=3, n_systems=4, n_docs=60, depth=30, judged_depth=5, seed=3)
    b = make_collection(n_topics=3, n_systems=4, n_docs=60, depth=30, judged_depth=5, seed=3)
    assert a.runs[2].ranking("2").tolist() == b.runs[2].ranking("2").tolist()
    rd = RankData.build(a.runs, a.judgments)
    for tr in rd:
        pool = set()
        for s in range(tr.n_systems):
            pool.update(tr.docnos[tr.ranking(s)[:5]].tolist())
        # exactly the depth-5 pool is judged
        assert set(tr.docnos[tr.judged].tolist()) == pool
    assert len(pool_qrels(a.runs, a.qrels, 60)) == 3
    with pytest.raises(BayevalInputError, match="depth"):
        make_collection(n_docs=10, depth=20)


def test_independent_systems_agree_less_and_leave_the_default_unchanged():
    kw = dict(n_topics=6, n_systems=8, n_docs=400, depth=50, judged_depth=5, seed=5)
    plain, ind = make_collection(**kw), make_collection(**kw, independent=3)
    assert plain.independent == () and len(ind.independent) == 3
    # the option draws extra numbers only when it is used: the default collection is what it always was
    # (sys01's first documents of topic 1 with seed 5, recorded before the option existed)
    assert plain.runs[0].ranking("1")[:3].tolist() == ['T1-D006', 'T1-D019', 'T1-D064']
    rd = RankData.build(ind.runs, ind.qrels)
    own = np.isin(np.array(rd.systems), ind.independent)

    def overlap(s):  # mean share of s's list that each other system also retrieves
        shares = []
        for tr in rd:
            mine = set(tr.ranking(s).tolist())
            shares += [len(mine & set(tr.ranking(o).tolist())) / len(mine) for o in range(len(own)) if o != s]
        return np.mean(shares)

    ov = np.array([overlap(s) for s in range(len(own))])
    assert ov[own].max() < ov[~own].min()
    with pytest.raises(BayevalInputError, match="independent"):
        make_collection(n_systems=3, independent=4)
