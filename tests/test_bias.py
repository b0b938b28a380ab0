"""Biased-pool studies (bayeval.bias): statistics, reductions, completion, classifiers, studies, CLI."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from bayeval.bias import (
    BiasStudy,
    CandidatePrediction,
    ModelPredictor,
    RunGroups,
    TextClassifierPredictor,
    automatic_only_qrels,
    complete_qrels,
    contributions_from_runs,
    expected_count_labels,
    expected_reciprocal_rank,
    expected_scores,
    kld_scores,
    leave_group_out_qrels,
    leave_one_group_out,
    manual_only,
    pooled_runs,
    rank_among,
    ranks,
    read_contributions,
    read_run_groups,
    threshold_at_count,
    unjudged_candidates,
)
from bayeval.cli.main import main
from bayeval.data import Qrels, RankData, Run, RunSet
from bayeval.errors import BayevalInputError, FileFormatError
from bayeval.io.texts import read_texts
from bayeval.measures import evaluate
from bayeval.synthetic import make_collection


def _runs(spec: dict[str, dict[str, list[str]]]) -> RunSet:
    rows = [(name, t, d, float(len(docs) - i)) for name, topics in spec.items() for t, docs in topics.items()
            for i, d in enumerate(docs)]
    f = pd.DataFrame(rows, columns=["run", "topic", "docno", "score"])
    return RunSet(tuple(Run.from_frame(g, n) for n, g in f.groupby("run", sort=False)))


def _qrels(spec: dict[str, dict[str, int]]) -> Qrels:
    return Qrels.from_frame(pd.DataFrame([(t, d, g) for t, m in spec.items() for d, g in m.items()],
                                         columns=["topic", "docno", "grade"]))


# A hand-checked collection (one topic, pool depth 2):
#   run A (group GA, automatic): c b a      run B (group GB, manual): d a e
#   pool = top 2 of each: c, b (A) and d, a (B); judged c=0, b=1, d=0, a=1; every doc contributed by one group.
HAND_RUNS = {"A": {"1": ["c", "b", "a"]}, "B": {"1": ["d", "a", "e"]}}
HAND_QRELS = {"1": {"c": 0, "b": 1, "d": 0, "a": 1}}
HAND_GROUPS = RunGroups({"A": "GA", "B": "GB"}, {"A": "automatic", "B": "manual"})


def _hand():
    runs, qrels = _runs(HAND_RUNS), _qrels(HAND_QRELS)
    contrib = contributions_from_runs(RankData.build(runs, qrels), HAND_GROUPS, 2)
    return runs, qrels, contrib


# ------------------------------------------------------------------------------------------ statistics

def test_ranks_rank_among():
    assert ranks(np.array([0.1, 0.3, 0.3])).tolist() == [3, 1, 1]
    # each new score against the *other* runs' reference scores: run 0 (0.1) is below 0.4 and 0.2 -> 3;
    # run 1 (0.4) below run 0's 0.5 -> 2; run 2 (0.2) below 0.5 and 0.4 -> 3
    assert rank_among(np.array([0.1, 0.4, 0.2]), np.array([0.5, 0.4, 0.2])).tolist() == [3, 2, 3]


# ------------------------------------------------------------------------------------------ pool files

def test_read_run_groups_and_errors(tmp_path):
    f = tmp_path / "runs.tsv"
    f.write_text("run\tgroup\ttype\tjudging_priority\nA\tGA\tautomatic\t1\nB\tGB\tManual\t2\n")
    g = read_run_groups(f)
    assert g.group == {"A": "GA", "B": "GB"} and g.manual == ("B",)
    f.write_text("run\tgroup\ttype\nA\tGA\tinteractive\n")
    with pytest.raises(FileFormatError, match=r"runs.tsv:2: type 'interactive'"):
        read_run_groups(f)
    f.write_text("run\tteam\nA\tGA\n")
    with pytest.raises(FileFormatError, match=r"runs.tsv:1: header lacks"):
        read_run_groups(f)
    with pytest.raises(BayevalInputError, match="no group for run"):
        g.check_runs(["A", "Z"])


def test_read_contributions_and_errors(tmp_path):
    f = tmp_path / "ann.txt"
    f.write_text("401 0 d1 1 2 GA GB\n401 0 d2 0 1 GA\n")
    c = read_contributions(f)
    assert c.contributors("401", "d1") == {"GA", "GB"} and c.unique_to("401", "GA") == ("d2",)
    assert c.unique_counts() == {"GA": 1}
    f.write_text("401 0 d1 1 2 GA\n")
    with pytest.raises(FileFormatError, match=r"ann.txt:1: says 2 group\(s\) but lists 1"):
        read_contributions(f)


def test_pooled_runs_and_contributions_from_runs():
    runs, qrels, contrib = _hand()
    data = RankData.build(runs, qrels)
    assert pooled_runs(data, 2) == ("A", "B")
    assert pooled_runs(data, 3) == ("A",)  # A's third document (a) is judged, B's (e) is not
    assert contrib.by_topic["1"] == {"c": {"GA"}, "b": {"GA"}, "d": {"GB"}, "a": {"GB"}}


def test_reduced_qrels_leave_group_out_and_automatic_only():
    runs, qrels, contrib = _hand()
    assert sorted(leave_group_out_qrels(qrels, contrib, "GA")["1"].docnos) == ["a", "d"]
    with pytest.raises(BayevalInputError, match="contributed nothing"):
        leave_group_out_qrels(qrels, contrib, "GZ")
    auto = automatic_only_qrels(qrels, contrib, HAND_GROUPS, RankData.build(runs, qrels), 2)
    assert sorted(auto["1"].docnos) == ["b", "c"]


def test_automatic_only_keeps_documents_of_a_mixed_groups_automatic_run():
    # group G has a manual run M and an automatic run U; x is retrieved in the top 2 of U -> kept
    runs = _runs({"M": {"1": ["x", "y"]}, "U": {"1": ["z", "x"]}})
    qrels = _qrels({"1": {"x": 1, "y": 1, "z": 0}})
    groups = RunGroups({"M": "G", "U": "G"}, {"M": "manual", "U": "automatic"})
    data = RankData.build(runs, qrels)
    contrib = contributions_from_runs(data, groups, 2)
    assert sorted(automatic_only_qrels(qrels, contrib, groups, data, 2)["1"].docnos) == ["x", "z"]


# ------------------------------------------------------------------------------------------ expected / completion

def test_expected_reciprocal_rank_matches_enumeration():
    p = np.array([0.3, 0.0, 0.6, 0.5, 1.0, 0.2])
    total = 0.0
    for x in itertools.product([0, 1], repeat=len(p)):
        prob = np.prod(np.where(np.array(x) == 1, p, 1 - p))
        first = next((r for r, v in enumerate(x, start=1) if v), None)
        total += prob * (1.0 / first if first else 0.0)
    assert expected_reciprocal_rank(p[None])[0] == pytest.approx(total, abs=1e-14)


def test_expected_scores_equal_measures_when_probabilities_are_zero_or_one():
    col = make_collection(n_topics=3, n_systems=3, n_docs=60, depth=30, judged_depth=5, seed=3)
    data = RankData.build(col.runs, col.judgments)
    truth = RankData.build(col.runs, col.qrels)
    # p = the true relevance of every unjudged document
    p = [truth[t].relevant[pd.Index(truth[t].docnos).get_indexer(tr.docnos)].astype(float)
         for t, tr in zip(data.topics, data, strict=True)]
    ms = "RR,P@10,nDCG@10,AP"
    # complete judgments over the same universe: the runs' documents
    np.testing.assert_allclose(expected_scores(data, p, ms), evaluate(truth, ms).values, atol=1e-10)


def test_expected_count_labels_and_complete_qrels():
    assert expected_count_labels(np.array([0.2, 0.2, 0.05])).tolist() == [False, False, False]  # sum 0.45 -> 0
    assert expected_count_labels(np.array([0.4, 0.7, 0.5])).sum() == 2  # sum 1.6 -> 2
    q = _qrels({"1": {"a": 1}})
    c = complete_qrels(q, {"1": CandidatePrediction(np.array(["b", "c"], object), np.array([True, False]))})
    assert dict(zip(c["1"].docnos, c["1"].grades, strict=True)) == {"a": 1, "b": 1, "c": 0}
    with pytest.raises(BayevalInputError, match="already judged"):
        complete_qrels(q, {"1": CandidatePrediction(np.array(["a"], object), np.array([False]))})
    with pytest.raises(BayevalInputError, match="probability"):
        CandidatePrediction(np.array(["a"], object), np.array([True]), np.array([1.5]))


def test_unjudged_candidates_stop_at_the_depth():
    runs, qrels, contrib = _hand()
    reduced = leave_group_out_qrels(qrels, contrib, "GA")
    data = RankData.build(runs, reduced)
    assert sorted(unjudged_candidates(data, ["A"], 2)["1"]) == ["b", "c"]
    assert sorted(unjudged_candidates(data, ["A"], 3)["1"]) == ["b", "c"]  # a (rank 3) is judged
    assert sorted(unjudged_candidates(data, ["B"], 3)["1"]) == ["e"]


# ------------------------------------------------------------------------------------------ classifiers

def test_kld_scores_match_the_dense_definition():
    rng = np.random.default_rng(2)
    counts = rng.poisson(0.6, size=(6, 15)).astype(float)
    counts[:, 0] += 1
    coll = rng.random(15) + 0.1
    coll /= coll.sum()
    lam, rel = 0.2, np.array([1, 3])
    pr = (1 - lam) * counts[rel].sum(0) / counts[rel].sum() + lam * coll
    pd_ = (1 - lam) * counts / counts.sum(1, keepdims=True) + lam * coll
    dense = (pd_ * np.log(pd_ / pr)).sum(1)
    np.testing.assert_allclose(kld_scores(sp.csr_matrix(counts), rel, coll, lam), dense, rtol=1e-12)
    with pytest.raises(BayevalInputError, match="lam"):
        kld_scores(sp.csr_matrix(counts), rel, coll, 1.0)


def test_threshold_at_count():
    s = np.array([0.9, 0.1, 0.5, 0.7])
    for n in range(5):
        assert (s > threshold_at_count(s, n)).sum() == n


def _toy_text_collection():
    rng = np.random.default_rng(5)
    aero = "wing flutter supersonic airfoil lift drag boundary layer shock".split()
    other = "soil moisture crop yield irrigation rainfall harvest seed".split()
    texts, rows, ranking = {}, [], []
    for i in range(40):
        words = aero if i % 2 == 0 else other
        texts[f"d{i}"] = " ".join(rng.choice(words, 12))
        ranking.append(f"d{i}")
        if i < 30:
            rows.append(("1", f"d{i}", int(i % 2 == 0)))
    qrels = Qrels.from_frame(pd.DataFrame(rows, columns=["topic", "docno", "grade"]))
    run = Run.from_frame(pd.DataFrame({"topic": "1", "docno": ranking, "score": np.arange(40, 0, -1.0)}), "r")
    return texts, qrels, RankData.build([run], qrels)


@pytest.mark.parametrize("kind", ["kld", "svm"])
def test_text_classifiers_separate_two_topics(kind):
    texts, qrels, data = _toy_text_collection()
    cand = {"1": np.array([f"d{i}" for i in range(30, 40)], dtype=object)}
    pred = TextClassifierPredictor(texts, kind, seed=0).predict(data, cand)["1"]
    assert pred.relevant.tolist() == [i % 2 == 0 for i in range(30, 40)]
    assert pred.probability is None


def test_text_classifier_errors(tmp_path):
    texts, qrels, data = _toy_text_collection()
    with pytest.raises(BayevalInputError, match="classifier"):
        TextClassifierPredictor(texts, "nb")
    with pytest.raises(BayevalInputError, match="no text for candidate document 'zz'"):
        TextClassifierPredictor(texts, "kld").predict(data, {"1": np.array(["zz"], dtype=object)})
    f = tmp_path / "texts.tsv"
    f.write_text("a\tone\nno tab here\n")
    with pytest.raises(FileFormatError, match="texts.tsv:2"):
        read_texts(f)


# ------------------------------------------------------------------------------------------ studies

def test_leave_one_group_out_hand_example():
    runs, qrels, contrib = _hand()
    st = leave_one_group_out(runs, qrels, contrib, HAND_GROUPS, measures="AP,P@2", pool_depth=2)
    # original AP: A = (1/2 + 2/3) / 2 = 7/12; B = (1/2) / 2 = 1/4
    np.testing.assert_allclose(st.mean_original()[0], [7 / 12, 1 / 4])
    # GA out (c, b removed): R = 1 (a at rank 3 of A) -> 1/3; GB out (d, a removed): R = 1 (b), B misses it -> 0
    np.testing.assert_allclose(st.mean_scores()[0, 0], [1 / 3, 0.0])
    row = st.table().set_index(["method", "measure"]).loc[("reduced", "AP")]
    assert row.rms_error == pytest.approx(np.sqrt(((7 / 12 - 1 / 3) ** 2 + (1 / 4) ** 2) / 2))
    assert row.avg_rank_change == 0 and row.max_up == 0 and row.max_down == 0
    assert row.mean_shift == pytest.approx(((1 / 3 - 7 / 12) + (0 - 1 / 4)) / 2)
    f = st.to_frame()
    assert np.allclose(f["shift"], f["new"] - f["original"])
    assert list(st.reductions.judged_after) == [2, 2]


def test_manual_only_hand_example():
    runs, qrels, contrib = _hand()
    st = manual_only(runs, qrels, contrib, HAND_GROUPS, measures="AP", pool_depth=2)
    # d, a removed (only manual B contributed them): A = b at rank 2 of R = 1 -> 1/2; B = 0
    np.testing.assert_allclose(st.mean_scores()[0, 0], [0.5, 0.0])
    t = st.table().iloc[0]
    assert t.runs == 1 and t.tau_all == 1.0 and t.rms_error == pytest.approx(0.25)


class _Oracle:
    """Predicts from the complete truth: completed and expected scores must then equal the truth's."""

    name = "oracle"

    def __init__(self, truth: Qrels):
        self.truth = truth

    def predict(self, data, candidates):
        out = {}
        for t, docs in candidates.items():
            g = dict(zip(self.truth[t].docnos, self.truth[t].grades, strict=True))
            rel = np.array([g.get(d, 0) >= 1 for d in docs], dtype=bool)
            out[t] = CandidatePrediction(docs, rel, rel.astype(float))
        return out


