"""The command line: formats, exit codes, one-line errors."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli, write_judged_files

from bayeval.synthetic import make_collection

_cli = run_cli


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("col")
    col = make_collection(n_topics=4, n_systems=3, n_docs=60, depth=20, judged_depth=5, seed=11)
    qrels, paths = write_judged_files(col, d)
    return qrels, paths, col


def test_measures_csv(files):
    qrels, runs, col = files
    rc, out, err = _cli("measures", qrels, *runs, "--measures", "AP,P@10", "--per-topic", "--format", "csv")
    assert rc == 0, err
    frame = pd.read_csv(io.StringIO(out), dtype={"topic": str})
    assert list(frame.columns) == ["run", "topic", "measure", "value"]
    assert set(frame.measure) == {"AP", "P@10"}
    assert set(frame.run) == set(col.runs.names)
    assert set(frame.topic) == {"1", "2", "3", "4", "all"}
    # 'all' is the mean of the topic values
    ap = frame[(frame.measure == "AP") & (frame.run == "sys01")]
    assert ap[ap.topic == "all"].value.iloc[0] == pytest.approx(ap[ap.topic != "all"].value.mean(), abs=1e-9)


def test_table_prints_brackets_literally():
    """Cells, headers and the title are text, not rich markup: 'lam[sys01]' stays, 'a[/x]' does not raise."""
    from bayeval.cli._output import write_frame

    out = io.StringIO()
    frame = pd.DataFrame({"param[s]": ["lam[sys01]", "a[/x]", "[bold]b"], "mean": [0.5, 0.25, 1.0]})
    write_frame(frame, "table", out, title="fit [/x] lam[sys01]")
    text = out.getvalue()
    for literal in ("lam[sys01]", "a[/x]", "[bold]b", "param[s]", "fit [/x] lam[sys01]", "0.2500"):
        assert literal in text


def test_evaluate_csv_and_pairs(files):
    qrels, runs, _ = files
    rc, out, err = _cli("evaluate", qrels, *runs, "--method", "exact", "--default-p", "0.5", "--format", "csv")
    assert rc == 0, err
    frame = pd.read_csv(io.StringIO(out))
    assert list(frame.columns) == ["run", "topic", "measure", "expected", "variance", "lower", "upper"]
    assert (frame.variance >= 0).all() and frame.expected.between(0, 1).all()
    half = 1.959964 * np.sqrt(frame.variance)  # the 95% interval, clipped to [0, 1]
    np.testing.assert_allclose(frame.lower, np.clip(frame.expected - half, 0, 1), atol=1e-5)
    np.testing.assert_allclose(frame.upper, np.clip(frame.expected + half, 0, 1), atol=1e-5)
    rc, out, err = _cli("evaluate", qrels, *runs, "--pairs", "--method", "delta", "--default-p", "0.5", "--format",
                        "json")
    assert rc == 0, err
    rows = json.loads(out)
    assert {r["run"] for r in rows if r["run"]} == {"sys01", "sys02", "sys03"}  # the per-run rows are kept
    rows = [r for r in rows if r["run_a"]]
    assert ["run", "run_a", "run_b", "topic", "measure", "expected", "variance", "lower", "upper", "delta_expected",
            "delta_variance", "delta_lower", "delta_upper", "p_less", "p_less_topics", "p_value"] == list(rows[0])
    assert len({(r["run_a"], r["run_b"]) for r in rows}) == 3  # 3 runs -> 3 pairs
    assert all(0.0 <= r["p_less"] <= 1.0 for r in rows)


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["measures", "/nonexistent/qrels", "x.run"], "no such file"),
        (["measures", "{qrels}", "{run}", "--measures", "AP,Bogus@3"], "Bogus"),
        (["evaluate", "{qrels}", "{run}", "--default-p", "2"], "--default-p"),
        (["evaluate", "{qrels}", "{run}", "--depth", "0"], "--depth"),
        (["measures", "{badrun}", "{run}"], "expected 4 columns"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(files, argv, fragment):
    qrels, runs, _ = files
    argv = [a.format(qrels=qrels, run=runs[0], badrun=runs[1]) for a in argv]
    rc, out, err = _cli(*argv)
    assert rc == 2
    assert fragment in err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("bayeval: error:")


def test_demo_runs_as_a_subprocess():
    proc = subprocess.run([sys.executable, "-m", "bayeval.cli", "demo", "--systems", "4", "--topics", "5",
                           "--docs", "100", "--depth", "30"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "E[MAP]" in proc.stdout and "P(MAP_a - MAP_b < 0)" in proc.stdout
    assert "Laplace posterior" in proc.stdout and "contain the true MAP for" in proc.stdout


# --- evaluate with a relevance model: plug-in and Bayesian P(ΔMAP < 0) ---------------------------
def _pairs_csv(out):
    """The pair rows of ``evaluate --pairs --format csv`` (the per-run rows come first, with ``run`` set)."""
    frame = pd.read_csv(io.StringIO(out), dtype={"topic": str})
    assert frame.run.notna().any() and (frame.run.notna() != frame.run_a.notna()).all()
    pair_cols = ["run_a", "run_b", "topic", "measure", "delta_expected", "delta_variance", "p_less", "p_less_topics",
                 "p_value"] + ["p_less_plugin"] * ("p_less_plugin" in frame.columns)
    return frame.loc[frame.run_a.notna(), pair_cols].reset_index(drop=True)


def test_evaluate_model_rtc_map_exact_and_monte_carlo_agree(files):
    """With the fast-path MAP there are no parameter draws (no p_less_plugin column: it would repeat p_less), and
    Monte Carlo at the point p estimates the same P(ΔMAP < 0 | p) as the exact moments with the normal
    approximation: they agree up to the MC error (sd ≤ 0.5/√4000 ≈ 0.008) plus the normal approximation's."""
    qrels, runs, _ = files
    rc, out, err = _cli("evaluate", qrels, *runs, "--model", "rtc", "--pairs", "--format", "csv")
    assert rc == 0, err
    exact = _pairs_csv(out)
    rc, out, err = _cli("evaluate", qrels, *runs, "--model", "rtc", "--pairs", "--method", "mc", "--mc-draws", "4000",
                        "--format", "csv")
    assert rc == 0, err
    mc = _pairs_csv(out)
    assert len(exact) == 3 and "p_less_plugin" not in exact and mc.p_less.between(0, 1).all()
    assert (mc.p_less - exact.p_less).abs().max() < 0.1
    assert (np.sqrt(mc.delta_variance / exact.delta_variance)).between(0.8, 1.25).all()


