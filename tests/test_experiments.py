"""Robustness studies: statistics against hand-computed answers, trials, resuming, Dask, CLI."""

from __future__ import annotations

import io
import math
import os

import numpy as np
import pandas as pd
import pytest

from bayeval.cli.main import main
from bayeval.errors import BayevalInputError
from bayeval.experiments import (
    COLUMNS,
    RobustnessConfig,
    bookmaker,
    calls,
    completed_trials,
    confidence_bins,
    load_collection,
    paired_tests,
    read_table,
    robustness_statistics,
    run_study,
    run_trial,
    wilson_interval,
    write_table,
)
from bayeval.experiments.robustness import STUDY_METHODS, STUDY_STRATEGIES
from bayeval.experiments.similarity import SIMILARITY_METHODS, SIMILARITY_STRATEGIES
from bayeval.experiments.statistics import similarity_bin
from bayeval.synthetic import make_collection

FAST = {"methods": ("mtc", "rtc", "bayes", "ip"), "confidences": ("delta", "mc"), "mc_draws": 50, "p_draws": 20,
        "k": 4, "depth": 20, "budget": 30}


@pytest.fixture(scope="module")
def collection_dir(tmp_path_factory, collection_dir_writer):
    """A small synthetic collection written in the layout of ../shared/data (runs/, qrels.txt, runs.tsv)."""
    col = make_collection(n_topics=4, n_systems=5, n_docs=50, depth=20, seed=11)
    root = collection_dir_writer(col, tmp_path_factory.mktemp("synthetic"))
    names = col.runs.names
    pd.DataFrame({"run": names, "group": names, "type": ["manual"] + ["automatic"] * (len(names) - 1)}) \
        .to_csv(root / "runs.tsv", sep="\t", index=False)
    return root


# ------------------------------------------------------------------ statistics: known answers
def test_calls_orientation_and_ties():
    # P(Δ<0) = 0.9 calls Δ<0 with confidence 0.9; 0.2 calls Δ>0 with 0.8; 0.5 makes no call (y = 1/2);
    # a true tie makes any call wrong
    conf, y = calls([0.9, 0.9, 0.2, 0.2, 0.5, 0.7], [-0.1, 0.1, 0.3, -0.3, 0.2, 0.0])
    np.testing.assert_allclose(conf, [0.9, 0.9, 0.8, 0.8, 0.5, 0.7])
    np.testing.assert_array_equal(y, [1, 0, 1, 0, 0.5, 0])


def test_bookmaker_known_answers_and_cap():
    # W = (y - P)/(1 - P): right at 0.8 -> (1 - 0.8)/0.2 = 1; wrong at 0.8 -> -0.8/0.2 = -4;
    # wrong at 0.99 -> -99; wrong at 0.995 -> -199 capped to -100; P = 1 exactly: right 1, wrong -100;
    # P = 0.5 (no call): (0.5 - 0.5)/0.5 = 0
    w = bookmaker([0.8, 0.8, 0.01, 0.995, 1.0, 0.0, 0.5], [-1, 1, -1, 1, -1, -1, 1])
    np.testing.assert_allclose(w, [1, -4, -99, -100, 1, -100, 0])
    assert np.isfinite(w).all()
    assert bookmaker([0.995], [1], cap=1000)[0] == pytest.approx(-199)


def test_bookmaker_mean_breaks_even_when_calibrated():
    # 10 calls at confidence 0.8, 8 right: W̄ = (8·1 + 2·(-4))/10 = 0 exactly
    p = np.full(10, 0.8)
    d = np.array([-1.0] * 8 + [1.0] * 2)
    assert bookmaker(p, d).mean() == pytest.approx(0.0)


def test_wilson_interval_known_value():
    # 8/10 at 95%: z = 1.95996; centre (0.8 + z²/20)/(1 + z²/10) = 0.71672, half-width 0.22653
    lo, hi = wilson_interval(8, 10)
    assert float(lo) == pytest.approx(0.49016, abs=1e-4)
    assert float(hi) == pytest.approx(0.94331, abs=1e-4)
    lo0, _ = wilson_interval(0, 0)
    assert math.isnan(float(lo0))