def test_an_oracle_predictor_repairs_the_bias_completely():
    col = make_collection(n_topics=4, n_systems=6, n_docs=150, depth=40, judged_depth=10, seed=7)
    groups = RunGroups({n: f"g{i // 2}" for i, n in enumerate(col.runs.names)},
                       {n: "manual" if i % 3 == 0 else "automatic" for i, n in enumerate(col.runs.names)})
    contrib = contributions_from_runs(RankData.build(col.runs, col.judgments), groups, 10)
    for fn in (leave_one_group_out, manual_only):
        st = fn(col.runs, col.judgments, contrib, groups, measures="RR,P@10,nDCG@10,AP", pool_depth=10,
                predictors=[_Oracle(col.qrels)])
        tab = st.table().set_index("method")
        assert (tab.loc["reduced", "rms_error"] > 0).any()
        for m in ("completed:oracle", "expected:oracle"):
            assert np.allclose(tab.loc[m, "rms_error"], 0.0, atol=1e-10)
            assert (tab.loc[m, "avg_rank_change"] == 0).all()


def test_study_with_model_predictor_and_result_object():
    col = make_collection(n_topics=3, n_systems=4, n_docs=100, depth=30, judged_depth=8, seed=2)
    groups = RunGroups.singletons(col.runs.names)
    contrib = contributions_from_runs(RankData.build(col.runs, col.judgments), groups, 8)
    st = leave_one_group_out(col.runs, col.judgments, contrib, groups, measures="AP,bpref", pool_depth=8,
                             predictors=[ModelPredictor("smoothed")])
    assert isinstance(st, BiasStudy) and st.methods == ("reduced", "completed:smoothed", "expected:smoothed")
    tab = st.table()
    # no expected bpref: that row is absent, all others present
    assert list(zip(tab.method, tab.measure, strict=True)) == [
        ("reduced", "AP"), ("reduced", "bpref"), ("completed:smoothed", "AP"), ("completed:smoothed", "bpref"),
        ("expected:smoothed", "AP")]
    assert "tau_all" in tab and "leave-one-group-out" in st.summary()
    with pytest.raises(ValueError):
        st.original[0, 0, 0] = 1.0
    with pytest.raises(BayevalInputError, match="names must differ"):
        leave_one_group_out(col.runs, col.judgments, contrib, groups, pool_depth=8,
                            predictors=[ModelPredictor("smoothed"), ModelPredictor("smoothed")])
    with pytest.raises(BayevalInputError, match="no studied run is manual"):
        manual_only(col.runs, col.judgments, contrib, groups, pool_depth=8)


