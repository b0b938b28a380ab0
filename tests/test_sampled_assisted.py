"""Model-assisted estimates from one's own sample in one call (``evaluate_assisted``, ``bayeval sampled
--estimator assisted``): the same numbers as the sampling study's ``assisted`` rows, prels and stratified files
agreeing, non-random judgments that fit the model but never correct it, the command end to end (a stratified
file; a campaign's exported prels), and one-line errors."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli
from test_sampling_assisted import _collection, _draw, _true_map_p30

from bayeval.data import Qrels, RankData, RelevanceProbabilities, TopicJudgments
from bayeval.data.sample import StratifiedSample, TopicSample
from bayeval.defaults import DEFAULT_MODEL
from bayeval.errors import BayevalInputError
from bayeval.experiments import load_collection
from bayeval.experiments.sampling import SamplingStudyConfig, draw_pool_sample, run_sampling_trial
from bayeval.io import read_prels, read_qrels, read_stratified_sample, write_qrels, write_run, write_stratified_sample
from bayeval.relevance import PredictionFit
from bayeval.sampling import anchored_measures, assisted_measures, evaluate_assisted
from bayeval.sampling.crossfit import assign_folds
from bayeval.synthetic import make_collection

DEPTH = 40


@pytest.fixture(scope="module")
def col():
    return make_collection(n_topics=6, n_systems=5, n_docs=120, depth=DEPTH, judged_depth=DEPTH, seed=3)


@pytest.fixture(scope="module")
def coldir(tmp_path_factory, collection_dir_writer, col):
    return collection_dir_writer(col, tmp_path_factory.mktemp("col"))


def _study_sample(collection, config, trial):
    """The sample ``run_sampling_trial`` draws for the first budget of ``trial`` (same random stream)."""
    runs = collection.runs(collection.run_names)
    base = RankData.build(runs, None, depth=config.depth, topics=collection.topics())
    rng = np.random.default_rng([config.seed, trial])
    ia, _ = np.triu_indices(len(runs), 1)
    rng.choice(len(ia), size=min(config.pairs, len(ia)), replace=False)  # the trial's pairs come first
    return runs, *draw_pool_sample(base, collection.qrels(), config.budgets[0], rng)


def _sorted(sample: StratifiedSample) -> StratifiedSample:
    """The same sample with each topic's pool in docno order (the order the prels route builds)."""
    out = {}
    for t, ts in sample.items():
        o = np.argsort(ts.docnos.astype(str), kind="stable")
        out[t] = TopicSample(ts.docnos[o], ts.strata[o], ts.labels, ts.grades[o])
    return StratifiedSample(out)


# ------------------------------------------------------------------------------------------ the study's numbers
@pytest.mark.parametrize("trial", [0, 2])
def test_equals_the_study_assisted_rows(coldir, trial):
    """Differential: on the study's own sample, with its fold seed and model, MAP, se and every pair's Δ, se and
    P(Δ < 0) are the study's, bit for bit (the API wires the same library pieces; nothing re-derived)."""
    collection = load_collection(coldir)
    config = SamplingStudyConfig(budgets=(0.3,), depth=DEPTH, pairs=6, methods=("assisted",), model=DEFAULT_MODEL)
    study = run_sampling_trial(collection, config, trial)
    runs, sample, incl = _study_sample(collection, config, trial)
    res = evaluate_assisted(runs, sample, PredictionFit(runs, DEFAULT_MODEL, depth=DEPTH), inclusion=incl,
                            depth=DEPTH, seed=config.seed * 1_000_003 + trial * 101, cutoffs=())
    rows = study[study.kind == "run"].set_index("run_a").reindex(runs.names)
    mean, var = res.evaluation.mean("AP")
    np.testing.assert_allclose(mean, rows.estimate.to_numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.sqrt(var), rows.se.to_numpy(), rtol=0, atol=1e-12)
    pairs = study[study.kind == "pair"]
    mine = res.differences("AP").set_index(["run_a", "run_b"])
    for r in pairs.itertuples():
        a, b, sign = (r.run_a, r.run_b, 1.0) if (r.run_a, r.run_b) in mine.index else (r.run_b, r.run_a, -1.0)
        got = mine.loc[(a, b)]
        assert sign * got.delta == pytest.approx(r.estimate, abs=1e-12)
        assert got.se == pytest.approx(r.se, abs=1e-12)
        assert (got.p_less if sign > 0 else 1 - got.p_less) == pytest.approx(r.p_less, abs=1e-12)
    assert res.sampled == int(rows.judgments.iloc[0]) and res.pooled == int(rows["pool"].iloc[0])
    assert res.design == "inclusion" and res.folds == 5


