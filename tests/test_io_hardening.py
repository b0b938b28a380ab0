"""Readers that once accepted files with numbers different from what the same data give elsewhere, each with the
file that showed it: multi-member gzip, interleaved topics, empty columns, control characters and byte-order
marks inside identifiers, refusals quoting whole fields, and the judgments reader of ``judge record``."""

from __future__ import annotations

import gzip
import warnings

import numpy as np
import pytest
from conftest import run_cli

from bayeval.errors import DataNotice, FileFormatError
from bayeval.io import quoted, read_prels, read_probabilities, read_qrels, read_run, read_texts
from bayeval.measures import average_precision
from bayeval.selection import Campaign, read_judgments
from bayeval.synthetic import make_collection


def _rows(run):
    return {t: list(run.ranking(t)) for t in run.topics}


def _careful(tmp_path, text: str, name="careful.run"):
    """The same lines read by the careful parser (a comment line makes the fast parser step aside)."""
    p = tmp_path / name
    p.write_text("# forces the line-by-line parser\n" + text)
    return read_run(p)


# ---------------------------------------------------------------------- gzip
def test_multi_member_gzip_reads_every_member(tmp_path):
    a = "401 Q0 a 1 0.9 t\n401 Q0 b 2 0.8 t\n"
    b = "402 Q0 c 1 0.7 t\n402 Q0 d 2 0.6 t\n"
    p = tmp_path / "both.gz"
    p.write_bytes(gzip.compress(a.encode()) + gzip.compress(b.encode()))  # what `cat a.gz b.gz` writes
    plain = tmp_path / "both.run"
    plain.write_text(a + b)
    assert _rows(read_run(p)) == _rows(read_run(plain)) == {"401": ["a", "b"], "402": ["c", "d"]}
    q = tmp_path / "q.gz"
    q.write_bytes(gzip.compress(b"401 0 a 1\n") + gzip.compress(b"402 0 c 1\n") + b"\0" * 16)  # zero padding
    assert set(read_qrels(q).topics) == {"401", "402"}


@pytest.mark.parametrize("tail", [b"garbage", b"\x1f\x8bXX", gzip.compress(b"401 0 a 1\n")[:-6]],
                         ids=["garbage", "magic-only", "cut-member"])
def test_gzip_trailing_garbage_or_cut_member_refused_naming_the_file(tmp_path, tail):
    p = tmp_path / "q.gz"
    p.write_bytes(gzip.compress(b"401 0 a 1\n") + tail)
    with pytest.raises(FileFormatError) as e:
        read_qrels(p)
    assert str(e.value).startswith(f"{p}: ") and "gzip" in str(e.value) and "\n" not in str(e.value)


# ---------------------------------------------------------------------- the fast run parser
def test_interleaved_topics_are_ranked_by_score_as_the_careful_parser_does(tmp_path):
    text = "401 Q0 a 1 0.5 t\n402 Q0 x 1 0.9 t\n401 Q0 b 2 0.9 t\n"
    p = tmp_path / "r.run"
    p.write_text(text)
    fast = read_run(p)
    assert _rows(fast) == _rows(_careful(tmp_path, text)) == {"401": ["b", "a"], "402": ["x"]}
    ranked_rel = np.array([d == "b" for d in fast.ranking("401")], dtype=float)
    assert average_precision(ranked_rel, 1) == 1.0  # b relevant: AP(401) = 1, not 0.5


def test_interleaved_topics_random_files_agree_with_the_careful_parser(tmp_path):
    rng = np.random.default_rng(3)
    for k in range(40):
        n = int(rng.integers(2, 40))
        topics = rng.choice(["1", "2", "10", "401"], n)
        lines = [f"{t} Q0 d{rng.integers(0, 10**6)}x{i} {i} {rng.integers(0, 5) / 4} t" for i, t in enumerate(topics)]
        text = "\n".join(lines) + "\n"
        p = tmp_path / f"r{k}.run"
        p.write_text(text)
        fast, careful = read_run(p), _careful(tmp_path, text)
        assert _rows(fast) == _rows(careful)
        for t in fast.topics:
            np.testing.assert_array_equal(fast.topic_scores(t), careful.topic_scores(t))


