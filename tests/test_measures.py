"""Measures: known answers derived by hand, trec_eval's edge cases, properties, and a slow reference.

The reference (:func:`reference_measures`) is an independent, loop-per-document transcription of
trec_eval's definitions on plain Python lists; hypothesis compares it with the vectorised kernels on
random rankings with ties, graded and negative grades. When pytrec_eval (trec_eval's own C code) is
installed, the same random cases are also checked against it.
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bayeval.data import Qrels, RankData, Run, RunSet
from bayeval.errors import BayevalInputError
from bayeval.measures import (
    Evaluation,
    Measure,
    average_precision,
    bpref,
    evaluate,
    inferred_ap,
    ndcg,
    parse_measures,
    precision_at,
    r_precision,
    recall_at,
    reciprocal_rank,
    topic_measure,
)


# ----------------------------------------------------------------------------------------- helpers
def _runs(rankings: dict[str, list[str]], topic: str = "1") -> RunSet:
    """One run per entry, documents in the given order (strictly decreasing scores)."""
    runs = []
    for name, docs in rankings.items():
        n = len(docs)
        runs.append(Run.from_arrays(name, np.array([topic] * n, dtype=object), np.array(docs, dtype=object),
                                    np.arange(n, 0, -1, dtype=float)))
    return RunSet(tuple(runs))


def _qrels(judgments: dict[str, int], topic: str = "1", level: int = 1) -> Qrels:
    return Qrels.from_frame(pd.DataFrame({"topic": topic, "docno": list(judgments),
                                          "grade": list(judgments.values())}), relevance_level=level)


def _data(rankings: dict[str, list[str]], judgments: dict[str, int], level: int = 1) -> RankData:
    return RankData.build(_runs(rankings), _qrels(judgments, level=level))


def _one(rankings, judgments, measure, level=1) -> float:
    return float(evaluate(_data(rankings, judgments, level), [measure]).values[0, 0, 0])


# ----------------------------------------------------------------------------------- known answers
# Ranking a b c d e; judged relevant: a, c, and z (never retrieved); judged nonrelevant: b, e; d unjudged.
# So R = 3, N = 2, and the relevant documents are retrieved at ranks 1 and 3.
RANKING = {"s": ["a", "b", "c", "d", "e"]}
JUDGED = {"a": 1, "b": 0, "c": 1, "e": 0, "z": 1}


@pytest.mark.parametrize(
    "measure, expected",
    [
        ("AP", (1 / 1 + 2 / 3) / 3),           # precision at the relevant ranks 1 and 3, R = 3
        ("AP@2", (1 / 1) / 3),                 # only rank 1 counts, still divided by R
        ("AP@3", (1 / 1 + 2 / 3) / 3),
        ("P@1", 1 / 1),
        ("P@5", 2 / 5),
        ("P@10", 2 / 10),                      # divides by k even when the list is shorter
        ("recall@1", 1 / 3),
        ("recall@3", 2 / 3),
        ("recall@100", 2 / 3),                 # z is never retrieved
        ("R-prec", 2 / 3),                     # 2 relevant in the top R = 3
        ("RR", 1.0),
        # bpref: a has no judged nonrelevant above -> 1; c has b above -> 1 - min(1, R)/min(R, N) = 1 - 1/2;
        # z (unretrieved) -> 0
        ("bpref", (1 + (1 - 1 / 2)) / 3),
        # nDCG: DCG = 1/log2(2) + 1/log2(4); ideal = three gains of 1 at ranks 1..3
        ("nDCG", (1 + 1 / 2) / (1 + 1 / math.log2(3) + 1 / 2)),
        ("nDCG@2", 1 / (1 + 1 / math.log2(3))),
        # infAP: rank 1 -> 1; rank 3 (c): 2 judged above, 1 relevant: (1 + 2 (1+e)/(2+2e)) / 3 = 2/3
        ("infAP", (1 + (1 + 2 * (1 + 1e-5) / (2 + 2e-5)) / 3) / 3),
        # RankEff: a -> 1 - 0/N; c -> 1 - 1/N (b above), N = 2; z unretrieved -> 0
        ("RankEff", (1 + (1 - 1 / 2)) / 3),
        ("judged@4", 3 / 4),                   # a, b, c judged; d not
        ("judged@10", 4 / 10),
        # condensed list a b c e (d removed): the same ranks for a and c here
        ("P@4(j)", 2 / 4),
        ("AP(j)", (1 / 1 + 2 / 3) / 3),
        ("RR(j)", 1.0),
    ],
)
def test_known_answers(measure, expected):
    assert _one(RANKING, JUDGED, measure) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "ranking, measure, expected",
    [
        # N R R, R = 2: AP = (1/2 + 2/3) / 2; RR = 1/2; R-prec = 1 relevant in the top 2 / 2
        (["n", "r1", "r2"], "AP", (1 / 2 + 2 / 3) / 2),
        (["n", "r1", "r2"], "RR", 1 / 2),
        (["n", "r1", "r2"], "R-prec", 1 / 2),
        # u (unjudged) N R: bpref skips u: r1 has one nonrelevant above: 1 - min(1, 2)/min(2, N=1) = 0
        (["u", "n", "r1"], "bpref", 0 / 2),
        # ... and R-prec with a list shorter than R: 0 relevant in the top 2, still / R
        (["u", "n"], "R-prec", 0.0),
        (["r2", "u", "n"], "nDCG@1", 1.0),
    ],
)
def test_more_known_answers(ranking, measure, expected):
    assert _one({"s": ranking}, {"n": 0, "r1": 1, "r2": 1}, measure) == pytest.approx(expected, abs=1e-12)


def test_bpref_with_fewer_nonrelevant_than_relevant():
    # R = 3, N = 1: each judged nonrelevant above costs min(n, R) / min(R, N) = 1/1, so ranking
    # r1 n r2 r3 gives (1 + 0 + 0) / 3, while n r1 r2 r3 gives 0.
    judged = {"n": 0, "r1": 1, "r2": 1, "r3": 1}
    assert _one({"s": ["r1", "n", "r2", "r3"]}, judged, "bpref") == pytest.approx(1 / 3)
    assert _one({"s": ["n", "r1", "r2", "r3"]}, judged, "bpref") == 0.0
    # no judged nonrelevant document at all: every retrieved relevant document scores 1
    assert _one({"s": ["r1", "x", "r2"]}, {"r1": 1, "r2": 1, "r3": 1}, "bpref") == pytest.approx(2 / 3)


def test_graded_ndcg_uses_the_grade_as_gain():
    # grades a=2, c=1 (b nonrelevant); ranking c b a. DCG = 1/log2(2) + 2/log2(4); ideal a c: 2/1 + 1/log2(3)
    data = _data({"s": ["c", "b", "a"]}, {"a": 2, "b": 0, "c": 1})
    ev = evaluate(data, ["nDCG", "nDCG@1", "nDCG@2", "AP"])
    assert ev.values[0, 0, 0] == pytest.approx((1 + 2 / 2) / (2 + 1 / math.log2(3)))
    assert ev.values[1, 0, 0] == pytest.approx(1 / 2)                       # c (1) where the ideal has a (2)
    assert ev.values[2, 0, 0] == pytest.approx(1 / (2 + 1 / math.log2(3)))  # nothing relevant at rank 2
    assert ev.values[3, 0, 0] == pytest.approx((1 + 2 / 3) / 2)             # AP is binary: grade 2 counts once


def test_relevance_level_changes_relevance_but_not_gains():
    # level 2: only a is relevant (R = 1); c (grade 1) is judged nonrelevant for AP and bpref, but its
    # grade still is its nDCG gain, as in trec_eval -l2.
    judged = {"a": 2, "b": 0, "c": 1}
    assert _one({"s": ["c", "b", "a"]}, judged, "AP", level=2) == pytest.approx(1 / 3)
    # bpref: N = 2 (b, c); a has 2 nonrelevant above: 1 - min(2, 1)/min(1, 2) = 0
    assert _one({"s": ["c", "b", "a"]}, judged, "bpref", level=2) == 0.0
    assert _one({"s": ["c", "b", "a"]}, judged, "nDCG", level=2) == pytest.approx(
        (1 + 2 / 2) / (2 + 1 / math.log2(3)))
    # only grade-1 documents at level 2: R = 0, so AP is 0, but nDCG still sees the gains
    assert _one({"s": ["c"]}, {"c": 1}, "AP", level=2) == 0.0
    assert _one({"s": ["c"]}, {"c": 1}, "nDCG", level=2) == 1.0


class TestNegativeGrades:
    """trec_eval reads a negative qrels grade as "in the pool, not judged" (form_res_rels.c)."""

    # ranking a b g c d e: a, c relevant (grade 1), z relevant (grade 2, not retrieved), e and n nonrelevant,
    # b = -1 and g = -2 pooled but unjudged, d not in the qrels. R = 3 (a, c, z); N = 2 (e, n).
    RUN = {"s": ["a", "b", "g", "c", "d", "e"]}
    QRELS = {"a": 1, "b": -1, "c": 1, "e": 0, "n": 0, "z": 2, "g": -2}

    def test_nonrelevant_for_ap_precision_and_rr(self):
        assert _one(self.RUN, self.QRELS, "AP") == pytest.approx((1 / 1 + 2 / 4) / 3)
        assert _one(self.RUN, self.QRELS, "P@5") == pytest.approx(2 / 5)
        assert _one(self.RUN, self.QRELS, "R-prec") == pytest.approx(1 / 3)

    def test_gain_zero_in_ndcg(self):
        # DCG = 1/log2(2) + 1/log2(5); ideal: z (2), a (1), c (1)
        ideal = 2 + 1 / math.log2(3) + 1 / 2
        assert _one(self.RUN, self.QRELS, "nDCG") == pytest.approx((1 + 1 / math.log2(5)) / ideal)

    def test_skipped_by_bpref(self):
        # a -> 1; b, g skipped; c has no judged nonrelevant above -> 1; N = 2 does not count b, g
        assert _one(self.RUN, self.QRELS, "bpref") == pytest.approx((1 + 1) / 3)
        # if b were nonrelevant (grade 0), c would score 1 - min(1, 3)/min(3, 3) = 2/3
        assert _one(self.RUN, {**self.QRELS, "b": 0}, "bpref") == pytest.approx((1 + 2 / 3) / 3)

    def test_pooled_in_infap(self):
        # c at rank 4: above it 1 relevant (a), 0 judged nonrelevant, 2 pooled unjudged (b, g):
        # (1/4)(1 + (1 + 0 + 2)(1 + e)/(1 + 0 + 2e))
        e = 1e-5
        expected = (1 + (1 + 3 * (1 + e) / (1 + 2 * e)) / 4) / 3
        assert _one(self.RUN, self.QRELS, "infAP") == pytest.approx(expected, abs=1e-12)

    def test_removed_from_condensed_lists(self):
        # condensed: a c e (b, g, d dropped): AP(j) = (1 + 2/2) / 3, P@2(j) = 1
        assert _one(self.RUN, self.QRELS, "AP(j)") == pytest.approx((1 + 2 / 2) / 3)
        assert _one(self.RUN, self.QRELS, "P@2(j)") == 1.0
        assert _one(self.RUN, self.QRELS, "judged@3") == pytest.approx(1 / 3)  # only a is judged >= 0

    def test_a_topic_with_only_negative_grades_scores_zero(self):
        # trec_eval hangs or crashes on such a topic; here R = N = 0 and no gain: every measure is 0
        ev = evaluate(_data({"s": ["b", "g"]}, {"b": -1, "g": -2}), ["AP", "bpref", "infAP", "nDCG", "P@1(j)"])
        assert (ev.values == 0).all()


# --------------------------------------------------------------------------------------- edge cases
def test_no_relevant_documents_give_zero():
    ev = evaluate(_data({"s": ["a", "b"]}, {"a": 0, "b": 0}),
                  ["AP", "AP@1", "P@1", "R-prec", "RR", "bpref", "nDCG", "nDCG@5", "recall@5", "infAP", "RankEff"])
    assert (ev.values == 0).all()


def test_ties_are_broken_by_docno_descending():
    run = Run.from_arrays("s", np.array(["1"] * 3, dtype=object), np.array(["a", "c", "b"], dtype=object),
                          np.array([1.0, 1.0, 2.0]))
    q = _qrels({"a": 1})
    # b (score 2) first, then the tie c, a in descending docno order: the relevant a sits at rank 3
    assert float(evaluate(RankData.build(RunSet((run,)), q), ["RR"]).values[0, 0, 0]) == pytest.approx(1 / 3)


def test_a_run_without_results_for_a_topic():
    a = Run.from_arrays("A", np.array(["1", "2"], dtype=object), np.array(["x", "y"], dtype=object), np.ones(2))
    b = Run.from_arrays("B", np.array(["1"], dtype=object), np.array(["x"], dtype=object), np.ones(1))
    q = Qrels.from_frame(pd.DataFrame({"topic": ["1", "2"], "docno": ["x", "y"], "grade": [1, 1]}))
    ev = evaluate(RankData.build(RunSet((a, b)), q), ["AP", "P@1"])
    assert ev.has_results.tolist() == [[True, True], [True, False]]
    assert ev.values[:, 1, 1].tolist() == [0.0, 0.0]   # stored as 0 ...
    assert ev.value("AP", "B") == 1.0                  # ... but trec_eval -c off averages B over topic 1 only
    assert ev.value("AP", "B", "2") == 0.0
    frame = ev.to_frame()
    assert frame[(frame.run == "B") & (frame.topic != "all")].topic.unique().tolist() == ["1"]


def test_depth_truncation_is_seen_by_the_measures():
    data = RankData.build(_runs({"s": ["n", "r"]}), _qrels({"r": 1, "n": 0}), depth=1)
    ev = evaluate(data, ["AP", "P@2", "RR"])
    assert ev.values[:, 0, 0].tolist() == [0.0, 0.0, 0.0]


def test_condensed_list_removes_unjudged_documents():
    # u1 u2 unjudged ahead of the relevant r: P@1 = 0 on the full list, 1 on the condensed one
    data = _data({"s": ["u1", "u2", "r", "n"]}, {"r": 1, "n": 0})
    ev = evaluate(data, ["P@1", "P@1(j)", "RR", "RR(j)", "nDCG@1(j)"])
    assert ev.values[:, 0, 0].tolist() == [0.0, 1.0, 1 / 3, 1.0, 1.0]


def test_every_measure_family_evaluates():
    families = {"AP": None, "P": 3, "nDCG": None, "recall": 3, "R-prec": None, "RR": None, "bpref": None,
                "infAP": None, "RankEff": None, "judged": 3}
    ev = evaluate(_data(RANKING, JUDGED), [Measure(name, k) for name, k in families.items()])
    assert ev.values.shape == (len(families), 1, 1) and (ev.values > 0).all()


def test_topic_measure_matches_evaluate():
    data = _data({"s": RANKING["s"], "t": ["e", "c", "a"]}, JUDGED)
    for m in ["AP", "bpref", "nDCG@3", "P@2(j)"]:
        np.testing.assert_array_equal(topic_measure(data[0], m), evaluate(data, [m]).values[0, :, 0])
    with pytest.raises(BayevalInputError, match="^tr: "):
        topic_measure(data, "AP")


# --------------------------------------------------------------------------------------- kernels
def test_kernels_accept_one_ranking_and_validate_arguments():
    rel = [True, False, True]
    assert average_precision(rel, 2).tolist() == [pytest.approx((1 + 2 / 3) / 2)]
    assert precision_at(rel, 2).tolist() == [0.5]
    assert reciprocal_rank(np.zeros((2, 0), bool)).tolist() == [0.0, 0.0]   # empty lists
    assert average_precision(np.zeros((2, 0), bool), 3).tolist() == [0.0, 0.0]
    assert ndcg(np.zeros((1, 0)), [1, 2]).tolist() == [0.0]
    for call, argument in [
        (lambda: precision_at(rel, 0), "k"),
        (lambda: recall_at(rel, 2, 1.5), "k"),
        (lambda: average_precision(rel, -1), "num_rel"),
        (lambda: average_precision(rel, 2, cutoff=0), "cutoff"),
        (lambda: r_precision(np.zeros((1, 2, 3), bool), 1), "rel"),
        (lambda: bpref(rel, [False, True], 2, 1), "judged_nonrel"),
        (lambda: inferred_ap(rel, [False] * 3, 2, pool_unjudged=[True]), "pool_unjudged"),
        (lambda: ndcg([[1.0]], [1.0], cutoff=True), "cutoff"),
    ]:
        with pytest.raises(BayevalInputError, match=f"^{argument}: "):
            call()


# ---------------------------------------------------------------------------------------- Measure
@pytest.mark.parametrize(
    "text, canonical, trec_eval",
    [("map", "AP", "map"), ("ap@100", "AP@100", "map_cut_100"), ("P@10", "P@10", "P_10"),
     ("prec@5", "P@5", "P_5"), ("NDCG@10", "nDCG@10", "ndcg_cut_10"), ("ndcg", "nDCG", "ndcg"),
     ("rprec", "R-prec", "Rprec"), ("R-Precision", "R-prec", "Rprec"), ("mrr", "RR", "recip_rank"),
     ("recip_rank", "RR", "recip_rank"), ("BPREF", "bpref", "bpref"), ("recall@10", "recall@10", "recall_10"),
     ("infap", "infAP", "infAP"), ("rankeff", "RankEff", None), ("judged@10", "judged@10", None),
     (" p @ 20 (J)", "P@20(j)", "P_20")],
)
def test_measure_parsing(text, canonical, trec_eval):
    m = Measure.parse(text)
    assert str(m) == canonical and m.trec_eval_name == trec_eval
    assert Measure.parse(str(m)) == m
    if trec_eval is not None and not m.condensed:
        assert Measure.from_trec_eval(trec_eval) == m


@given(st.sampled_from(["AP", "P", "nDCG", "recall", "R-prec", "RR", "bpref", "infAP", "RankEff", "judged"]),
       st.integers(1, 10_000), st.booleans(), st.booleans())
def test_measure_round_trips(name, k, use_cutoff, condensed):
    needs = name in ("P", "recall", "judged")
    takes = needs or name in ("AP", "nDCG", "RR")
    cutoff = k if needs or (takes and use_cutoff) else None
    if name == "judged":
        condensed = False
    m = Measure(name, cutoff, condensed)
    assert Measure.parse(str(m)) == m
    assert Measure.parse(str(m).lower()) == m
    assert Measure.parse(str(m).upper()) == m
    assert m.cutoff == cutoff and hash(Measure.parse(str(m))) == hash(m)
    if m.trec_eval_name is not None and not condensed:
        assert Measure.from_trec_eval(m.trec_eval_name) == m


@pytest.mark.parametrize(
    "text, fragment",
    [("P", "needs a cutoff"), ("recall", "needs a cutoff"), ("R-prec@5", "takes no cutoff"), ("bpref@10", "no cutoff"),
     ("AP@0", "positive integer"), ("AP@x", "positive integer"), ("AP@", "positive integer"),
     ("AP@-3", "positive integer"), ("AP@+3", "positive integer"), ("AP@1.5", "positive integer"),
     ("P@²", "positive integer"), ("P@١٠", "positive integer"), ("AP@10@5", "expected NAME(rel=L)@K"),
     ("foo@3", "unknown measure 'foo@3'"), ("hits@10", "unknown measure"), ("AP(j)@10", "goes last"),
     ("judged@5(j)", "always 1"), ("", "unknown measure"), ("nDCG(rel=2)@10", "takes no rel"),
     ("P(gains=2)@10", "unknown parameter"), ("P(rel=0)@10", "positive integer grade"), ("P(rel=2@10", "without ')'"),
     ("map_cut_x", "unknown measure"), ("P(rel=1,rel=2)@5", "rel given twice")],
)
def test_measure_parse_errors_name_the_text(text, fragment):
    with pytest.raises(BayevalInputError, match=r"^measure: ") as err:
        Measure.parse(text)
    assert fragment in str(err.value)


def test_measure_construction_and_other_errors():
    assert Measure("AP", np.int64(5)).cutoff == 5 and type(Measure("AP", np.int64(5)).cutoff) is int
    for args in [("ap",), ("AP", 0), ("AP", True), ("AP", 2.0), ("P",), ("R-prec", 3), ("AP", None, "yes"),
                 ("nDCG", 10, False, 2), ("P", 5, False, 0), ("P", 5, False, True)]:
        with pytest.raises(BayevalInputError, match="^measure: "):
            Measure(*args)
    with pytest.raises(BayevalInputError, match="expected a string"):
        Measure.parse(10)
    for name in ["gm_map", "P_0", "P_²", "map_cut_x", "ndcg_cut_", "iprec_at_recall_0.10", "P"]:
        with pytest.raises(BayevalInputError, match="no bayeval measure"):
            Measure.from_trec_eval(name)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Measure.parse("AP").cutoff = 3  # type: ignore[misc]
    assert sorted(parse_measures("P@10,AP@5,nDCG,AP,P@5")) == list(parse_measures("AP,AP@5,P@5,P@10,nDCG"))


def test_parse_measures():
    assert [str(m) for m in parse_measures("map,AP@100,p@10,NDCG@10,rprec,mrr,BPREF,recall@5,ndcg,AP")] == [
        "AP", "AP@100", "P@10", "nDCG@10", "R-prec", "RR", "bpref", "recall@5", "nDCG"]
    assert parse_measures(Measure("RR")) == (Measure("RR"),)
    assert parse_measures(["AP", Measure("AP"), "P@5"]) == (Measure("AP"), Measure("P", 5))
    with pytest.raises(BayevalInputError, match="^measures: no measure"):
        parse_measures(" , ")
    with pytest.raises(BayevalInputError, match="^measures: "):
        parse_measures(5)
    with pytest.raises(BayevalInputError, match="'P@0'"):
        parse_measures("AP,P@0")


def test_each_backend_refuses_what_it_does_not_compute():
    """One vocabulary: every backend parses with Measure and refuses the rest naming itself and what it gives."""
    from bayeval.bias.expected import SCORES
    from bayeval.expected._measure_spec import EXPECTED
    from bayeval.measures.evaluation import TREC_EVAL
    from bayeval.selection.measure import SELECTION, SelectionMeasure
    from bayeval.synthetic import make_collection

    assert Measure.parse("dcg@5") == Measure("DCG", 5)
    assert SelectionMeasure.parse("DCG@5") == SelectionMeasure("DCG", 5)
    cases = [(TREC_EVAL, "DCG@5", "trec_eval-exact value"), (EXPECTED, "RR", "expected value"),
             (EXPECTED, "AP(j)", "expected value"), (SCORES, "bpref", "expected score"),
             (SELECTION, "nDCG@10", "selection weights"), (EXPECTED, "P(rel=2)@10", "expected value"),
             (SCORES, "AP(rel=2)", "expected score")]
    for backend, text, what in cases:
        assert not backend.supports(Measure.parse(text))
        with pytest.raises(BayevalInputError, match=rf"^arg: no {what} for '{re.escape(text)}' \(available: "
                                                    rf"{re.escape(', '.join(backend.families))}"):
            backend.require(text, "arg")
    assert TREC_EVAL.supports(Measure.parse("AP(j)")) and EXPECTED.supports(Measure.parse("R-prec"))
    assert TREC_EVAL.supports(Measure.parse("P(rel=2)@10(j)")) and SCORES.supports(Measure.parse("RR@10"))
    with pytest.raises(BayevalInputError, match="^measures: no trec_eval-exact value for 'DCG@10'"):
        col = make_collection(n_topics=1, n_systems=2, n_docs=20, depth=5, seed=1)
        evaluate(RankData.build(col.runs, col.qrels), "AP,DCG@10")


# ------------------------------------------------------------------------------------- Evaluation
@pytest.fixture
def two_topic_eval() -> Evaluation:
    runs = RunSet((
        Run.from_arrays("A", np.array(["1", "1", "2"], dtype=object), np.array(["x", "n", "y"], dtype=object),
                        np.array([2.0, 1.0, 1.0])),
        Run.from_arrays("B", np.array(["1", "1"], dtype=object), np.array(["n", "x"], dtype=object),
                        np.array([2.0, 1.0])),
    ))
    q = Qrels.from_frame(pd.DataFrame({"topic": ["1", "1", "2"], "docno": ["x", "n", "y"], "grade": [1, 0, 1]}))
    return evaluate(RankData.build(runs, q), "P@1,AP")


def test_evaluation_frame_summary_and_lookup(two_topic_eval):
    ev = two_topic_eval
    # A: topic 1 x n -> P@1 = 1, AP = 1; topic 2 y -> 1, 1.  B: topic 1 n x -> P@1 = 0, AP = 1/2; no topic 2.
    np.testing.assert_allclose(ev.mean(), [[1.0, 0.0], [1.0, 0.5]])
    frame = ev.to_frame()
    assert frame.to_dict("list") == {
        "run": ["A"] * 6 + ["B"] * 4,
        "topic": ["1", "2", "all", "1", "2", "all", "1", "all", "1", "all"],
        "measure": ["P@1"] * 3 + ["AP"] * 3 + ["P@1"] * 2 + ["AP"] * 2,
        "value": [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.5, 0.5]}
    means = ev.to_frame(per_topic=False)
    assert (means.topic == "all").all() and len(means) == 4
    text = ev.summary()
    assert "2 topics" in text and text.splitlines()[1].split() == ["run", "P@1", "AP"]
    assert text.splitlines()[3].split() == ["B", "0.0000", "0.5000"]
    assert ev.value("map", "B") == 0.5 and ev.value(Measure("P", 1), "A", topic="2") == 1.0
    for call, argument in [(lambda: ev.value("nDCG", "A"), "measure"), (lambda: ev.value("AP", "C"), "run"),
                           (lambda: ev.value("AP", "A", "3"), "topic")]:
        with pytest.raises(BayevalInputError, match=f"^{argument}: "):
            call()


def test_evaluation_is_frozen_and_validated(two_topic_eval):
    ev = two_topic_eval
    with pytest.raises(dataclasses.FrozenInstanceError):
        ev.values = ev.values * 2  # type: ignore[misc]
    with pytest.raises(ValueError, match="read-only"):
        ev.values[0, 0, 0] = 3.0
    with pytest.raises(BayevalInputError, match="^values: "):
        Evaluation(ev.measures, ev.systems, ev.topics, ev.values[:, :1], ev.has_results)
    with pytest.raises(BayevalInputError, match="^has_results: "):
        Evaluation(ev.measures, ev.systems, ev.topics, ev.values, ev.has_results[:, :1])
    with pytest.raises(BayevalInputError, match="^data: "):
        evaluate(ev, "AP")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ slow reference
NONPOOL, UNJUDGED = -1, -2
REFERENCE_CUTOFFS = (1, 3, 5, 10)


def reference_measures(ranking: list[str], qrels: dict[str, int], level: int = 1,
                       condensed: bool = False) -> dict[str, float]:
    """trec_eval's measures for one ranked list, one document at a time (slow, independent).

    ``ranking`` is already in trec_eval order; ``qrels`` maps docno to grade. Keys are trec_eval names.
    """
    codes = [NONPOOL if d not in qrels else (UNJUDGED if qrels[d] < 0 else qrels[d]) for d in ranking]
    if condensed:
        codes = [c for c in codes if c >= 0]
    R = sum(1 for g in qrels.values() if g >= level)
    N = sum(1 for g in qrels.values() if 0 <= g < level)
    out: dict[str, float] = {}
    rel_so_far = nonrel_so_far = unj_so_far = 0
    ap = bp = inf = 0.0
    ap_cut = dict.fromkeys(REFERENCE_CUTOFFS, 0.0)
    rel_at: dict[int, int] = {}
    rr = 0.0
    for i, c in enumerate(codes):
        rank = i + 1
        if c >= level:
            rel_so_far += 1
            ap += rel_so_far / rank
            for k in REFERENCE_CUTOFFS:
                if rank <= k:
                    ap_cut[k] += rel_so_far / rank
            rr = rr or 1 / rank
            bp += 1.0 if nonrel_so_far == 0 else 1 - min(nonrel_so_far, R) / min(N, R)
            r_above = rel_so_far - 1
            inf += 1.0 if i == 0 else (1 / rank) * (
                1 + (r_above + nonrel_so_far + unj_so_far) * (r_above + 1e-5) / (r_above + nonrel_so_far + 2e-5))
        elif c >= 0:
            nonrel_so_far += 1
        elif c == UNJUDGED:
            unj_so_far += 1
        rel_at[rank] = rel_so_far
    last = rel_so_far

    def rel_in_top(k: int) -> int:
        return rel_at.get(k, last) if k <= len(codes) else last

    out["map"] = ap / R if R else 0.0
    out["bpref"] = bp / R if R else 0.0
    out["infAP"] = inf / R if R else 0.0
    out["recip_rank"] = rr
    out["Rprec"] = rel_in_top(R) / R if R else 0.0
    ideal = sorted((g for g in qrels.values() if g > 0), reverse=True)

    def dcg(gains: list[float]) -> float:
        total = 0.0
        for i, g in enumerate(gains):
            if g > 0:
                total += g / math.log2(i + 2)
        return total

    gains = [max(c, 0) for c in codes]
    out["ndcg"] = dcg(gains) / dcg(ideal) if ideal else 0.0
    for k in REFERENCE_CUTOFFS:
        out[f"map_cut_{k}"] = ap_cut[k] / R if R else 0.0
        out[f"P_{k}"] = rel_in_top(k) / k
        out[f"recall_{k}"] = rel_in_top(k) / R if R else 0.0
        out[f"ndcg_cut_{k}"] = dcg(gains[:k]) / dcg(ideal[:k]) if ideal else 0.0
    return out


REFERENCE_NAMES = ["map", "bpref", "infAP", "recip_rank", "Rprec", "ndcg"] + [
    f"{m}_{k}" for k in REFERENCE_CUTOFFS for m in ("map_cut", "P", "recall", "ndcg_cut")]


@st.composite
def _collection(draw):
    """Up to 4 systems over <= 14 documents with tied scores, graded and negative judgments."""
    n_docs = draw(st.integers(1, 14))
    docs = [f"d{i:02d}" for i in range(n_docs)]
    grades = st.one_of(st.none(), st.integers(-2, 3))
    qrels = {d: g for d in docs if (g := draw(grades)) is not None}
    qrels.update({f"x{i}": draw(st.integers(-1, 3)) for i in range(draw(st.integers(0, 3)))})  # unretrievable
    if not qrels:
        qrels["x"] = 1
    systems = {}
    for s in range(draw(st.integers(1, 4))):
        chosen = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=n_docs, unique=True))
        systems[f"S{s}"] = {d: float(draw(st.integers(0, 3))) for d in chosen}  # few distinct scores: ties
    return systems, qrels


def _evaluate_collection(systems, qrels, level, condensed):
    runs = RunSet(tuple(Run.from_arrays(name, np.array(["7"] * len(sc), dtype=object),
                                        np.array(list(sc), dtype=object), np.array(list(sc.values())))
                        for name, sc in systems.items()))
    data = RankData.build(runs, _qrels(qrels, topic="7", level=level))
    measures = [Measure.from_trec_eval(n) for n in REFERENCE_NAMES]
    if condensed:
        measures = [dataclasses.replace(m, condensed=True) for m in measures]
    return evaluate(data, measures)


@settings(max_examples=150, deadline=None)
@given(_collection(), st.sampled_from([1, 2]), st.booleans())
def test_kernels_agree_with_the_slow_reference(collection, level, condensed):
    systems, qrels = collection
    ev = _evaluate_collection(systems, qrels, level, condensed)
    for s, (name, scores) in enumerate(systems.items()):
        ranking = sorted(scores, key=lambda d: (scores[d], d), reverse=True)  # score desc, docno desc
        ref = reference_measures(ranking, qrels, level, condensed)
        for i, key in enumerate(REFERENCE_NAMES):
            assert ev.values[i, s, 0] == pytest.approx(ref[key], abs=1e-12), (name, key)


@settings(max_examples=150, deadline=None)
@given(_collection(), st.sampled_from([1, 2]), st.booleans())
def test_kernels_agree_with_pytrec_eval(collection, level, condensed):
    """Differential check against trec_eval's own C code (pytrec_eval), when it is installed."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    systems, qrels = collection
    # trec_eval itself loops forever or crashes on a topic whose every grade is negative
    # (form_res_rels.c sizes rel_levels by the largest grade); bayeval scores such a topic 0.
    assume(any(g >= 0 for g in qrels.values()))
    ev = _evaluate_collection(systems, qrels, level, condensed)
    cut = ",".join(map(str, REFERENCE_CUTOFFS))
    evaluator = pytrec_eval.RelevanceEvaluator(
        {"7": qrels}, {"map", "bpref", "infAP", "recip_rank", "Rprec", "ndcg", f"map_cut.{cut}", f"P.{cut}",
                       f"recall.{cut}", f"ndcg_cut.{cut}"}, relevance_level=level, judged_docs_only_flag=condensed)
    for s, (name, scores) in enumerate(systems.items()):
        official = evaluator.evaluate({"7": scores})["7"]
        for i, key in enumerate(REFERENCE_NAMES):
            assert ev.values[i, s, 0] == pytest.approx(official[key], abs=1e-12), (name, key)