def test_combined_equals_the_study_combined_rows(coldir):
    """``AssistedResult.combined`` given the study's model-alone rows gives the study's ``combined`` rows: the
    same empirical-Bayes combination (share 0.5), on the same pairs."""
    collection = load_collection(coldir)
    config = SamplingStudyConfig(budgets=(0.3,), depth=DEPTH, pairs=8, methods=("model", "assisted", "combined"),
                                 model=DEFAULT_MODEL)
    study = run_sampling_trial(collection, config, 1)
    runs, sample, incl = _study_sample(collection, config, 1)
    res = evaluate_assisted(runs, sample, PredictionFit(runs, DEFAULT_MODEL, depth=DEPTH), inclusion=incl,
                            depth=DEPTH, seed=config.seed * 1_000_003 + 101, cutoffs=())
    names = list(runs.names)
    rows = {m: study[(study.method == m) & (study.kind == "run")].set_index("run_a").reindex(names)
            for m in ("model", "combined")}
    pairs = {m: study[(study.method == m) & (study.kind == "pair")].reset_index(drop=True)
             for m in ("model", "combined")}
    a = np.array([names.index(x) for x in pairs["model"].run_a])
    b = np.array([names.index(x) for x in pairs["model"].run_b])
    both, diffs = res.combined(rows["model"].estimate, rows["model"].se, pairs["model"].estimate,
                               pairs["model"].se, pairs=(a, b))
    np.testing.assert_allclose(both.mean, rows["combined"].estimate, rtol=0, atol=1e-12)
    np.testing.assert_allclose(both.se, rows["combined"].se, rtol=0, atol=1e-12)
    np.testing.assert_allclose(diffs.mean, pairs["combined"].estimate, rtol=0, atol=1e-12)
    np.testing.assert_allclose(diffs.se, pairs["combined"].se, rtol=0, atol=1e-12)
    np.testing.assert_allclose(diffs.p_less(), pairs["combined"].p_less, rtol=0, atol=1e-12)
    assert 0 < np.mean(both.weight) < 1  # it leans on both


def test_prels_route_equals_the_stratified_route(col):
    """Prels list only the drawn documents' π; the pool comes from the runs and the shrink's m_t from the number
    drawn. For a stratified sample read with π = n_c / N_c, Σ_d π_d = n_t, so both routes give one result."""
    data = RankData.build(col.runs, None, depth=DEPTH)
    sample, _ = draw_pool_sample(data, col.qrels, 0.25, np.random.default_rng(4))
    sample = _sorted(sample)
    fit = PredictionFit(col.runs, "smoothed", depth=DEPTH)
    strat = evaluate_assisted(col.runs, sample, fit, depth=DEPTH, seed=3, cutoffs=(10,))
    prels = evaluate_assisted(col.runs, sample.judged(), fit, depth=DEPTH, seed=3, cutoffs=(10,))
    assert (strat.design, prels.design) == ("strata", "prels")
    assert strat.pooled == prels.pooled and strat.sampled == prels.sampled
    for m in ("AP", "P10"):
        np.testing.assert_allclose(prels.evaluation.mean(m)[0], strat.evaluation.mean(m)[0], rtol=0, atol=1e-12)
        np.testing.assert_allclose(prels.evaluation.covariance[m], strat.evaluation.covariance[m], rtol=0,
                                   atol=1e-12)
    assert prels.weight == pytest.approx(strat.weight, abs=1e-12)
    # m_t matters: Σ π over the drawn documents alone (the naive reading of prels) shrinks λ_t further
    naive = {t: float(np.sum(ts.inclusion[ts.sampled])) for t, ts in sample.items()}
    other = assisted_measures(col.runs, sample, prels.predictions, cutoffs=(10,), depth=DEPTH, expected_draws=naive)
    assert np.abs(other.mean("AP")[0] - prels.evaluation.mean("AP")[0]).max() > 1e-6