def _frame(p, d, **extra):
    n = len(p)
    base = {"method": "m", "confidence": "delta", "trial": np.arange(n) // 2, "pair_type": "none",
            "similarity": 0.05, "p_less": p, "true_delta": d, "judgments": 10, "tau": 0.5, "decided": True,
            "seconds": 1.0, "e_delta": -np.asarray(d)}
    base.update(extra)
    return pd.DataFrame(base)


def test_confidence_bins_hand_example():
    # confidences 0.55, 0.65 (right), 0.65 (wrong), 0.97, 1.0 (right), 0.92 (wrong)
    p = [0.55, 0.35, 0.65, 0.03, 1.0, 0.92]
    d = [-1, 1, 1, 1, -1, 1]
    b = confidence_bins(_frame(p, d)).set_index("bin")
    assert b.loc["0.5–0.6", "n"] == 1 and b.loc["0.5–0.6", "accuracy"] == 1.0
    assert b.loc["0.6–0.7", "n"] == 2 and b.loc["0.6–0.7", "accuracy"] == 0.5
    assert b.loc["0.9–0.95", "accuracy"] == 0.0
    assert b.loc["0.95–0.99", "n"] == 1 and b.loc["≥ 0.99", "n"] == 1
    assert b.loc["0.7–0.8", "n"] == 0 and math.isnan(b.loc["0.7–0.8", "accuracy"])
    assert b["share"].sum() == pytest.approx(1.0)
    assert b.loc["0.6–0.7", "share"] == pytest.approx(2 / 6)


def test_bin_edges_are_left_closed():
    b = confidence_bins(_frame([0.6, 0.9, 0.95, 0.99], [-1, -1, -1, -1])).set_index("bin")
    assert b.loc["0.6–0.7", "n"] == 1 and b.loc["0.9–0.95", "n"] == 1
    assert b.loc["0.95–0.99", "n"] == 1 and b.loc["≥ 0.99", "n"] == 1


def test_breakdowns_by_pair_type_and_similarity():
    f = _frame([0.9, 0.9, 0.9, 0.9], [-1, 1, -1, -1], pair_type=["both", "one", "none", "none"],
               similarity=[0.05, 0.15, 0.25, 0.5])
    bt = confidence_bins(f, by="pair_type")
    acc = bt[bt["bin"] == "0.9–0.95"].set_index("group")["accuracy"]
    assert acc["both"] == 1.0 and acc["one"] == 0.0 and acc["none"] == 1.0
    bs = confidence_bins(f, by="similarity")
    assert set(bs["group"]) == {"0–0.1", "0.1–0.2", "0.2–0.3", "≥ 0.3"}
    assert similarity_bin([0.0, 0.0999, 0.2, 0.3]).tolist() == ["0–0.1", "0–0.1", "0.2–0.3", "≥ 0.3"]
    st = robustness_statistics(f)
    # W by pair type: both right (1), one wrong at 0.9 (-9), none: two right (1)
    assert st.overall.iloc[0]["W_by_type"] == pytest.approx({"both": 1.0, "none": 1.0, "one": -9.0})
    with pytest.raises(BayevalInputError, match="by"):
        confidence_bins(f, by="colour")


def test_statistics_judgments_tau_and_goal():
    # trials 0, 1, 2 with judgments 10, 30, 200: median 30, mean 80; tau 0.2, 0.4, 0.9: mean 0.5
    f = _frame([0.7, 0.7, 0.96, 0.96, 0.55, 0.55], [-1, -1, -1, -1, -1, 1],
               judgments=[10, 10, 30, 30, 200, 200], tau=[0.2, 0.2, 0.4, 0.4, 0.9, 0.9])
    r = robustness_statistics(f).overall.iloc[0]
    assert r.median_judgments == 30 and r.mean_judgments == pytest.approx(80)
    assert r.mean_tau == pytest.approx(0.5)
    # bins: 0.5–0.6 accuracy 1/2 ≥ 0.5, 0.7–0.8 1.0, 0.95–0.99 1.0: every bin at or above its lower edge
    assert bool(r.goal_bins)
    # W: 0.7 right twice (1, 1), 0.96 right twice (1, 1), 0.55 right (1) and wrong (-0.55/0.45)
    assert r.W_mean == pytest.approx((5 - 0.55 / 0.45) / 6)


