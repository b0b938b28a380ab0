"""The command line: formats, exit codes, one-line errors."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pandas as pd
import pytest

from bayeval.cli.main import main
from bayeval.io.qrels import write_qrels
from bayeval.io.runs import write_run
from bayeval.synthetic import make_collection


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            rc = main(list(argv))
        except SystemExit as exc:  # argparse usage errors
            rc = exc.code
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("col")
    col = make_collection(n_topics=4, n_systems=3, n_docs=60, depth=20, judged_depth=5, seed=11)
    write_qrels(col.judgments, d / "qrels")
    paths = []
    for run in col.runs:
        write_run(run, d / f"{run.name}.run")
        paths.append(str(d / f"{run.name}.run"))
    return str(d / "qrels"), paths, col


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


def test_evaluate_csv_and_pairs(files):
    qrels, runs, _ = files
    rc, out, err = _cli("evaluate", qrels, *runs, "--method", "exact", "--format", "csv")
    assert rc == 0, err
    frame = pd.read_csv(io.StringIO(out))
    assert list(frame.columns) == ["run", "topic", "measure", "expected", "variance"]
    assert (frame.variance >= 0).all() and frame.expected.between(0, 1).all()
    rc, out, err = _cli("evaluate", qrels, *runs, "--pairs", "--method", "delta", "--format", "json")
    assert rc == 0, err
    rows = json.loads(out)
    assert {"run_a", "run_b", "topic", "measure", "delta_expected", "delta_variance", "p_less"} <= set(rows[0])
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
