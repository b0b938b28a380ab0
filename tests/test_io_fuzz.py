"""Property-based and differential fuzz of every reader: generated files in the regular and irregular shapes real
files take.

1. For every generated file, each reader (runs, qrels, prels, probabilities, texts, run tables, run groups, sites,
   designs, trial tables, SMART records, embeddings, judgments) either returns or raises a
   :class:`BayevalInputError` whose message is one line naming the file (and, for :class:`FileFormatError`, a line
   that exists in the file), at most 200 characters besides the file names; nothing else escapes (no traceback).
   The CLI exits 0 or 2, and with 2 prints one line.
2. Differential: the run, qrels, probability and judgment readers against a reference parser written here from the
   rules of docs/data.md, deliberately simple (Python's gzip module, ``bytes.split``, ``sorted``). Files come
   from seeded generators: multi-member gzip, trailing garbage, zero padding, truncation, interleaved topics,
   empty columns, byte-order marks at the start and in the middle, control characters, huge fields, repeated
   documents, damaged judgment files. Every file is refused by both or accepted by both with the same topics,
   documents, order, scores and grades. 10,000 files in the default run, 100,000 in the ``slow`` test
   (``python -m pytest -m slow tests/test_io_fuzz.py``).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
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
from bayeval.design import read_design, read_sites
from bayeval.errors import BayevalInputError, FileFormatError
from bayeval.experiments.table import COLUMNS, read_table
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
from bayeval.io.sampled import read_stratified_sample
from bayeval.selection import read_judgments

pytestmark = pytest.mark.filterwarnings("ignore::bayeval.errors.DataNotice")

FILES: Counter = Counter()  # generated files per reader (quoted by the slow test)
# generated files are small and many: written to memory (tmpfs) where there is one, as writing each to a busy disk
# costs more than reading it
_SCRATCH = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None

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
TRIAL_COLUMNS = COLUMNS
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
    "judgments": st.one_of(_joined(TOPICS, st.just("0"), DOCS, st.sampled_from(["0", "1", "2", "2.0"])),
                           _joined(TOPICS, DOCS, st.one_of(st.sampled_from(["0", "1"]), NUMS)),
                           st.builds(lambda *c: ",".join(c), TOPICS, DOCS, st.one_of(st.sampled_from(["0", "1", ""]),
                                                                                      NUMS)),
                           st.sampled_from(["topic,docno,grade", "Topic,DocNo,Relevance,score", "docno,topic",
                                            '"401","d1","1"', '401,"d1'])),
    "design": st.one_of(st.builds(lambda *c: ",".join(c), TOPICS, st.sampled_from(["0", "1", "-1", "x", ""]),
                                  st.sampled_from(["1", "0", "yes", "held-out", "?"]),
                                  st.sampled_from(["1", "0", "+", "-", ""])),
                        st.sampled_from(["topic,block,a,b", "topic,a,b", "topic,block,a", "topic,block,a,a"])),
    "sampled": _joined(TOPICS, st.just("0"), DOCS, st.sampled_from(["s1", "s2", "x"]),
                       st.one_of(st.sampled_from(["-1", "0", "1", "2"]), NUMS)),
    "trials": st.one_of(st.just(",".join(TRIAL_COLUMNS)),
                        st.builds(lambda toks: ",".join(toks), st.lists(st.one_of(TOKEN, NUMS), min_size=1,
                                                                        max_size=len(TRIAL_COLUMNS) + 2))),
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
        self.tmp = tempfile.TemporaryDirectory(dir=_SCRATCH)
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
            data = gzip.GzipFile(fileobj=io.BytesIO(data)).read()  # every member
        except (OSError, EOFError, zlib.error):
            return 0
    return data.count(b"\n") + 1


def _clean(exc: BayevalInputError, paths) -> None:
    """A rejection is one line naming one of ``paths`` (and an existing line of it), at most 200 characters
    besides the file names (quoted fields are cut at 80)."""
    msg = str(exc)
    assert "\n" not in msg and "\r" not in msg, msg
    names = {str(p): p for p in paths}
    assert any(n in msg for n in names), msg
    rest = msg
    for n in sorted(names, key=len, reverse=True):
        rest = rest.replace(n, "")
    assert len(rest) <= 200, msg[:400]
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
    "judgments": (_case_reader(lambda p: read_judgments(p), "answers.csv"), [_file("judgments", 3), st.none()]),
    "design": (_case_reader(read_design, "design.csv"), [_file("design", 3), st.none()]),
    "trial-table": (_case_reader(read_table, "trials.csv"), [_file("trials", 3), st.none()]),
    "stratified-sample": (_case_reader(read_stratified_sample, "sample.txt"), [_file("sampled"), st.none()]),
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


# ==========================================================================================================
# Differential fuzz: the readers against a reference parser written from docs/data.md
# ==========================================================================================================
# The reference is deliberately simple and slow: Python's gzip.GzipFile for the decompression, bytes.split for
# the columns, sorted() for trec_eval's order, dictionaries for the repeats. Every generated file either is
# refused by both, or accepted by both with the same topics, documents, order and grades (or probabilities).
import random  # noqa: E402
import re  # noqa: E402
import warnings  # noqa: E402

from bayeval.io import read_bytes  # noqa: E402
from bayeval.io.runs import _NON_BLANK, _parse_arrow, _parse_checked, run_name_from_file  # noqa: E402

REFUSED = "refused"
_CONTROL_CHARS = re.compile("[\x00-\x1f\x7f-\x9f\ufeff]")
_GRADE_COLUMNS = ("grade", "relevance", "rel", "judgment", "label")


class _Refuse(Exception):
    pass


def _ref_bytes(data: bytes, strict: bool) -> bytes:
    """docs/data.md: gzip by its magic bytes, every member, zero padding allowed; a leading BOM dropped; a BOM
    starting a later line dropped (strict: refused)."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.GzipFile(fileobj=io.BytesIO(data)).read()
        except (OSError, EOFError, zlib.error):
            raise _Refuse from None
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    lines = data.split(b"\n")
    if any(ln[:3] == b"\xef\xbb\xbf" for ln in lines[1:]):
        if strict:
            raise _Refuse
        lines = [lines[0]] + [ln[3:] if ln[:3] == b"\xef\xbb\xbf" else ln for ln in lines[1:]]
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def _ref_text(field: bytes) -> str:
    try:
        return field.decode("utf-8")
    except UnicodeDecodeError:
        raise _Refuse from None


