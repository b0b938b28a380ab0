"""Endless and oversized inputs end in one line, not in exhausted memory (docs/data.md, "How much is read").

Devices (``/dev/zero``) and sockets are refused before anything is read; a pipe is read up to 64 MiB; a file beyond
the limit (1 GiB of text, ``$BAYEVAL_FILE_LIMIT``) is refused before it is read, a gzip file as soon as its text
passes the limit; and the text of a file is held once, not twice. Memory is measured in a child process (its peak
resident size after the read, less its peak before it: ``VmHWM``, which a child does not inherit from pytest, unlike
``ru_maxrss``), so that other tests' memory cannot hide a regression.
"""

from __future__ import annotations

import gzip
import json
import os
import socket
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest
from conftest import run_cli

from bayeval.errors import BayevalInputError, FileFormatError
from bayeval.io import read_bytes, read_qrels, read_run, read_stratified_sample, read_texts, write_qrels, write_run
from bayeval.io.runs import run_file_names

ROOT = Path(__file__).resolve().parents[1]
ZERO = "/dev/zero"
needs_dev_zero = pytest.mark.skipif(not os.path.exists(ZERO), reason="no /dev/zero")
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")


def _one_line(exc: BaseException, path) -> str:
    msg = str(exc)
    assert "\n" not in msg and msg.startswith(f"{path}"), msg
    return msg


# ---------------------------------------------------------------------- devices, sockets, pipes
@needs_dev_zero
@pytest.mark.parametrize("reader", [read_bytes, read_qrels, read_run, read_stratified_sample, read_texts,
                                    lambda p: run_file_names([p])],
                         ids=["bytes", "qrels", "run", "sample", "texts", "first-line"])
def test_a_device_is_refused_before_anything_is_read(reader):
    with pytest.raises(BayevalInputError) as e:
        reader(ZERO)
    assert "not a regular file (a character device)" in _one_line(e.value, ZERO)


def test_a_socket_is_refused(tmp_path):
    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        with pytest.raises(BayevalInputError, match="not a regular file \\(a socket\\)"):
            read_qrels(path)


def _feed(path, data: bytes | None):
    """A writer on the pipe ``path``: ``data`` once, or zeros without end (until the reader closes the pipe)."""
    def write():
        try:
            with open(path, "wb") as fh:
                if data is not None:
                    fh.write(data)
                    return
                chunk = b"\0" * (1 << 20)
                while True:
                    fh.write(chunk)
        except OSError:  # the reader closed the pipe
            pass
    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


