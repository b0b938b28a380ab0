"""The two questions side by side in a report: E[measure] (as if every document were judged) and the
measure with unjudged documents counted as not relevant (trec_eval's), and what rests on the model."""

from __future__ import annotations

import numpy as np

from bayeval.data import RankData
from bayeval.data.qrels import pool_qrels
from bayeval.data.run import RunSet
from bayeval.measures import evaluate
from bayeval.reporting import make_report
from bayeval.synthetic import make_collection


def test_report_shows_trec_eval_value_and_the_models_share():
    col = make_collection(n_topics=6, n_systems=4, n_docs=120, depth=40, judged_depth=5, seed=4)
    data = RankData.build(col.runs, col.judgments)
    rep = make_report(data, default_p=0.2)
    # unjudged = not relevant: the plain measure on the judgments (checked against trec_eval elsewhere)
    plain = evaluate(data, ["AP"]).mean()[0]
    got = rep.runs["unjudged_zero"].reindex(list(data.systems)).to_numpy()
    np.testing.assert_allclose(got, plain, atol=1e-12)
    # exact moments at the point p: the model share is (E - E0) / E
    np.testing.assert_allclose(rep.runs["model_share"], 1 - rep.runs["unjudged_zero"] / rep.runs["expected"],
                               atol=1e-12)
    assert (rep.runs["model_share"].abs() > 1e-3).all()  # p = 0.2 of unjudged documents moves every run
    # with p = 0 both questions have the same answer, and nothing rests on the model
    zero = make_report(data, default_p=0.0)
    np.testing.assert_allclose(zero.runs[["model_share", "beyond_share"]], 0.0, atol=1e-12)
    md = rep.to_markdown()
    assert "MAP (unjudged = 0)" in md and "model share" in md and "as if every document were judged" in md
    assert "beyond judged runs" in rep.to_latex().replace("\\", "")


def test_beyond_judged_runs_by_hand():
    """Documents no run with its top 5 judged retrieves: a naive set computation agrees; the contributing runs
    retrieve none of them, so those documents only add to R and lower their E[AP] (a negative share)."""
    from bayeval.data.coverage import beyond_judged_runs
    from bayeval.expected.extrapolation import extrapolation

    col = make_collection(n_topics=5, n_systems=5, n_docs=150, depth=30, judged_depth=5, seed=8)
    runs = list(col.runs)
    judg = pool_qrels(RunSet(runs[:2]), col.qrels, 5)
    data = RankData.build(col.runs, judg)
    for tr in data:
        docs = list(tr.docnos)
        judged = {d for d, j in zip(docs, tr.judged, strict=True) if j}
        lists = [[docs[i] for i in tr.ranked[s, : tr.lengths[s]]] for s in range(len(runs))]
        judged_runs = [lst for lst in lists if all(d in judged for d in lst[:5])]
        seen = {d for lst in judged_runs for d in lst}
        want = [d not in judged and d not in seen for d in docs]
        assert beyond_judged_runs(tr, 5).tolist() == want
    ex = extrapolation(data, default_p=0.3, depth=5)
    assert np.all(ex.beyond_share[:2] < 0.0)
    assert np.any(ex.beyond_share[2:] > 0.0)


def test_condensed_collection_keeps_only_judged_documents_in_order(tmp_path):
    from conftest import write_collection_dir

    from bayeval.experiments import load_collection

    col = make_collection(n_topics=3, n_systems=3, n_docs=60, depth=30, judged_depth=5, seed=2)
    root = write_collection_dir(col, tmp_path)
    # make the qrels shallow: the depth-5 judgments become the collection's qrels
    from bayeval.io.qrels import write_qrels

    qpath = next(p for p in root.iterdir() if p.name.startswith("qrels"))
    write_qrels(col.judgments, qpath)
    full = load_collection(root)
    cond = load_collection(root, condense=True)
    assert cond.name == full.name + "-condensed"
    q = cond.qrels()
    for name in full.run_names:
        a, b = full.runs([name])[0], cond.runs([name])[0]
        for t in a.topics:
            ra = a.ranking(t)
            judged = set(q[t].docnos.tolist())
            assert b.ranking(t).tolist() == [d for d in ra if d in judged]
        assert len(b.docnos) < len(a.docnos)