# ------------------------------------------------------------------------------- non-random judgments fit only
def _memoriser(preds):
    """A model that returns the label of every document it was trained on, and ``preds`` elsewhere."""
    def fit(judgments: Qrels) -> RelevanceProbabilities:
        out = {}
        for t, (docs, p) in preds.items():
            p = dict(zip(docs.tolist(), p.tolist(), strict=True))
            if t in judgments.topic_judgments:
                p.update(zip(judgments[t].docnos.tolist(), (judgments[t].grades >= 1).astype(float).tolist(),
                             strict=True))
            out[t] = p
        return RelevanceProbabilities(out)
    return fit


def _picks(truth, sample):
    """What an adaptive selector judged beside the draw: every relevant document and every fifth document,
    where not drawn — chosen *because* of their relevance, with no known chance."""
    out = {}
    for t, (docs, x) in truth.items():
        idx = np.arange(len(docs))
        pick = ((x == 1) | (idx % 5 == 0)) & ~sample[t].sampled
        out[t] = TopicJudgments(docs[pick], x[pick].astype(np.int64))
    return Qrels(out)


def test_each_fit_learns_from_other_folds_non_random_judgments_only(col):
    """The training judgments of fold k: the drawn documents of the other folds and the non-random judgments of
    documents outside fold k; never a judgment of fold k's documents. The correction uses the draw alone."""
    data = RankData.build(col.runs, None, depth=DEPTH)
    sample, _ = draw_pool_sample(data, col.qrels, 0.25, np.random.default_rng(2))
    truth = {t: (ts.docnos, np.array([max(col.qrels.grade_of(t, d) or 0, 0) for d in ts.docnos]))
             for t, ts in sample.items()}
    extra = _picks(truth, sample)
    seen = []
    model = PredictionFit(col.runs, "smoothed", depth=DEPTH)

    def fit(judgments):
        seen.append(judgments)
        return model(judgments)

    res = evaluate_assisted(col.runs, sample, fit, extra=extra, depth=DEPTH, folds=3, seed=5)
    fold = assign_folds(sample, 3, seed=5)
    assert len(seen) == 3
    for k, judged in enumerate(seen):
        for t, ts in sample.items():
            mine = set(ts.docnos[fold[t] == k].tolist())
            got = set(judged[t].docnos.tolist())
            assert not got & mine
            want = set(ts.docnos[ts.sampled & (fold[t] != k)].tolist()) | (set(extra[t].docnos.tolist()) - mine)
            assert got == want
    assert res.extra == sum(len(extra[t].docnos) for t in extra.topics) and res.extra > 0
    # the fit changed ...
    plain = evaluate_assisted(col.runs, sample, model, depth=DEPTH, folds=3, seed=5)
    t0 = sample.topics[0]
    assert not np.allclose(res.predictions.lookup(t0, sample[t0].docnos, 0.0),
                           plain.predictions.lookup(t0, sample[t0].docnos, 0.0))
    # ... the correction did not: the draw alone with those predictions (here ~20 drawn a topic: the anchored
    # form; the ratio form likewise)
    assert res.form == "anchored"
    again = anchored_measures(col.runs, sample, res.predictions, cutoffs=(10,), depth=DEPTH)
    np.testing.assert_array_equal(again.values["AP"], res.evaluation.values["AP"])
    np.testing.assert_array_equal(again.covariance["AP"], res.evaluation.covariance["AP"])
    ratio = evaluate_assisted(col.runs, sample, fit, extra=extra, depth=DEPTH, folds=3, seed=5, form="ratio")
    again = assisted_measures(col.runs, sample, ratio.predictions, cutoffs=(10,), depth=DEPTH)
    np.testing.assert_array_equal(again.values["AP"], ratio.evaluation.values["AP"])
    np.testing.assert_array_equal(again.covariance["AP"], ratio.evaluation.covariance["AP"])