def test_evaluate_model_laplace_propagates_parameter_uncertainty(files):
    """``--fit laplace``: p has posterior draws, and by the law of total variance Var[ΔMAP] = E[Var(ΔMAP | p)] +
    Var(E[ΔMAP | p]). The closed form (exact per draw, combined over the draws) equals Monte Carlo over the same
    draws (``--method mc``; sd within 5%, the MC error of an sd being about 1/√(2·20000) = 0.5%), and the
    parameter uncertainty is not negligible here: the sd is at least 1.4 times the one at the posterior mode
    (``--fit map``) for every pair (about 1.7–2.0 measured). With copies of the point estimate in place of the
    draws both sds would be equal. The deprecated spelling ``--method laplace`` still works, saying so."""
    qrels, runs, _ = files
    common = ["--model", "rtc", "--posterior-draws", "100", "--p-draws", "100", "--closed-form-draws", "100",
              "--pairs", "--format", "csv"]
    rc, out, err = _cli("evaluate", qrels, *runs, "--fit", "laplace", *common)
    assert rc == 0, err
    closed = _pairs_csv(out)
    assert closed.p_less_plugin.between(0, 1).all()
    rc, out, err = _cli("evaluate", qrels, *runs, "--method", "laplace", *common)
    assert rc == 0 and "--method laplace is deprecated" in err and "--fit laplace" in err
    pd.testing.assert_frame_equal(_pairs_csv(out), closed)
    rc, out, err = _cli("evaluate", qrels, *runs, "--fit", "laplace", "--method", "mc", "--mc-draws", "20000", *common)
    assert rc == 0, err
    mc = _pairs_csv(out)
    np.testing.assert_allclose(np.sqrt(closed.delta_variance), np.sqrt(mc.delta_variance), rtol=0.05)
    rc, out, err = _cli("evaluate", qrels, *runs, "--fit", "map", *common)
    assert rc == 0, err
    assert (closed.delta_variance >= 1.4**2 * _pairs_csv(out).delta_variance).all()
    rc, out, err = _cli("evaluate", qrels, *runs, "--model", "smoothed", "--format", "csv")
    assert rc == 0, err
    assert list(pd.read_csv(io.StringIO(out)).columns) == ["run", "topic", "measure", "expected", "variance",
                                                           "lower", "upper"]