def _ref_id(field) -> str:
    """A topic id or docno: UTF-8, no control character, no byte-order mark."""
    text = _ref_text(field) if isinstance(field, bytes) else field
    if _CONTROL_CHARS.search(text):
        raise _Refuse
    return text


_REF_INTEGER = re.compile(rb"[+-]?[0-9]+")
_REF_DECIMAL = re.compile(rb"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_REF_SPECIAL = re.compile(rb"[+-]?(inf|infinity|nan)", re.IGNORECASE)


def _ref_integer(field: bytes) -> int:
    """docs/data.md: ASCII digits with an optional sign (no "1_0", no "٣")."""
    if not _REF_INTEGER.fullmatch(field) or len(field.lstrip(b"+-")) > 4300:
        raise _Refuse
    return int(field)


def _ref_number(field: bytes) -> float:
    """docs/data.md: a decimal literal with ASCII digits, or inf/infinity/nan in any case, with an optional sign."""
    if _REF_DECIMAL.fullmatch(field) or _REF_SPECIAL.fullmatch(field):
        return float(field)
    raise _Refuse


def _ref_grade(field: bytes) -> int:
    try:
        g = _ref_integer(field)
    except _Refuse:
        f = _ref_number(field)
        if not f.is_integer():
            raise _Refuse from None
        g = int(f)
    if abs(g) >= 2**62:
        raise _Refuse
    return g


def _data_lines(lines):
    for k, ln in enumerate(lines, start=1):
        fields = ln.split()
        if fields and fields[0][:1] != b"#":
            yield k, fields


def _ref_run(data: bytes, path: str, strict: bool):
    """``(name, {topic: [(docno, score), ...] in trec_eval order})`` or REFUSED."""
    try:
        lines = _ref_bytes(data, strict)
        rows, width, tags = [], None, set()
        for _, f in _data_lines(lines):
            if width is None:
                width = len(f)
                if width not in (3, 4, 6):
                    raise _Refuse
                first_tag = _ref_text(f[5]) if width == 6 else None
            if len(f) != width:
                raise _Refuse
            if width == 6:
                topic, docno = _ref_id(f[0]), _ref_id(f[2])
                score = _ref_number(f[4])
                if score != score or score in (float("inf"), float("-inf")):
                    raise _Refuse
                tags.add(_ref_text(f[5]))
            else:
                topic, docno = _ref_id(f[0]), _ref_id(f[1])
                try:
                    score = -float(_ref_integer(f[2]))
                except OverflowError:
                    raise _Refuse from None
                if width == 4:
                    _ref_number(f[3])
            rows.append((topic, docno, score))
        if width is None or (strict and len(tags) > 1):
            raise _Refuse
        by_topic = {}
        for t, d, s in rows:
            by_topic.setdefault(t, []).append((d, s))
        out = {}
        for t, items in by_topic.items():
            items = sorted(items, key=lambda x: x[0].encode(), reverse=True)  # docno descending (bytes)
            items = sorted(items, key=lambda x: -x[1])  # then score descending; stable: file order among equals
            seen, kept = set(), []
            for d, s in items:
                if d in seen:
                    if strict:
                        raise _Refuse
                    continue
                seen.add(d)
                kept.append((d, s))
            out[t] = kept
        return (first_tag if width == 6 else run_name_from_file(path)), out
    except _Refuse:
        return REFUSED


def _ref_qrels(data: bytes, strict: bool):
    """``{topic: [(docno, grade), ...] in file order}`` or REFUSED."""
    try:
        lines = _ref_bytes(data, strict)
        width, out = None, {}
        for _, f in _data_lines(lines):
            if width is None:
                width = len(f)
                if width != 4 and not (width == 5 and not strict):
                    raise _Refuse
            if len(f) != width:
                raise _Refuse
            topic, docno, grade = _ref_id(f[0]), _ref_id(f[2]), _ref_grade(f[3])
            docs = out.setdefault(topic, {})
            if docno in docs and (strict or docs[docno] != grade):
                raise _Refuse
            docs.setdefault(docno, grade)
        if not out:
            raise _Refuse
        return {t: list(d.items()) for t, d in out.items()}
    except _Refuse:
        return REFUSED


def _ref_probabilities(data: bytes):
    try:
        lines = _ref_bytes(data, False)
        out = {}
        for _, f in _data_lines(lines):
            if len(f) != 4:
                raise _Refuse
            topic, docno = _ref_id(f[0]), _ref_id(f[2])
            p = _ref_number(f[3])
            if not 0.0 <= p <= 1.0:
                raise _Refuse
            docs = out.setdefault(topic, {})
            if docno in docs:
                raise _Refuse
            docs[docno] = p
        if not out:
            raise _Refuse
        return out
    except _Refuse:
        return REFUSED


def _ref_judgments(data: bytes):
    """``[(topic, docno, grade, line)]`` or REFUSED: csv with a header naming topic, docno and a grade column, or
    lines ``topic iteration docno grade`` / ``topic docno grade``; the whole file UTF-8."""
    try:
        lines = [_ref_text(ln) for ln in _ref_bytes(data, False)]
        data_lines = [(k, ln) for k, ln in enumerate(lines, start=1) if ln.strip() and not ln.lstrip().startswith("#")]
        if not data_lines:
            return []
        out = []
        if "," not in data_lines[0][1]:
            for k, ln in data_lines:
                f = ln.encode().split()
                if f[0][:1] == b"#":
                    continue
                if len(f) not in (3, 4):
                    raise _Refuse
                t, d, g = (f[0], f[2], f[3]) if len(f) == 4 else f
                out.append((_ref_id(t), _ref_id(d), _ref_grade(g), k))
            return out
        if any(c in ln for ln in lines for c in "\"\r"):
            return None  # quoted csv fields: the csv module's business, not the reference's
        header = None
        for k, ln in data_lines:
            cells = [c.strip() for c in ln.split(",")]
            if not any(cells):
                continue
            if header is None:
                header = [c.lower() for c in cells]
                if "topic" not in header or "docno" not in header:
                    raise _Refuse
                g = next((header.index(n) for n in _GRADE_COLUMNS if n in header), None)
                if g is None:
                    raise _Refuse
                ti, di = header.index("topic"), header.index("docno")
                continue
            if len(cells) < len(header) or not cells[g]:
                raise _Refuse
            out.append((_ref_id(cells[ti]), _ref_id(cells[di]), _ref_grade(cells[g].encode()), k))
        return out
    except _Refuse:
        return REFUSED


def _ref_sample(data: bytes):
    """``{topic: [(docno, stratum, rel), ...] in file order}`` or REFUSED: five columns ``topic iteration docno
    stratum rel``, rel a grade >= -1 (the qrels grade rule), a document once per topic."""
    try:
        lines = _ref_bytes(data, False)
        out = {}
        for _, f in _data_lines(lines):
            if len(f) != 5:
                raise _Refuse
            topic, docno, label = _ref_id(f[0]), _ref_id(f[2]), _ref_text(f[3])
            rel = _ref_grade(f[4])
            if rel < -1:
                raise _Refuse
            docs = out.setdefault(topic, {})
            if docno in docs:
                raise _Refuse
            docs[docno] = (label, rel)
        if not out:
            raise _Refuse
        return {t: [(d, lab, g) for d, (lab, g) in docs.items()] for t, docs in out.items()}
    except _Refuse:
        return REFUSED


def _ref_prels(data: bytes, strict: bool):
    """``{topic: [(docno, grade, inclusion), ...] in file order}`` or REFUSED: five columns ``topic docno grade
    algorithm probability``, the probability in (0, 1]; a repeat with the same grade and probability kept once
    (strict: refused), any other repeat refused."""
    try:
        lines = _ref_bytes(data, strict)
        out = {}
        for _, f in _data_lines(lines):
            if len(f) != 5:
                raise _Refuse
            topic, docno, grade, p = _ref_id(f[0]), _ref_id(f[1]), _ref_grade(f[2]), _ref_number(f[4])
            if not 0.0 < p <= 1.0:
                raise _Refuse
            docs = out.setdefault(topic, {})
            if docno in docs and (strict or docs[docno] != (grade, p)):
                raise _Refuse
            docs.setdefault(docno, (grade, p))
        if not out:
            raise _Refuse
        return {t: [(d, g, p) for d, (g, p) in docs.items()] for t, docs in out.items()}
    except _Refuse:
        return REFUSED


# ---------------------------------------------------------------------- generators (seeded)
_TOPICS = ["401", "402", "10", "2", "Q1", "é", "1\u00a0", "00401"]
_DOCS = ["d1", "d2", "d3", "d10", "FT911-1", "doc#3", "ü", "D1", "a", "b", "z", "ä", "x" * 300]
_SCORES = ["0.5", "0.9", "1", "2", "-1", "1e-3", "0.50", "1e400", "nan", "inf", "abc", "1_0", "+1", "-0", ".5",
           "٣", "0x1", "9" * 400, "1.5e3", "3", "nan(1)", "NaN", "-Infinity", "1.", "+-1", "1e", "0001", "1E+2"]
_CONTROL_INSERTS = ["\x00", "\x01", "\x1f", "\x7f", "\x85", "\ufeff", "\x0b", "\x0c", "\r", "\x1c", "\u2028"]
_HUGE = ["9" * 100_000, "x" * 5000, "é" * 3000]


def _doc(rng: random.Random) -> str:
    """A docno: mostly one of many plain ones (few repeats), sometimes a special one (repeats, non-ASCII)."""
    return f"D{rng.randrange(400)}" if rng.random() < 0.8 else rng.choice(_DOCS)


def _rate(rng: random.Random) -> float:
    """How damaged a file's lines are: half of the files clean, the others a little to much."""
    return 0.0 if rng.random() < 0.5 else rng.choice([0.02, 0.1, 0.3])


def _mutate_fields(rng: random.Random, fields: list[str], rate: float) -> list[str]:
    """With probability ``rate``: a control character or BOM inside a field, a huge field, or an empty column."""
    if rng.random() >= rate:
        return fields
    i = rng.randrange(len(fields))
    what = rng.random()
    if what < 0.5:
        k = rng.randrange(len(fields[i]) + 1)
        fields[i] = fields[i][:k] + rng.choice(_CONTROL_INSERTS) + fields[i][k:]
    elif what < 0.65:
        fields[i] = rng.choice(_HUGE)
    else:
        fields[i] = ""
    return fields


def _join(rng: random.Random, lines: list[list[str]], sep: str) -> bytes:
    """Lines of fields to bytes: one separator per file (the fast parser's case) or mixed, comments and blank
    lines, CRLF, BOMs (leading and mid-file), invalid UTF-8, gzip with several members, trailing garbage,
    zero padding, truncation."""
    mixed = rng.random() < 0.15
    comments = rng.random() < 0.25
    out = []
    for f in lines:
        if comments and rng.random() < 0.1:
            out.append(rng.choice(["# c", "", "  ", "#", "\t# x"]))
        s = rng.choice([" ", "\t", "  ", " \t"]) if mixed else sep
        out.append(s.join(f))
    eol = "\r\n" if rng.random() < 0.15 else "\n"
    text = eol.join(out) + (eol if rng.random() < 0.8 else "")
    raw = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.2:
        raw = b"\xef\xbb\xbf" + raw
    if rng.random() < 0.08 and b"\n" in raw:  # a BOM at the start of a later line (cat of two BOM files)
        ends = [m.end() for m in re.finditer(b"\n", raw)]
        k = rng.choice(ends)
        raw = raw[:k] + b"\xef\xbb\xbf" + raw[k:]
    if rng.random() < 0.03 and raw:
        k = rng.randrange(len(raw) + 1)
        raw = raw[:k] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80"]) + raw[k:]
    if rng.random() < 0.3:
        cuts = sorted(rng.randrange(len(raw) + 1) for _ in range(rng.randrange(0, 3)))
        parts = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
        raw = b"".join(gzip.compress(p, mtime=0) for p in parts)  # several members where cuts > 0
        r = rng.random()
        if r < 0.05:
            raw += rng.choice([b"garbage", b"\x1f\x8b", b"\x1f\x8b\x08\x00\x00"])
        elif r < 0.1:
            raw += b"\x00" * rng.randrange(1, 9)
        elif r < 0.15:
            raw = raw[: max(2, len(raw) - rng.randrange(1, 30))]
    return raw


def _gen_run(rng: random.Random) -> bytes:
    layout = rng.choices([6, 3, 4], [8, 1, 1])[0]
    rate = _rate(rng)
    n = rng.randrange(0, 30)
    topics = rng.sample(_TOPICS, rng.randrange(1, 4))
    tags = ["t"] if rng.random() < 0.9 else ["t", "u"]
    sep = "\t" if layout != 6 and rng.random() < 0.7 else rng.choice([" ", "\t"])
    rows = []
    for i in range(n):
        t, d = rng.choice(topics), _doc(rng)
        if layout == 6:
            score = rng.choice(_SCORES) if rng.random() < rate else repr(round(rng.uniform(-2, 2), rng.choice([1, 3])))
            f = [t, rng.choice(["Q0", "0"]), d, str(i), score, rng.choice(tags)]
        else:
            rank = rng.choice(_SCORES) if rng.random() < rate else str(rng.randrange(0, 5))
            f = [t, d, rank] + ([rng.choice(_SCORES) if rng.random() < rate else "1.5"] if layout == 4 else [])
        rows.append(_mutate_fields(rng, f, rate))
    if rng.random() < 0.5:  # grouped by topic, as most files are; otherwise interleaved
        rows.sort(key=lambda f: f[0])
    if rng.random() < rate:
        rows.insert(rng.randrange(len(rows) + 1), [_doc(rng)] * rng.choice([1, 2, 5, 7]))
    if rows and rng.random() < 0.1:  # a document listed twice for a topic
        rows.insert(rng.randrange(len(rows) + 1), list(rng.choice(rows)))
    return _join(rng, rows, sep)


def _gen_qrels(rng: random.Random) -> bytes:
    width = 5 if rng.random() < 0.1 else 4
    rate = _rate(rng)
    topics = rng.sample(_TOPICS, rng.randrange(1, 4))
    rows = []
    for _ in range(rng.randrange(0, 30)):
        g = rng.choice(_SCORES + ["2.0", "1.5"]) if rng.random() < rate else rng.choice(["0", "1", "2", "-1", "3"])
        t, d = rng.choice(topics), _doc(rng)
        if rows and len(rows[-1]) > 3 and rng.random() < 0.03:  # a repeated judgment: same grade or another
            t, d = rows[-1][0], rows[-1][2]
            g = rows[-1][3] if rng.random() < 0.7 else g
        f = [t, "0", d, g] + (["judge"] if width == 5 else [])
        rows.append(_mutate_fields(rng, f, rate))
    return _join(rng, rows, rng.choice([" ", "\t"]))


def _gen_probabilities(rng: random.Random) -> bytes:
    rate = _rate(rng)
    topics = rng.sample(_TOPICS, rng.randrange(1, 4))
    rows, seen = [], set()
    for _ in range(rng.randrange(0, 25)):
        p = rng.choice(_SCORES + ["1.0", "0", "-0.0", "1.0000001"]) if rng.random() < rate else repr(rng.random())
        t, d = rng.choice(topics), _doc(rng)
        if (t, d) in seen and rng.random() >= rate:  # a document twice for a topic is refused: mostly avoid it
            continue
        seen.add((t, d))
        rows.append(_mutate_fields(rng, [t, "Q0", d, p], rate))
    return _join(rng, rows, rng.choice([" ", "\t"]))


def _gen_judgments(rng: random.Random) -> bytes:
    topics = rng.sample(_TOPICS, rng.randrange(1, 3))
    rate = _rate(rng)
    grades = ["0", "1", "2", "2.0", "", "x", "1e999", "9" * 30]
    if rng.random() < 0.6:  # csv with a header
        header = rng.choice([["topic", "docno", "grade"], ["Topic", "DocNo", "Relevance", "score"],
                             ["docno", "topic", "label"], ["topic", "docno"], ["run", "docno", "grade"]])
        rows = [header]
        for _ in range(rng.randrange(0, 20)):
            cell = {"topic": rng.choice(topics), "docno": _doc(rng)}
            row = [cell.get(h.lower(), rng.choice(grades) if rng.random() < rate else rng.choice(["0", "1", "2"]))
                   for h in header]
            if rng.random() < rate / 3:
                row = row[:-1]
            rows.append(_mutate_fields(rng, row, rate))
        if rng.random() < rate / 2:
            rows.append(['"unclosed', "d1", "1"])
        return _join(rng, rows, ",")
    rows = []
    for _ in range(rng.randrange(0, 20)):
        g = rng.choice(grades[1:]) if rng.random() < rate else rng.choice(["0", "1", "2"])
        rows.append(_mutate_fields(rng, rng.choice([[rng.choice(topics), "0", _doc(rng), g],
                                                    [rng.choice(topics), _doc(rng), g]]), rate))
    return _join(rng, rows, rng.choice([" ", "\t"]))


def _gen_sample(rng: random.Random) -> bytes:
    """A small stratified sample: strata labels, rel -1 (not sampled) or a grade, damaged at the file's rate;
    now and then a document listed twice."""
    rate = _rate(rng)
    topics = rng.sample(_TOPICS, rng.randrange(1, 3))
    rows = []
    for _ in range(rng.randrange(0, 20)):
        rel = rng.choice(_SCORES + ["2.0", "-2", "1.5"]) if rng.random() < rate else rng.choice(["-1", "-1", "0", "1",
                                                                                                  "2"])
        f = [rng.choice(topics), rng.choice(["0", "Q0"]), _doc(rng), rng.choice(["1", "2", "s3", "é"]), rel]
        rows.append(_mutate_fields(rng, f, rate))
    if rows and rng.random() < 0.08:
        rows.insert(rng.randrange(len(rows) + 1), list(rng.choice(rows)))
    return _join(rng, rows, rng.choice([" ", "\t"]))


def _gen_prels(rng: random.Random) -> bytes:
    """A small prels file: inclusion probabilities, damaged at the file's rate; now and then a document listed
    twice with the same judgment, another grade or another probability."""
    rate = _rate(rng)
    topics = rng.sample(_TOPICS, rng.randrange(1, 3))
    rows = []
    for _ in range(rng.randrange(0, 20)):
        p = rng.choice(_SCORES + ["0", "1.0", "1.0000001", "0.01"]) if rng.random() < rate else repr(
            round(rng.uniform(0.001, 1), 3))
        g = rng.choice(_SCORES + ["2.0"]) if rng.random() < rate else rng.choice(["0", "1", "2"])
        rows.append(_mutate_fields(rng, [rng.choice(topics), _doc(rng), g, rng.choice(["1", "2", "a"]), p], rate))
    if rows and rng.random() < 0.15:
        f = list(rng.choice(rows))
        if len(f) == 5:
            k = rng.random()
            if k < 0.3:
                f[2] = rng.choice(["0", "1", "2"])
            elif k < 0.6:
                f[4] = rng.choice(["0.5", "0.50", "0.01", f[4]])
        rows.insert(rng.randrange(len(rows) + 1), f)
    return _join(rng, rows, rng.choice([" ", "\t"]))


# ---------------------------------------------------------------------- the comparison
def _run_result(run):
    return run.name, {t: list(zip(run.ranking(t).tolist(), run.topic_scores(t).tolist(), strict=True))
                      for t in run.topics}


def _differential_case(kind: str, rng: random.Random, d) -> None:
    strict = rng.random() < 0.3
    if kind == "runs":
        data = _gen_run(rng)
        p = d.write(data, rng.choice(["input.r.gz", "r.run", "m.tsv"]))
        expected, read = _ref_run(data, str(p), strict), lambda: _run_result(read_run(p, strict=strict))
        _fast_and_careful_agree(p, strict)
    elif kind == "samples":
        data = _gen_sample(rng)
        p = d.write(data, "sample.txt")
        expected = _ref_sample(data)

        def read():
            s = read_stratified_sample(p)
            return {t: [(dn, s[t].labels[c], g) for dn, c, g in
                        zip(s[t].docnos.tolist(), s[t].strata.tolist(), s[t].grades.tolist(), strict=True)]
                    for t in s.topics}
    elif kind == "prels":
        data = _gen_prels(rng)
        p = d.write(data, "prels.txt")
        expected = _ref_prels(data, strict)

        def read():
            q = read_prels(p, strict=strict)
            return {t: list(zip(q[t].docnos.tolist(), q[t].grades.tolist(), q[t].inclusion.tolist(), strict=True))
                    for t in q.topics}
    elif kind == "qrels":
        data = _gen_qrels(rng)
        p = d.write(data, "qrels.txt")
        expected = _ref_qrels(data, strict)

        def read():
            q = read_qrels(p, strict=strict)
            return {t: list(zip(q[t].docnos.tolist(), q[t].grades.tolist(), strict=True)) for t in q.topics}
    elif kind == "probabilities":
        data = _gen_probabilities(rng)
        p = d.write(data, "probs.txt")
        expected = _ref_probabilities(data)

        def read():
            return {t: dict(m) for t, m in read_probabilities(p).by_topic.items()}
    else:
        data = _gen_judgments(rng)
        p = d.write(data, "answers.csv")
        expected = _ref_judgments(data)

        def read():
            return [(j.topic, j.docno, j.grade, j.line) for j in read_judgments(p)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            got = read()
        except BayevalInputError as exc:
            _clean(exc, [p])
            got = REFUSED
    if expected is None:  # outside what the reference decides (quoted csv): only the one-line property
        return
    if kind in ("probabilities", "samples", "prels") and got != REFUSED and expected != REFUSED:
        got = {t: got[t] for t in sorted(got)}
        expected = {t: expected[t] for t in sorted(expected)}
    if kind == "runs" and got != REFUSED and expected != REFUSED:
        expected = (expected[0], {t: expected[1][t] for t in sorted(expected[1])})
        got = (got[0], {t: got[1][t] for t in sorted(got[1])})
    assert got == expected, (kind, strict, data[:300], got if got == REFUSED else "accepted",
                             expected if expected == REFUSED else "accepted")


def _fast_and_careful_agree(path, strict: bool) -> None:
    """The Arrow path and the line-by-line parser on the same decompressed text: where the Arrow path reads the
    file (``None``: it leaves the file to the careful parser), the careful parser reads the same rows, tag, notes
    and lines; where the Arrow path refuses it (strict), the careful parser refuses it with the same message."""
    try:
        data = read_bytes(path, strict=strict)
    except BayevalInputError:  # damaged gzip, a BOM mid-file under strict: no text to parse
        PATHS["no text"] += 1
        return
    try:
        careful = _parse_checked(data, str(path), strict)
    except BayevalInputError as exc:
        careful = str(exc)
    try:
        fast = _parse_arrow(data, str(path), strict) if _NON_BLANK.search(data) else None
    except BayevalInputError as exc:
        assert str(exc) == careful, (data[:300], str(exc), careful)
        PATHS["arrow"] += 1
        return
    if fast is None:
        PATHS["careful"] += 1
        return
    PATHS["arrow"] += 1
    assert not isinstance(careful, str), (data[:300], careful)
    assert (fast.layout, fast.tag, fast.mixed, fast.duplicates, fast.duplicate_line) == (
        careful.layout, careful.tag, careful.mixed, careful.duplicates, careful.duplicate_line), data[:300]

    def groups(p, docnos):  # topic -> ranked (docno, score); the groups may come in another order
        ends = [*p.starts[1:].tolist(), len(p.scores)]
        return {t: list(zip(docnos[a:b], p.scores[a:b].tolist(), strict=True))
                for t, a, b in zip(p.topics, p.starts.tolist(), ends, strict=True)}

    assert groups(fast, fast.docnos.to_pylist()) == groups(careful, careful.docnos.tolist()), data[:300]


PATHS: Counter = Counter()  # generated run files the Arrow path read (or refused) and those it left to the careful one
DIFFERENTIAL = {"runs": 0.4, "qrels": 0.25, "judgments": 0.2, "probabilities": 0.15}
SAMPLED = {"samples": 0.5, "prels": 0.5}


class _Slot:
    """One file per name, rewritten for every case (a directory per case costs more than the parsing)."""

    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory(dir=_SCRATCH)
        self.n = 0

    def write(self, data: bytes, name: str = "f") -> Path:
        self.n += 1
        p = Path(self.tmp.name) / name
        p.write_bytes(data)
        return p


def _differential(total: int, seed: int, kinds=DIFFERENTIAL) -> Counter:
    counts: Counter = Counter()
    d = _Slot()
    try:
        for kind, share in kinds.items():
            rng = random.Random(f"{seed}-{kind}")
            for _ in range(int(round(total * share))):
                _differential_case(kind, rng, d)
                counts[kind] += 1
    finally:
        d.tmp.cleanup()
    return counts


def test_differential_fuzz_readers_agree_with_the_reference_parser():
    before = PATHS.copy()
    counts = _differential(10_000, seed=19)
    assert sum(counts.values()) >= 10_000
    taken = PATHS - before
    # every generated run file was also read by both paths; the Arrow path takes most of them (a file it leaves is
    # malformed or mixes separators), so the agreement is not vacuous
    assert sum(taken.values()) == counts["runs"] and taken["arrow"] > counts["runs"] / 3, taken


def test_differential_fuzz_stratified_samples_and_prels():
    counts = _differential(10_000, seed=23, kinds=SAMPLED)
    assert counts["samples"] + counts["prels"] >= 10_000


@pytest.mark.slow
def test_differential_fuzz_hundred_thousand_files():
    counts = _differential(100_000, seed=2026) + _differential(50_000, seed=2027, kinds=SAMPLED)
    print(f"\ndifferential fuzz: {dict(counts)}; run files by path: {dict(PATHS)}")
    assert sum(counts.values()) >= 150_000