def test_non_random_judgments_keep_the_estimate_unbiased():
    """Monte Carlo over draws: a selector's picks (relevant documents, chosen for it) judged beside the draw,
    and a model that memorises what it is trained on. P@30 (linear in the labels) stays unbiased and MAP's
    intervals cover. Red if a fold's own non-random judgments reach its fit (p_d = x_d exactly where d was not
    drawn) or if they are given a correction term of their own as if drawn."""
    runs, truth, preds, design = _collection()
    true_map, true_p30 = _true_map_p30(runs, truth)
    incl = {t: design[t] for t in truth}
    fit = _memoriser({t: (truth[t][0], preds[t]) for t in truth})
    rng = np.random.default_rng(11)
    draws, p30, cover = 120, [], 0
    for i in range(draws):
        sample = _draw(truth, design, rng)
        res = evaluate_assisted(runs, sample, fit, inclusion=incl, extra=_picks(truth, sample), folds=2, seed=i,
                                weight=1.0, cutoffs=(30,), depth=100)
        lo, hi = res.confidence_interval(0.95, "AP")
        cover += int(np.sum((lo <= true_map) & (true_map <= hi)))
        p30.append(res.evaluation.mean("P30")[0])
    est = np.array(p30)
    z = np.abs(est.mean(axis=0) - true_p30) / (est.std(axis=0, ddof=1) / np.sqrt(draws))
    coverage = cover / (draws * len(runs))
    assert z.max() < 3.5, z
    assert 0.90 <= coverage <= 0.99, coverage


# ------------------------------------------------------------------------------------------------ the command
@pytest.fixture
def files(tmp_path, col):
    (tmp_path / "runs").mkdir()
    for run in col.runs:
        write_run(run, tmp_path / "runs" / f"input.{run.name}")
    write_qrels(col.qrels, tmp_path / "truth.txt")
    sample, _ = draw_pool_sample(RankData.build(col.runs, None, depth=DEPTH), col.qrels, 0.25,
                                 np.random.default_rng(0))
    write_stratified_sample(sample, tmp_path / "sample.txt")
    return tmp_path


def test_cli_on_a_stratified_file(files, col):
    rc, out, err = run_cli("sampled", files / "sample.txt", files / "runs", "--estimator", "assisted", "--model",
                           "smoothed", "--seed", "4", "--format", "csv")
    assert rc == 0, err
    frame = pd.read_csv(io.StringIO(out), dtype={"topic": str})
    sample = read_stratified_sample(files / "sample.txt")
    res = evaluate_assisted(col.runs, sample, PredictionFit(col.runs, "smoothed", depth=1000), seed=4)
    want = res.summary().set_index(["run", "measure"])
    got = frame.set_index(["run", "measure"]).loc[want.index]
    for c in ("value", "se", "lower", "upper"):
        np.testing.assert_allclose(got[c].to_numpy(), want[c].to_numpy(), rtol=1e-5)  # csv's 6 digits
    rc, out, err = run_cli("sampled", files / "sample.txt", files / "runs", "--estimator", "assisted", "--model",
                           "smoothed", "--seed", "4", "--pairs", "--format", "json")
    assert rc == 0, err
    pairs = pd.read_json(io.StringIO(out))
    assert list(pairs.columns) == ["run_a", "run_b", "delta", "se", "lower", "upper", "p_less"]
    assert len(pairs) == 10 and pairs.p_less.between(0, 1).all()
    np.testing.assert_allclose(pairs.p_less, res.differences().p_less, rtol=1e-9)
    rc, out, err = run_cli("sampled", files / "sample.txt", files / "runs", "--estimator", "assisted", "--model",
                           "smoothed", "--no-progress")
    assert rc == 0 and "MAP" in out and "model-assisted" in out and "design-based" in out, err


def test_cli_gives_the_rank_model_its_depth_as_every_command(files, col):
    """``--model-depth`` (default min(--depth, 100), as evaluate/estimate/report) reaches the model's fits."""
    argv = ["sampled", files / "sample.txt", files / "runs", "--estimator", "assisted", "--format", "csv"]
    rc, out, err = run_cli(*argv, "--model-depth", "5")
    assert rc == 0, err
    got = pd.read_csv(io.StringIO(out)).set_index(["run", "measure"])
    sample = read_stratified_sample(files / "sample.txt")
    fit5 = PredictionFit(col.runs, depth=1000, options={"depth": 5})
    want = evaluate_assisted(col.runs, sample, fit5).summary().set_index(["run", "measure"])
    np.testing.assert_allclose(got.loc[want.index].value.to_numpy(), want.value.to_numpy(), rtol=1e-5)
    full = evaluate_assisted(col.runs, sample, PredictionFit(col.runs, depth=1000)).summary()
    assert not np.allclose(full.value.to_numpy(), want.value.to_numpy(), rtol=1e-5)