@pytest.mark.parametrize(
    "extra, fragment",
    [
        (["--method", "mcmc", "--default-p", "0.5"], "needs --model"),
        (["--fit", "laplace", "--default-p", "0.5"], "needs --model"),
        (["--unseen", "--default-p", "0.5"], "--unseen"),
        (["--model", "rtc", "--probabilities", "p.txt"], "one source"),
        (["--model", "rtc", "--method", "mcmc", "--fit", "vi"], "once"),
        (["--model", "similarity"], "texts"),
        (["--model", "no-such-model"], "no configuration"),
        (["--model", "rtc", "--stage-fit", "rank"], "--stage-fit"),
        (["--model", "rtc", "--stage-fit", "ranks=map"], "--stage-fit"),
        (["--model", "smoothed", "--stage-fit", "rank=map"], "--stage-fit"),
    ],
)
def test_evaluate_model_bad_input_exit_2(files, extra, fragment):
    qrels, runs, _ = files
    rc, out, err = _cli("evaluate", qrels, *runs, *extra)
    assert rc == 2
    assert fragment in err and "Traceback" not in err


@pytest.mark.slow
def test_evaluate_model_rtc_mcmc(files):
    qrels, runs, _ = files
    rc, out, err = _cli("evaluate", qrels, *runs, "--model", "rtc", "--method", "mcmc", "--posterior-draws", "200",
                        "--tune", "200", "--p-draws", "100", "--pairs", "--format", "csv")
    assert rc == 0, err
    assert "r-hat" in err
    assert _pairs_csv(out).p_less.between(0, 1).all()


def test_stage_fit_defaults_keep_rank_coefficients_at_map():
    from bayeval.cli.estimate import stage_methods
    assert stage_methods([], "map") is None
    assert stage_methods([], "mcmc") == {"rank": "map"}
    assert stage_methods(["rank=laplace", "aggregation=vi"], "mcmc") == {"rank": "laplace", "aggregation": "vi"}


def test_estimate_similarity_from_texts(files, tmp_path):
    """``estimate --model similarity --texts``: TF-IDF cosines to the judged documents; relevant documents share
    a topic's vocabulary, so unjudged relevant ones get higher p than unjudged nonrelevant ones on average."""
    from bayeval.io.probabilities import read_probabilities
    qrels, runs, col = files
    rng = np.random.default_rng(3)
    lines = []
    for t in col.qrels.topics:
        tj = col.qrels[t]
        for d, g in zip(tj.docnos.tolist(), tj.grades.tolist(), strict=True):
            words = [f"w{k}" for k in rng.integers(0, 200, 20)]
            if g > 0:
                words += [f"topic{t}x{k}" for k in rng.integers(0, 5, 15)]
            lines.append(f"{d}\t{' '.join(words)}")
    texts = tmp_path / "texts.tsv"
    texts.write_text("\n".join(lines) + "\n")
    out = tmp_path / "p.txt"
    rc, _, err = _cli("estimate", qrels, *runs, "--model", "similarity", "--texts", str(texts), "--out", str(out),
                      "--depth", "20", "--format", "csv")
    assert rc == 0, err
    probs = read_probabilities(out)
    rel, non = [], []
    for t, ps in probs.by_topic.items():
        truth = dict(zip(col.qrels[t].docnos.tolist(), col.qrels[t].grades.tolist(), strict=True))
        for d, p in ps.items():
            assert 0.0 <= p <= 1.0
            (rel if truth.get(d, 0) > 0 else non).append(p)
    assert rel and non and np.mean(rel) > np.mean(non)
    rc, _, err = _cli("estimate", qrels, *runs, "--model", "similarity", "--out", str(out))
    assert rc == 2 and "--texts" in err