def test_paired_tests_known_answers():
    # differences 1, 2, 3 over three trials: t = 2/(1/√3) = 3.4641, df 2 -> p = 0.07418;
    # Wilcoxon exact, n = 3, all positive: p = 2·(1/8) = 0.25
    rows = []
    for trial, (a, b) in enumerate([(11, 10), (22, 20), (33, 30)]):
        for m, j in (("x", a), ("y", b)):
            rows.append({"method": m, "confidence": "delta", "trial": trial, "judgments": j, "tau": 0.1,
                         "decided": True, "seconds": 1.0})
    r = paired_tests(pd.DataFrame(rows), "judgments", ("x", "delta"), ("y", "delta"))
    assert r["n"] == 3 and r["median_a"] == 22 and r["mean_b"] == 20
    assert r["t_p"] == pytest.approx(0.07418, abs=1e-4)
    assert r["wilcoxon_p"] == pytest.approx(0.25)
    with pytest.raises(BayevalInputError, match="quantity"):
        paired_tests(pd.DataFrame(rows), "speed", ("x", "delta"), ("y", "delta"))
    with pytest.raises(BayevalInputError, match="no rows"):
        paired_tests(pd.DataFrame(rows), "tau", ("x", "delta"), ("z", "delta"))


# ------------------------------------------------------------------ config, table
def test_config_validation():
    with pytest.raises(BayevalInputError, match="c:"):
        RobustnessConfig(k=3, c=3)
    with pytest.raises(BayevalInputError, match="methods"):
        RobustnessConfig(methods=("mtc", "magic"))
    with pytest.raises(BayevalInputError, match="ip"):
        RobustnessConfig(methods=("rtc", "ip"))
    with pytest.raises(BayevalInputError, match="alpha"):
        RobustnessConfig(alpha=1.0)
    with pytest.raises(BayevalInputError):
        RobustnessConfig(bayes_config="no-such-model")
    cfg = RobustnessConfig(methods=["mtc"], k=5)
    assert cfg.methods == ("mtc",) and RobustnessConfig.from_dict(cfg.to_dict()) == cfg
    # every method a study accepts has its strategy, and only the baseline has no estimate
    assert set(STUDY_STRATEGIES) == set(STUDY_METHODS) and set(SIMILARITY_STRATEGIES) == set(SIMILARITY_METHODS)
    for strategies in (STUDY_STRATEGIES, SIMILARITY_STRATEGIES):
        assert [m for m, s in strategies.items() if s.estimate is None] == ["ip"]


def test_table_roundtrip_and_errors(tmp_path):
    f = pd.DataFrame({c: [1] for c in COLUMNS})
    for name in ("t.parquet", "t.csv"):
        write_table(f, tmp_path / name)
        assert list(read_table(tmp_path / name).columns) == list(COLUMNS)
    with pytest.raises(BayevalInputError, match="name must end"):
        write_table(f, tmp_path / "t.xlsx")
    with pytest.raises(BayevalInputError, match="missing column"):
        write_table(f.drop(columns=["tau"]), tmp_path / "u.csv")
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    with pytest.raises(BayevalInputError, match="missing column"):
        read_table(tmp_path / "bad.csv")


def test_load_collection_errors(tmp_path, collection_dir):
    with pytest.raises(BayevalInputError, match="not a directory"):
        load_collection(tmp_path / "nope")
    (tmp_path / "runs").mkdir()
    with pytest.raises(BayevalInputError, match="fewer than 2"):
        load_collection(tmp_path)
    col = load_collection(collection_dir)
    assert len(col.run_names) == 5 and col.manual == (col.run_names[0],)
    with pytest.raises(BayevalInputError, match="k:"):
        col.sample_runs(9, np.random.default_rng(0))


