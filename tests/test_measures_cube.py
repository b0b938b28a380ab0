"""Measures on a RankCube (vectorised over topics) and run by run (evaluate_runs) against the per-topic trec_eval
path: the same kernels, so the same doubles, bit for bit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayeval.data.qrels import Qrels
from bayeval.data.rankcube import RankCube
from bayeval.data.rankdata import RankData
from bayeval.data.run import Run, RunSet
from bayeval.errors import BayevalInputError
from bayeval.io import iter_runs, read_rank_cube, write_run
from bayeval.io.runs import read_run, read_runs
from bayeval.measures import evaluate
from bayeval.measures.cube import evaluate_cube, evaluate_runs
from bayeval.synthetic import make_collection

#: every family of the vocabulary, with cutoffs, levels of their own and condensed lists
ALL = ("AP,AP@5,nDCG@10,nDCG,recall@1000,P@5,RR,RR@3,R-prec,bpref,infAP,RankEff,judged@10,P(rel=2)@5,"
       "AP(rel=2),bpref(rel=2),P@5(j),nDCG@10(j),RR(rel=2)@10(j),R-prec(j)")


def _compare(runs, qrels, depth=None):
    cube = RankCube.from_runs(runs, qrels, depth=depth)
    data = RankData.build(runs, qrels, depth=depth)
    assert cube.topics == data.topics and cube.systems == data.systems
    ref = evaluate(data, ALL)
    for ev in (evaluate_cube(cube, ALL), evaluate_runs(iter(runs), qrels, ALL, depth=depth)):
        assert ev.topics == ref.topics and ev.systems == ref.systems and ev.measures == ref.measures
        np.testing.assert_array_equal(ev.values, ref.values)  # the same kernels: the same doubles
        np.testing.assert_array_equal(ev.has_results, ref.has_results)
        np.testing.assert_array_equal(ev.mean(), ref.mean())
    # MRR@10: recip_rank of the runs cut to 10
    rr10 = evaluate_cube(cube, "RR@10").values[0]
    ref10 = evaluate(RankData.build(runs, qrels, depth=10 if depth is None else min(10, depth)), "RR").values[0]
    np.testing.assert_array_equal(rr10, ref10)
    return cube


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cube_matches_evaluate_synthetic(seed):
    col = make_collection(n_topics=12, n_systems=5, n_docs=120, depth=60, judged_depth=15, graded=True, seed=seed)
    _compare(col.runs, col.judgments)
    _compare(col.runs, col.judgments, depth=20)


def test_cube_sparse_labels_missing_topics_and_negative_grades():
    rng = np.random.default_rng(4)
    runs = []
    for s in range(4):
        rows = []
        for t in range(30):
            if rng.random() < 0.15:  # a run without results for the topic
                continue
            docs = rng.choice(200, size=rng.integers(1, 40), replace=False)
            rows += [(str(t), f"D{d}", float(rng.integers(0, 5))) for d in docs]  # tied scores
        f = pd.DataFrame(rows, columns=["topic", "docno", "score"])
        runs.append(Run.from_frame(f, name=f"r{s}"))
    q = pd.DataFrame({"topic": [str(t) for t in range(32) for _ in range(2)],
                      "docno": [f"D{rng.integers(0, 200)}" for _ in range(64)],
                      "grade": rng.choice([-1, 0, 1, 2, 3], size=64)}).drop_duplicates(["topic", "docno"])
    _compare(RunSet(tuple(runs)), Qrels.from_frame(q))
    _compare(RunSet(tuple(runs)), Qrels.from_frame(q, relevance_level=2), depth=7)


def test_cube_from_files_matches(tmp_path):
    col = make_collection(n_topics=8, n_systems=3, n_docs=80, depth=30, seed=6)
    paths = []
    for run in col.runs:
        p = tmp_path / f"{run.name}.tsv"
        fr = run.to_frame()
        p.write_text("".join(f"{t}\t{d}\t{r}\n" for t, d, r in zip(fr.topic, fr.docno, fr["rank"], strict=True)))
        paths.append(p)
    cube = read_rank_cube(paths, col.qrels)
    serial = read_rank_cube(paths, col.qrels, prefetch=False)  # one thread: the same cube
    for name in ("docs", "judged", "grades", "lengths"):
        np.testing.assert_array_equal(getattr(cube, name), getattr(serial, name))
    assert cube.systems == serial.systems == tuple(p.stem for p in paths)
    runs = read_runs(paths, run_names="file")
    ref = evaluate(RankData.build(runs, col.qrels), "AP")
    np.testing.assert_array_equal(evaluate_cube(cube, "AP").values, ref.values)
    np.testing.assert_array_equal(evaluate_runs(iter_runs(paths), col.qrels, "AP").values, ref.values)
    assert read_run(paths[0]).topics == runs[0].topics


def test_streamed_runs_are_named_and_read_as_read_runs_reads_them(tmp_path):
    """iter_runs: the names of read_runs (tags, the file where two files share a tag), directories, the same
    notices; strict refuses what naming tolerates; errors name the file and line."""
    col = make_collection(n_topics=3, n_systems=3, n_docs=30, depth=10, seed=4)
    d = tmp_path / "runs"
    d.mkdir()
    for run in col.runs:
        write_run(run, d / f"input.{run.name}")
    write_run(col.runs[0], d / "copy.txt", tag=col.runs[0].name)  # shares its tag with input.<name>
    (d / "README").write_text("not a run\n")
    with pytest.warns(Warning) as seen:
        names = [r.name for r in iter_runs(d)]
    with pytest.warns(Warning):
        ref = read_runs(d)
    assert names == list(ref.names)
    assert any("share their tag" in str(w.message) for w in seen) and any("not runs" in str(w.message) for w in seen)
    for a, b in zip(iter_runs(d, run_names="file", prefetch=False), read_runs(d, run_names="file"), strict=True):
        assert a.name == b.name and a.topics == b.topics and (a.docno_array == b.docno_array)
    with pytest.raises(BayevalInputError, match=r"strict"):
        list(iter_runs(d, strict=True))
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 d1 1 2.0 t\n1 Q0 d2 2 x t\n")
    with pytest.raises(BayevalInputError, match=r"bad\.run:2"):
        list(iter_runs([bad]))
    with pytest.raises(BayevalInputError, match="run_names"):
        list(iter_runs([bad], run_names="name"))


def test_trec8_runs(shared_data):
    from bayeval.io.qrels import read_qrels

    d = shared_data / "trec8"
    qrels = read_qrels(d / "qrels.txt.gz")
    runs = read_runs(sorted((d / "runs").glob("input.*.gz"))[:6])
    _compare(runs, qrels)


def test_bad_measures():
    col = make_collection(n_topics=2, n_systems=2, n_docs=20, depth=5, seed=1)
    cube = RankCube.from_runs(col.runs, col.qrels)
    with pytest.raises(BayevalInputError, match="^measure: recall needs a cutoff"):
        evaluate_cube(cube, "recall")
    with pytest.raises(BayevalInputError, match="^measures: no trec_eval-exact value for 'DCG@5'"):
        evaluate_cube(cube, "AP,DCG@5")
    with pytest.raises(BayevalInputError, match="^measure: unknown measure 'hits@10'"):
        evaluate_runs(iter(col.runs), col.qrels, "hits@10")
    with pytest.raises(BayevalInputError, match="^cube: expected a RankCube"):
        evaluate_cube(col.runs, "AP")


def test_code_depth_keeps_measures_and_judged_codes():
    col = make_collection(n_topics=10, n_systems=4, n_docs=100, depth=50, judged_depth=30, seed=8)
    full = RankCube.from_runs(col.runs, col.judgments)
    cut = RankCube.from_runs(col.runs, col.judgments, code_depth=5)
    np.testing.assert_array_equal(evaluate_cube(full, "AP,nDCG@10,recall@40").values,
                                  evaluate_cube(cut, "AP,nDCG@10,recall@40").values)
    # top 5 identical, judged cells keep their codes below, unjudged cells below are NOT_CODED (-2)
    np.testing.assert_array_equal(full.docs[:, :, :5], cut.docs[:, :, :5])
    below = cut.docs[:, :, 5:]
    np.testing.assert_array_equal(below[cut.judged[:, :, 5:]], full.docs[:, :, 5:][full.judged[:, :, 5:]])
    assert set(np.unique(below[~cut.judged[:, :, 5:]])) <= {-2, -1}
    texts = full.docnos.to_numpy(zero_copy_only=False)
    assert texts[full.docs[0, 0, 0]] == col.runs[0].ranking(full.topics[0])[0]
