"""``bayeval experiment sampling``: the design's budget, the trial table, resuming, statistics, the figure."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_cli

from bayeval.data import RankData
from bayeval.experiments import load_collection
from bayeval.experiments.sampling import (
    SAMPLING_COLUMNS,
    SamplingStudyConfig,
    draw_pool_sample,
    run_sampling_trial,
    sampling_statistics,
)
from bayeval.experiments.table import read_table
from bayeval.sampling.design import proportional_inclusion, rank_inclusion
from bayeval.synthetic import make_collection


@pytest.mark.parametrize("budget", [0.02, 0.1, 0.5, 0.9])
def test_inclusion_meets_the_budget_in_the_stratum_ratio(budget):
    best = np.r_[np.arange(1, 11), np.repeat(np.arange(11, 31), 2), np.repeat(np.arange(31, 101), 3)]
    pi = rank_inclusion(best, budget)
    assert pi.sum() == pytest.approx(budget * len(best))
    assert np.all((pi > 0) & (pi <= 1))
    top, mid, low = pi[best <= 10], pi[(best > 10) & (best <= 30)], pi[best > 30]
    if top.max() < 1:  # uncapped: rates 10 : 5 : 2
        assert top[0] / mid[0] == pytest.approx(2) and mid[0] / low[0] == pytest.approx(2.5)


@pytest.mark.parametrize("share", [0.05, 0.3])
def test_proportional_inclusion_follows_p_with_a_floor(share):
    p = np.r_[np.zeros(50), np.linspace(0.01, 0.9, 150)]
    pi = proportional_inclusion(p, share, floor=0.05)
    assert pi.sum() == pytest.approx(share * len(p))
    assert pi.min() > 0 and np.all(np.diff(pi[50:]) >= 0)
    assert pi[-1] / pi[0] == pytest.approx(min(0.9 / 0.05, pi[-1] / pi[0]))


def test_draw_pool_sample_is_seeded_and_covers_the_pool(coldir):
    col = load_collection(coldir)
    data = RankData.build(col.runs(col.run_names), None, depth=40)
    s1, incl = draw_pool_sample(data, col.qrels(), 0.2, np.random.default_rng(5))
    s2, _ = draw_pool_sample(data, col.qrels(), 0.2, np.random.default_rng(5))
    for t in s1:
        assert np.array_equal(s1[t].grades, s2[t].grades)
        assert len(incl[t]) == len(s1[t])
    share = sum(int(s.sampled.sum()) for s in s1.values()) / sum(len(s) for s in s1.values())
    assert 0.1 < share < 0.3


def test_trial_rows_and_statistics(coldir):
    col = load_collection(coldir)
    frame = run_sampling_trial(col, SamplingStudyConfig(budgets=(0.3,), depth=40, pairs=4), 0)
    assert list(frame.columns) == list(SAMPLING_COLUMNS)
    assert set(frame.method) == {"sample", "model", "assisted"}
    assert (frame[frame.kind == "run"].groupby("method").size() == 5).all()
    assert (frame[frame.kind == "pair"].groupby("method").size() == 4).all()
    assert frame.se.ge(0).all() and frame.p_less.dropna().between(0, 1).all()
    st = sampling_statistics(frame)
    assert set(st.method) == {"sample", "model", "assisted"}
    assert st.coverage.between(0, 1).all() and (st.width > 0).all()


def test_cli_run_resumes_and_reports(coldir, tmp_path):
    out = tmp_path / "t.csv"
    argv = ["experiment", "sampling", "run", coldir, "--out", out, "--trials", "1", "--budgets", "0.3",
            "--depth", "40", "--pairs", "3"]
    rc, _, err = run_cli(*argv)
    assert rc == 0, err
    n = len(read_table(out, SAMPLING_COLUMNS))
    rc, _, err = run_cli(*argv)  # resumed: trial 0 is there, nothing is added
    assert rc == 0 and len(read_table(out, SAMPLING_COLUMNS)) == n
    rc, text, err = run_cli("experiment", "sampling", "stats", out, "--format", "csv")
    assert rc == 0 and "coverage" in text
    rc, text, err = run_cli("experiment", "sampling", "stats", out, "--reliability", "--format", "csv")
    assert rc == 0 and "inconsistent" in text, err
    rc, _, err = run_cli("experiment", "sampling", "figure", out, "--out", tmp_path / "f.png")
    assert rc == 0 and (tmp_path / "f.png").stat().st_size > 0
    rc, _, err = run_cli("experiment", "sampling", "run", coldir, "--out", out, "--budgets", "0,2")
    assert rc == 2 and "--budgets" in err
    rc, _, err = run_cli("experiment", "sampling", "run", coldir, "--out", out, "--methods", "sample,mtx")
    assert rc == 2 and "--methods" in err
    rc, _, err = run_cli("experiment", "sampling", "run", coldir, "--out", tmp_path / "u.csv", "--folds", "1")
    assert rc == 2 and "folds" in err
    rc, _, err = run_cli("experiment", "sampling", "run", coldir, "--out", tmp_path / "u.csv", "--share", "1.5")
    assert rc == 2 and "share" in err


def test_folds_zero_fits_once_and_cross_fitting_changes_the_predictions(coldir):
    col = load_collection(coldir)
    cfg = dict(budgets=(0.3,), depth=40, pairs=2, methods=("assisted",))
    cross = run_sampling_trial(col, SamplingStudyConfig(**cfg), 0)
    whole = run_sampling_trial(col, SamplingStudyConfig(**cfg, folds=0), 0)
    runs_c, runs_w = cross[cross.kind == "run"], whole[whole.kind == "run"]
    assert np.array_equal(runs_c.truth, runs_w.truth)                 # the same sample and truth ...
    assert not np.allclose(runs_c.estimate, runs_w.estimate)          # ... other predictions
    with pytest.raises(Exception, match="folds"):
        SamplingStudyConfig(folds=1)


def test_mtc_rows_use_as_many_judgments_as_the_sample_and_come_once(coldir):
    col = load_collection(coldir)
    cfg = SamplingStudyConfig(budgets=(0.3,), depth=40, pairs=3, methods=("sample", "mtc"))
    frame = run_sampling_trial(col, cfg, 0)
    runs = frame[frame.kind == "run"]
    assert runs.groupby("method").judgments.first().nunique() == 1      # MTC judged as many as the sample drew
    assert (frame[frame.method == "mtc"].se >= 0).all()
    assert set(run_sampling_trial(col, cfg, 1).method) == {"sample"}     # deterministic: trial 0 only


def test_model_recal_rows_recalibrate_only_the_unjudged(coldir):
    col = load_collection(coldir)
    cfg = SamplingStudyConfig(budgets=(0.3,), depth=40, pairs=3, methods=("model", "model-recal"))
    frame = run_sampling_trial(col, cfg, 0)
    runs = frame[frame.kind == "run"]
    model, recal = runs[runs.method == "model"], runs[runs.method == "model-recal"]
    assert len(model) == len(recal) == 5
    assert not np.allclose(model.estimate.to_numpy(), recal.estimate.to_numpy())


def test_combined_rows_combine_the_model_and_assisted_rows_of_the_same_sample(coldir):
    from bayeval.sampling import combine_differences

    col = load_collection(coldir)
    cfg = dict(budgets=(0.3,), depth=40, pairs=4)
    three = run_sampling_trial(col, SamplingStudyConfig(**cfg, methods=("model", "assisted", "combined")), 0)
    alone = run_sampling_trial(col, SamplingStudyConfig(**cfg, methods=("combined",)), 0)
    assert set(alone.method) == {"combined"}                         # model and assisted computed, not written
    a = three[three.method == "combined"].reset_index(drop=True)
    assert np.allclose(a.estimate, alone.estimate) and np.allclose(a.se, alone.se)
    pairs = {m: g for m, g in three[three.kind == "pair"].groupby("method")}
    want = combine_differences(pairs["assisted"].estimate, pairs["assisted"].se, pairs["model"].estimate,
                               pairs["model"].se, share=0.5)
    assert np.allclose(pairs["combined"].estimate, want.mean) and np.allclose(pairs["combined"].p_less,
                                                                              want.p_less())
    runs = three[(three.kind == "run") & (three.method == "combined")]
    assert (runs.se > 0).all() and runs.weight.between(0, 1).all()
    with pytest.raises(Exception, match="share"):
        SamplingStudyConfig(share=1.0)


def test_run_groups_pass_the_run_types_to_the_combined_means(tmp_path, collection_dir_writer, monkeypatch):
    """``run_groups``: the combined runs' means get one shift per runs.tsv type (the manual flag of each run,
    in the trial's run order); the pairs are unchanged; off, no groups are passed."""
    import bayeval.experiments.sampling_methods as combined  # the study's methods call combine_means from here

    col_dir = collection_dir_writer(make_collection(n_topics=6, n_systems=6, n_docs=120, depth=40,
                                                    judged_depth=40, seed=3), tmp_path)
    names = sorted(p.name.removeprefix("input.") for p in (col_dir / "runs").iterdir())
    (col_dir / "runs.tsv").write_text("run\tgroup\ttype\n" + "".join(
        f"{n}\tg\t{'manual' if i < 2 else 'automatic'}\n" for i, n in enumerate(names)))
    col = load_collection(col_dir)
    seen = []
    real = combined.combine_means
    monkeypatch.setattr(combined, "combine_means", lambda *a, **k: seen.append(k.get("groups")) or real(*a, **k))
    cfg = dict(budgets=(0.3,), depth=40, pairs=4, methods=("combined",))
    off = run_sampling_trial(col, SamplingStudyConfig(**cfg), 0)
    on = run_sampling_trial(col, SamplingStudyConfig(**cfg, run_groups=True), 0)
    assert seen[0] is None
    runs_on = on[on.kind == "run"]
    assert np.array_equal(seen[1], runs_on.manual.to_numpy()) and seen[1].sum() == 2
    assert np.array_equal(off[off.kind == "pair"].estimate, on[on.kind == "pair"].estimate)
    assert not np.allclose(off[off.kind == "run"].estimate, runs_on.estimate)
    with pytest.raises(Exception, match="run_groups: only the 'combined'"):
        SamplingStudyConfig(methods=("model",), run_groups=True)
    with pytest.raises(Exception, match="run_groups: True or False"):
        SamplingStudyConfig(methods=("combined",), run_groups="yes")


def test_cli_run_groups_without_combined_is_refused(coldir, tmp_path):
    rc, _, err = run_cli("experiment", "sampling", "run", coldir, "--out", tmp_path / "t.parquet", "--trials", "1",
                         "--methods", "model", "--run-groups")
    assert rc == 2 and "run_groups: only the 'combined' method" in err and "Traceback" not in err