# ------------------------------------------------------------------ trials and studies
def test_bayes_closed_forms_use_the_posterior_draws(collection_dir, monkeypatch):
    """Every confidence of the bayes estimate gets its posterior draws of p: Monte Carlo all 200, the closed forms
    closed_form_draws = 40 of them (combined by the law of total variance), and the closed-form Var[ΔMAP] agrees
    with Monte Carlo over the same draws (4000 draws; 40 of 200 draws: the between-draw part to about 20%)."""
    import bayeval.experiments.robustness as robustness

    seen = []
    real = robustness.compare_systems

    def spy(data, probabilities=None, **kw):
        seen.append((kw["method"], np.shape(probabilities[0])))
        return real(data, probabilities, **kw)

    monkeypatch.setattr(robustness, "compare_systems", spy)
    col = load_collection(collection_dir)
    cfg = RobustnessConfig(seed=4, **{**FAST, "methods": ("bayes",), "confidences": ("exact", "delta", "mc"),
                                      "mc_draws": 4000, "p_draws": 200, "closed_form_draws": 40,
                                      "bayes_stages": "calibration+aggregation", "bayes_config": "rtc-mtc"})
    rows = run_trial(col, cfg, 0)
    assert {m: s[0] for m, s in seen} == {"exact": 40, "delta": 40, "mc": 200}
    ex = rows[rows["confidence"] == "exact"]["var_delta"].to_numpy()
    mc = rows[rows["confidence"] == "mc"]["var_delta"].to_numpy()
    np.testing.assert_allclose(ex, mc, rtol=0.3)


def test_trial_rows_are_reproducible_and_consistent(collection_dir):
    col = load_collection(collection_dir)
    cfg = RobustnessConfig(seed=3, **FAST)
    a = run_trial(col, cfg, 1)
    b = run_trial(col, cfg, 1)
    assert list(a.columns) == list(COLUMNS)
    # 4 runs -> 6 pairs; mtc, rtc, bayes x 2 confidences + ip x 1
    assert len(a) == 6 * (3 * 2 + 1)
    timing = ["seconds", "trial_seconds"]
    pd.testing.assert_frame_equal(a.drop(columns=timing), b.drop(columns=timing))
    # pair types: runs 0, 1 are the originals -> 1 'both', 4 'one', 1 'none' pair
    one = a[(a["method"] == "mtc") & (a["confidence"] == "delta")]
    assert sorted(one["pair_type"]) == ["both", "none", "one", "one", "one", "one"]
    assert ((one["p_less"] >= 0) & (one["p_less"] <= 1)).all()
    np.testing.assert_allclose(one["true_delta"], one["true_map_a"] - one["true_map_b"])
    # RTC and bayes share one RTC selection: same judgment count; ip judges as many as MTC (at most)
    j = a.groupby("method")["judgments"].first()
    assert j["rtc"] == j["bayes"] and j["ip"] <= j["mtc"]
    assert a[a["method"] == "ip"]["p_less"].isna().all()
    # a different trial draws other runs or other orders
    c = run_trial(col, cfg, 2)
    assert not c[["run_a", "run_b"]].equals(a[["run_a", "run_b"]]) or not c["p_less"].equals(a["p_less"])


def test_hierarchical_bayes_unseen_and_reused_selections(collection_dir):
    """The bayes estimate with the hierarchical model and the unseen relevant documents (their effect on R_t:
    tests/test_unseen.py); a second call with ``reuse`` judges nothing new and gives the same RTC rows."""
    col = load_collection(collection_dir)
    base = {**FAST, "methods": ("rtc", "bayes")}
    reuse: dict = {}
    a = run_trial(col, RobustnessConfig(seed=3, **base), 1, reuse=reuse)
    assert set(reuse) == {"rtc"}
    sel = reuse["rtc"]
    h = run_trial(col, RobustnessConfig(seed=3, bayes_config="hier-default", unseen=True, **base), 1, reuse=reuse)
    assert reuse["rtc"] is sel
    cols = ["run_a", "run_b", "judgments", "p_less", "true_delta"]
    pd.testing.assert_frame_equal(a[a.method == "rtc"][cols].reset_index(drop=True),
                                  h[h.method == "rtc"][cols].reset_index(drop=True))
    hb = h[h.method == "bayes"]
    assert ((hb.p_less >= 0) & (hb.p_less <= 1)).all() and hb.e_map_a.notna().all()
    with pytest.raises(BayevalInputError, match="unseen"):
        RobustnessConfig(unseen="yes")


