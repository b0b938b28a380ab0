"""``--labels NAME=FILE`` on check, estimate, evaluate and report."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli, write_judged_files

from bayeval.data import RankData
from bayeval.measures import evaluate
from bayeval.synthetic import make_collection

M0 = np.array([0.5, 0.3, 0.15, 0.05])
M1 = np.array([0.1, 0.2, 0.3, 0.4])


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("labels")
    col = make_collection(n_topics=8, n_systems=4, n_docs=200, depth=50, judged_depth=5, seed=3)
    qrels, runs = write_judged_files(col, d)
    rng = np.random.default_rng(0)
    lines, perfect = [], []
    for tr in RankData.build(col.runs, None):
        for doc in tr.docnos:
            rel = (col.qrels.grade_of(tr.topic, doc) or 0) >= 1
            lines.append(f"{tr.topic} 0 {doc} {rng.choice(4, p=M1 if rel else M0)}\n")
            perfect.append(f"{tr.topic} {doc} {0.9 if rel else 0.1}\n")
    (d / "llm.txt").write_text("".join(lines))
    (d / "oracle.txt").write_text("".join(perfect))
    (d / "elsewhere.txt").write_text("999 0 x 2\n")
    (d / "bad.txt").write_text("1 0 a 2\n1 0 b two\n")
    return d, qrels, runs, col


def test_check_reports_the_overlap_and_agreement(files):
    d, qrels, runs, _ = files
    rc, out, err = run_cli("check", qrels, *runs, "--labels", f"llm={d / 'llm.txt'}")
    assert rc == 0, err
    line = next(x for x in out.splitlines() if x.startswith("labels  llm"))
    assert "also judged (per judged topic min" in line and "labelled pairs unjudged" in line
    assert "human grade (rows) × label (columns)" in out
    # labels of no judged pair: the map cannot be learned, the check fails
    rc, out, _ = run_cli("check", qrels, *runs, "--labels", str(d / "elsewhere.txt"))
    assert rc == 2 and "no pair is both judged and labelled" in out


def test_estimate_with_labels_moves_p_by_the_grade(files):
    d, qrels, runs, _ = files
    rc, plain, err = run_cli("estimate", qrels, *runs, "--model", "smoothed")
    assert rc == 0, err
    rc, withl, err = run_cli("estimate", qrels, *runs, "--model", "smoothed", "--labels", f"llm={d / 'llm.txt'}")
    assert rc == 0, err
    read = lambda text: pd.read_csv(io.StringIO(text), sep=" ", names=["topic", "q0", "docno", "p"],  # noqa: E731
                                    dtype={"topic": str})
    both = read(plain).merge(read(withl), on=["topic", "docno"], suffixes=("", "_labels"))
    labels = pd.read_csv(d / "llm.txt", sep=" ", names=["topic", "it", "docno", "g"], dtype={"topic": str})
    both = both.merge(labels, on=["topic", "docno"])
    assert (both[both.g == 3].p_labels > both[both.g == 3].p).all()
    assert (both[both.g == 0].p_labels < both[both.g == 0].p).all()


def test_evaluate_says_how_much_rests_on_the_labels(files):
    """With near-perfect labels the column moves E[MAP] toward the true MAP (the complete judgments')."""
    d, qrels, runs, col = files
    rc, out, err = run_cli("evaluate", qrels, *runs, "--labels", f"oracle={d / 'oracle.txt'}", "--format", "csv")
    assert rc == 0, err
    f = pd.read_csv(io.StringIO(out), dtype={"topic": str})
    f = f[f.topic == "all"].set_index("run")
    true = dict(zip(col.runs.names, evaluate(RankData.build(col.runs, col.qrels), ["AP"]).values[0].mean(axis=1),
                    strict=True))
    truth = f.index.map(true).to_numpy(dtype=float)
    without = f.expected - f.from_labels
    assert np.abs(f.expected - truth).mean() < 0.7 * np.abs(without - truth).mean()
    assert (f.from_labels.abs() > 0).all()


def test_report_has_the_from_labels_column(files):
    d, qrels, runs, _ = files
    rc, out, err = run_cli("report", qrels, *runs, "--fit", "map", "--labels", f"llm={d / 'llm.txt'}")
    assert rc == 0, err
    header = out.splitlines()[0]
    assert header.rstrip(" |").endswith("from labels")
    assert "'from labels': E[MAP] minus E[MAP] with the automatic assessors' labels removed" in out


@pytest.mark.parametrize(("args", "match"), [
    (["--labels", "bad.txt"], "bad.txt:2: label 'two' is not a finite number"),
    (["--labels", "llm=nothere.txt"], "nothere.txt: no such file"),
    (["--labels", "=llm.txt"], "--labels: expected NAME=FILE"),
    (["--labels", "llm.txt", "--default-p", "0.1"], "--labels: needs a relevance model"),
])
def test_bad_labels_fail_with_one_line(files, args, match):
    d, qrels, runs, _ = files
    args = [a if a.startswith("-") or a[0].isdigit() else a.replace(a.split("=")[-1], str(d / a.split("=")[-1]))
            for a in args]
    rc, _, err = run_cli("evaluate", qrels, *runs, *args)
    assert rc == 2
    assert match in err
