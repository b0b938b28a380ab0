"""Biased-pool studies on real data: TREC-8 (annotated pool) and Cranfield (texts). Skip without ../shared/data."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from bayeval.bias import (
    ModelPredictor,
    TextClassifierPredictor,
    contributions_from_runs,
    leave_one_group_out,
    manual_only,
    pooled_runs,
    read_contributions,
    read_run_groups,
)
from bayeval.data import RankData
from bayeval.io import read_qrels, read_runs


@pytest.fixture(scope="module")
def trec8(shared_data):
    d = shared_data / "trec8"
    return (read_runs(d / "runs"), read_qrels(d / "qrels.txt.gz"), read_contributions(d / "qrels-annotated.txt.gz"),
            read_run_groups(d / "runs.tsv"))


def test_trec8_annotations_cover_exactly_the_qrels(trec8, shared_data):
    runs, qrels, contrib, groups = trec8
    assert set(contrib.groups) == set(groups.groups)
    annotated = {(t, d) for t, m in contrib.by_topic.items() for d in m}
    judged = {(t, d) for t in qrels.topics for d in qrels[t].docnos}
    assert annotated == judged and len(judged) == 86_830
    # the grade column of the annotated file agrees with the qrels
    with gzip.open(shared_data / "trec8" / "qrels-annotated.txt.gz", "rt") as fh:
        first = fh.readline().split()
    assert qrels.grade_of(first[0], first[2]) == int(first[3])


def test_trec8_pooled_runs_are_the_priority_1_and_2_runs(trec8):
    runs, qrels, contrib, groups = trec8
    pooled = pooled_runs(RankData.build(runs, qrels), 100)
    # 72 runs are fully judged to depth 100 (TREC-8 pooled one or two runs per group to depth 100)
    assert len(pooled) == 72 and "READWARE" in pooled and "UB99T" not in pooled
    assert sum(groups.kind[r] == "manual" for r in pooled) == 9


def test_trec8_manual_only_and_leave_one_group_out_without_repair(trec8):
    runs, qrels, contrib, groups = trec8
    man = manual_only(runs, qrels, contrib, groups, measures="P@20,AP,bpref,RankEff", progress=False)
    red = man.reductions.iloc[0]
    # documents only manual runs contributed: 11,571 judgments, 1,015 of them relevant (of 86,830 / 4,728)
    assert (red.judged, red.relevant, red.judged_after, red.relevant_after) == (86_830, 4_728, 75_259, 3_713)
    t = man.table().set_index("measure")
    assert t.loc["AP", "mean_shift"] < 0 < t.loc["bpref", "mean_shift"]  # AP under-, bpref over-estimates
    assert t.loc["AP", "rms_error"] == pytest.approx(0.0262, abs=5e-5)
    logo = leave_one_group_out(runs, qrels, contrib, groups, measures="P@20,AP,bpref,P@20(j)", progress=False)
    t = logo.table().set_index("measure")
    assert len(logo.runs) == 72 and len(logo.reductions) == 40
    assert t.loc["AP", "rms_error"] == pytest.approx(0.0063, abs=5e-5)
    assert t.loc["bpref", "rms_error"] == pytest.approx(0.0127, abs=5e-5)
    assert t.loc["AP", "mean_shift"] < 0 < t.loc["P@20(j)", "mean_shift"]


@pytest.mark.slow
def test_trec8_leave_one_group_out_repaired_by_rtc(trec8):
    """The goal on TREC-8 (docs/bias.md): expected AP vs every alternative (about 2 minutes)."""
    runs, qrels, contrib, groups = trec8
    st = leave_one_group_out(runs, qrels, contrib, groups, measures="AP,bpref,P@20(j),RankEff",
                             predictors=[ModelPredictor("rtc")], progress=False)
    t = st.table().set_index(["method", "measure"])
    exp = t.loc[("expected:rtc", "AP")]
    for alt in [("reduced", "AP"), ("reduced", "bpref"), ("reduced", "P@20(j)"), ("reduced", "RankEff")]:
        assert exp.rms_error < t.loc[alt, "rms_error"]
        assert exp.avg_rank_change <= t.loc[alt, "avg_rank_change"]
    # ... but the completed qrels (RTC labels at the expected count) have the smaller RMS error
    assert t.loc[("completed:rtc", "AP"), "rms_error"] < exp.rms_error


@pytest.fixture(scope="module")
def cranfield(shared_data):
    from bayeval.bias.cranfield import cranfield_pool, cranfield_runs, load_cranfield

    col = load_cranfield(shared_data / "cranfield")
    runs = cranfield_runs(col)
    qrels, groups = cranfield_pool(col, runs, 10)
    return col, runs, qrels, groups


def test_cranfield_collection(cranfield):
    col, runs, qrels, groups = cranfield
    assert len(col.texts) == 1400 and len(col.queries) == 225 and len(runs) == 8
    assert groups.groups == ("vector", "bm25", "lm", "title")
    assert sum(qrels.num_judged(t) for t in qrels.topics) == 5279


def test_cranfield_text_classifiers_repair_leave_one_group_out(cranfield):
    col, runs, qrels, groups = cranfield
    contrib = contributions_from_runs(RankData.build(runs, qrels), groups, 10)
    st = leave_one_group_out(runs, qrels, contrib, groups, measures="P@10,AP,bpref", pool_depth=10,
                             predictors=[TextClassifierPredictor(col.texts, "kld"),
                                         TextClassifierPredictor(col.texts, "svm")], progress=False)
    t = st.table().set_index(["method", "measure"])["rms_error"]
    for m in ("P@10", "AP"):
        assert t[("completed:svm", m)] < t[("reduced", m)]
        assert t[("completed:kld", m)] < t[("reduced", m)]
    assert t[("completed:svm", "bpref")] < t[("reduced", "bpref")]
    frame = st.to_frame()
    assert np.isfinite(frame["p_value"]).all()
