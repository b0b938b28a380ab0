"""Every shell command of README.md, run as pasted, in order, in a temporary copy of the layout it assumes.

The README's commands run from the repository root and read ``../shared/data``. Here the "repository" is an
empty temporary directory beside a link ``shared`` to the real ``../shared``, so the test also checks that the
commands leave nothing in the repository (they work in a scratch directory, as the README says). A command
fails the test with a non-zero exit, naming it. Not run, each for a stated reason (:data:`NOT_RUN`):
``pip install`` (the package is installed already; ``pip install X && cmd`` runs ``cmd``), the test suite
itself. The judging servers run until stopped: each is started in the background on a free port (``--port``
appended, the one change to a pasted command), must answer within five minutes, and is stopped. The simulation
studies' commands take minutes (a 200-trial study 40-80 min on 2 cores): they run only in the slow test. Where
the README asks the reader to fill the grade column of a file, the test fills it from the TREC-8 qrels, as an
assessor would.

Skipped when ../shared/data is absent.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

#: Commands not run (a prefix of the command) and why.
NOT_RUN = {
    "python -m pytest": "the test suite itself",
}
#: Servers (a prefix): started in the background, checked to answer, stopped.
SERVERS = ("bayeval judge demo-serve", "bayeval judge serve")

#: Waits for a server (argv: port, pid) to answer; fails when it exits first or after five minutes.
WAIT_PY = """
import os, sys, time, urllib.request
port, pid = sys.argv[1], int(sys.argv[2])
deadline = time.monotonic() + 300
while time.monotonic() < deadline:
    if not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split(")")[-1].split()[0] == "Z":
        sys.exit(f"server exited before answering on port {port}")
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/progress.json", timeout=2)
        sys.exit(0)
    except OSError:
        time.sleep(0.5)