def test_cli_on_a_campaigns_exported_prels(files, col):
    """judge init / sample / next / record / export, then ``sampled --prels --estimator assisted --qrels``: the
    selector's picks fit the model, the draw corrects it — the API's numbers on the same files."""
    camp = files / "c.sqlite"
    rc, out, err = run_cli("judge", "init", camp, files / "runs", "--depth", DEPTH)
    assert rc == 0, err
    rc, out, err = run_cli("judge", "sample", camp, "--share", "0.3", "--seed", "1")
    assert rc == 0, err
    drawn = int(out.split()[1])
    rc, _, err = run_cli("judge", "next", camp, "--n", drawn + 6, "--out", files / "req.csv")
    assert rc == 0, err
    req = pd.read_csv(files / "req.csv", dtype={"topic": str, "docno": str})
    req["grade"] = [max(col.qrels.grade_of(t, d) or 0, 0) for t, d in zip(req.topic, req.docno, strict=True)]
    req.to_csv(files / "req.csv", index=False)
    rc, out, err = run_cli("judge", "record", camp, files / "req.csv")
    assert rc == 0, err
    rc, out, err = run_cli("judge", "export", camp, "--out", files / "q.txt", "--prels", files / "p.txt")
    assert rc == 0, err
    argv = ["sampled", files / "p.txt", files / "runs", "--prels", "--estimator", "assisted", "--qrels",
            files / "q.txt", "--depth", DEPTH, "--model", "smoothed", "--format", "csv"]
    rc, out, err = run_cli(*argv)
    assert rc == 0, err
    frame = pd.read_csv(io.StringIO(out), dtype={"topic": str})
    res = evaluate_assisted(col.runs, read_prels(files / "p.txt"), PredictionFit(col.runs, "smoothed", depth=DEPTH),
                            extra=read_qrels(files / "q.txt"), depth=DEPTH)
    assert res.design == "prels" and res.sampled == drawn and res.extra == 6
    want = res.summary().set_index(["run", "measure"])
    got = frame.set_index(["run", "measure"]).loc[want.index]
    np.testing.assert_allclose(got.value.to_numpy(), want.value.to_numpy(), rtol=1e-5)
    np.testing.assert_allclose(got.se.to_numpy(), want.se.to_numpy(), rtol=1e-5)
    rc, out, err = run_cli(*argv[:-2])  # the table names both kinds of judgments
    assert rc == 0 and f"corrected by {drawn} judgments drawn at random, 6 not drawn at random" in out, err


def test_cli_combine_says_it_is_not_design_based(files):
    argv = ["sampled", files / "sample.txt", files / "runs", "--estimator", "assisted", "--model", "smoothed",
            "--combine"]
    rc, out, err = run_cli(*argv)
    assert rc == 0 and "NOT design-based" in out and "weight" in out, err
    rc, out, err = run_cli(*argv, "--pairs", "--format", "csv")
    assert rc == 0, err
    frame = pd.read_csv(io.StringIO(out))
    assert list(frame.columns) == ["run_a", "run_b", "delta", "se", "lower", "upper", "p_less", "weight"]
    assert len(frame) == 10 and frame.p_less.between(0, 1).all() and frame.weight.between(0, 1).all()


# ----------------------------------------------------------------------------------------------------- errors
def _tiny():
    runs, truth, preds, design = _collection(topics=2, pool=40, systems=2, depth=30)
    sample = _draw(truth, design, np.random.default_rng(0))
    return runs, truth, sample, _memoriser({t: (truth[t][0], preds[t]) for t in truth})


