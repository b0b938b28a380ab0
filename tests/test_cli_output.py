"""Tables for people: no number cut, one format per column, legends, empty results said."""

from __future__ import annotations

import io
from contextlib import redirect_stderr

import numpy as np
import pandas as pd

from bayeval.cli._output import format_columns, write_frame


def test_piped_table_keeps_every_number_whole_however_wide():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({f"a_long_column_name_{i}": rng.random(5) for i in range(12)})
    frame["run"] = [f"run-with-a-long-name-{i}" for i in range(5)]
    out = io.StringIO()  # not a terminal: plain aligned text, never truncated
    write_frame(frame, "table", out)
    text = out.getvalue()
    assert "…" not in text
    for v in frame.iloc[:, :12].to_numpy().ravel():
        assert f"{v:.4f}" in text
    lines = text.splitlines()
    assert len({len(line) for line in lines[2:7]}) == 1  # aligned rows


def test_one_format_per_column():
    frame = pd.DataFrame({"variance": [2.3e-5, 1.1e-4, 0.0], "expected": [0.25, 0.5, 1.0], "judged": [3.0, 10.0, 0.0],
                          "p_less": [1.0, 0.0, 1.0], "n": [1, 2, 3], "ok": [True, False, True]})
    cells = format_columns(frame)
    assert [r[0] for r in cells] == ["2.300e-05", "1.100e-04", "0.000e+00"]  # small values: scientific
    assert [r[1] for r in cells] == ["0.2500", "0.5000", "1.0000"]
    assert [r[2] for r in cells] == ["3", "10", "0"]  # counts stored as floats
    assert [r[3] for r in cells] == ["> 1 - 1e-6", "< 1e-6", "> 1 - 1e-6"]  # a computed 0/1 is a bound
    assert [r[4] for r in cells] == ["1", "2", "3"] and [r[5] for r in cells] == ["yes", "no", "yes"]


def test_legend_and_empty_notice():
    out, err = io.StringIO(), io.StringIO()
    with redirect_stderr(err):
        write_frame(pd.DataFrame({"run_a": [], "p_less": []}), "csv", out, title="pairs")
    assert out.getvalue().strip() == "run_a,p_less" and "no rows" in err.getvalue()
    out = io.StringIO()
    write_frame(pd.DataFrame({"run": ["a"], "p_less": [0.25]}), "table", out)
    assert "p_less: P(measure_a - measure_b < 0)" in out.getvalue()


def test_every_option_of_every_subcommand_has_help_with_its_default():
    import argparse

    from bayeval.cli.main import build_parser

    missing, no_default = [], []

    def walk(parser, path):
        for a in parser._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    walk(sub, [*path, name])
                continue
            if a.dest in ("help", "version") or a.help == argparse.SUPPRESS:
                continue
            if not a.help:
                missing.append((" ".join(path), a.option_strings or a.dest))
            elif (a.option_strings and a.default not in (None, False, [], argparse.SUPPRESS)
                  and "default" not in a.help):
                no_default.append((" ".join(path), a.option_strings))

    walk(build_parser(), [])
    assert not missing, missing
    assert not no_default, no_default


def _options(dest):
    """Every (sub-command path, action) of the parser whose destination is ``dest``."""
    import argparse

    from bayeval.cli.main import build_parser

    found = []

    def walk(parser, path):
        for a in parser._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    walk(sub, [*path, name])
            elif a.dest == dest and a.option_strings and a.help != argparse.SUPPRESS:
                found.append((" ".join(path), a))

    walk(build_parser(), [])
    return found


def test_depth_means_one_thing_with_one_default_everywhere():
    """``--depth`` cuts the runs, default all, in every sub-command that has it (judging included); the rtc
    rank-model positions are ``--model-depth`` wherever a model is fitted."""
    found = _options("depth")
    generated = {"demo", "experiment similarity cranfield"}  # runs they build retrieve D documents
    studies = {p for p, _ in found if p.startswith("experiment") and p not in generated}
    nist = {"sampled"}  # NIST's sample_eval.pl cuts every run at 1,000 documents; 'sampled' reproduces it
    user = [(p, a) for p, a in found if p not in generated | studies | nist]
    assert {(a.default, a.help) for p, a in found if p in nist} == \
        {(1000, "keep only each run's top D documents (default 1000, as sample_eval.pl)")}
    assert {"measures", "evaluate", "estimate", "report", "judge init", "judge simulate"} <= {p for p, _ in user}
    assert {(a.default, a.help) for _, a in user} == \
        {(None, "keep only each run's top D documents (default: all, as trec_eval)")}
    # the replication studies keep the papers' depth and say so, in the same words
    assert {(a.default, a.help) for p, a in found if p in studies} == \
        {(100, "keep only each run's top D documents (default 100, the studies' published setting)")}
    model = _options("model_depth")
    assert {p for p, _ in model} == {"evaluate", "compare", "estimate", "report", "sampled"}
    assert len({(a.default, a.help) for _, a in model}) == 1


def test_model_depth_defaults_to_depth_at_most_100():
    import argparse

    from bayeval.cli.estimate import model_depth

    assert model_depth(argparse.Namespace(model_depth=None, depth=None)) == 100
    assert model_depth(argparse.Namespace(model_depth=None, depth=1000)) == 100
    assert model_depth(argparse.Namespace(model_depth=None, depth=20)) == 20
    assert model_depth(argparse.Namespace(model_depth=300, depth=1000)) == 300


def test_r_prec_error_speaks_the_command_line(tmp_path):
    import io
    from contextlib import redirect_stderr

    from bayeval.cli.main import main
    from bayeval.io.qrels import write_qrels
    from bayeval.io.runs import write_run
    from bayeval.synthetic import make_collection

    col = make_collection(n_topics=2, n_systems=2, n_docs=30, depth=10, judged_depth=3, seed=1)
    write_qrels(col.judgments, tmp_path / "q")
    runs = []
    for r in col.runs:
        write_run(r, tmp_path / r.name)
        runs.append(str(tmp_path / r.name))
    err = io.StringIO()
    with redirect_stderr(err):
        rc = main(["evaluate", str(tmp_path / "q"), *runs, "--measures", "AP,R-prec"])
    assert rc == 2 and "use --method mc" in err.getvalue() and "method='mc'" not in err.getvalue()


def test_table_says_in_one_line_what_is_missing_instead_of_rows_of_na():
    """Columns missing in every row and rows missing in every numeric column leave the table; one line says
    which and why; csv keeps them."""
    import io

    import numpy as np

    from bayeval.cli._output import collapse_missing, write_frame

    frame = pd.DataFrame({"a": ["x", "y", "z"], "m": [1.0, np.nan, 3.0], "s": [0.5, np.nan, 0.1],
                          "p": [np.nan] * 3})
    out = io.StringIO()
    write_frame(frame, "table", out, missing={"p": "tests need two trials", "m": "no judgment"})
    text = out.getvalue()
    assert "NA" not in text and "nan" not in text
    assert "not shown: p missing in every row (tests need two trials); 1 of 3 rows with no value in m, s " \
           "(no judgment)" in text
    assert [ln.split()[0] for ln in text.splitlines()[2:4]] == ["x", "z"]
    out = io.StringIO()
    write_frame(frame, "csv", out)
    assert out.getvalue().splitlines()[0] == "a,m,s,p" and len(out.getvalue().splitlines()) == 4
    full = frame.fillna(0.0)
    same, note = collapse_missing(full)
    assert note is None and same is full