sys.exit(f"server did not answer on port {port}")
"""


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
#: Commands run only by the slow test (a prefix), and why.
SLOW = {"bayeval experiment": "simulation studies: minutes to more than an hour on 2 cores"}
FILL = re.compile(r"fill its empty grade column")

#: Fills the empty grade column of a csv from qrels (argv: csv, qrels), as an assessor would.
FILL_PY = """
import csv, sys
from bayeval.io import read_qrels
q = read_qrels(sys.argv[2])
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    r["grade"] = q.grade_of(r["topic"], r["docno"]) or 0
with open(sys.argv[1], "w", newline="") as fh:
    w = csv.DictWriter(fh, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
"""


def readme_commands(text: str) -> list[tuple[str, str | None]]:
    """``(command, fill)`` for every command of the README's bash blocks, in order: continuation lines
    joined, comments (whole lines, and after a command) and blank lines dropped; ``fill`` is set on a comment
    asking to fill a file's grades."""
    out: list[tuple[str, str | None]] = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        joined = re.sub(r"\\\n\s*", "", block)
        for line in joined.splitlines():
            line = line.strip()
            if not line:
                continue
            if line.startswith("#"):
                if FILL.search(line):
                    out.append(("", "fill"))
                continue
            out.append((re.sub(r"\s+#.*$", "", line), None))  # a comment after the command: the shell's, dropped
    return out


def _plan(commands, slow: bool) -> tuple[list[str], list[str]]:
    """Shell lines to run, and the commands left out with their reasons."""
    run, left = [], []
    last_out = None
    for cmd, fill in commands:
        if fill:
            if last_out is None:
                raise AssertionError("README asks to fill a file's grades before any 'judge next --out FILE'")
            run.append(f'"$PY" -c "$FILL_PY" {last_out} ../shared/data/trec8/qrels.txt.gz')
            continue
        if cmd.startswith("pip install"):
            if "&&" not in cmd:
                left.append(f"{cmd}  (pip install: the package is installed)")
                continue
            cmd = cmd.split("&&", 1)[1].strip()
        why = next((w for p, w in NOT_RUN.items() if cmd.startswith(p)), None)
        if why is None and not slow:
            why = next((w for p, w in SLOW.items() if cmd.startswith(p)), None)
        if why:
            left.append(f"{cmd}  ({why})")
            continue
        m = re.search(r"judge next \S+ .*--out (\S+)", cmd)
        last_out = m.group(1) if m else last_out
        if cmd.startswith(SERVERS):
            port = _free_port()
            cmd = (f"{cmd} --port {port} > server-{port}.log 2>&1 & SERVER=$!; "
                   f'"$PY" -c "$WAIT_PY" {port} $SERVER || {{ cat server-{port}.log >&2; false; }}; '
                   "kill $SERVER; wait $SERVER || true")
        run.append(cmd)
    return run, left


def _run_readme(tmp_path: Path, shared: Path, slow: bool, text: str | None = None):
    run, left = _plan(readme_commands(README.read_text(encoding="utf-8") if text is None else text), slow)
    assert run, "no README command found"
    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    (tmp_path / "shared").symlink_to(shared.resolve(), target_is_directory=True)
    state = tmp_path / "state"
    bin_dir = tmp_path / "bin"  # `bayeval` as installed: a program (exec: a server put in the background is its pid)
    bin_dir.mkdir()
    (bin_dir / "bayeval").write_text('#!/bin/bash\nexec "$PY" -m bayeval.cli "$@"\n', encoding="utf-8")
    (bin_dir / "bayeval").chmod(0o755)
    lines = ["set -e"]
    for k, cmd in enumerate(run):
        lines += [f"echo {k} > {state}", cmd]
    script = tmp_path / "readme.sh"
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "PY": sys.executable,
           "FILL_PY": FILL_PY, "WAIT_PY": WAIT_PY, "MPLBACKEND": "Agg", "LC_ALL": "C.UTF-8"}
    proc = subprocess.run(["bash", str(script)], cwd=repo, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        k = int(state.read_text()) if state.exists() else 0
        pytest.fail(f"README command failed (exit {proc.returncode}):\n  {run[k]}\n"
                    f"stderr (end):\n{proc.stderr[-2000:]}")
    left_in_repo = sorted(p.name for p in repo.iterdir())
    assert not left_in_repo, f"README commands wrote into the repository: {left_in_repo}"
    return run, left


def test_readme_has_the_commands_it_promises():
    cmds = [c for c, _ in readme_commands(README.read_text(encoding="utf-8"))]
    assert any(c.startswith("bayeval judge record") for c in cmds)
    assert any(c.startswith("mkdir -p ../") for c in cmds)  # the scratch directory, before anything is written
    run, left = _plan(readme_commands(README.read_text(encoding="utf-8")), slow=False)
    first_write = next(k for k, c in enumerate(run) if "--out" in c)
    assert any(c.startswith("mkdir -p ../") and "&& cd ../" in c for c in run[:first_write])
    assert any("fill" not in c and '"$PY" -c "$FILL_PY"' in c for c in run)


def test_the_readme_names_the_csv_columns_evaluate_writes(tmp_path):
    """The columns the README promises for ``evaluate --format csv`` (with and without ``--pairs``) are the ones
    it writes."""
    import io

    import pandas as pd
    from conftest import run_cli

    from bayeval.io import write_qrels, write_run
    from bayeval.synthetic import make_collection

    text = README.read_text(encoding="utf-8")
    plain = re.search(r"`(run,topic,measure,expected[^`]*)` for `evaluate`", text).group(1).split(",")
    pairs = re.search(r"with `--pairs` one table of both:\s*`([^`]+)`", text).group(1).split(",")
    col = make_collection(n_topics=3, n_systems=3, n_docs=40, depth=10, judged_depth=3, seed=1)
    write_qrels(col.judgments, tmp_path / "q")
    runs = []
    for r in col.runs:
        write_run(r, tmp_path / r.name)
        runs.append(tmp_path / r.name)
    for extra, want in (([], plain), (["--pairs"], pairs)):
        rc, out, err = run_cli("evaluate", tmp_path / "q", *runs, "--default-p", "0.2", "--format", "csv", *extra)
        assert rc == 0, err
        assert list(pd.read_csv(io.StringIO(out)).columns) == want


def test_the_documentation_list_names_every_page():
    text = README.read_text(encoding="utf-8")
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name != "README.md":
            assert f"docs/{page.name}" in text, f"README's documentation list lacks docs/{page.name}"
            assert f"({page.name})" in index, f"docs/README.md lacks {page.name}"


def test_the_check_fails_on_a_failing_command_and_on_files_left_in_the_repository(tmp_path):
    bad = "```bash\nbayeval --version\nbayeval measures /no/such/qrels x.run\n```\n"
    with pytest.raises(pytest.fail.Exception, match="bayeval measures /no/such/qrels"):
        _run_readme(tmp_path / "a", tmp_path, slow=False, text=bad)
    litter = "```bash\nbayeval --version > version.txt\n```\n"
    with pytest.raises(AssertionError, match="wrote into the repository.*version.txt"):
        _run_readme(tmp_path / "b", tmp_path, slow=False, text=litter)


@pytest.mark.data
def test_readme_commands_run_as_pasted(tmp_path, shared_data):
    run, left = _run_readme(tmp_path, shared_data.parent, slow=False)
    print("not run:\n  " + "\n  ".join(left))


@pytest.mark.data
@pytest.mark.slow
def test_readme_commands_run_as_pasted_with_the_studies(tmp_path, shared_data):
    _run_readme(tmp_path, shared_data.parent, slow=True)
