"""``bayeval design plan | assign | analyze``: outputs, round trips, one-line errors."""

from __future__ import annotations

import io
import json

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from conftest import run_cli  # noqa: E402

from bayeval.design import read_design  # noqa: E402
from bayeval.io.qrels import write_qrels  # noqa: E402
from bayeval.io.runs import write_run  # noqa: E402
from bayeval.synthetic import make_collection  # noqa: E402

_cli = run_cli


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("design")
    col = make_collection(n_topics=24, n_systems=8, n_docs=120, depth=50, seed=5)
    write_qrels(col.qrels, d / "qrels")
    (d / "runs").mkdir()
    for run in col.runs:
        write_run(run, d / "runs" / f"{run.name}.run")
    sites = d / "runs.tsv"
    sites.write_text("run\tgroup\n" + "".join(f"{r}\tG{i // 2}\n" for i, r in enumerate(col.runs.names)))
    return d, col


def test_plan_table_and_csv():
    rc, out, err = _cli("design", "plan", "--topics", 100, "--sites", 6, "--min-baseline", 20, "--format", "csv")
    assert rc == 0, err
    frame = pd.read_csv(io.StringIO(out))
    row = frame[frame.k == 2].iloc[0]
    assert (row.blocks, row.n, row.within_reuse, row.between_reuse, row.participant) == (5, 25, 25, 5, 20)
    rc, out, _ = _cli("design", "plan", "--topics", 50, "--sites", 10, "--min-baseline", 5, "--k", "2-3")
    assert rc == 0 and "k = 3: infeasible, needs at least 125 topics" in out


def test_plan_counts_sites_of_a_table(files):
    d, _ = files
    rc, out, err = _cli("design", "plan", "--topics", 24, "--sites", d / "runs.tsv", "--format", "json")
    assert rc == 0, err
    assert {r["n_sites"] for r in json.loads(out)} == {4}
    # --largest keeps the M sites with the most runs (here all have two: ties by name)
    rc, out, err = _cli("design", "plan", "--topics", 24, "--sites", d / "runs.tsv", "--largest", 3, "--format",
                        "json")
    assert rc == 0, err
    assert {r["n_sites"] for r in json.loads(out)} == {3}
    rc, _, err = _cli("design", "plan", "--topics", 24, "--sites", 4, "--largest", 3)
    assert rc == 2 and "--largest" in err


def test_assign_writes_a_design_that_reads_back(files, tmp_path):
    d, col = files
    out_csv = tmp_path / "design.csv"
    rc, out, err = _cli("design", "assign", "--topics", d / "qrels", "--sites", d / "runs.tsv", "--k", 2,
                        "--min-baseline", 6, "--seed", 3, "--out", out_csv)
    assert rc == 0, err
    assert "topics held out per site: 9" in out and str(out_csv) in out  # b * C(3, 1) = 3 * 3
    design = read_design(out_csv)
    assert sorted(design.topics, key=int) == sorted(col.qrels.topics, key=int)
    assert design.sites == ("G0", "G1", "G2", "G3") and design.k == 2
    # to standard output without --out, same seed, same csv
    rc, text, _ = _cli("design", "assign", "--topics", d / "qrels", "--sites", d / "runs.tsv", "--k", 2,
                       "--min-baseline", 6, "--seed", 3)
    assert rc == 0 and text == out_csv.read_text()


def test_assign_largest_and_names():
    rc, out, _ = _cli("design", "assign", "--topics", 7, "--sites", "x,y,z", "--k", 1, "--min-baseline", 1)
    assert rc == 0 and out.splitlines()[0] == "topic,block,x,y,z"
    assert out.splitlines()[2] == "2,1,1,1,0"  # the first block holds out the last site first (Table 1)


