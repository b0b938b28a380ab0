"""Progress off a terminal: a plain line every few seconds (a log, a pipe, a batch job), none for quick work, none
with --no-progress; and an interrupted study (a timeout's SIGTERM) stops its workers without leaked semaphores."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from bayeval.progress import track


def _slow(n, pause=0.02):
    for k in range(n):
        time.sleep(pause)
        yield k


def test_off_a_terminal_a_line_every_few_seconds_even_while_an_item_takes_long():
    err = io.StringIO()
    with redirect_stderr(err):
        assert list(track(_slow(3, pause=0.3), total=3, description="trials", every=0.05)) == [0, 1, 2]
    lines = err.getvalue().splitlines()
    assert len(lines) >= 6  # several lines during each 0.3 s item: a heartbeat, not a line per item
    assert lines[0].startswith("trials: 0/3 (0%)") and any("left" in ln for ln in lines)
    assert lines[-1].startswith("trials: 3/3 (100%)") and lines[-1].endswith(", done")


def test_quick_work_and_no_progress_stay_quiet():
    err = io.StringIO()
    with redirect_stderr(err):
        list(track(range(100), description="quick"))  # done before the first line is due
        list(track(_slow(3), total=3, enabled=False, every=0.0))
        list(track(iter(_slow(3)), description="unknown total", every=0.01))
    lines = err.getvalue().splitlines()
    assert all(ln.startswith("unknown total: ") and "%" not in ln for ln in lines) and len(lines) >= 2


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM as a timeout sends it")
def test_a_study_ended_by_sigterm_stops_its_workers_and_leaks_nothing(tmp_path, collection_dir_writer):
    """`timeout 600 bayeval experiment robustness run ... --workers 2` used to end with 'There appear to be 5 leaked
    semaphore objects' and no line of progress in its log: now it says it was interrupted, keeps the trials done,
    and its workers are gone (the suite's fixture fails a test that leaves one). Seen red without the SIGTERM
    handler of bayeval.cli.main: no 'interrupted', workers left running."""
    from bayeval.synthetic import make_collection

    col = make_collection(n_topics=8, n_systems=6, n_docs=200, depth=60, judged_depth=10, seed=2)
    (tmp_path / "col").mkdir()
    root = collection_dir_writer(col, tmp_path / "col")
    out = tmp_path / "t.csv"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-m", "bayeval.cli", "experiment", "robustness", "run", str(root),
                             "--trials", "40", "--workers", "2", "--k", "4", "--depth", "40", "--out", str(out)],
                            stderr=subprocess.PIPE, text=True, env=env)
    seen = []  # signalled once a trial is done (its handler installed), not after a fixed sleep: on a loaded
    for line in proc.stderr:  # machine 25 s could end it while still importing, on an idle one after the last trial
        seen.append(line)
        m = re.search(r": (\d+)/40 \(", line)
        if m and 0 < int(m.group(1)) < 40:
            break
    proc.send_signal(signal.SIGTERM)
    _, rest = proc.communicate(timeout=120)
    err = "".join(seen) + rest
    assert proc.returncode == 130, err
    assert "bayeval: interrupted" in err and "leaked semaphore" not in err, err
