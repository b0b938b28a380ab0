"""The sampling study on graded collections and with budgets in judgments per topic: ``--relevance-level``,
``--condense``, ``--per-topic`` (docs/sampling.md)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_cli

from bayeval.data import Qrels, RankData
from bayeval.experiments import load_collection
from bayeval.experiments.sampling import (
    SamplingStudyConfig,
    draw_pool_sample,
    read_sampling_table,
    run_sampling_trial,
    sampling_resume_plan,
)
from bayeval.measures import evaluate
from bayeval.synthetic import dense_collection


@pytest.fixture(scope="module")
def graded_dir(tmp_path_factory, collection_dir_writer):
    """A small dense graded collection (grades 1 and 2), 8 topics, 6 runs, pools of 60 documents."""
    col = dense_collection(seed=4, n_topics=8, n_systems=6, n_docs=60, depth=40, judged_depth=40)
    return collection_dir_writer(col, tmp_path_factory.mktemp("graded"))


def test_per_topic_budget_draws_that_many_in_each_topic_on_average(graded_dir):
    """``per_topic``: every topic's inclusion probabilities sum to the budget (capped by its pool), whatever
    the pool's size; 400 draws of one topic average the budget within 4 standard errors."""
    col = load_collection(graded_dir)
    data = RankData.build(col.runs(col.run_names), None, depth=40)
    _, incl = draw_pool_sample(data, col.qrels(), 12, np.random.default_rng(0), per_topic=True)
    assert all(v.sum() == pytest.approx(min(12, len(v))) for v in incl.values())
    rng = np.random.default_rng(1)
    counts = [int(draw_pool_sample(data, col.qrels(), 12, rng, per_topic=True)[0]["1"].sampled.sum())
              for _ in range(400)]
    pi = incl["1"]
    assert abs(np.mean(counts) - 12) < 4 * np.sqrt(np.sum(pi * (1 - pi)) / 400)
    with pytest.raises(Exception, match="budgets: judgments per topic"):
        SamplingStudyConfig(budgets=(0.5,), per_topic=True)
    with pytest.raises(Exception, match="relevance_level"):
        SamplingStudyConfig(relevance_level=0)


def test_relevance_level_reaches_the_truth_and_every_estimator(graded_dir):
    """At level 2 the truth is trec_eval's MAP at level 2 and every estimator counts grade 2 only: the sample
    alone's estimate differs from level 1's on the same draw, and an estimator given level 1 instead would
    count grade-1 documents (its MAP at level 2 would exceed the truth's scale: checked by the level-1 rows)."""
    col = load_collection(graded_dir)
    runs = col.runs(col.run_names)
    rows = {lvl: run_sampling_trial(col, SamplingStudyConfig(budgets=(20,), per_topic=True, depth=40, pairs=3,
                                                             methods=("sample", "sample-bcp", "assisted"),
                                                             relevance_level=lvl), 0)
            for lvl in (1, 2)}
    for lvl, frame in rows.items():
        q = col.qrels()
        truth = evaluate(RankData.build(runs, Qrels(q.topic_judgments, lvl), depth=40), "AP").to_frame()
        want = truth[truth.topic == "all"].set_index("run").value
        got = frame[(frame.kind == "run") & (frame.method == "sample")].set_index("run_a").truth
        assert np.allclose(got.to_numpy(), want.reindex(got.index).to_numpy())
    one, two = (rows[lvl][(rows[lvl].kind == "run")] for lvl in (1, 2))
    assert not np.allclose(one.estimate.to_numpy(), two.estimate.to_numpy())
    assert two.truth.mean() < one.truth.mean()   # fewer relevant documents at level 2: lower MAP here
    assert '"relevance_level": 2' in two.settings.iloc[0] and "relevance_level" not in one.settings.iloc[0]
    assert '"per_topic": true' in two.settings.iloc[0]


def test_cli_condense_level_and_per_topic(graded_dir, tmp_path):
    out = tmp_path / "t.csv"
    base = ["experiment", "sampling", "run", graded_dir, "--out", out, "--trials", "1", "--depth", "40",
            "--pairs", "3", "--methods", "sample-bcp"]
    rc, _, err = run_cli(*base, "--per-topic", "10,20", "--relevance-level", "2", "--condense")
    assert rc == 0, err
    frame = read_sampling_table(out)
    assert set(frame.collection) == {f"{graded_dir.name}-condensed"}
    assert sorted(set(frame.budget)) == [10.0, 20.0]
    rc, _, err = run_cli(*base, "--per-topic", "10,20", "--relevance-level", "1", "--condense")
    assert rc == 2 and "--relevance-level 2 in the table, 1 now" in err
    rc, _, err = run_cli(*base, "--budgets", "0.1", "--per-topic", "10")
    assert rc == 2 and "not allowed with argument" in err
    rc, _, err = run_cli(*base, "--per-topic", "0.5")
    assert rc == 2 and "argument --per-topic: comma-separated judgments per topic" in err and "Traceback" not in err
    plan, _ = sampling_resume_plan(frame, frame.collection.iloc[0],
                                   SamplingStudyConfig(budgets=(10, 20), per_topic=True, relevance_level=2, depth=40,
                                                       pairs=3, methods=("sample-bcp",)), range(1))
    assert plan == {0: set()}


def test_auto_form_switches_at_fifty_a_topic_and_the_study_warns(graded_dir, tmp_path):
    """``form="auto"`` (the default): the anchored estimate (weight 1) where a budget's median expected draws a
    topic are below 50, the ratio (a tuned weight) from 50 — the same rows as those forms asked for by name; the
    study warns of budgets below the stated minimum before it starts."""
    col = load_collection(graded_dir)
    kw = dict(depth=40, pairs=3, methods=("assisted",), per_topic=True)
    auto = run_sampling_trial(col, SamplingStudyConfig(budgets=(12, 55), **kw), 0)
    named = {form: run_sampling_trial(col, SamplingStudyConfig(budgets=(12, 55), form=form, **kw), 0)
             for form in ("anchored", "ratio")}
    for budget, form in ((12, "anchored"), (55, "ratio")):
        for column in ("estimate", "weight"):
            a, b = (f[f.budget == budget][column].to_numpy() for f in (auto, named[form]))
            np.testing.assert_array_equal(a, b)
    # the two forms differ on this sample, so the equalities above say which form auto took
    assert not np.allclose(*(f[f.budget == 12].estimate.to_numpy() for f in named.values()))
    assert (auto[auto.budget == 12].weight == 1.0).all()  # the anchored form has no tuned weight
    assert '"form": "auto"' in auto.settings.iloc[0]
    rc, _, err = run_cli("experiment", "sampling", "run", graded_dir, "--out", tmp_path / "t.csv", "--trials", "1",
                         "--depth", "40", "--pairs", "3", "--methods", "assisted,sample-bcp", "--per-topic", "5,40")
    assert rc == 0, err
    assert "warning: budget 5: 8 of 8 topics have fewer than 10 judgments drawn" in err
    assert "budget 5: 8 of 8 topics have fewer than 40" in err and "budget 40:" not in err