def test_analyze_from_scores_file(files, tmp_path):
    d, col = files
    design_csv = tmp_path / "design.csv"
    _cli("design", "assign", "--topics", d / "qrels", "--sites", d / "runs.tsv", "--k", 1, "--min-baseline", 4,
         "--out", design_csv)
    rc, scores, err = _cli("measures", d / "qrels", d / "runs", "--measures", "AP", "--per-topic",
                           "--format", "csv")
    assert rc == 0, err
    (tmp_path / "scores.csv").write_text(scores)
    rc, out, err = _cli("design", "analyze", "--design", design_csv, "--scores", tmp_path / "scores.csv",
                        "--sites", d / "runs.tsv", "--mc-draws", 500)
    assert rc == 0, err
    assert "within-site reusability" in out and "participant comparison" in out
    rc, out, err = _cli("design", "analyze", "--design", design_csv, "--scores", tmp_path / "scores.csv",
                        "--sites", d / "runs.tsv", "--mc-draws", 500, "--format", "csv")
    frame = pd.read_csv(io.StringIO(out))
    assert list(frame["kind"]) == ["within", "between", "participant"]
    assert {"O_both", "E_omission", "p_value", "method"} <= set(frame.columns)
    for table, column in (("groups", "group"), ("sites", "tau_participant"), ("runs", "reuse"), ("pairs", "p_reuse")):
        rc, out, err = _cli("design", "analyze", "--design", design_csv, "--scores", tmp_path / "scores.csv",
                            "--sites", d / "runs.tsv", "--table", table, "--format", "json", "--mc-draws", 200)
        assert rc == 0, err
        assert column in json.loads(out)[0]


def test_analyze_simulates_pools_and_plots(files, tmp_path):
    d, _ = files
    design_csv = tmp_path / "design.csv"
    _cli("design", "assign", "--topics", 24, "--sites", d / "runs.tsv", "--k", 2, "--min-baseline", 6,
         "--out", design_csv)
    png, saved = tmp_path / "reuse.png", tmp_path / "scores.csv"
    rc, out, err = _cli("design", "analyze", "--design", design_csv, "--sites", d / "runs.tsv", "--qrels",
                        d / "qrels", "--runs", d / "runs", "--pool-depth", 10, "--plot", png, "--save-scores", saved,
                        "--table", "sites", "--format", "csv", "--mc-draws", 200)
    assert rc == 0, err
    assert "depth-10 pools" in err and png.stat().st_size > 1000
    assert list(pd.read_csv(io.StringIO(out))["site"]) == ["G0", "G1", "G2", "G3", "all"]
    frame = pd.read_csv(saved, dtype={"topic": str})
    assert set(frame.columns) == {"run", "topic", "measure", "value"} and len(frame) == 8 * 24
    # without --pool-depth the qrels are used as the design's judgments
    rc, out, err = _cli("design", "analyze", "--design", design_csv, "--sites", d / "runs.tsv", "--qrels",
                        d / "qrels", "--runs", d / "runs", "--measure", "P@10", "--mc-draws", 200)
    assert rc == 0, err and "P@10" in out


@pytest.mark.parametrize(("argv", "message"), [
    (("design", "plan", "--topics", 10, "--sites", 6, "--k", 2), "n_topics: no k is feasible with N = 10"),
    (("design", "plan", "--topics", 50, "--sites", 6, "--k", "x"), "--k"),
    (("design", "assign", "--topics", 10, "--sites", "solo", "--k", 1), "--sites"),
    (("design", "assign", "--topics", 10, "--sites", 3, "--k", 3), "k: must be smaller"),
    (("design", "assign", "--topics", 10, "--sites", 3, "--k", 1, "--largest", 2), "--largest"),
])
def test_errors_are_one_line_with_exit_2(argv, message):
    rc, out, err = _cli(*argv)
    assert rc == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err


def test_analyze_errors(files, tmp_path):
    d, _ = files
    design_csv = tmp_path / "design.csv"
    design_csv.write_text("topic,G0,G1\n1,1,x\n")
    rc, _, err = _cli("design", "analyze", "--design", design_csv, "--sites", d / "runs.tsv", "--scores", "s.csv")
    assert rc == 2 and f"{design_csv}:2:" in err
    design_csv.write_text("topic,G0,G1\n1,1,0\n")
    rc, _, err = _cli("design", "analyze", "--design", design_csv, "--sites", d / "runs.tsv")
    assert rc == 2 and "--qrels and --runs" in err
    rc, _, _ = _cli("design")
    assert rc == 2
