"""Every table a command prints has a legend line for every one of its columns, and no number in it has more than
four significant digits (docs/README.md: reading the output). The commands run on a small synthetic collection;
their plain-text tables are read back from stdout."""

from __future__ import annotations

import re

import pytest
from conftest import run_cli

from bayeval.synthetic import make_collection

_RULE = re.compile(r"^-+(  +-+)*$")
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?%?$")


def tables(text: str) -> list[tuple[str, list[str], list[list[str]], set[str]]]:
    """``(header line, columns, rows, legend names)`` of every plain-text table of ``text`` (write_frame's layout:
    a header, a rule of dashes, the rows, then legend lines ``  name: what`` or ``  a, b: what``)."""
    lines = text.splitlines()
    starts = [i for i, ln in enumerate(lines) if i > 0 and _RULE.match(ln)]
    out = []
    for k, i in enumerate(starts):
        end = starts[k + 1] - 1 if k + 1 < len(starts) else len(lines)
        widths = [len(d) for d in lines[i].split()]
        pos, cuts = 0, []
        for w in widths:
            cuts.append((pos, pos + w))
            pos += w + 2
        cols = [lines[i - 1][a:b].strip() for a, b in cuts]
        rows, legend = [], set()
        for ln in lines[i + 1:end]:
            if ln.startswith("  ") and ": " in ln:
                legend.update(n.strip() for n in ln.strip().split(": ", 1)[0].split(","))
            elif ln.strip() and not ln.startswith("  ") and not ln.startswith("…"):
                rows.append([ln[a:b].strip() for a, b in cuts])
        out.append((lines[i - 1], cols, rows, legend))
    return out


def _sig(cell: str) -> int:
    mant = cell.split("e")[0].lstrip("+-").replace(".", "").rstrip("%").lstrip("0")
    return len(mant)


@pytest.fixture(scope="module")
def col_dir(tmp_path_factory, collection_dir_writer):
    col = make_collection(n_topics=6, n_systems=4, n_docs=80, depth=30, judged_depth=8, seed=5)
    root = collection_dir_writer(col, tmp_path_factory.mktemp("legends"))
    from bayeval.data.qrels import pool_qrels
    from bayeval.io import write_qrels

    write_qrels(pool_qrels(col.runs, col.qrels, 5), root / "pool5.qrels")
    return root


def _commands(d, tmp):
    runs = sorted(str(p) for p in (d / "runs").iterdir())
    q, shallow = d / "qrels.txt", d / "pool5.qrels"
    camp = tmp / "c.sqlite"
    sample = tmp / "sample.txt"
    setup = [["judge", "init", camp, shallow, *runs, "--depth", "20"], ["judge", "sample", camp, "--share", "0.5"],
             ["judge", "export", camp, "--out", tmp / "e.qrels", "--sample", sample]]
    cmds = [["check", q, *runs], ["measures", q, *runs, "--measures", "AP,P@10,nDCG@10,bpref"],
            ["evaluate", shallow, *runs, "--default-p", "0.3"],
            ["evaluate", shallow, *runs, "--default-p", "0.3", "--pairs", "--measures", "AP,P@10"],
            ["evaluate", shallow, *runs, "--model", "smoothed", "--pairs"],
            ["compare", shallow, runs[0], runs[1], "--default-p", "0.3"],
            ["estimate", shallow, *runs, "--model", "rtc", "--fit", "laplace", "--summary", "--out", tmp / "p.txt"],
            ["judge", "next", camp, "--n", "5", "--format", "table"], ["judge", "status", camp],
            ["judge", "simulate", q, *runs[:2], "--depth", "20", "--budget", "30"],
            ["sampled", sample, *runs], ["sampled", sample, *runs, "--estimator", "stat"],
            ["demo", "--topics", "5", "--systems", "3", "--docs", "80", "--depth", "20", "--default-p", "0.3"],
            ["design", "plan", "--topics", "50", "--sites", "4"]]
    return setup, cmds


def test_every_column_of_every_table_has_a_legend_and_four_significant_digits(col_dir, tmp_path):
    setup, cmds = _commands(col_dir, tmp_path)
    for argv in setup:
        rc, out, err = run_cli(*argv)
        assert rc == 0, (argv, err)
    gaps, long = [], []
    for argv in cmds:
        rc, out, err = run_cli(*argv)
        assert rc == 0, (argv, err)
        found = tables(out)
        assert found, f"{argv[0]}: no table in\n{out}"
        for _, cols, rows, legend in found:
            missing = [c for c in cols if c not in legend]
            if missing:
                gaps.append(f"{' '.join(map(str, argv[:2]))}: {missing}")
            for row in rows:
                long += [f"{argv[0]} {c}={v}" for c, v in zip(cols, row, strict=False)
                         if _NUMBER.match(v) and "." in v and _sig(v) > 4 and not v.startswith("0.")]
    assert not gaps, "columns without a legend:\n" + "\n".join(gaps)
    assert not long, "numbers with more than 4 significant digits:\n" + "\n".join(long)


def test_the_reader_of_tables_reads_a_table():
    text = ("title\nrun  value  p_less\n---  -----  ------\na    0.25   < 1e-6\n  run: the run\n  value, p_less: x\n"
            "\nz\n-\n1\n")
    (h, cols, rows, legend), (h2, cols2, rows2, legend2) = tables(text)
    assert cols == ["run", "value", "p_less"] and rows == [["a", "0.25", "< 1e-6"]]
    assert legend == {"run", "value", "p_less"} and cols2 == ["z"] and not legend2


def test_the_studies_tables_have_a_legend_for_every_column(col_dir, tmp_path):
    rob, sim = tmp_path / "rob.csv", tmp_path / "sim.csv"
    for argv in (["experiment", "robustness", "run", col_dir, "--out", rob, "--trials", "2", "--k", "3", "--depth",
                  "20", "--methods", "mtc,rtc", "--confidences", "exact", "--budget", "40", "--workers", "1",
                  "--no-progress"],
                 ["experiment", "similarity", "run", col_dir, "--out", sim, "--trials", "2", "--k", "4", "--depth",
                  "20", "--budget", "30", "--workers", "1", "--methods", "sim,one,ip", "--no-progress"]):
        rc, out, err = run_cli(*argv)
        assert rc == 0, err
    gaps = []
    whats = {rob: ("overall", "proper", "reliability", "bins", "pair-type", "similarity", "tests"),
             sim: ("overall", "trials", "tests")}
    for table, kinds in whats.items():
        study = "robustness" if table == rob else "similarity"
        for what in kinds:
            rc, out, err = run_cli("experiment", study, "stats", table, "--what", what)
            assert rc == 0, err
            for _, cols, _, legend in tables(out):
                gaps += [f"{study} --what {what}: {c}" for c in cols if c not in legend]
    assert not gaps, "columns without a legend:\n" + "\n".join(gaps)