@needs_fifo
def test_an_endless_pipe_is_refused_at_the_pipe_limit(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = _feed(fifo, None)
    with pytest.raises(FileFormatError) as e:
        read_run(fifo)
    assert "more than 64 MiB from a pipe" in _one_line(e.value, fifo)
    writer.join(timeout=30)
    assert not writer.is_alive()


@needs_fifo
@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_a_pipe_is_read_as_the_file_would_be(tmp_path, gz):
    """``bayeval measures qrels <(zcat run.gz)``: a process substitution is a pipe, and reads like the file."""
    text = "\ufeff401 Q0 a 1 0.9 t\n401 Q0 b 2 0.8 t\n402 Q0 c 1 0.7 t\n".encode()
    data = gzip.compress(text) if gz else text
    plain = tmp_path / "r.run"
    plain.write_bytes(data)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = _feed(fifo, data)
    got = read_run(fifo)
    writer.join(timeout=30)
    want = read_run(plain)
    assert {t: list(got.ranking(t)) for t in got.topics} == {t: list(want.ranking(t)) for t in want.topics}
    with pytest.raises(BayevalInputError, match="a pipe, which can be read only once"):
        run_file_names([fifo])  # the lazy readers read a file twice: a pipe is refused there


# ---------------------------------------------------------------------- the size limit
def test_a_file_beyond_the_limit_is_refused_before_it_is_read(tmp_path):
    big = tmp_path / "big.run"
    with open(big, "wb") as fh:
        fh.truncate((2 << 30) + 1)  # sparse: 2 GiB of zeros that take no disk
    with pytest.raises(FileFormatError) as e:
        read_run(big)
    assert "more than 1 GiB of text (the limit per file; BAYEVAL_FILE_LIMIT=4G raises it)" in _one_line(e.value, big)


def test_the_limit_variable(tmp_path, monkeypatch):
    q = tmp_path / "q.txt"
    lines = "".join(f"401 0 d{i:03d} 1\n" for i in range(200))  # 2,600 bytes
    q.write_text(lines)
    monkeypatch.setenv("BAYEVAL_FILE_LIMIT", "2K")
    with pytest.raises(FileFormatError, match=r"q.txt: more than 2 KiB of text"):
        read_qrels(q)
    z = tmp_path / "q.gz"
    z.write_bytes(gzip.compress(lines.encode()))
    with pytest.raises(FileFormatError, match=r"q.gz: more than 2 KiB of text once decompressed"):
        read_qrels(z)
    monkeypatch.setenv("BAYEVAL_FILE_LIMIT", "3k")
    assert read_qrels(z).topics == ("401",)
    monkeypatch.setenv("BAYEVAL_FILE_LIMIT", "lots")
    with pytest.raises(BayevalInputError, match=r"^BAYEVAL_FILE_LIMIT: expected a size such as 4G or 500M, got "):
        read_qrels(q)


def test_a_file_exactly_at_the_limit_is_read(tmp_path, monkeypatch):
    q = tmp_path / "q.txt"
    q.write_bytes(b"401 0 d1 1\n" * 100)  # 1,100 bytes
    for data in (q.read_bytes(), b"\xef\xbb\xbf" + q.read_bytes()):  # a byte-order mark is not text
        for raw in (data, gzip.compress(data)):
            q.write_bytes(raw)
            monkeypatch.setenv("BAYEVAL_FILE_LIMIT", "1100")
            assert len(read_bytes(q)) == 1100
            monkeypatch.setenv("BAYEVAL_FILE_LIMIT", "1099")
            with pytest.raises(FileFormatError, match="more than 1099 bytes of text"):
                read_bytes(q)


# ---------------------------------------------------------------------- memory, measured in a child process
_CHILD = """
import json, sys
from bayeval.io import read_bytes

def peak():  # this process's peak resident memory in MiB (VmHWM: unlike ru_maxrss, not inherited from the parent)
    with open("/proc/self/status") as fh:
        return next(int(ln.split()[1]) for ln in fh if ln.startswith("VmHWM:")) / 1024

before = peak()
try:
    n, error = len(read_bytes(sys.argv[1])), None
except Exception as exc:
    n, error = None, f"{type(exc).__name__}: {exc}"
print(json.dumps({"mb": peak() - before, "n": n, "error": error}))
"""
needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="no /proc/self/status (Linux)")


def _read_in_child(path, limit: str | None = None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("BAYEVAL_FILE_LIMIT", None)
    if limit:
        env["BAYEVAL_FILE_LIMIT"] = limit

    def cap():  # a regression fails here instead of exhausting the machine
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))

    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, env=env,
                          preexec_fn=cap, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _zeros_gz(path, mib: int, members: int = 1) -> None:
    """A gzip file of ``mib`` MiB of zero bytes (in ``members`` members; a last member of one byte when 2)."""
    chunk = b"\0" * (1 << 20)
    with open(path, "wb") as fh:
        c = zlib.compressobj(1, zlib.DEFLATED, 31)
        for _ in range(mib):
            fh.write(c.compress(chunk))
        fh.write(c.flush())
        if members == 2:
            fh.write(gzip.compress(b"\0"))


@needs_dev_zero
@needs_proc
def test_dev_zero_costs_no_memory():
    got = _read_in_child(ZERO)
    assert "not a regular file" in got["error"] and got["mb"] < 20, got


@needs_proc
def test_a_2_gib_file_is_refused_holding_nothing(tmp_path):
    big = tmp_path / "big.run"
    with open(big, "wb") as fh:
        fh.truncate(2 << 30)
    got = _read_in_child(big)
    assert "more than 1 GiB of text" in got["error"] and got["mb"] < 20, got