@pytest.mark.parametrize("line", ["401 Q0  2 0.8 t", "401\tQ0\t\t2\t0.8\tt", "401  a 1 0.8 t", "401 Q0 a  0.8 t"])
def test_empty_column_is_refused_as_the_careful_parser_does(tmp_path, line):
    p = tmp_path / "r.run"
    p.write_text("401 Q0 a 1 0.9 t\n" + line + "\n")
    with pytest.raises(FileFormatError, match=r"r.run:2: expected 6 columns .* found 5"):
        read_run(p)


# ---------------------------------------------------------------------- identifiers
@pytest.mark.parametrize("bad", ["\x00", "\x01", "\x1f", "\x7f", "\x85", "\ufeff"],
                         ids=["nul", "soh", "us", "del", "nel", "bom"])
@pytest.mark.parametrize("where", ["topic", "docno"])
def test_control_characters_in_identifiers_refused_with_file_and_line(tmp_path, bad, where):
    topic, docno = ("40" + bad + "1", "a") if where == "topic" else ("401", "d" + bad + "1")
    cases = {
        "r.run": (f"401 Q0 z 1 0.9 t\n{topic} Q0 {docno} 2 0.5 t\n", read_run),
        "q.txt": (f"401 0 z 1\n{topic} 0 {docno} 1\n", read_qrels),
        "p.txt": (f"401 Q0 z 0.5\n{topic} Q0 {docno} 0.5\n", read_probabilities),
    }
    for name, (text, reader) in cases.items():
        p = tmp_path / name
        p.write_bytes(text.encode())
        with pytest.raises(FileFormatError) as e:
            reader(p)
        msg = str(e.value)
        assert msg.startswith(f"{p}:2: {where} ") and f"U+{ord(bad):04X}" in msg and "\n" not in msg, msg
    if where == "docno":
        p = tmp_path / "texts.tsv"
        p.write_bytes(f"z\tok\n{docno}\ttext\n".encode())
        with pytest.raises(FileFormatError, match=r"texts.tsv:2: docno"):
            read_texts(p)


def test_mid_file_byte_order_mark_gives_a_note_and_is_refused_when_strict(tmp_path):
    bom = b"\xef\xbb\xbf"
    p = tmp_path / "r.run"
    p.write_bytes(bom + b"401 Q0 a 1 0.9 t\n" + bom + b"401 Q0 b 2 0.8 t\n")  # cat of two files with a BOM
    with pytest.warns(DataNotice, match=r"r.run:2: 1 byte-order mark"):
        run = read_run(p)
    assert run.topics == ("401",) and list(run.ranking("401")) == ["a", "b"]
    with pytest.raises(FileFormatError, match=r"r.run:2: byte-order mark .*strict"):
        read_run(p, strict=True)
    q = tmp_path / "q.txt"
    q.write_bytes(bom + b"401 0 a 1\n" + bom + b"401 0 b 1\n")
    with pytest.warns(DataNotice):
        assert read_qrels(q).topics == ("401",)
    with pytest.raises(FileFormatError, match=r"q.txt:2: byte-order mark"):
        read_qrels(q, strict=True)
    rc, _, err = run_cli("measures", q, p, "--strict")
    assert rc == 2 and "byte-order mark" in err and "Traceback" not in err


# ---------------------------------------------------------------------- messages
def test_quoted_caps_fields_at_80_characters():
    assert quoted("abc") == "'abc'"
    long = quoted("x" * 5000)
    assert len(long) < 100 and long.startswith("'" + "x" * 80 + "'…") and "5000" in long
    assert quoted(b"\xff" * 3) == repr("\ufffd" * 3)


