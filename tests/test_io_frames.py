"""Runs and qrels to and from pandas frames and ir_datasets-style records (bayeval.io.frames)."""

from collections import namedtuple

import numpy as np
import pandas as pd
import pytest

from bayeval.data import RankData
from bayeval.errors import BayevalInputError
from bayeval.io import (
    qrels_from_frame,
    qrels_from_records,
    qrels_to_frame,
    read_qrels,
    read_runs,
    runs_from_frame,
    runs_from_records,
    runs_to_frame,
)
from bayeval.measures import evaluate

RUNS = {"a": "1 Q0 d1 1 3.0 a\n1 Q0 d2 2 2.0 a\n1 Q0 d3 3 2.0 a\n2 Q0 d4 1 1.0 a\n",
        "b": "1 Q0 d3 1 9.0 b\n1 Q0 d9 2 1.0 b\n2 Q0 d5 1 4.0 b\n2 Q0 d4 2 3.0 b\n"}
QRELS = "1 0 d1 1\n1 0 d3 2\n1 0 d9 0\n2 0 d4 1\n2 0 d5 0\n"


@pytest.fixture
def files(tmp_path):
    for n, text in RUNS.items():
        (tmp_path / n).write_text(text)
    (tmp_path / "qrels").write_text(QRELS)
    return read_runs([tmp_path / n for n in RUNS]), read_qrels(tmp_path / "qrels")


@pytest.mark.parametrize("convention", ["bayeval", "ir_measures", "pyterrier"])
def test_frames_round_trip_and_evaluate_as_the_files(files, convention):
    runs, qrels = files
    rframe, qframe = runs_to_frame(runs, convention), qrels_to_frame(qrels, convention)
    if convention == "pyterrier":
        assert list(rframe.columns) == ["run", "qid", "docno", "score", "rank"] and rframe["rank"].min() == 0
        assert list(qframe.columns) == ["qid", "docno", "label"]
    if convention == "ir_measures":
        assert list(qframe.columns) == ["query_id", "doc_id", "relevance"]
    shuffled = rframe.sample(frac=1.0, random_state=0)  # any row order
    runs2, qrels2 = runs_from_frame(shuffled), qrels_from_frame(qframe.sample(frac=1.0, random_state=1))
    runs2 = runs2.select(runs.names)  # runs come in order of first appearance
    for r, r2 in zip(runs, runs2, strict=True):
        assert r2.topics == r.topics and r2.docnos.tolist() == r.docnos.tolist()
    a = evaluate(RankData.build(runs, qrels), "AP,P@2,nDCG@10").mean()
    b = evaluate(RankData.build(runs2, qrels2), "AP,P@2,nDCG@10").mean()
    np.testing.assert_array_equal(a, b)


def test_rank_only_frames_and_records_like_ir_datasets():
    frame = pd.DataFrame({"qid": ["1", "1", "1"], "docno": ["x", "y", "z"], "rank": [2, 0, 1]})
    assert runs_from_frame(frame, name="pt")["pt"].ranking("1").tolist() == ["y", "z", "x"]
    TrecQrel = namedtuple("TrecQrel", "query_id doc_id relevance iteration")
    ScoredDoc = namedtuple("GenericScoredDoc", "query_id doc_id score")
    q = qrels_from_records(iter([TrecQrel("1", "x", 1, "0"), TrecQrel("1", "y", 0, "0"),
                                 {"query_id": 2, "doc_id": "x", "relevance": 3}]))
    assert q.topics == ("1", "2") and q.num_rel("1") == 1 and q.grade_of("2", "x") == 3
    run = runs_from_records([ScoredDoc("1", "x", 0.5), ScoredDoc("1", "y", 0.7)], name="r")["r"]
    assert run.ranking("1").tolist() == ["y", "x"]


@pytest.mark.parametrize("frame, fragment", [
    (pd.DataFrame({"q": ["1"], "d": ["x"], "score": [1.0]}), "match no convention"),
    (pd.DataFrame({"qid": ["1"], "docno": ["x"]}), "needs a column 'score' or 'rank'"),
    (pd.DataFrame({"qid": ["1", "1"], "docno": ["x", "y"], "score": [1.0, np.nan]}), "row 1 has a score"),
    (pd.DataFrame({"qid": ["1"], "docno": ["x"], "score": ["high"]}), "column 'score' is not numeric"),
])
def test_bad_frames_name_the_column_or_row(frame, fragment):
    with pytest.raises(BayevalInputError, match=fragment):
        runs_from_frame(frame)


def test_bad_qrels_inputs():
    with pytest.raises(BayevalInputError, match="needs a column 'label'"):
        qrels_from_frame(pd.DataFrame({"qid": ["1"], "docno": ["x"]}))
    with pytest.raises(BayevalInputError, match="record 1 lacks one of query_id, doc_id, relevance"):
        qrels_from_records([{"query_id": "1", "doc_id": "x", "relevance": 1}, {"query_id": "1"}])
    with pytest.raises(BayevalInputError, match="convention: expected one of"):
        runs_to_frame([], "trec")
