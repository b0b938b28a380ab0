"""The suite's process hygiene: a process a test starts is seen (and a test that leaves one fails:
tests/conftest.py's autouse ``no_process_left_behind``)."""

from __future__ import annotations

import subprocess
import sys

from conftest import group_processes


def test_a_started_process_is_seen_until_it_is_stopped():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert proc.pid in group_processes()
    finally:
        proc.kill()
        proc.wait()
    assert proc.pid not in group_processes()


def test_an_orphan_is_seen_too(tmp_path):
    """A server whose parent exits (as `judge serve` under a skipped test did) keeps the group: still seen."""
    pidfile = tmp_path / "pid"
    subprocess.run(["bash", "-c", f"sleep 60 & echo $! > {pidfile}"], check=True)
    pid = int(pidfile.read_text())
    try:
        assert pid in group_processes()
    finally:
        import os
        import signal

        os.kill(pid, signal.SIGKILL)
