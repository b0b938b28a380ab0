"""One default model at every door: what the calibration studies chose (docs/calibration.md)."""

from __future__ import annotations

import io

import pandas as pd
from conftest import run_cli, write_judged_files

from bayeval.data import RankData
from bayeval.defaults import DEFAULT_MODEL
from bayeval.relevance import estimate_probabilities
from bayeval.relevance.catalog import model_help
from bayeval.relevance.config import list_configs
from bayeval.relevance.estimate import MODEL_KINDS
from bayeval.synthetic import make_collection


def _files(tmp_path):
    col = make_collection(n_topics=5, n_systems=4, n_docs=120, depth=30, judged_depth=5, seed=6)
    return (col, *write_judged_files(col, tmp_path))


def test_the_python_api_and_every_command_default_to_the_studies_choice(tmp_path):
    col, qrels, runs = _files(tmp_path)
    assert DEFAULT_MODEL == "hier-reuse-depth"
    est = estimate_probabilities(RankData.build(col.runs, col.judgments))
    assert est.model == "hier-reuse-depth"
    rc, out, err = run_cli("estimate", qrels, *runs, "--out", str(tmp_path / "p.txt"))
    assert rc == 0, err
    assert "hierarchical model" in out  # the summary's title names the model's kind
    rc, out, err = run_cli("evaluate", qrels, *runs, "--format", "csv")
    assert rc == 0, err
    rc, text, err = run_cli("evaluate", qrels, *runs)
    assert rc == 0, err
    assert "hierarchical model" in text
    rc, md, err = run_cli("report", qrels, *runs, "--fit", "map")
    assert rc == 0, err
    assert "hierarchical model" in md


def test_the_studies_default_to_the_products_model():
    """The robustness and sampling studies fit what every command fits, and their help says so."""
    from bayeval.experiments import RobustnessConfig
    from bayeval.experiments.sampling import SamplingStudyConfig

    assert RobustnessConfig().bayes_config == DEFAULT_MODEL and SamplingStudyConfig().model == DEFAULT_MODEL
    for argv in (("experiment", "robustness", "run", "--help"), ("experiment", "sampling", "run", "--help")):
        rc, out, _ = run_cli(*argv)
        # argparse wraps help text at hyphens too ("hier-reuse- depth"): join what it split
        assert rc == 0 and f"default {DEFAULT_MODEL}" in " ".join(out.split()).replace("- ", "-")


def test_the_unseen_relevant_documents_enter_by_default_for_the_hierarchical_model(tmp_path):
    col, qrels, runs = _files(tmp_path)
    rc, with_unseen, err = run_cli("evaluate", qrels, *runs, "--format", "csv")
    assert rc == 0, err
    rc, without, err = run_cli("evaluate", qrels, *runs, "--format", "csv", "--no-unseen")
    assert rc == 0, err
    a, b = pd.read_csv(io.StringIO(with_unseen)), pd.read_csv(io.StringIO(without))
    # more relevant documents in R_t: every run's E[MAP] is lower
    assert (a["expected"] < b["expected"]).all()


def test_help_lists_every_model_kind_and_configuration():
    text = model_help()
    for name in (*MODEL_KINDS, *list_configs()):
        assert name in text
    for cmd in ("estimate", "evaluate", "report"):
        rc, out, err = run_cli(cmd, "--help")
        flat = " ".join(out.split())
        assert rc == 0 and all(k in flat for k in MODEL_KINDS), cmd


def test_every_model_kind_says_whether_the_unseen_documents_enter_by_default(tmp_path):
    """Each kind of the registry carries ``unseen_by_default``; the point baselines run through evaluate."""
    from bayeval.relevance import load_config

    for kind in MODEL_KINDS:
        assert isinstance(load_config(kind).unseen_by_default, bool), kind
    _, qrels, runs = _files(tmp_path)
    for kind in ("smoothed", "uniform"):
        rc, out, err = run_cli("evaluate", qrels, *runs, "--model", kind, "--format", "csv")
        assert rc == 0, err