def test_plot_shifts(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from bayeval.bias.plot import plot_shifts

    runs, qrels, contrib = _hand()
    st = leave_one_group_out(runs, qrels, contrib, HAND_GROUPS, measures="AP,P@2", pool_depth=2)
    fig = plot_shifts(st, "AP", path=tmp_path / "shift.png")
    assert (tmp_path / "shift.png").stat().st_size > 0 and fig.axes
    with pytest.raises(BayevalInputError, match="not part of the study"):
        plot_shifts(st, "bpref")


# ------------------------------------------------------------------------------------------ CLI

def _write_hand(tmp_path):
    from bayeval.io import write_qrels, write_run

    runs, qrels, _ = _hand()
    (tmp_path / "runs").mkdir()
    for r in runs:
        write_run(r, tmp_path / "runs" / f"{r.name}.run")
    write_qrels(qrels, tmp_path / "qrels.txt")
    (tmp_path / "groups.tsv").write_text("run\tgroup\ttype\nA\tGA\tautomatic\nB\tGB\tmanual\n")
    (tmp_path / "ann.txt").write_text("1 0 c 0 1 GA\n1 0 b 1 1 GA\n1 0 d 0 1 GB\n1 0 a 1 1 GB\n")


def test_cli_leave_one_group_out_and_manual_only(tmp_path, capsys):
    _write_hand(tmp_path)
    base = [str(tmp_path / "qrels.txt"), str(tmp_path / "runs"), "--groups", str(tmp_path / "groups.tsv"),
            "--pool-depth", "2", "--measures", "AP", "--format", "csv"]
    assert main(["bias", "leave-one-group-out", *base, "--annotated", str(tmp_path / "ann.txt"),
                 "--per-run", str(tmp_path / "per_run.csv")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("method,measure,runs,avg_rank_change")
    assert out[1].startswith("reduced,AP,2,0,0,0,0.25")
    per_run = pd.read_csv(tmp_path / "per_run.csv")
    assert per_run["new"].round(6).tolist() == [round(1 / 3, 6), 0.0]
    assert main(["bias", "manual-only", *base, "--plot", str(tmp_path / "p.png")]) == 0
    assert "tau_manual" in capsys.readouterr().out and (tmp_path / "p.png").exists()


def test_cli_bad_input_exits_2(tmp_path, capsys):
    _write_hand(tmp_path)
    base = [str(tmp_path / "qrels.txt"), str(tmp_path / "runs"), "--pool-depth", "2"]
    assert main(["bias", "leave-one-group-out", *base, "--groups", str(tmp_path / "missing.tsv")]) == 2
    assert "missing.tsv" in capsys.readouterr().err
    assert main(["bias", "leave-one-group-out", *base, "--groups", str(tmp_path / "groups.tsv"),
                 "--predict", "svm"]) == 2
    assert "--texts" in capsys.readouterr().err
    (tmp_path / "groups.tsv").write_text("run\tgroup\ttype\nA\tGA\tautomatic\nB\tGB\tautomatic\n")
    assert main(["bias", "manual-only", *base, "--groups", str(tmp_path / "groups.tsv")]) == 2
    assert "no studied run is manual" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["bias", "leave-one-group-out", *base, "--groups", "g", "--pool-depth", "0"])
    assert exc.value.code == 2
