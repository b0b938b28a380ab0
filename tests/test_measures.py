"""Measures: known answers derived by hand, edge cases, properties, and a slow reference."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayeval.data import Qrels, RankData, Run, RunSet
from bayeval.errors import BayevalInputError
from bayeval.measures import Measure, evaluate, parse_measures


def _data(rankings: dict[str, list[str]], judgments: dict[str, int], depth=None) -> RankData:
    runs = []
    for name, docs in rankings.items():
        n = len(docs)
        runs.append(Run.from_arrays(name, np.array(["1"] * n, dtype=object), np.array(docs, dtype=object),
                                    np.arange(n, 0, -1, dtype=float)))
    q = Qrels.from_frame(pd.DataFrame({"topic": "1", "docno": list(judgments), "grade": list(judgments.values())}))
    return RankData.build(RunSet(tuple(runs)), q, depth=depth)


# Ranking a b c d e; judged relevant: a, c, and z (never retrieved); judged nonrelevant: b, e; d unjudged.
RANKING = {"s": ["a", "b", "c", "d", "e"]}
JUDGED = {"a": 1, "b": 0, "c": 1, "e": 0, "z": 1}


@pytest.mark.parametrize(
    "measure, expected",
    [
        ("AP", (1 / 1 + 2 / 3) / 3),           # precision at the relevant ranks 1 and 3, R = 3
        ("AP@2", (1 / 1) / 3),                 # only rank 1 counts, still divided by R
        ("P@5", 2 / 5),
        ("P@10", 2 / 10),                      # divides by k even when the list is shorter
        ("recall@3", 2 / 3),
        ("R-prec", 2 / 3),                     # 2 relevant in the top R = 3
        ("RR", 1.0),
        # bpref: R = 3, N = 2; a has no nonrelevant above -> 1; c has b above -> 1 - min(1,3)/min(3,2)
        ("bpref", (1 + (1 - 1 / 2)) / 3),
        # nDCG: DCG = 1/log2(2) + 1/log2(4); ideal = three gains of 1 at ranks 1..3
        ("nDCG", (1 + 1 / 2) / (1 + 1 / math.log2(3) + 1 / 2)),
        ("nDCG@2", 1 / (1 + 1 / math.log2(3))),
    ],
)
def test_known_answers(measure, expected):
    ev = evaluate(_data(RANKING, JUDGED), [measure])
    assert ev.values[0, 0, 0] == pytest.approx(expected, abs=1e-12)


def test_graded_and_negative_grades():
    # grades: a=2, b=-1 (judged nonrelevant), c=1; ideal order 2, 1
    data = _data({"s": ["c", "b", "a"]}, {"a": 2, "b": -1, "c": 1})
    ev = evaluate(data, ["nDCG", "AP", "bpref"])
    dcg = 1 / 1 + 2 / 2  # c (gain 1) at rank 1, a (gain 2) at rank 3: log2(4) = 2
    idcg = 2 / 1 + 1 / math.log2(3)
    assert ev.values[0, 0, 0] == pytest.approx(dcg / idcg)
    assert ev.values[1, 0, 0] == pytest.approx((1 + 2 / 3) / 2)
    # bpref: R = 2, N = 1; c -> 1; a has b above -> 1 - min(1,2)/min(2,1) = 0
    assert ev.values[2, 0, 0] == pytest.approx(0.5)
    # relevance level 2: only a is relevant
    data2 = RankData.build(data_runs := RunSet((Run.from_arrays(
        "s", np.array(["1"] * 3, dtype=object), np.array(["c", "b", "a"], dtype=object), np.array([3.0, 2, 1])),)),
        Qrels.from_frame(pd.DataFrame({"topic": "1", "docno": ["a", "b", "c"], "grade": [2, -1, 1]}),
                         relevance_level=2))
    assert data_runs.names == ("s",)
    assert evaluate(data2, ["AP"]).values[0, 0, 0] == pytest.approx(1 / 3)


def test_no_relevant_documents_give_zero():
    ev = evaluate(_data({"s": ["a", "b"]}, {"a": 0, "b": 0}), ["AP", "R-prec", "RR", "bpref", "nDCG", "recall@5"])
    assert (ev.values == 0).all()


def test_ties_are_broken_by_docno_descending():
    run = Run.from_arrays("s", np.array(["1", "1"], dtype=object), np.array(["a", "b"], dtype=object),
                          np.array([1.0, 1.0]))
    q = Qrels.from_frame(pd.DataFrame({"topic": ["1"], "docno": ["a"], "grade": [1]}))
    # b sorts before a (descending docno), so the relevant a sits at rank 2
    assert evaluate(RankData.build(RunSet((run,)), q), ["RR"]).values[0, 0, 0] == 0.5


def test_mean_skips_topics_a_run_has_no_results_for():
    a = Run.from_arrays("A", np.array(["1", "2"], dtype=object), np.array(["x", "y"], dtype=object), np.ones(2))
    b = Run.from_arrays("B", np.array(["1"], dtype=object), np.array(["x"], dtype=object), np.ones(1))
    q = Qrels.from_frame(pd.DataFrame({"topic": ["1", "2"], "docno": ["x", "y"], "grade": [1, 1]}))
    ev = evaluate(RankData.build(RunSet((a, b)), q), ["AP"])
    assert ev.value("AP", "A") == 1.0
    assert ev.value("AP", "B") == 1.0  # trec_eval -c off: B is averaged over topic 1 only
    frame = ev.to_frame()
    assert list(frame.columns) == ["run", "topic", "measure", "value"]
    assert len(frame[(frame.run == "B") & (frame.topic != "all")]) == 1


def test_measure_names():
    assert [str(m) for m in parse_measures("map,AP@100,p@10,NDCG@10,rprec,mrr,BPREF,recall@5,ndcg")] == [
        "AP", "AP@100", "P@10", "nDCG@10", "R-prec", "RR", "bpref", "recall@5", "nDCG"]
    for m in parse_measures("AP,AP@100,P@10,nDCG@10,R-prec,RR,bpref,recall@5,nDCG"):
        assert Measure.parse(str(m)) == m
        assert Measure.from_trec_eval(m.trec_eval_name) == m
    for bad, fragment in [("P", "needs a cutoff"), ("RR@5", "no cutoff"), ("AP@0", "positive"),
                          ("AP@x", "positive"), ("foo@3", "unknown measure"), ("", "no measure")]:
        with pytest.raises(BayevalInputError, match=fragment):
            parse_measures(bad)
    with pytest.raises(BayevalInputError, match="trec_eval"):
        Measure.from_trec_eval("gm_map")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=-1, max_value=2), min_size=1, max_size=15), st.integers(0, 5),
       st.integers(1, 20))
def test_properties(grades, extra_rel, k):
    """0 <= measure <= 1; P@k * k = relevant in top k; AP <= recall at full depth; AP@k <= AP."""
    docs = [f"d{i}" for i in range(len(grades))]
    judged = dict(zip(docs, grades, strict=True))
    judged.update({f"u{i}": 1 for i in range(extra_rel)})  # relevant, never retrieved
    data = _data({"s": docs}, judged)
    v = evaluate(data, ["AP", f"AP@{k}", f"P@{k}", "R-prec", "RR", "bpref", "nDCG", f"recall@{k}"]).values[:, 0, 0]
    v = np.append(v, evaluate(data, [f"recall@{len(docs)}"]).values[0, 0, 0])
    assert ((v >= 0) & (v <= 1 + 1e-12)).all()
    assert v[2] * k == pytest.approx(sum(g >= 1 for g in grades[:k]))
    assert v[0] <= v[8] + 1e-12
    assert v[1] <= v[0] + 1e-12


def _reference_ndcg(ranking, qrels, k):
    """Slow, independent nDCG@k: trec_eval conventions (gain = grade, discount log2(rank + 1))."""
    dcg = sum(max(qrels.get(d, 0), 0) / math.log2(r + 2) for r, d in enumerate(ranking[:k]))
    ideal = sorted((g for g in qrels.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(r + 2) for r, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


@pytest.mark.data
def test_graded_ndcg_on_robust03_matches_reference(shared_data):
    from bayeval.io import read_qrels, read_runs

    d = shared_data / "robust03"
    runs = read_runs(sorted((d / "runs").glob("input.*"))[:3])
    qrels = read_qrels(d / "qrels.txt.gz")
    assert set(np.concatenate([qrels[t].grades for t in qrels.topics])) >= {0, 1, 2}
    data = RankData.build(runs, qrels)
    ev = evaluate(data, ["nDCG@10", "nDCG@1000"])
    for s, run in enumerate(runs):
        for t in data.topics[:25]:
            q = dict(zip(qrels[t].docnos, qrels[t].grades.tolist(), strict=True))
            ranking = run.ranking(t).tolist()
            ti = data.topics.index(t)
            assert ev.values[0, s, ti] == pytest.approx(_reference_ndcg(ranking, q, 10), abs=1e-12)
            assert ev.values[1, s, ti] == pytest.approx(_reference_ndcg(ranking, q, 1000), abs=1e-12)


# Ranking a b c d e with a, c relevant, b, e nonrelevant, d unjudged, z relevant unretrieved:
# R = 3, N = 2 (see RANKING / JUDGED above).
@pytest.mark.parametrize(
    "measure, expected",
    [
        # infAP: rank 1 -> 1; rank 3 (c): 2 judged above, 1 relevant: (1 + 2 (1+e)/(2+2e)) / 3 = 2/3
        ("infAP", (1 + (1 + 2 * (1 + 1e-5) / (2 + 2e-5)) / 3) / 3),
        # RankEff: a -> 1 - 0/2; c -> 1 - 1/2 (b above); z unretrieved -> 0
        ("RankEff", (1 + 0.5) / 3),
        ("judged@4", 3 / 4),                   # a, b, c judged; d not
        # condensed list a b c e: P@4(j) = 2/4, while P@4 on the full list is also 2/4 ...
        ("P@4(j)", 2 / 4),
        # ... but with d removed, e moves to rank 4 and c stays at 3: AP(j) = AP here
        ("AP(j)", (1 / 1 + 2 / 3) / 3),
        ("RR(j)", 1.0),
    ],
)
def test_incomplete_judgment_measures(measure, expected):
    ev = evaluate(_data(RANKING, JUDGED), [measure])
    assert ev.values[0, 0, 0] == pytest.approx(expected, abs=1e-12)


def test_condensed_list_removes_unjudged_documents():
    # u1 u2 unjudged ahead of the relevant r: P@1 = 0 on the full list, 1 on the condensed one
    data = _data({"s": ["u1", "u2", "r", "n"]}, {"r": 1, "n": 0})
    ev = evaluate(data, ["P@1", "P@1(j)", "RR", "RR(j)", "nDCG@1(j)"])
    assert ev.values[:, 0, 0].tolist() == [0.0, 1.0, 1 / 3, 1.0, 1.0]
    assert Measure.parse("P@1(j)").trec_eval_name == "P_1"
    with pytest.raises(BayevalInputError, match="always 1"):
        Measure.parse("judged@5(j)")