@needs_proc
@pytest.mark.parametrize("members", [1, 2], ids=["trailer", "streamed"])
def test_a_gzip_bomb_is_refused_within_the_limit(tmp_path, members):
    """256 MiB of zeros in a 0.3 MB gzip file, read under a 64 MiB limit: refused holding nothing when the gzip
    trailer gives the size away (one member), holding at most the limit when it does not (a small last member)."""
    bomb = tmp_path / "bomb.gz"
    _zeros_gz(bomb, 256, members)
    got = _read_in_child(bomb, limit="64M")
    assert "more than 64 MiB of text once decompressed" in got["error"], got
    assert got["mb"] < (20 if members == 1 else 64 + 20), got


@needs_proc
@pytest.mark.parametrize("kind", ["bom", "gzip"])
def test_the_text_is_held_once(tmp_path, kind):
    """64 MiB of text with a leading byte-order mark, and the same gzip-compressed in two members (``cat a.gz
    b.gz``): read holding the text once (and a little), not a second copy of the file."""
    text = b"401 Q0 d1 1 0.5 t\n" * ((64 << 20) // 18)
    path = tmp_path / "r.run"
    if kind == "bom":
        path.write_bytes(b"\xef\xbb\xbf" + text)
    else:
        half = len(text) // 2
        path.write_bytes(gzip.compress(text[:half], compresslevel=1) + gzip.compress(text[half:], compresslevel=1))
    got = _read_in_child(path)
    assert got["n"] == len(text), got
    assert got["mb"] < 1.3 * len(text) / 2**20, got


# ---------------------------------------------------------------------- every command
_COMMANDS = {
    "measures (qrels)": ["measures", "{Z}", "{run}"],
    "measures (run)": ["measures", "{qrels}", "{Z}"],
    "check": ["check", "{qrels}", "{Z}"],
    "sampled (sample)": ["sampled", "{Z}", "{run}"],
    "sampled (prels)": ["sampled", "--prels", "{Z}", "{run}"],
    "evaluate (probabilities)": ["evaluate", "{qrels}", "{run}", "--probabilities", "{Z}"],
    "estimate (texts)": ["estimate", "{qrels}", "{run}", "--model", "similarity", "--texts", "{Z}"],
    "report": ["report", "{qrels}", "{Z}", "--default-p", "0.1"],
    "judge init": ["judge", "init", "{new}", "{Z}"],
    "judge record": ["judge", "record", "{campaign}", "{Z}"],
    "judge sample --probabilities": ["judge", "sample", "{campaign}", "--share", "0.5", "--probabilities", "{Z}"],
    "judge simulate": ["judge", "simulate", "{qrels}", "{Z}"],
    "bias": ["bias", "manual-only", "{qrels}", "{run}", "--groups", "{Z}"],
}


@pytest.fixture(scope="module")
def small_files(tmp_path_factory):
    from bayeval.synthetic import make_collection

    root = tmp_path_factory.mktemp("small")
    col = make_collection(n_topics=2, n_systems=2, n_docs=20, depth=10, seed=4)
    (root / "runs").mkdir()
    for r in col.runs:
        write_run(r, root / "runs" / f"{r.name}.run")
    run = root / "runs" / f"{col.runs[0].name}.run"
    qrels = root / "qrels.txt"
    write_qrels(col.qrels, qrels)
    campaign = root / "c.sqlite"
    rc, _, err = run_cli("judge", "init", campaign, root / "runs", "--qrels", qrels)
    assert rc == 0, err
    return {"run": run, "qrels": qrels, "campaign": campaign, "new": root / "new.sqlite"}


@needs_dev_zero
@pytest.mark.parametrize("command", sorted(_COMMANDS))
def test_every_command_refuses_dev_zero_in_one_line(small_files, command):
    argv = [a.format(Z=ZERO, **small_files) for a in _COMMANDS[command]]
    rc, out, err = run_cli(*argv)
    lines = [ln for ln in err.splitlines() if not ln.startswith("bayeval: note: ")]
    assert rc == 2 and "Traceback" not in err + out, err[-2000:]
    want = f"{ZERO}: not a regular file (a character device)"
    if command == "check":  # check lists every file it could not read, then exits 2
        assert f"  {want}; give a file" in out.splitlines(), out
    else:
        assert lines == [f"bayeval: error: {want}; give a file"], err