def test_smoke_study_resumes(tmp_path, collection_dir):
    """The 3-trial smoke study: run 2 trials, then ask for 3 — only trial 2 runs; statistics and report work."""
    col = load_collection(collection_dir)
    cfg = RobustnessConfig(seed=5, **FAST)
    out = tmp_path / "study.parquet"
    first = run_study(col, cfg, 2, out=out, progress=False)
    assert first.ran == (0, 1) and not first.failed
    second = run_study(col, cfg, 3, out=out, progress=False)
    assert second.ran == (2,) and second.skipped == (0, 1)
    table = read_table(out)
    assert completed_trials(table, collection=col.name, seed=5, methods=cfg.methods) == {0, 1, 2}
    st = robustness_statistics(table)
    assert set(st.overall["method"]) == {"mtc", "rtc", "bayes", "ip"}
    assert "W̄" in st.summary()
    with pytest.raises(BayevalInputError, match="another k"):
        run_study(col, RobustnessConfig(seed=5, **{**FAST, "k": 3}), 1, out=out)


def test_study_matches_serial_on_dask_local_cluster(collection_dir, on_local_dask):
    col = load_collection(collection_dir)
    cfg = RobustnessConfig(seed=9, methods=("mtc",), confidences=("delta",), k=4, depth=20, budget=40)
    serial = run_study(col, cfg, 2, progress=False)
    res = on_local_dask(col, cfg, 2)
    assert res.backend == "dask" and res.ran == (0, 1)
    timing = ["seconds", "trial_seconds"]
    pd.testing.assert_frame_equal(res.frame.drop(columns=timing), serial.frame.drop(columns=timing))


def test_dask_bad_scheduler_is_a_clear_error(collection_dir):
    pytest.importorskip("distributed")
    col = load_collection(collection_dir)
    cfg = RobustnessConfig(methods=("mtc",), confidences=("delta",), k=3, depth=20)
    with pytest.raises(BayevalInputError, match="scheduler"):
        run_study(col, cfg, 1, scheduler="tcp://127.0.0.1:1", connect_timeout=1)


@pytest.mark.slow
def test_study_on_local_processes(collection_dir, monkeypatch):
    col = load_collection(collection_dir)
    cfg = RobustnessConfig(seed=9, methods=("mtc",), confidences=("delta",), k=4, depth=20, budget=40)
    serial = run_study(col, cfg, 2, progress=False)
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    par = run_study(col, cfg, 2, workers=2, progress=False)
    assert par.backend == "processes"
    # the caller's environment is as it was (numba refuses a changed NUMBA_NUM_THREADS once its threads run)
    assert "NUMBA_NUM_THREADS" not in os.environ and os.environ["OMP_NUM_THREADS"] == "2"
    timing = ["seconds", "trial_seconds"]
    pd.testing.assert_frame_equal(par.frame.drop(columns=timing), serial.frame.drop(columns=timing))


# ------------------------------------------------------------------ CLI
def test_cli_run_stats_report(tmp_path, collection_dir, capsys):
    out = tmp_path / "t.csv"
    rc = main(["experiment", "robustness", "run", str(collection_dir), "--out", str(out), "--trials", "1",
               "--k", "3", "--depth", "20", "--methods", "mtc,rtc", "--confidences", "delta", "--budget", "40",
               "--workers", "1", "--no-progress"])
    assert rc == 0 and "1 trials run" in capsys.readouterr().out
    assert main(["experiment", "robustness", "stats", str(out), "--format", "csv"]) == 0
    csv = capsys.readouterr().out
    assert csv.startswith("method,confidence,trials") and "brier" in csv.splitlines()[0]
    assert main(["experiment", "robustness", "stats", str(out), "--what", "proper", "--format", "csv",
                 "--runs-info", str(collection_dir / "runs.tsv")]) == 0
    proper = pd.read_csv(io.StringIO(capsys.readouterr().out), comment="#")
    assert {"all", "pair_type", "run_type"} == set(proper["split"])
    assert main(["experiment", "robustness", "stats", str(out), "--what", "reliability", "--format", "csv"]) == 0
    assert "frequency" in capsys.readouterr().out
    variant = tmp_path / "v.parquet"  # same seed: same runs and judgments per trial; merged as mtc-v
    assert main(["experiment", "robustness", "run", str(collection_dir), "--out", str(variant), "--trials", "1",
                 "--k", "3", "--depth", "20", "--methods", "mtc", "--confidences", "exact", "--budget", "40",
                 "--workers", "1", "--no-progress"]) == 0
    page = tmp_path / "docs" / "robustness-x.md"
    rc = main(["experiment", "robustness", "report", str(out), "--page", str(page), "--figures",
               str(tmp_path / "docs" / "img"), "--runs-info", str(collection_dir / "runs.tsv"),
               "--merge", f"v={variant}"])
    assert rc == 0
    text = page.read_text()
    assert "MTC (p = 0.5) [v] | exact" in text and "--merge" in text
    assert "Generated by:" in text and "experiment robustness report" in text
    assert "![confidence vs accuracy](img/robustness-x-calibration.png)" in text
    assert "## Proper scores of P(ΔMAP < 0)" in text and "— automatic" in text and "— one" in text
    assert "![reliability of P(ΔMAP < 0)](img/robustness-x-reliability.png)" in text
    for suffix in ("calibration", "reliability", "emap", "tau"):  # --figures is a folder: PAGE-<figure>.png in it
        assert (tmp_path / "docs" / "img" / f"robustness-x-{suffix}.png").stat().st_size > 1000
    (tmp_path / "afile").write_text("x")
    assert main(["experiment", "robustness", "report", str(out), "--page", str(page), "--figures",
                 str(tmp_path / "afile")]) == 2