@pytest.mark.parametrize("make", [
    lambda big: ("r.run", f"401 Q0 a 1 {big} t\n", read_run),
    lambda big: ("r.run", f"# c\n401 Q0 a 1 0.5 t\n402 Q0 b 1 0.5 u{big}\n", lambda p: read_run(p, strict=True)),
    lambda big: ("m.tsv", f"401\ta\t{big}\n", read_run),
    lambda big: ("q.txt", f"401 0 a {big}\n", read_qrels),
    lambda big: ("q.txt", f"401 0 {big} 1\n401 0 {big} 2\n", read_qrels),
    lambda big: ("p.txt", f"401 0 a 1 {big}\n", read_prels),
    lambda big: ("pr.txt", f"401 Q0 a {big}\n", read_probabilities),
    lambda big: ("j.csv", f"topic,docno,grade\n401,a,{big}\n", read_judgments),
], ids=["score", "tag", "rank", "grade", "docno", "prels-probability", "probability", "judgment"])
def test_refusals_quote_at_most_80_characters_of_a_field(tmp_path, make):
    name, text, reader = make("9x" * 1_000_000)
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(FileFormatError) as e:
        reader(p)
    msg = str(e.value)
    # at most 200 characters besides the file's name (a temporary directory's name is long)
    assert len(msg) - len(str(p)) <= 200 and "\n" not in msg and msg.startswith(f"{p}:"), msg[:300]


# ---------------------------------------------------------------------- judge record's reader
@pytest.mark.parametrize("data", [
    b"topic,docno,grade\n401,d\xff1,1\n",  # not UTF-8
    b"\x1f\x8b\x08\x00garbage",  # a .gz that is not gzip
    gzip.compress(b"topic,docno,grade\n401,d1,1\n")[:-10],  # cut gzip
    b"topic,docno,grade\n401,d1," + b"9" * 5000 + b"\n",  # unbounded grade
    b"topic,docno,grade\n401,\"d1\n",  # an unclosed quote
    b"topic,docno,grade\n401,d\x001,1\n",  # NUL in a docno
    b"topic,docno,grade\n401,d1,x" + b"y" * 200_000 + b"\n",  # a field over csv's limit
    b"401 0 d1 1e999\n",
], ids=["not-utf8", "not-gzip", "cut-gzip", "huge-grade", "open-quote", "nul", "csv-field-limit", "inf-grade"])
def test_read_judgments_damaged_input_is_one_line_with_file_and_line(tmp_path, data):
    p = tmp_path / "answers.gz"
    p.write_bytes(data)
    with pytest.raises(FileFormatError) as e:
        read_judgments(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}") and "\n" not in msg and len(msg) - len(str(p)) <= 200, msg[:300]


def test_read_judgments_multi_member_gzip_and_bom(tmp_path):
    p = tmp_path / "answers.csv.gz"
    p.write_bytes(gzip.compress(b"\xef\xbb\xbftopic,docno,grade\n401,d1,1\n") + gzip.compress(b"401,d2,2.0\n"))
    assert [(j.topic, j.docno, j.grade, j.line) for j in read_judgments(p)] == [("401", "d1", 1, 2),
                                                                                ("401", "d2", 2, 3)]


def test_judge_record_cli_damaged_file_exits_2_with_one_line(tmp_path):
    col = make_collection(n_topics=2, n_systems=2, n_docs=20, depth=10, seed=2)
    camp = tmp_path / "c.sqlite"
    Campaign.create(camp, col.runs, measure="AP").close()
    for k, data in enumerate([b"topic,docno,grade\n1,d\xff1,1\n", b"\x1f\x8bnot gzip", b"1 d1 " + b"7" * 3000]):
        bad = tmp_path / f"bad{k}.gz"
        bad.write_bytes(data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rc, _, err = run_cli("judge", "record", camp, bad)
        lines = err.strip().splitlines()
        assert rc == 2 and len(lines) == 1 and lines[0].startswith(f"bayeval: error: {bad}"), err
