"""One measure vocabulary: the field's names (ir_measures', ranx's, trec_eval's) in every command and the API,
checked against ir_measures' own parser and values (docs/measures.md)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_cli

from bayeval.data import RankData
from bayeval.io import iter_runs, qrels_to_frame, read_qrels, runs_to_frame, write_qrels, write_run
from bayeval.measures import Measure, evaluate, parse_measures
from bayeval.measures.cube import evaluate_runs
from bayeval.synthetic import make_collection

#: the names of the issue and of ir_measures' documentation, each family with a cutoff, a level and neither
FIELD = ("RR@10", "R@30", "nDCG@10", "P(rel=2)@10", "AP@20", "Judged@10", "AP", "RR", "Rprec", "Bpref", "P@5",
         "nDCG", "AP(rel=2)", "RR(rel=2)@10", "R(rel=2)@10", "infAP", "Bpref(rel=2)")
#: ir_measures' family names in bayeval's
IR_MEASURES_FAMILY = {"RR": "RR", "R": "recall", "nDCG": "nDCG", "P": "P", "AP": "AP", "Judged": "judged",
                      "Rprec": "R-prec", "Bpref": "bpref", "infAP": "infAP"}


@pytest.fixture(scope="module")
def graded():
    return make_collection(n_topics=8, n_systems=3, n_docs=80, depth=40, judged_depth=10, graded=True, seed=5)


def test_names_parse_as_ir_measures_parses_them():
    ir_measures = pytest.importorskip("ir_measures")
    for name in FIELD:
        theirs = ir_measures.parse_measure(name)
        ours = Measure.parse(name)
        params = dict(theirs.params)
        assert (ours.name, ours.cutoff, ours.rel) == (IR_MEASURES_FAMILY[theirs.NAME], params.get("cutoff"),
                                                      params.get("rel")), name
        assert Measure.parse(str(ours)) == ours  # the canonical spelling reads back


def test_values_equal_ir_measures_per_topic(graded):
    """Every name of the field, per topic, on graded judgments: bayeval's value is ir_measures' (its providers:
    trec_eval's C code through pytrec_eval, and its own for RR@k and Judged@k)."""
    ir_measures = pytest.importorskip("ir_measures")
    data = RankData.build(graded.runs, graded.judgments)
    ev = evaluate(data, FIELD)
    q = qrels_to_frame(graded.judgments)
    r = runs_to_frame(graded.runs)
    qrels = [ir_measures.Qrel(t, d, int(g)) for t, d, g in zip(q.topic, q.docno, q.grade, strict=True)]
    wanted = [ir_measures.parse_measure(n) for n in FIELD]
    compared = 0
    for s, run in enumerate(graded.runs):
        rows = r[r.run == run.name]
        scored = [ir_measures.ScoredDoc(t, d, float(x)) for t, d, x in zip(rows.topic, rows.docno, rows.score,
                                                                          strict=True)]
        for m in ir_measures.iter_calc(wanted, qrels, scored):
            i, t = wanted.index(m.measure), ev.topics.index(m.query_id)
            assert ev.values[i, s, t] == pytest.approx(m.value, abs=1e-12), (run.name, FIELD[i], m.query_id)
            compared += 1
    assert compared == len(FIELD) * len(graded.runs) * len(ev.topics)


def test_trec_eval_and_ranx_spellings_are_the_same_measures():
    pairs = {"map": "AP", "map_cut_100": "AP@100", "P_10": "P@10", "P.10": "P@10", "ndcg_cut_10": "nDCG@10",
             "recall_1000": "recall@1000", "recip_rank": "RR", "Rprec": "R-prec", "bpref": "bpref", "infAP": "infAP",
             "mrr@10": "RR@10", "map@100": "AP@100", "precision@10": "P@10", "r-precision": "R-prec",
             "ndcg@10": "nDCG@10", "recall@1000": "recall@1000", "MRR@10": "RR@10", "Judged@10": "judged@10"}
    for spelling, canonical in pairs.items():
        assert str(Measure.parse(spelling)) == canonical, spelling
    assert parse_measures("RR@10,mrr@10,recip_rank") == (Measure("RR", 10), Measure("RR"))


def test_measures_command_takes_the_field_names(graded, tmp_path):
    """``bayeval measures -m RR@10,R@1000,...`` (the issue's example), the same numbers as the API; an unknown
    name is one line naming it, exit 2."""
    paths = []
    for run in graded.runs:
        write_run(run, tmp_path / f"{run.name}.run")
        paths.append(tmp_path / f"{run.name}.run")
    write_qrels(graded.judgments, tmp_path / "qrels.txt")
    names = "RR@10,R@1000,nDCG@10,P(rel=2)@10,AP@100,Judged@10,map_cut_100"
    rc, out, err = run_cli("measures", tmp_path / "qrels.txt", *paths, "-m", names, "--format", "csv")
    assert rc == 0, err
    header = out.splitlines()[0]
    assert header == "run,topic,measure,value"
    ev = evaluate_runs(iter_runs(paths), read_qrels(tmp_path / "qrels.txt"), names)
    assert [str(m) for m in ev.measures] == ["RR@10", "recall@1000", "nDCG@10", "P(rel=2)@10", "AP@100", "judged@10"]
    lines = [line.split(",") for line in out.splitlines()[1:]]
    got = {(run, m): float(v) for run, topic, m, v in lines if topic == "all"}
    for s, run in enumerate(ev.systems):
        for i, m in enumerate(ev.measures):
            assert got[(run, str(m))] == pytest.approx(ev.mean()[i, s], abs=1e-6)
    rc, out, err = run_cli("measures", tmp_path / "qrels.txt", *paths, "-m", "AP,hits@10")
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and "unknown measure 'hits@10'" in err


def test_other_commands_take_the_names_and_refuse_what_they_lack(graded, tmp_path):
    paths = []
    for run in graded.runs:
        write_run(run, tmp_path / f"{run.name}.run")
        paths.append(tmp_path / f"{run.name}.run")
    write_qrels(graded.judgments, tmp_path / "qrels.txt")
    rc, out, err = run_cli("evaluate", tmp_path / "qrels.txt", *paths, "--default-p", "0.1", "--measures",
                           "R@30,ndcg_cut_10", "--format", "csv")
    assert rc == 0, err
    assert out.splitlines()[0].startswith("run,topic,measure,expected,variance")
    assert {line.split(",")[2] for line in out.splitlines()[1:]} == {"recall@30", "nDCG@10"}
    rc, out, err = run_cli("evaluate", tmp_path / "qrels.txt", *paths, "--default-p", "0.1", "--measures",
                           "P(rel=2)@10")
    assert rc == 2 and "no expected value for 'P(rel=2)@10'" in err and len(err.strip().splitlines()) == 1


def test_rr_at_k_of_the_bias_scores_is_the_expected_rr_of_the_top_k(graded):
    """The biased-pool scores take RR@k: with p in {0, 1} its expectation is trec_eval's RR@k."""
    from bayeval.bias.expected import expected_scores

    data = RankData.build(graded.runs, graded.judgments)
    p = [tr.relevant.astype(float) for tr in data]
    e = expected_scores(data, p, "RR@3,RR")
    ref = evaluate(data, "RR@3,RR").values
    np.testing.assert_allclose(e, ref, atol=1e-12)
    assert not np.allclose(e[0], e[1])  # the cutoff matters on this collection
