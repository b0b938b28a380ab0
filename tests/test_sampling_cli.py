"""``bayeval sampled``: output, estimators and one-line errors (exit 2)."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from conftest import run_cli

SAMPLE = "1 0 a 1 1\n1 0 b 1 0\n1 0 c 2 -1\n1 0 d 2 1\n2 0 e 1 1\n"
RUN = "1 Q0 a 1 4 r\n1 Q0 c 2 3 r\n1 Q0 d 3 2 r\n2 Q0 e 1 1 r\n"
PRELS = "1 a 1 x 1.0\n1 d 1 x 0.5\n2 e 1 x 1\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "s").write_text(SAMPLE)
    (tmp_path / "r").write_text(RUN)
    (tmp_path / "p").write_text(PRELS)
    return tmp_path


def test_inferred_csv_per_topic(files):
    rc, out, err = run_cli("sampled", files / "s", files / "r", "--per-topic", "--format", "csv")
    assert rc == 0, err
    frame = pd.read_csv(io.StringIO(out), dtype={"topic": str})
    row = frame[(frame.topic == "all") & (frame.measure == "inum_rel")]
    assert row.value.item() == pytest.approx(1 + 2 + 1)  # t1: 1·2/2 + 1·2/1, t2: 1
    assert {"infAP", "infNDCG", "iP10", "iprec@rec0.50"} <= set(frame.measure)


@pytest.mark.parametrize("extra", [["--estimator", "stat"], ["--prels"]])
def test_stat_estimator_prints_standard_errors(files, extra):
    src = files / ("p" if "--prels" in extra else "s")
    rc, out, err = run_cli("sampled", src, files / "r", *extra, "--format", "csv")
    assert rc == 0, err
    frame = pd.read_csv(io.StringIO(out))
    assert set(frame.measure) == {"statAP", "statP10", "statP30", "statP100"}
    assert (frame.se >= 0).all()


def test_table(files):
    rc, out, _ = run_cli("sampled", files / "s", files / "r")
    assert rc == 0 and "infAP" in out and out.count("\n") >= 3


@pytest.mark.parametrize("argv, fragment", [
    (["{d}/r", "{d}/r"], "r:1: expected 5 columns"),
    (["{d}/missing", "{d}/r"], "no such file"),
    (["{d}/s", "{d}/r", "--depth", "0"], "--depth"),
    (["{d}/s", "{d}/r", "--prels"], "s:1: relevance grade"),
])
def test_errors_are_one_line_exit_2(files, argv, fragment):
    rc, out, err = run_cli("sampled", *[a.format(d=files) for a in argv])
    last = err.strip().splitlines()[-1]
    assert rc == 2 and last.startswith("bayeval: error: ") and fragment in last and "Traceback" not in err