# ------------------------------------------------------------------------------------ properties
@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=-2, max_value=3), min_size=1, max_size=20), st.integers(0, 5),
       st.integers(1, 25))
def test_properties(grades, extra_rel, k):
    """Bounds and monotonicity facts that hold for every ranking."""
    docs = [f"d{i:02d}" for i in range(len(grades))]
    judged = dict(zip(docs, grades, strict=True))
    judged.update({f"u{i}": 1 for i in range(extra_rel)})  # relevant, never retrieved
    R = sum(g >= 1 for g in judged.values())
    D = len(docs)
    names = ["AP", f"AP@{k}", f"AP@{k + 1}", f"P@{k}", f"P@{k + 1}", "R-prec", "RR", "bpref", "nDCG", f"nDCG@{k}",
             f"recall@{k}", f"recall@{k + 1}", f"recall@{D}", "P@1", "infAP"]
    ev = evaluate(_data({"s": docs}, judged), names)  # duplicates (e.g. P@1 when k = 1) are evaluated once
    v = dict(zip([str(m) for m in ev.measures], ev.values[:, 0, 0], strict=True))
    assert all(-1e-12 <= x <= 1 + 1e-12 for x in v.values())
    hits_k = sum(g >= 1 for g in grades[:k])
    assert v[f"P@{k}"] * k == pytest.approx(hits_k)                          # P@k counts the top k / k
    assert v[f"P@{k}"] * k <= v[f"P@{k + 1}"] * (k + 1) + 1e-12             # relevant in the top k grows with k
    assert v[f"P@{k}"] * k <= R + 1e-12
    assert v[f"recall@{k}"] <= v[f"recall@{k + 1}"] + 1e-12
    assert v[f"AP@{k}"] <= v[f"AP@{k + 1}"] + 1e-12 and v[f"AP@{k}"] <= v["AP"] + 1e-12
    assert v["AP"] <= v[f"recall@{D}"] + 1e-12                                # each precision term is <= 1
    assert (v["RR"] == 1.0) == (v["P@1"] == 1.0)
    assert v["RR"] >= v["P@1"]
    if R:
        assert v[f"recall@{k}"] * R == pytest.approx(hits_k)
        assert v["R-prec"] * R == pytest.approx(sum(g >= 1 for g in grades[:R]))
    # the ideal ordering of the retrieved documents (grades descending) never lowers nDCG
    ideal_docs = sorted(docs, key=lambda d: judged[d], reverse=True)
    ideal = evaluate(_data({"s": ideal_docs}, judged), ["nDCG", f"nDCG@{k}", "AP"]).values[:, 0, 0]
    assert ideal[0] >= v["nDCG"] - 1e-12 and ideal[1] >= v[f"nDCG@{k}"] - 1e-12 and ideal[2] >= v["AP"] - 1e-12
    if extra_rel == 0 and all(g >= 0 for g in grades) and any(g > 0 for g in grades):
        assert ideal[0] == pytest.approx(1.0)                                   # every judged doc retrieved