@pytest.mark.parametrize("argv", [
    ["experiment", "robustness", "run", "/no/such/dir", "--out", "x.csv"],
    ["experiment", "robustness", "run", ".", "--out", "x.csv", "--alpha", "1.5"],
    ["experiment", "robustness", "stats", "/no/such/table.parquet"],
    ["experiment", "robustness", "stats", "table.txt"],
])
def test_cli_bad_input_exits_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        raise SystemExit(main(argv))
    assert exc.value.code == 2
    assert "error" in capsys.readouterr().err


def test_cli_bad_methods_exit_2(tmp_path, collection_dir, capsys):
    rc = main(["experiment", "robustness", "run", str(collection_dir), "--out", str(tmp_path / "t.csv"),
               "--methods", "mtc,oracle", "--no-progress"])
    assert rc == 2 and "methods" in capsys.readouterr().err


# ------------------------------------------------------------------ real data
@pytest.mark.data
def test_one_trec8_trial(shared_data):
    col = load_collection(shared_data / "trec8")
    cfg = RobustnessConfig(methods=("mtc", "ip"), confidences=("delta",), budget=300)
    f = run_trial(col, cfg, 0)
    assert len(f) == 45 * 2 and f["collection"].iloc[0] == "trec8"
    # truth: MAP at depth 100 on the complete qrels lies in (0, 1) for these runs
    assert f["true_map_a"].between(0, 1).all()
    assert "READWARE" in "".join(col.manual) or len(col.manual) > 0


def test_render_scores_is_the_report_s_proper_scores_of_the_chosen_rows():
    """studies/calibration_tables.py prints render_scores: the Brier and log score of each chosen
    (method, confidence), as proper_scores computes them, and nothing of the rows left out."""
    from bayeval.experiments.report import render_scores
    from bayeval.experiments.statistics import proper_scores

    p = [0.55, 0.35, 0.65, 0.03, 1.0, 0.92, 0.2, 0.8]
    d = [-1, 1, 1, 1, -1, 1, 1, -1]
    frame = pd.concat([_frame(p, d), _frame(p[::-1], d, method="other")], ignore_index=True)
    text = render_scores(frame, [("m", "delta")])
    brier = float(proper_scores(frame)[0].query("method == 'm' and split == 'all'").brier.iloc[0])
    assert f"| {brier:.4f} |" in text
    assert "other" not in text
    assert "| P(ΔMAP < 0) | m / delta |" in text  # the reliability table's head


def test_workers_are_single_threaded_and_the_caller_keeps_its_environment(monkeypatch):
    from bayeval.experiments.execute import _single_threaded_children

    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    with _single_threaded_children():
        # what a worker spawned here inherits: one thread, except where the caller chose
        assert os.environ["NUMBA_NUM_THREADS"] == "1" and os.environ["OMP_NUM_THREADS"] == "3"
    assert "NUMBA_NUM_THREADS" not in os.environ and os.environ["OMP_NUM_THREADS"] == "3"
