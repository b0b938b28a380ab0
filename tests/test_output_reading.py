"""Output that reads at a glance: legends once and right, no needless digits, repeatable numbers."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli

from bayeval.cli._output import format_columns, format_probability, write_frame
from bayeval.io.qrels import write_qrels
from bayeval.io.runs import write_run
from bayeval.synthetic import make_collection


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("col")
    col = make_collection(n_topics=4, n_systems=3, n_docs=60, depth=20, judged_depth=5, seed=11)
    write_qrels(col.judgments, d / "shallow.qrels")
    write_qrels(col.qrels, d / "full.qrels")
    paths = []
    for run in col.runs:
        write_run(run, d / f"{run.name}.run")
        paths.append(str(d / f"{run.name}.run"))
    return d, paths, col


def _sig_digits(cell: str) -> int:
    """Significant digits of a printed number ('0.000271' -> 3, '2.711e-04' -> 4, '0.2500' -> 4)."""
    mant = cell.split("e")[0].lstrip("+-<> ").replace(".", "").lstrip("0")
    return len(mant)


def test_tiny_probabilities_read_less_than_1e_6():
    assert format_probability(4.59e-169) == "< 1e-6"
    assert format_probability(3.778e-97) == "< 1e-6"
    assert format_probability(1 - 1e-9) == "> 1 - 1e-6"
    assert format_probability(0.0) == "< 1e-6" and format_probability(1.0) == "> 1 - 1e-6"  # never certain
    assert format_probability(0.25) == "0.2500" and format_probability(3.2e-5) == "3e-05"
    frame = pd.DataFrame({"p_less_plugin": [4.59e-169, 3.778e-97, 0.5], "confidence": [1.0, 1.0, 0.5]})
    cells = format_columns(frame)
    assert [r[0] for r in cells] == ["< 1e-6", "< 1e-6", "0.5000"]
    assert [r[1] for r in cells] == ["> 1 - 1e-6", "> 1 - 1e-6", "0.5000"]
    assert not any("e-1" in c or "e-9" in c for r in cells for c in r)


def test_small_differences_print_three_significant_digits_not_scientific():
    """E[ΔAP] of a few 1e-4 is a difference, not a variance: fixed decimals, at most 4 significant digits."""
    frame = pd.DataFrame({"delta_expected": [2.711e-4, -1.5e-4], "delta_variance": [3.3e-7, 1.2e-6]})
    cells = format_columns(frame)
    assert [r[0] for r in cells] == ["0.000271", "-0.000150"]
    assert [r[1] for r in cells] == ["3.300e-07", "1.200e-06"]  # variances stay scientific
    assert all(_sig_digits(c) <= 4 for r in cells for c in r)


def test_a_commands_legend_replaces_the_shared_line():
    out = io.StringIO()
    write_frame(pd.DataFrame({"decided": [True], "expected": [0.1]}), "table", out,
                legend={"decided": "the confidence reached alpha"})
    text = out.getvalue()
    assert text.count("  decided:") == 1 and "the confidence reached alpha" in text
    assert "share of trials" not in text


def test_judge_status_legend_says_each_column_once_and_names_the_difference(tmp_path, files):
    d, runs, col = files
    camp = tmp_path / "c.sqlite"
    assert run_cli("judge", "init", camp, d / "shallow.qrels", *runs, "--depth", "20")[0] == 0
    rc, out, err = run_cli("judge", "status", camp)
    assert rc == 0, err
    legend = [ln.strip().split(":")[0] for ln in out.splitlines() if ln.startswith("  ") and ":" in ln]
    assert len(legend) == len(set(legend)), legend  # no column explained twice
    assert "delta_expected" in legend and "E[AP_a - AP_b]" in out
    assert "expected value of the measure" not in out and "share of trials" not in out
    table = [ln for ln in out.splitlines() if not ln.startswith("  ")]
    assert not re.search(r"\de-0\d", "\n".join(table))  # no scientific notation for E[ΔAP]
    rc, out, err = run_cli("judge", "simulate", d / "full.qrels", *runs, "--depth", "20")
    assert rc == 0, err
    assert "share of trials" not in out and out.count("  decided:") == 1 and "true_delta:" in out


def test_compare_mc_repeats_its_numbers_by_default(files):
    import bayeval as bv
    from bayeval.data import RankData

    _, _, col = files
    data = RankData.build(col.runs, col.judgments)
    a = bv.compare(data, None, method="mc", draws=200).all_p_less
    b = bv.compare(data, None, method="mc", draws=200).all_p_less
    np.testing.assert_array_equal(a, b)
    c = bv.compare(data, None, method="mc", draws=200, seed=None).all_p_less
    assert c.shape == a.shape


def test_summary_lists_only_uncertain_pairs_as_least_certain(files):
    import bayeval as bv
    from bayeval.data import RankData

    _, _, col = files
    data = RankData.build(col.runs, col.qrels)  # complete judgments: every sign is certain
    text = bv.compare(data, None, method="exact").summary()
    assert "P(Δ<0)=0.000" not in text and "P(Δ<0)=1.000" not in text
    assert "none, every pair has confidence >= 0.95" in text


def test_check_and_measures_tables_have_a_column_legend(files):
    d, runs, _ = files
    rc, out, err = run_cli("check", d / "shallow.qrels", *runs)
    assert rc == 0, err
    for col in ("judged@10, judged@100:", "unjudged@100:", "ties:", "repeated:", "remarks:"):
        assert f"  {col}" in out
    assert "divided by k even when a run returns fewer" in out
    rc, out, err = run_cli("measures", d / "shallow.qrels", *runs, "--measures", "AP,P@10,nDCG@10,RR")
    assert rc == 0, err
    for col in ("AP", "P@10", "nDCG@10", "RR"):
        assert f"  {col}: " in out
    assert "precision at 10" in out and "unjudged documents count as nonrelevant" in out


def _noisy_runs(d, runs):
    """Copies of the runs whose lines carry two tags: each file gets a reader note."""
    out = []
    for k, r in enumerate(runs):
        lines = open(r).read().splitlines()
        f = d / f"mixed{k}.run"
        f.write_text("\n".join(lines + [lines[-1].rsplit(" ", 1)[0] + " other-tag"]) + "\n")
        out.append(f)
    return out


def test_quiet_says_the_notes_in_one_line(tmp_path, files):
    d, runs, _ = files
    noisy = _noisy_runs(tmp_path, runs)
    rc, out, err = run_cli("measures", d / "shallow.qrels", *noisy, "--measures", "AP")
    notes = [ln for ln in err.splitlines() if ln.startswith("bayeval: note:")]
    assert rc == 0 and len(notes) >= 3
    for argv in (["measures", d / "shallow.qrels", *noisy, "--measures", "AP", "--quiet"],
                 ["--quiet", "measures", d / "shallow.qrels", *noisy, "--measures", "AP"]):
        rc, out2, err = run_cli(*argv)
        assert rc == 0 and out2 == out
        quiet = [ln for ln in err.splitlines() if ln.startswith("bayeval: note:")]
        assert quiet == [f"bayeval: note: {len(notes)} notes about the data not shown (--quiet; 'bayeval check' "
                         "lists them)"]


def test_evaluate_pairs_csv_keeps_the_per_run_rows(files):
    d, runs, _ = files
    rc, out, err = run_cli("evaluate", d / "shallow.qrels", *runs, "--method", "exact", "--default-p", "0.5",
                            "--format", "csv")
    alone = pd.read_csv(io.StringIO(out))
    rc, out, err = run_cli("evaluate", d / "shallow.qrels", *runs, "--method", "exact", "--default-p", "0.5",
                            "--pairs", "--format", "csv")
    assert rc == 0, err
    both = pd.read_csv(io.StringIO(out))
    per_run = both[both.run.notna()]
    assert list(both.columns[:5]) == ["run", "run_a", "run_b", "topic", "measure"]
    assert per_run.run.tolist() == alone.run.tolist()
    np.testing.assert_allclose(per_run.expected, alone.expected)
    assert both.run_a.notna().sum() == 3 and both.p_less.notna().sum() == 3
