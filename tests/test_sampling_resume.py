"""``bayeval experiment sampling run`` resumes a trial table only with the settings its rows were made with,
completes the trials that lack a requested (budget, method) on the same samples, and reads older tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli

from bayeval.defaults import DEFAULT_MODEL
from bayeval.experiments.sampling import SAMPLING_COLUMNS, read_sampling_table, sampling_statistics

# every column but the time a method took
SAME = [c for c in SAMPLING_COLUMNS if c != "seconds"]


def _run(coldir, out, *extra, methods="sample", budgets="0.3", trials="1"):
    return run_cli("experiment", "sampling", "run", coldir, "--out", out, "--trials", trials, "--budgets", budgets,
                   "--depth", "40", "--pairs", "3", "--methods", methods, *extra)


@pytest.fixture(scope="module")
def table(coldir, tmp_path_factory):
    """A one-trial table of the ``sample`` method (budget 0.3, depth 40, 3 pairs, the other settings default)."""
    out = tmp_path_factory.mktemp("tab") / "t.parquet"
    rc, _, err = _run(coldir, out)
    assert rc == 0, err
    return out


def test_resume_with_the_same_settings_skips(coldir, table):
    before = table.read_bytes()
    rc, _, err = _run(coldir, table)
    assert rc == 0 and "trial 0" not in err, err
    assert table.read_bytes() == before
    assert read_sampling_table(table).settings.notna().all()


@pytest.mark.parametrize(("extra", "option", "old", "new"), [
    (("--share", "0.3"), "--share", "0.5", "0.3"),
    (("--folds", "2"), "--folds", "5", "2"),
    (("--model", "hier-depth"), "--model", DEFAULT_MODEL, "hier-depth"),
    (("--variance", "own-label"), "--variance", "jackknife", "own-label"),
    (("--pairs", "2"), "--pairs", "3", "2"),
    (("--depth", "30"), "--depth", "40", "30"),
])
def test_resume_with_other_settings_is_refused_naming_each(coldir, table, extra, option, old, new):
    before = table.read_bytes()
    argv = ["experiment", "sampling", "run", coldir, "--out", table, "--trials", "2", "--budgets", "0.3",
            "--depth", "40", "--pairs", "3", "--methods", "sample"]
    i = argv.index(option) if option in argv else None
    if i is not None:
        argv[i + 1] = extra[1]
    else:
        argv += list(extra)
    rc, _, err = run_cli(*argv)
    assert rc == 2 and "Traceback" not in err, err
    assert f"{option} {old} in the table, {new} now" in err and str(table) in err and "another --out" in err
    assert table.read_bytes() == before                      # nothing written, not even the new trial 1


def test_resume_with_run_groups_is_refused(coldir, table):
    before = table.read_bytes()
    rc, _, err = _run(coldir, table, "--run-groups", methods="sample,combined")
    assert rc == 2 and "--run-groups false in the table, true now" in err, err
    assert table.read_bytes() == before


def test_a_method_or_budget_the_trial_lacks_is_computed_on_the_same_samples(coldir, tmp_path):
    """Resuming a ``sample``/0.3 table with ``sample,assisted``/0.3,0.5 adds exactly the missing rows, equal to a
    fresh run's (the same sample per budget: the cross-fitting seed and the stream depend on the budget's
    place); the rows already there are untouched."""
    part, fresh = tmp_path / "part.parquet", tmp_path / "fresh.parquet"
    assert _run(coldir, part)[0] == 0
    first = read_sampling_table(part)
    rc, _, err = _run(coldir, part, methods="sample,assisted", budgets="0.3,0.5")
    assert rc == 0 and "completed: assisted at 0.3, assisted at 0.5, sample at 0.5" in err, err
    assert _run(coldir, fresh, methods="sample,assisted", budgets="0.3,0.5")[0] == 0
    got, want = read_sampling_table(part), read_sampling_table(fresh)
    pd.testing.assert_frame_equal(got.iloc[:len(first)], first)       # the recorded rows, as they were
    key = ["budget", "method", "kind", "run_a", "run_b"]
    new = got.iloc[len(first):]
    assert set(zip(new.budget, new.method, strict=True)) == {(0.3, "assisted"), (0.5, "sample"), (0.5, "assisted")}
    a = got.drop(columns="settings").sort_values(key).reset_index(drop=True)
    b = want.drop(columns="settings").sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a[[c for c in SAME if c != "settings"]], b[[c for c in SAME if c != "settings"]])
    rc, _, err = _run(coldir, part, methods="sample,assisted", budgets="0.3,0.5")
    assert rc == 0 and "trial 0" not in err                       # now complete: skipped


def test_completing_a_trial_with_its_budgets_moved_is_refused(coldir, tmp_path):
    out = tmp_path / "t.parquet"
    assert _run(coldir, out)[0] == 0
    before = out.read_bytes()
    rc, _, err = _run(coldir, out, methods="sample,sample-bc", budgets="0.5,0.3")
    assert rc == 2 and "--budgets 0.3 in trial(s) 0 of seed 1, 0.5,0.3 now" in err, err
    assert out.read_bytes() == before


def _old(table, tmp_path, drop):
    """``table`` as an older version wrote it: without the columns ``drop``."""
    old = tmp_path / "old.parquet"
    pd.read_parquet(table).drop(columns=list(drop)).to_parquet(old, index=False)
    return old


@pytest.mark.parametrize("drop", [("settings",), ("settings", "power")])
def test_an_older_table_is_read_and_summarised_unchanged(coldir, table, tmp_path, drop):
    old = _old(table, tmp_path, drop)
    frame = read_sampling_table(old)
    assert list(frame.columns) == list(SAMPLING_COLUMNS) and frame.settings.isna().all()
    assert (frame.power == 1.0).all()
    pd.testing.assert_frame_equal(sampling_statistics(frame), sampling_statistics(read_sampling_table(table)))
    rc, text, err = run_cli("experiment", "sampling", "stats", old, "--format", "csv")
    rc2, text2, _ = run_cli("experiment", "sampling", "stats", table, "--format", "csv")
    assert rc == rc2 == 0 and text == text2, err


def test_an_older_table_is_resumed_only_where_nothing_can_mix(coldir, table, tmp_path):
    old = _old(table, tmp_path, ("settings",))
    before = old.read_bytes()
    rc, _, err = _run(coldir, old)                                     # nothing to compute: a warning
    assert rc == 0 and "warning" in err and "no recorded settings" in err, err
    assert old.read_bytes() == before
    rc, _, err = _run(coldir, old, trials="2")                         # trial 1 would join unchecked rows
    assert rc == 2 and "cannot be checked" in err and "another --out" in err and "Traceback" not in err, err
    assert old.read_bytes() == before
    rc, _, err = _run(coldir, old, "--name", "other")                  # another collection: added, kept apart
    assert rc == 0 and "warning" in err, err
    frame = read_sampling_table(old)
    assert frame[frame.collection == "other"].settings.notna().all()
    mine = frame[frame.collection != "other"]
    assert mine.settings.isna().all()
    pd.testing.assert_frame_equal(mine.drop(columns="settings").reset_index(drop=True),
                                  read_sampling_table(table).drop(columns="settings"))
    assert np.array_equal(mine.estimate, read_sampling_table(table).estimate)


def test_another_seed_with_other_settings_is_refused_too(coldir, table):
    """The statistics pool a collection's rows whatever their seed: a new seed must keep the settings."""
    rc, _, err = _run(coldir, table, "--seed", "2", "--share", "0.3")
    assert rc == 2 and "--share 0.5 in the table, 0.3 now" in err, err
    rc, _, err = _run(coldir, table.with_name("seeds.parquet"), "--seed", "2")
    assert rc == 0, err


def test_the_plan_asks_mtc_of_trial_0_only(coldir):
    from bayeval.experiments import load_collection
    from bayeval.experiments.sampling import SamplingStudyConfig, run_sampling_trial, sampling_resume_plan

    col = load_collection(coldir)
    cfg = dict(budgets=(0.3,), depth=40, pairs=3)
    frame = pd.concat([run_sampling_trial(col, SamplingStudyConfig(**cfg, methods=("sample",)), t) for t in (0, 1)])
    plan, warnings = sampling_resume_plan(frame, col.name, SamplingStudyConfig(**cfg, methods=("sample", "mtc")),
                                          range(3))
    assert plan == {0: {(0.3, "mtc")}, 1: set(), 2: {(0.3, "sample")}} and not warnings
