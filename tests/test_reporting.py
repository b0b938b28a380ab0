"""The Report object, ``bayeval report``, the front door and the draw flags."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import run_cli

from bayeval.data import RankData
from bayeval.expected import compare_systems, expected_measures
from bayeval.io.qrels import write_qrels
from bayeval.io.runs import write_run
from bayeval.reporting import make_report
from bayeval.synthetic import make_collection

_cli = run_cli


@pytest.fixture(scope="module")
def col():
    return make_collection(n_topics=5, n_systems=5, n_docs=100, depth=30, judged_depth=5, seed=1)


@pytest.fixture(scope="module")
def data(col):
    return RankData.build(col.runs, col.judgments)


@pytest.fixture(scope="module")
def files(col, tmp_path_factory):
    d = tmp_path_factory.mktemp("rep")
    write_qrels(col.judgments, d / "qrels")
    runs = []
    for run in col.runs:
        write_run(run, d / f"{run.name}.run")
        runs.append(d / f"{run.name}.run")
    return d / "qrels", runs


def test_report_numbers_are_the_expected_measures_and_confidences(data):
    rep = make_report(data, default_p=0.1, level=0.9)
    ev = expected_measures(data, default_p=0.1, method="exact")
    cmp = compare_systems(data, default_p=0.1, method="exact")
    e = dict(zip(data.systems, ev.all_expected[0], strict=True))
    lo, hi = ev.confidence_interval(0.9)
    for i, s in enumerate(data.systems):
        assert rep.runs.loc[s, "expected"] == pytest.approx(e[s])
        assert rep.runs.loc[s, "lower"] == pytest.approx(lo[0, i])
        assert rep.runs.loc[s, "upper"] == pytest.approx(hi[0, i])
    # rank 1 has the largest E; the matrix is P(row > column) = 1 - P(Δ_row,col < 0)
    assert list(rep.runs["rank"]) == list(range(1, len(data.systems) + 1))
    assert np.all(np.diff(rep.runs["expected"].to_numpy()) <= 0)
    for (a, b), p_less in zip(cmp.pairs, cmp.all_p_less, strict=True):
        assert rep.confidence.loc[a, b] == pytest.approx(1 - p_less)
        assert rep.confidence.loc[b, a] == pytest.approx(p_less)


def test_judged_at_k_counts_judged_documents_in_the_top_k(col, data):
    rep = make_report(data, judged_k=3)
    full = make_report(RankData.build(col.runs, col.judgments, depth=5), judged_k=5)
    assert np.allclose(full.runs["judged_at_k"], 1.0)  # judged_depth 5: every top-5 document is judged
    # system 0: per topic, judged documents among its top 3, over 3; averaged over topics
    manual = np.mean([np.append(t.judged, False)[t.ranked[0, :3]].sum() / 3 for t in data])
    assert rep.runs.loc[data.systems[0], "judged_at_k"] == pytest.approx(manual)


def test_renderings_have_markers_booktabs_and_escaping(data, tmp_path):
    rep = make_report(data, default_p=0.1)
    md, tex = rep.to_markdown(), rep.to_latex()
    strong = rep.confidence.to_numpy() >= 0.99
    assert md.count("‡") - md.count("‡ ≥") == int(np.nansum(strong))
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert tex.count(rule) == 2
    assert "±" not in tex and "95\\%" in tex
    from bayeval.reporting import _tex
    assert _tex("run_1&2%") == r"run\_1\&2\%"
    paths = rep.save(tmp_path / "out")
    assert all(p.stat().st_size > 0 for p in paths.values()) and set(paths) == {"tex", "md", "png", "pdf"}


def test_cli_report_writes_the_files_and_rejects_bad_input(files, tmp_path):
    qrels, runs = files
    rc, out, err = _cli("report", qrels, *runs, "--default-p", "0.1", "--out", tmp_path / "r")
    assert rc == 0, err
    assert (tmp_path / "r" / "report.tex").is_file() and (tmp_path / "r" / "report.png").is_file()
    assert "E[MAP]" in out and "rank" in out
    rc, out, err = _cli("report", qrels, *runs, "--model", "rtc", "--fit", "laplace", "--posterior-draws", "50",
                        "--chains", "1", "--p-draws", "50", "--mc-draws", "200")
    assert rc == 0, err
    assert "| run | E[MAP]" in out and "p from the RTC model" in out and "Monte Carlo, 200 draws" in out
    rc, out, err = _cli("report", qrels, *runs, "--level", "1.5")
    assert rc == 2 and "--level" in err and "Traceback" not in err


def test_old_draw_flags_still_work_with_a_notice(files):
    qrels, runs = files
    rc, out_new, err = _cli("evaluate", qrels, *runs, "--method", "mc", "--mc-draws", "300", "--format", "csv")
    assert rc == 0 and err == ""
    rc, out_old, err = _cli("evaluate", qrels, *runs, "--method", "mc", "--draws", "300", "--format", "csv")
    assert rc == 0 and out_old == out_new
    assert err.strip() == "bayeval: warning: --draws is deprecated; use --mc-draws"


def test_front_door_does_not_import_pymc():
    code = ("import sys, bayeval as bv\n"
            "for n in ('read_run', 'read_runs', 'read_qrels', 'RankData', 'evaluate', 'expected_measures',"
            " 'compare', 'estimate', 'report', 'Report'):\n"
            "    assert callable(getattr(bv, n)), n\n"
            "from bayeval.synthetic import make_collection\n"
            "col = make_collection(n_topics=2, n_systems=3, n_docs=40, depth=10, judged_depth=3, seed=1)\n"
            "data = bv.RankData.build(col.runs, col.judgments)\n"
            "est = bv.estimate(data, 'rtc')\n"
            "bv.report(data, est); bv.compare(data, est); bv.expected_measures(data, est)\n"
            "print('pymc' in sys.modules, 'pytensor' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False False"


def test_one_progress_flag_and_judge_export_out(tmp_path):
    from bayeval.cli.main import build_parser

    parser = build_parser()
    for argv in (["judge", "simulate", "q", "r"], ["bias", "manual-only", "q", "r", "--groups", "g"],
                 ["experiment", "robustness", "run", "d", "--out", "t"]):
        args = parser.parse_args(argv)
        assert args.progress is None  # default: on a terminal
        assert parser.parse_args([*argv, "--no-progress"]).progress is False
    args = parser.parse_args(["judge", "export", "c.sqlite", "--out", "x.qrels"])
    assert args.qrels == "x.qrels"
