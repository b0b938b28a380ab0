"""An automatic assessor's labels as the predictor of the model-assisted estimate (``evaluate_assisted`` with
``PredictionFit(..., options={"labels": [...]})``, ``bayeval sampled --estimator assisted --labels NAME=FILE``):
the command is the API, and the random sample corrects labels whose errors favour one run, which the model
with the labels alone does not."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli
from test_auto_labels import rag_like

from bayeval.data import AssessorLabels, Qrels, RankData, TopicJudgments
from bayeval.expected import expected_measures
from bayeval.experiments.auto_labels import simulate_labels
from bayeval.experiments.sampling import draw_pool_sample, pool_judgments
from bayeval.io import read_labels, read_stratified_sample, write_run, write_stratified_sample
from bayeval.measures import evaluate
from bayeval.relevance import PredictionFit, estimate_probabilities
from bayeval.sampling import evaluate_assisted
from bayeval.synthetic import make_collection

DEPTH = 40


@pytest.fixture(scope="module")
def col():
    return make_collection(n_topics=6, n_systems=4, n_docs=120, depth=DEPTH, judged_depth=DEPTH, seed=3)


@pytest.fixture
def files(tmp_path, col):
    (tmp_path / "runs").mkdir()
    for run in col.runs:
        write_run(run, tmp_path / "runs" / f"input.{run.name}")
    base = RankData.build(col.runs, None, depth=DEPTH)
    sample, _ = draw_pool_sample(base, col.qrels, 0.3, np.random.default_rng(0))
    write_stratified_sample(sample, tmp_path / "sample.txt")
    f = simulate_labels(pool_judgments(base, col.qrels), rag_like().sharpened(0.5), seed=2).to_frame()
    (tmp_path / "llm.txt").write_text("".join(f"{t} 0 {d} {v}\n" for t, d, v in zip(f.topic, f.docno, f.value,
                                                                                     strict=True)))
    return tmp_path


def test_cli_labels_are_the_apis(files, col):
    argv = ["sampled", files / "sample.txt", files / "runs", "--estimator", "assisted", "--seed", "4",
            "--depth", DEPTH, "--format", "csv"]
    rc, out, err = run_cli(*argv, "--labels", f"llm={files / 'llm.txt'}")
    assert rc == 0, err
    got = pd.read_csv(io.StringIO(out), dtype={"topic": str}).set_index(["run", "measure"])
    sample = read_stratified_sample(files / "sample.txt")
    labels = read_labels(files / "llm.txt", name="llm")
    fit = PredictionFit(col.runs, depth=DEPTH, options={"depth": DEPTH, "labels": [labels]})
    want = evaluate_assisted(col.runs, sample, fit, seed=4, depth=DEPTH).summary().set_index(["run", "measure"])
    np.testing.assert_allclose(got.loc[want.index].value.to_numpy(), want.value.to_numpy(), rtol=1e-5)
    rc, plain, err = run_cli(*argv)
    assert rc == 0, err
    plain = pd.read_csv(io.StringIO(plain), dtype={"topic": str}).set_index(["run", "measure"]).loc[want.index]
    assert not np.allclose(plain.value.to_numpy(), want.value.to_numpy(), rtol=1e-5)   # the labels reached the fit
    rc, out, err = run_cli(*argv[:-2], "--labels", f"llm={files / 'llm.txt'}")
    assert rc == 0 and "with the labels of llm" in out, err


def test_cli_labels_need_the_assisted_estimator(files):
    rc, out, err = run_cli("sampled", files / "sample.txt", files / "runs", "--estimator", "stat",
                           "--labels", f"llm={files / 'llm.txt'}")
    assert rc == 2 and "--labels" in err


def test_cli_bad_label_file_names_its_line(files):
    (files / "bad.txt").write_text("1 0 d1 2\n1 0 d2 high\n")
    rc, out, err = run_cli("sampled", files / "sample.txt", files / "runs", "--estimator", "assisted",
                           "--labels", f"llm={files / 'bad.txt'}")
    assert rc == 2 and "bad.txt" in err and ":2" in err, err


@pytest.mark.slow
def test_the_sample_corrects_labels_that_favour_a_run():
    """Labels whose errors favour run 0 (every nonrelevant document in its top 20 labelled as relevant ones are):
    the model with the labels, fitted on the random sample, overrates run 0 against the others; the
    model-assisted estimate with the same labels as predictor is unbiased for every run over repeated samples
    (mean error within 3 Monte Carlo standard errors) and its intervals cover."""
    depth, reps = 50, 12
    col = make_collection(n_topics=20, n_systems=6, n_docs=150, depth=depth, judged_depth=depth, base_rate=0.1,
                          seed=7)
    base = RankData.build(col.runs, None, depth=depth)
    truth = pool_judgments(base, col.qrels)
    frame = evaluate(RankData.build(col.runs, truth, depth=depth), "AP").to_frame()
    true_map = frame[frame.topic == "all"].set_index("run").value.reindex(col.runs.names).to_numpy()
    sim = simulate_labels(truth, rag_like().sharpened(0.8), mode="correlated", runs=col.runs,
                          favoured=[col.runs.names[0]], strength=1.0, favour_depth=20, seed=1)
    labels = [AssessorLabels.from_frame(sim.to_frame(), "llm", "grades")]
    fit = PredictionFit(col.runs, depth=depth, options={"labels": labels})
    assisted, alone, covered = [], [], []
    for r in range(reps):
        sample, incl = draw_pool_sample(base, truth, 0.3, np.random.default_rng(r))
        s = evaluate_assisted(col.runs, sample, fit, inclusion=incl, depth=depth, cutoffs=(), seed=r).summary()
        s = s[s.measure == "AP"].set_index("run").reindex(col.runs.names)
        assisted.append(s.value.to_numpy() - true_map)
        covered.append(((s.lower <= true_map) & (true_map <= s.upper)).to_numpy())
        judged = Qrels({t: TopicJudgments(x.docnos[x.sampled], x.grades[x.sampled]) for t, x in sample.items()})
        data = RankData.build(col.runs, judged, depth=depth)
        est = estimate_probabilities(data, p_draws=None, seed=r, labels=labels)
        alone.append(expected_measures(data, est, measures="AP", method="delta").all_expected[0] - true_map)
    assisted, alone = np.array(assisted), np.array(alone)
    se = assisted.std(axis=0, ddof=1) / np.sqrt(reps)
    assert np.all(np.abs(assisted.mean(axis=0)) < 3 * se), (assisted.mean(axis=0), se)
    assert np.mean(covered) >= 0.85, np.mean(covered)
    # the model alone: run 0's error above the others' by more than 3 standard errors of that contrast
    contrast = alone[:, 0] - alone[:, 1:].mean(axis=1)
    assert contrast.mean() > 3 * contrast.std(ddof=1) / np.sqrt(reps), contrast
