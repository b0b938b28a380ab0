"""Similarity study (Carterette & Allan 2007): rank-profile similarity, MTC+sim/MTC+one selectors, trials,
statistics against hand-computed answers, resume, CLI, and one real Cranfield trial."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayeval.cli.main import main
from bayeval.data import RankData, Run
from bayeval.errors import BayevalInputError
from bayeval.experiments import (
    SIMILARITY_COLUMNS,
    SimilarityStudyConfig,
    expected_accuracy,
    load_collection,
    read_table,
    run_similarity_trial,
    run_study,
    similarity_trajectory,
)
from bayeval.experiments.similarity import _significant
from bayeval.experiments.similarity_report import render_similarity_report, similarity_statistics
from bayeval.relevance.similarity import cosine_from_rank_profiles
from bayeval.selection import make_selector
from bayeval.synthetic import make_collection

FAST = {"k": 4, "depth": 20, "budget": 40, "methods": ("sim", "one", "mtc", "ip")}


@pytest.fixture(scope="module")
def collection_dir(tmp_path_factory, collection_dir_writer):
    """A small synthetic collection with texts: relevant documents share words, nonrelevant ones do not."""
    col = make_collection(n_topics=4, n_systems=5, n_docs=50, depth=20, seed=21)
    root = collection_dir_writer(col, tmp_path_factory.mktemp("simstudy"))
    frame = col.qrels.to_frame()
    rng = np.random.default_rng(0)
    with open(root / "texts.tsv", "w", encoding="utf-8") as fh:
        for row in frame.itertuples():
            words = [f"t{row.topic}rel{w}" for w in rng.integers(0, 5, 6)] if row.grade > 0 else \
                [f"noise{w}" for w in rng.integers(0, 400, 6)]
            fh.write(f"{row.docno}\t{' '.join(words)}\n")
    return root


# ------------------------------------------------------------------ pieces with known answers
def test_rank_profile_cosine_by_hand():
    # run a ranks x, y, z at 1, 2, 3; run b ranks y, x, w: profiles x = (1, 1/2), y = (1/2, 1), z = (1/3, 0),
    # w = (0, 1/3); cos(x, y) = (1/2 + 1/2)/(5/4) = 0.8, cos(z, w) = 0, unknown documents 0
    a = Run.from_arrays("a", np.array(["1"] * 3), np.array(["x", "y", "z"]), np.array([3.0, 2, 1]))
    b = Run.from_arrays("b", np.array(["1"] * 3), np.array(["y", "x", "w"]), np.array([3.0, 2, 1]))
    sim = cosine_from_rank_profiles(RankData.build([a, b]))
    m = sim("1", np.array(["x", "z", "q"]), np.array(["y", "w", "x"]))
    np.testing.assert_allclose(m, [[0.8, 0.5 / np.sqrt(1.25), 1.0], [0.5 / np.sqrt(1.25), 0.0, 1 / np.sqrt(1.25)],
                                   [0.0, 0.0, 0.0]])
    assert sim("2", np.array(["x"]), np.array(["y"])).shape == (1, 1)  # unknown topic: zeros
    with pytest.raises(BayevalInputError, match="data"):
        cosine_from_rank_profiles([a, b])


def test_expected_accuracy_and_significance_by_hand():
    # mean of max(P, 1 - P): (0.9 + 0.6 + 1.0)/3
    assert expected_accuracy([0.9, 0.4, 0.0]) == pytest.approx(2.5 / 3)
    assert expected_accuracy([]) == 1.0
    # one-sided paired t-test in the direction of the mean: differences (1, 2, 3, 4) -> t = 2.5/(1.291/2) = 3.873,
    # 3 df, one-sided p = 0.0152 < 0.05; (1, -1, 1, -1) -> mean 0, not significant; constant nonzero -> significant
    a = np.array([[2.0, 3, 4, 5], [1, 0, 1, 0], [1, 1, 1, 1]])
    b = np.array([[1.0, 1, 1, 1], [0, 1, 0, 1], [0, 0, 0, 0]])
    np.testing.assert_array_equal(_significant(a, b, 0.05), [True, False, True])
    assert not _significant(a[:1], b[:1], 0.01)[0]  # p = 0.0152 > 0.01


def test_mtc_one_and_sim_selectors_refit():
    col = make_collection(n_topics=3, n_systems=3, n_docs=60, depth=20, seed=4)
    data = RankData.build(col.runs, None, depth=20)
    one = make_selector("mtc+one", data, refit_every=3)
    for _ in range(6):
        c = one.select()[0]
        one.record(c.topic, c.docno, col.qrels.grade_of(c.topic, c.docno) or 0)
    assert one.refits == 3 and one.method == "mtc+one"
    # after the last refit every unjudged document of a topic has (|R| + 1)/(|R| + |N| + 2)
    for tr, p in zip(one.topic_ranks(), one.probabilities(), strict=True):
        assert np.allclose(p[~tr.judged], (tr.num_rel + 1) / (tr.num_rel + tr.num_nonrel + 2))
    sim = make_selector("mtc+sim", data, refit_every=3, similarity=cosine_from_rank_profiles(data))
    for _ in range(6):
        c = sim.select()[0]
        sim.record(c.topic, c.docno, col.qrels.grade_of(c.topic, c.docno) or 0)
    assert sim.refits == 3 and any(np.unique(p[p < 1]).size > 2 for p in sim.probabilities())
    with pytest.raises(BayevalInputError, match="similarity"):
        make_selector("mtc+sim", data)
    with pytest.raises(BayevalInputError, match="method"):
        make_selector("mtc+nope", data)


def test_similarity_warm_start_equals_a_fresh_fit():
    from bayeval.relevance import SimilarityEstimator

    col = make_collection(n_topics=3, n_systems=4, n_docs=60, depth=20, judged_depth=4, seed=8)
    data = RankData.build(col.runs, col.judgments, depth=20)
    sim = cosine_from_rank_profiles(data)
    est = SimilarityEstimator()
    first = est.model(data, similarity=sim)
    first.fit("map")
    again = est.model(data, similarity=sim)
    a, b = again.fit("map", warm_start=first), first.fit("map")
    np.testing.assert_array_equal(a.mode.x, b.mode.x)
    assert a.mode.logpost == b.mode.logpost


# ------------------------------------------------------------------ trials and the study runner
def test_config_validation():
    for kw, name in (({"k": 2}, "k"), ({"methods": ("ip",)}, "methods"), ({"methods": ("x",)}, "methods"),
                     ({"stop": "never"}, "stop"), ({"similarity": "bm25"}, "similarity"), ({"alpha": 1.0}, "alpha"),
                     ({"similarity_config": "rtc-mtc"}, "similarity_config"), ({"n_topics": 1}, "n_topics")):
        with pytest.raises(BayevalInputError, match=name):
            SimilarityStudyConfig(**kw)


def test_trial_rows_are_reproducible_and_consistent(collection_dir):
    col = load_collection(collection_dir)
    cfg = SimilarityStudyConfig(similarity="texts", **FAST)
    a = run_similarity_trial(col, cfg, 3)
    b = run_similarity_trial(col, cfg, 3)
    assert list(a.columns) == list(SIMILARITY_COLUMNS)
    pd.testing.assert_frame_equal(a.drop(columns=["seconds", "trial_seconds"]),
                                  b.drop(columns=["seconds", "trial_seconds"]))
    assert len(a) == 4 * 6  # 4 methods x C(4, 2) pairs
    per = a.groupby("method").first()
    # incremental pooling judges as many documents as MTC+sim, and has no confidence
    assert per.loc["ip", "judgments"] <= per.loc["sim", "judgments"] and a[a.method == "ip"]["p_less"].isna().all()
    assert a[a.method != "ip"]["p_less"].between(0, 1).all()
    # the truth is the same for every method; true_delta = true_map_a - true_map_b
    assert a.groupby(["run_a", "run_b"])["true_delta"].nunique().max() == 1
    np.testing.assert_allclose(a["true_delta"], a["true_map_a"] - a["true_map_b"])
    # a method that stopped on the rule has an expected accuracy >= alpha ... or used the budget
    assert ((per["reached"]) | (per["judgments"] >= FAST["budget"]) | (per.index == "ip")).all()


def test_texts_similarity_needs_texts(tmp_path, collection_dir):
    import shutil

    shutil.copytree(collection_dir / "runs", tmp_path / "runs")
    shutil.copy(collection_dir / "qrels.txt", tmp_path / "qrels.txt")
    col = load_collection(tmp_path)
    with pytest.raises(BayevalInputError, match="texts"):
        run_similarity_trial(col, SimilarityStudyConfig(similarity="texts", **FAST), 0)


def test_study_resumes_and_statistics(tmp_path, collection_dir):
    col = load_collection(collection_dir)
    cfg = SimilarityStudyConfig(similarity="texts", **FAST)
    out = tmp_path / "sim.parquet"
    first = run_study(col, cfg, 2, out=out)
    again = run_study(col, cfg, 3, out=out)
    assert first.ran == (0, 1) and again.skipped == (0, 1) and again.ran == (2,)
    frame = read_table(out, SIMILARITY_COLUMNS)
    assert frame["trial"].nunique() == 3
    st = similarity_statistics(frame)
    # hand check of one statistic: MTC+one's mean tau is the mean of its per-trial tau
    taus = frame[frame.method == "one"].groupby("trial")["tau"].first()
    assert st.overall.set_index("method").loc["one", "mean_tau"] == pytest.approx(taus.mean())
    assert set(st.tests["b"]) == {"one", "mtc", "ip"}
    page = render_similarity_report(frame, title="t", command="cmd")
    assert "MTC+sim" in page and "Table 1" in page and "cmd" in page
    with pytest.raises(BayevalInputError, match="another"):
        run_study(col, SimilarityStudyConfig(similarity="texts", **{**FAST, "depth": 10}), 1, out=out)


def test_study_matches_serial_on_dask_local_cluster(collection_dir, on_local_dask):
    col = load_collection(collection_dir)
    cfg = SimilarityStudyConfig(similarity="texts", seed=4, **{**FAST, "methods": ("sim", "ip")})
    serial = run_study(col, cfg, 2, progress=False)
    res = on_local_dask(col, cfg, 2)
    assert res.backend == "dask" and res.ran == (0, 1)
    timing = ["seconds", "trial_seconds"]
    pd.testing.assert_frame_equal(res.frame.drop(columns=timing), serial.frame.drop(columns=timing))


def test_trajectory_points(collection_dir):
    col = load_collection(collection_dir)
    traj = similarity_trajectory(col, SimilarityStudyConfig(similarity="texts", **FAST), 0, every=5, judgments=20)
    assert set(traj["method"]) == set(FAST["methods"])
    # a point before any judgment and every 5 judgments after
    assert traj.groupby("method")["judgments"].apply(lambda j: list(j)[:2] == [0, 5]).all()
    assert traj["judgments"].max() <= 20


def test_cli_run_stats_report(tmp_path, collection_dir, capsys):
    out = tmp_path / "sim.csv"
    argv = ["experiment", "similarity", "run", str(collection_dir), "--out", str(out), "--trials", "2", "--k", "4",
            "--depth", "20", "--budget", "30", "--workers", "1", "--methods", "sim,one,ip", "--no-progress"]
    assert main(argv) == 0
    assert main(["experiment", "similarity", "stats", str(out), "--format", "csv"]) == 0
    assert "median_judgments" in capsys.readouterr().out
    traj = tmp_path / "traj.csv"
    assert main(["experiment", "similarity", "trajectory", str(collection_dir), "--out", str(traj), "--k", "4",
                 "--depth", "20", "--budget", "30", "--every", "10", "--methods", "sim,one,ip"]) == 0
    page = tmp_path / "page.md"
    assert main(["experiment", "similarity", "report", str(out), "--page", str(page), "--figures",
                 str(tmp_path / "fig"), "--trajectory", str(traj)]) == 0
    text = page.read_text()
    assert "bayeval experiment similarity report" in text and "fig/page-tau.png" in text
    assert (tmp_path / "fig" / "page-emap.png").stat().st_size > 0  # --figures is a folder, created
    assert main(["experiment", "similarity", "run", str(collection_dir), "--out", str(out), "--methods", "ip",
                 "--workers", "1"]) == 2
    assert "methods" in capsys.readouterr().err


@pytest.mark.data
def test_one_cranfield_trial(shared_data, tmp_path):
    from bayeval.experiments import write_cranfield_collection

    root = write_cranfield_collection(shared_data / "cranfield", tmp_path / "cran")
    col = load_collection(root)
    assert len(col.run_names) == 8 and col.texts_path is not None
    cfg = SimilarityStudyConfig(k=None, n_topics=5, methods=("sim", "one", "ip"), similarity="texts", budget=300)
    rows = run_similarity_trial(col, cfg, 0)
    assert len(rows) == 3 * 28 and rows["n_topics"].iloc[0] == 5
    # the truth comes from cranqrel: MAP of the eight runs is between 0 and 1 and not all equal
    assert rows["true_map_a"].between(0, 1).all() and rows["true_map_a"].nunique() > 1