@pytest.mark.parametrize("change, fragment", [
    (lambda r, s, f: dict(sample=StratifiedSample({t: TopicSample(x.docnos, x.strata, x.labels,
                                                                  np.full(len(x), -1)) for t, x in s.items()})),
     "sample: no document was drawn"),
    (lambda r, s, f: dict(folds=1), "folds: cross-fitting needs an integer >= 2"),
    (lambda r, s, f: dict(folds=2.5), "folds:"),
    (lambda r, s, f: dict(seed="x"), "seed:"),
    (lambda r, s, f: dict(depth=0), "depth:"),
    (lambda r, s, f: dict(weight=1.5), "weight:"),
    (lambda r, s, f: dict(fit=3), "fit:"),
    (lambda r, s, f: dict(sample={"1": 2}), "sample: a StratifiedSample or prels"),
    (lambda r, s, f: dict(sample=Qrels({t: TopicJudgments(x.docnos[x.sampled], x.grades[x.sampled])
                                        for t, x in s.items()})), "sample: topic '1' has no inclusion"),
    (lambda r, s, f: dict(sample=Qrels({t: TopicJudgments(x.docnos[x.sampled], x.grades[x.sampled],
                                                          np.zeros(int(x.sampled.sum())))
                                        for t, x in s.items()})), "not in (0, 1]"),
    (lambda r, s, f: dict(sample=s.judged(), inclusion={}), "inclusion: prels carry their own"),
    (lambda r, s, f: dict(sample=StratifiedSample({"99": s["1"]})), "runs: no result for any of the sample"),
    (lambda r, s, f: dict(extra=Qrels({"1": TopicJudgments(s["1"].docnos[s["1"].sampled][:1],
                                                           1 - s["1"].grades[s["1"].sampled][:1])})),
     "extra: topic '1' document"),
    (lambda r, s, f: dict(extra="q.txt"), "extra: qrels"),
])
def test_bad_input_names_the_argument(change, fragment):
    runs, truth, sample, fit = _tiny()
    kwargs = dict(sample=sample, fit=fit)
    kwargs.update(change(runs, sample, fit))
    with pytest.raises(BayevalInputError, match=fragment.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        evaluate_assisted(runs, kwargs.pop("sample"), kwargs.pop("fit"), **kwargs)


def test_a_sample_topic_without_runs_is_noted_and_left_out():
    runs, truth, sample, fit = _tiny()
    wider = StratifiedSample({**sample.topic_samples, "99": sample["1"]})
    with pytest.warns(UserWarning, match="no run has results for 1 of the sample's 3 topics"):
        res = evaluate_assisted(runs, wider, fit, folds=2)
    assert res.topics == ("1", "2")


def test_prediction_fit_checks_its_model():
    runs, *_ = _tiny()
    with pytest.raises(BayevalInputError, match="model: no configuration"):
        PredictionFit(runs, "no-such-model")
    with pytest.raises(BayevalInputError, match="method:"):
        PredictionFit(runs, method="bogus")


@pytest.mark.parametrize("argv, fragment", [
    (["{d}/sample.txt", "{d}/runs", "--estimator", "assisted", "--folds", "1"], "--folds: expected an integer >= 2"),
    (["{d}/sample.txt", "{d}/runs", "--estimator", "assisted", "--model", "nope"], "model: no configuration"),
    (["{d}/sample.txt", "{d}/runs", "--estimator", "stat", "--qrels", "{d}/truth.txt"],
     "--qrels: only with --estimator assisted"),
    (["{d}/sample.txt", "{d}/runs", "--pairs"], "--pairs: only with --estimator assisted"),
    (["{d}/sample.txt", "{d}/runs", "--estimator", "stat", "--combine"], "--combine: only with --estimator assisted"),
    (["{d}/sample.txt", "{d}/runs", "--estimator", "assisted", "--combine", "--per-topic"], "--per-topic:"),
    (["{d}/sample.txt", "{d}/runs", "--prels", "--estimator", "inferred"], "--estimator: inferred needs"),
    (["{d}/sample.txt", "{d}/runs", "--estimator", "assisted", "--qrels", "{d}/bad.txt"], "bad.txt:2:"),
    (["{d}/bad.txt", "{d}/runs", "--estimator", "assisted"], "bad.txt:1: expected 5 columns"),
])
def test_cli_errors_are_one_line_exit_2(files, argv, fragment):
    (files / "bad.txt").write_text("1 0 a 1\n1 0 b x\n")
    rc, out, err = run_cli("sampled", *[a.format(d=files) for a in argv])
    last = err.strip().splitlines()[-1]
    assert rc == 2 and last.startswith("bayeval: error: ") and fragment in last and "Traceback" not in err, err


def test_the_default_model_is_the_packages(files, col):
    """One default model at every door: the one-call fit and the command fit the package's default."""
    assert PredictionFit(col.runs).name == DEFAULT_MODEL == "hier-reuse-depth"
    rc, out, err = run_cli("sampled", files / "sample.txt", files / "runs", "--estimator", "assisted")
    assert rc == 0 and f"model-assisted: {DEFAULT_MODEL} cross-fitted over 5 folds" in out, err


def test_expected_draws_must_cover_every_topic():
    runs, truth, sample, fit = _tiny()
    with pytest.raises(BayevalInputError, match="expected_draws: a number >= 0 for every topic"):
        assisted_measures(runs, sample, None, expected_draws={"1": 3.0})
    base = assisted_measures(runs, sample, None)
    same = assisted_measures(runs, sample, None,
                             expected_draws={t: float(ts.inclusion.sum()) for t, ts in sample.items()})
    np.testing.assert_array_equal(base.values["AP"], same.values["AP"])  # the default is Σ_d π_d


def test_the_progress_bar_changes_nothing(capsys):
    runs, truth, sample, fit = _tiny()
    calls = []

    def counted(judgments):
        calls.append(1)
        return fit(judgments)

    quiet = evaluate_assisted(runs, sample, counted, folds=3)
    shown = evaluate_assisted(runs, sample, counted, folds=3, progress=True)
    assert len(calls) == 6
    np.testing.assert_array_equal(quiet.evaluation.values["AP"], shown.evaluation.values["AP"])


# ------------------------------------------------------------- graded levels, the form, the stated minimum
def test_cli_relevance_level_form_and_minimum(files, col, tmp_path):
    """``--relevance-level`` reaches statAP (level 2 counts grade 2 only: fewer relevant, another estimate) and
    the model-assisted estimate; the inferred measures refuse it (sample_eval.pl counts grade >= 1); ``--form``
    picks the estimate (auto: anchored below a median of 50 drawn a topic); a sample below the stated minimum
    is warned about on stderr, naming the minimum."""
    graded = make_collection(n_topics=4, n_systems=4, n_docs=120, depth=DEPTH, judged_depth=DEPTH, seed=5,
                             graded=True)
    (tmp_path / "g").mkdir()
    for run in graded.runs:
        write_run(run, tmp_path / "g" / f"input.{run.name}")
    sample, _ = draw_pool_sample(RankData.build(graded.runs, None, depth=DEPTH), graded.qrels, 0.3,
                                 np.random.default_rng(2))
    write_stratified_sample(sample, tmp_path / "gs.txt")
    out = {}
    for level in (1, 2):
        rc, text, err = run_cli("sampled", tmp_path / "gs.txt", tmp_path / "g", "--estimator", "stat",
                                "--relevance-level", str(level), "--format", "csv")
        assert rc == 0, err
        out[level] = pd.read_csv(io.StringIO(text))
    assert not np.allclose(out[1].value, out[2].value)
    rc, _, err = run_cli("sampled", tmp_path / "gs.txt", tmp_path / "g", "--relevance-level", "2")
    assert rc == 2 and "--relevance-level: the inferred measures count grade >= 1" in err
    base = ["sampled", files / "sample.txt", files / "runs", "--estimator", "assisted", "--model", "smoothed",
            "--seed", "4", "--no-progress"]
    rc, text, err = run_cli(*base)
    assert rc == 0 and "anchored at its expected AP" in text and "warning" not in err, err   # ~20 drawn a topic
    small, _ = draw_pool_sample(RankData.build(col.runs, None, depth=DEPTH), col.qrels, 0.06,
                                np.random.default_rng(3))
    write_stratified_sample(small, tmp_path / "small.txt")
    rc, text, err = run_cli("sampled", tmp_path / "small.txt", *base[2:])
    assert rc == 0 and "warning:" in err and "fewer than 10 judgments drawn" in err and "not known to hold" in err
    rc, text, err = run_cli(*base, "--form", "ratio")
    assert rc == 0 and "ratio form, weight on the model" in text, err
    assert "fewer than 50 judgments drawn" in err
    rc, _, err = run_cli("sampled", files / "sample.txt", files / "runs", "--form", "ratio")
    assert rc == 2 and "--form: only with --estimator assisted" in err
