"""Measures on a RankCube (vectorised over topics) against the per-topic trec_eval path to 1e-12."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayeval.data.qrels import Qrels
from bayeval.data.rankcube import RankCube
from bayeval.data.rankdata import RankData
from bayeval.data.run import Run, RunSet
from bayeval.errors import BayevalInputError
from bayeval.io.runs import read_run, read_runs
from bayeval.measures import evaluate
from bayeval.measures.cube import evaluate_cube, parse_cube_measure
from bayeval.synthetic import make_collection


def _compare(runs, qrels, depth=None):
    cube = RankCube.from_runs(runs, qrels, depth=depth)
    data = RankData.build(runs, qrels, depth=depth)
    assert cube.topics == data.topics and cube.systems == data.systems
    ev = evaluate_cube(cube, "AP,nDCG@10,nDCG,recall@1000,P@5,RR")
    ref = evaluate(data, "AP,nDCG@10,nDCG,recall@1000,P@5,RR")
    np.testing.assert_allclose(ev.values, ref.values, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(ev.has_results, ref.has_results)
    np.testing.assert_allclose(ev.mean(), ref.mean(), rtol=0, atol=1e-12)
    # MRR@10: recip_rank of the runs cut to 10
    rr10 = evaluate_cube(cube, "RR@10").values[0]
    ref10 = evaluate(RankData.build(runs, qrels, depth=10 if depth is None else min(10, depth)), "RR").values[0]
    np.testing.assert_allclose(rr10, ref10, rtol=0, atol=1e-12)
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
    cube = RankCube.from_files(paths, col.qrels)
    serial = RankCube.from_files(paths, col.qrels, prefetch=False)  # one thread: the same cube
    for name in ("docs", "judged", "grades", "lengths"):
        np.testing.assert_array_equal(getattr(cube, name), getattr(serial, name))
    assert cube.systems == serial.systems == tuple(p.stem for p in paths)
    runs = read_runs(paths, run_names="file")
    ref = evaluate(RankData.build(runs, col.qrels), "AP")
    np.testing.assert_allclose(evaluate_cube(cube, "AP").values, ref.values, atol=1e-12, rtol=0)
    assert read_run(paths[0]).topics == runs[0].topics


def test_trec8_runs(shared_data):
    from bayeval.io.qrels import read_qrels

    d = shared_data / "trec8"
    qrels = read_qrels(d / "qrels.txt.gz")
    runs = read_runs(sorted((d / "runs").glob("input.*.gz"))[:6])
    _compare(runs, qrels)


def test_bad_measures():
    with pytest.raises(BayevalInputError, match="recall needs a cutoff"):
        parse_cube_measure("recall")
    with pytest.raises(BayevalInputError, match="not one of"):
        parse_cube_measure("bpref")


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
