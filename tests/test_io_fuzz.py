"""Property-based fuzz of every reader: generated files in the regular and the irregular shapes real files take.

For every generated file, each reader either returns or raises a :class:`BayevalInputError` whose message is
one line naming the file (and, for :class:`FileFormatError`, a line that exists in the file); nothing else
escapes (no traceback). The CLI exits 0 or 2, and with 2 prints one line. The default run generates a few
hundred files; the ``slow`` test generates more than 10,000 (docs/data.md).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import tempfile
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayeval.bias import read_run_groups
from bayeval.cli.main import main
from bayeval.design import read_sites
from bayeval.errors import BayevalInputError, FileFormatError
from bayeval.io import (
    check_collection,
    read_embeddings,
    read_prels,
    read_probabilities,
    read_qrels,
    read_run,
    read_run_table,
    read_runs,
    read_texts,
)
from bayeval.io.cranfield import read_smart_records

pytestmark = pytest.mark.filterwarnings("ignore::bayeval.errors.DataNotice")

FILES: Counter = Counter()  # generated files per reader (quoted by the slow test)

# ------------------------------------------------------------------------------------------ tokens and lines
TOPICS = st.sampled_from(["1", "2", "10", "401", "Q1", "é", "1\u00a0"])
DOCS = st.sampled_from(["d1", "d2", "d3", "FT911-1", "doc#3", "ü", "x", "D1"])
NUMS = st.one_of(st.integers(-3, 1005).map(str), st.floats(allow_nan=True, allow_infinity=True).map(repr),
                 st.sampled_from(["nan", "inf", "-inf", "1e400", "1_0", "0x1", "9" * 30, "9" * 400, "9" * 5000, "1.5",
                                  "-0", "2.0", "+1", "٣"]))
JUNK = st.one_of(st.text(max_size=8), st.sampled_from(["#", "Q0", "{", "}", '"', "\t", "\x00", "\r", "\x0b", "\x1c",
                                                       "\u2028", "\ufeff"]))
TOKEN = st.one_of(TOPICS, DOCS, NUMS, JUNK)
SEPS = st.sampled_from([" ", "\t", "  ", " \t"])
GARBAGE = st.builds(lambda toks, sep: sep.join(toks), st.lists(TOKEN, max_size=8), SEPS)
COMMENT = st.sampled_from(["", "   ", "# comment", "#", "  # x y z", "\t"])


def _joined(*parts):
    return st.builds(lambda sep, *fields: sep.join(fields), SEPS, *parts)


TAGS = st.sampled_from(["t", "u", "cap"])
LINES = {
    "trec": _joined(TOPICS, st.sampled_from(["Q0", "0"]), DOCS, NUMS, NUMS, TAGS),
    "msm3": _joined(TOPICS, DOCS, NUMS),
    "msm4": _joined(TOPICS, DOCS, NUMS, NUMS),
    "qrels": _joined(TOPICS, st.just("0"), DOCS, st.one_of(st.sampled_from(["0", "1", "2", "-1"]), NUMS)),
    "qrels5": _joined(TOPICS, st.just("0"), DOCS, st.sampled_from(["0", "1", "2"]), TOKEN),
    "prels": _joined(TOPICS, DOCS, st.sampled_from(["0", "1"]), st.sampled_from(["1", "2"]), NUMS),
    "probs": _joined(TOPICS, st.just("Q0"), DOCS, st.one_of(NUMS, st.floats(0, 1).map(repr))),
    "texts": st.builds(lambda d, t: f"{d}\t{t}", DOCS, st.text(max_size=20)),
    "jsonl": st.one_of(st.builds(lambda d, t: json.dumps({"docno": d, "text": t}), DOCS, st.text(max_size=10)),
                       st.builds(lambda d, t: json.dumps({"doc_id": d, "text": t}), st.one_of(DOCS, NUMS), TOKEN),
                       st.sampled_from(["{", '{"docno": 1}', '{"docno": "a", "text": 3}', "{" * 3000, "[]",
                                        '{"a": ' + "[" * 100_000, '{"docno": " ", "text": ""}'])),
    "table": st.builds(lambda s, *c: s.join(c), st.sampled_from(["\t", ",", " "]), DOCS,
                       st.sampled_from(["g1", "g2", ""]),
                       st.sampled_from(["automatic", "manual", "Manual", "auto", "interactive", ""])),
    "smart": st.one_of(st.sampled_from([".I 1", ".I 2", ".I", ".T", ".W", ".A", ".B", ".X", "text"]), JUNK),
}


def _lines(kind: str, valid_weight: int = 6):
    line = st.one_of(*([LINES[kind]] * valid_weight), COMMENT, GARBAGE)
    return st.lists(line, max_size=25)


def _render(lines, crlf, bom, trailing, bad_byte, gz, cut) -> bytes:
    text = ("\r\n" if crlf else "\n").join(lines) + (("\r\n" if crlf else "\n") if trailing else "")
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogatepass")
    if bad_byte is not None and data:
        k = bad_byte % (len(data) + 1)
        data = data[:k] + b"\xff\xfe" + data[k:]
    if gz:
        data = gzip.compress(data)
        if cut:
            data = data[: max(2, len(data) - cut)]
    return data


def _file(kind: str, valid_weight: int = 6):
    """File bytes: lines of ``kind`` mixed with comments, blank and garbage lines; CRLF, a BOM, a stray
    invalid byte, gzip and truncated gzip at random."""
    return st.builds(_render, _lines(kind, valid_weight), st.booleans(), st.booleans(), st.booleans(),
                     st.one_of(st.none(), st.none(), st.none(), st.integers(0, 10**6)),
                     st.booleans(), st.one_of(st.just(0), st.just(0), st.integers(1, 30)))


RUN_FILE = st.one_of(_file("trec"), _file("msm3"), _file("msm4"))
QRELS_FILE = st.one_of(_file("qrels"), _file("qrels5"))


# ------------------------------------------------------------------------------------------ the property
class _Dir:
    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.n = 0

    def write(self, data: bytes, name: str = "f") -> Path:
        self.n += 1
        d = Path(self.tmp.name) / str(self.n)
        d.mkdir()
        p = d / name
        p.write_bytes(data)
        return p


def _line_count(data: bytes) -> int:
    if data[:2] == b"\x1f\x8b":
        try:
            data = zlib.decompress(data, 47)
        except zlib.error:
            return 0
    return data.count(b"\n") + 1


def _clean(exc: BayevalInputError, paths) -> None:
    """A rejection is one line naming one of ``paths`` (and an existing line of it)."""
    msg = str(exc)
    assert "\n" not in msg and "\r" not in msg, msg
    names = {str(p): p for p in paths}
    assert any(n in msg for n in names), msg
    if isinstance(exc, FileFormatError):
        assert exc.path in names, msg
        if exc.line is not None:
            assert msg.startswith(f"{exc.path}:{exc.line}: "), msg
            n = _line_count(names[exc.path].read_bytes()) if names[exc.path].is_file() else 0
            assert 1 <= exc.line <= max(n, 1), (exc.line, n, msg)
        else:
            assert msg.startswith(f"{exc.path}: "), msg


def _try(fn, *args, paths, **kw):
    try:
        fn(*args, **kw)
    except BayevalInputError as exc:
        _clean(exc, paths)


def _case_run(d, data, strict):
    p = d.write(data, "input.r.gz")
    _try(read_run, p, strict=strict, paths=[p])
    return 1


def _case_runs_dir(d, datas, extra, rule, strict):
    p = d.write(datas[0], "a")
    root = p.parent
    for i, data in enumerate(datas[1:]):
        (root / f"input.b{i}.txt").write_bytes(data)
    if extra is not None:
        (root / "README").write_bytes(extra)
    paths = [root, *root.iterdir()]
    _try(read_runs, root, run_names=rule, strict=strict, paths=paths)
    return len(datas) + (extra is not None)


def _case_reader(reader, name):
    def case(d, data, strict):
        p = d.write(data, name)
        _try(reader, p, strict=strict, paths=[p]) if strict is not None else _try(reader, p, paths=[p])
        return 1
    return case


def _case_embeddings(d, data, arrays):
    if arrays is not None:
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        data = buf.getvalue() if data[:1] != b"!" else buf.getvalue()[: len(data) * 7 % max(len(buf.getvalue()), 1)]
    p = d.write(data, "e.npz")
    _try(read_embeddings, p, paths=[p])
    return 1


def _case_cli(d, qdata, rdata, command, strict):
    q, r = d.write(qdata, "qrels"), d.write(rdata, "run")
    out, err = io.StringIO(), io.StringIO()
    argv = [command, str(q), str(r)] + (["--strict"] if strict else [])
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    assert rc in (0, 2), (rc, err.getvalue())
    if command != "check" and rc == 2:
        lines = [ln for ln in err.getvalue().splitlines() if not ln.startswith("bayeval: note: ")]
        assert len(lines) == 1 and lines[0].startswith("bayeval: error: "), err.getvalue()
        assert str(q) in lines[0] or str(r) in lines[0], lines[0]
    assert "Traceback" not in err.getvalue() + out.getvalue()
    return 2


def _case_check(d, qdata, rdata):
    q, r = d.write(qdata, "qrels"), d.write(rdata, "run")
    result = check_collection(q, [r])
    for line in result.errors:
        assert "\n" not in line and (str(q) in line or str(r) in line), line
    assert result.ok == (not result.errors)
    result.summary()
    return 2


ARRAYS = st.one_of(st.none(), st.fixed_dictionaries({
    "docnos": st.sampled_from([np.array(["a", "b"]), np.array([1, 2]), np.array(["a", "a"]), np.zeros((2, 2))]),
    "vectors": st.sampled_from([np.eye(2), np.ones((2, 3)), np.array([np.nan, 1.0]), np.array(["x", "y"]),
                                np.ones((3, 2))])}))

CASES = {
    "run": (_case_run, [RUN_FILE, st.booleans()]),
    "runs-directory": (_case_runs_dir, [st.lists(st.one_of(RUN_FILE, _file("trec", 20)), min_size=1, max_size=3),
                                        st.one_of(st.none(), _file("table")), st.sampled_from(["auto", "tag", "file"]),
                                        st.booleans()]),
    "qrels": (_case_reader(read_qrels, "qrels.txt"), [QRELS_FILE, st.booleans()]),
    "prels": (_case_reader(read_prels, "prels.txt"), [_file("prels"), st.booleans()]),
    "probabilities": (_case_reader(read_probabilities, "probs"), [_file("probs"), st.none()]),
    "texts": (_case_reader(read_texts, "texts.tsv"), [st.one_of(_file("texts"), _file("jsonl")), st.booleans()]),
    "run-table": (_case_reader(read_run_table, "runs.tsv"), [_file("table"), st.none()]),
    "run-groups": (_case_reader(read_run_groups, "runs.tsv"), [_file("table"), st.none()]),
    "sites": (_case_reader(read_sites, "sites.tsv"), [_file("table"), st.none()]),
    "smart": (_case_reader(read_smart_records, "cran.qry"), [_file("smart"), st.none()]),
    "embeddings": (_case_embeddings, [st.binary(max_size=64), ARRAYS]),
    "check": (_case_check, [QRELS_FILE, RUN_FILE]),
    "cli": (_case_cli, [QRELS_FILE, st.one_of(RUN_FILE, _file("trec", 30)), st.sampled_from(["measures", "check"]),
                        st.booleans()]),
}


def _fuzz(kind: str, examples: int) -> None:
    case, strategies = CASES[kind]
    d = _Dir()

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.tuples(*strategies))
    def run(args):
        FILES[kind] += case(d, *args)

    try:
        run()
    finally:
        d.tmp.cleanup()


@pytest.mark.parametrize("kind", sorted(CASES))
def test_readers_never_raise_anything_but_a_one_line_input_error(kind):
    _fuzz(kind, 25 if kind == "cli" else 40)


@pytest.mark.slow
def test_readers_fuzz_more_than_ten_thousand_files():
    before = sum(FILES.values())
    for kind in sorted(CASES):
        _fuzz(kind, 400 if kind == "cli" else 900)
    total = sum(FILES.values()) - before
    print(f"\nfuzzed {total} generated files: {dict(sorted(FILES.items()))}")
    assert total >= 10_000
