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
from bayeval.io import quoted, read_prels, read_probabilities, read_qrels, read_run, read_stratified_sample, read_texts
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


def test_design_and_trial_table_refusals_are_one_line(tmp_path):
    from bayeval.design import read_design
    from bayeval.errors import BayevalInputError
    from bayeval.experiments.table import read_table

    p = tmp_path / "design.csv"
    p.write_bytes(b"topic,block,a,b\n1,0,1\r 1,0\n")  # a carriage return inside an unquoted field
    with pytest.raises(FileFormatError, match=r"design.csv:2: not a csv line"):
        read_design(p)
    t = tmp_path / "trials.csv"
    t.write_text("a,b\n" + "1,2,3,4,5\n" * 3)
    with pytest.raises(BayevalInputError) as e:
        read_table(t)
    assert "\n" not in str(e.value) and len(str(e.value)) - len(str(t)) <= 200


# ---------------------------------------------------------------------- one number rule (docs/data.md, "Numbers")
@pytest.mark.parametrize("name, text, reader", [
    ("sample.txt", "401 0 d1 1 1\n401 0 d2 1 1_0\n", "sample"),
    ("sample.txt", "401 0 d1 1 1\n401 0 d2 1 1_0.0\n", "sample"),
    ("prels.txt", "401 d1 1 a 0.5\n401 d2 1_0 a 0.5\n", "prels"),
    ("prels.txt", "401 d1 1 a 0.5\n401 d2 1 a 0.2_5\n", "prels"),
    ("qrels.txt", "401 0 d1 1\n401 0 d2 1_0\n", "qrels"),
    ("probs.txt", "401 Q0 d1 0.5\n401 Q0 d2 0.2_5\n", "probabilities"),
    ("r.run", "401 Q0 d1 1 0.5 t\n401 Q0 d2 2 1_0 t\n", "run"),
    ("r.tsv", "401\td1\t1\n401\td2\t1_0\n", "run"),
    ("r.tsv", "401\td1\t1\t0.5\n401\td2\t2\tnan(1)\n", "run"),
    ("r.tsv", "401\td1\t1\t0.5\n401\td2\t2\t0x1p3\n", "run"),
    ("answers.csv", "topic,docno,grade\n401,d1,1\n401,d2,1_0\n", "judgments"),
    ("answers.csv", "topic,docno,grade\n401,d1,1\n401,d2,٣\n", "judgments"),
], ids=["sample-rel", "sample-rel-float", "prels-grade", "prels-probability", "qrels-grade", "probability",
        "trec-score", "msmarco-rank", "msmarco-nan-payload", "msmarco-hex-float", "judgment", "judgment-arabic-digit"])
def test_numbers_follow_one_rule_in_every_reader(tmp_path, name, text, reader):
    """Python's int() and float() read "1_0" as 10 and "٣" as 3, Arrow reads "nan(1)" as NaN: a file holding them
    was read with numbers its writer never meant (a sample's "1_0" took infAP from 0.5 to 1). Each is refused at
    its line."""
    readers = {"sample": read_stratified_sample, "prels": read_prels, "qrels": read_qrels,
               "probabilities": read_probabilities, "run": read_run, "judgments": read_judgments}
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(FileFormatError) as e:
        readers[reader](p)
    last = text.count("\n")  # the number is on the last line
    assert str(e.value).startswith(f"{p}:{last}: ") and "\n" not in str(e.value), str(e.value)


def test_msmarco_score_read_the_same_by_both_paths(tmp_path):
    """A four-column MS MARCO run's score is ignored but must be a number: "nan" is one (both paths read the file),
    "nan(1)" is not (both refuse it), whether or not a comment line is there."""
    from bayeval.io.runs import _parse_arrow, _parse_checked

    for score, ok in (("nan", True), ("-inf", True), ("nan(1)", False), ("1_0", False)):
        for head in ("", "# a comment\n"):
            data = f"{head}q1\td1\t1\t0.5\nq1\td2\t2\t{score}\n".encode()
            p = tmp_path / "m.tsv"
            p.write_bytes(data)
            fast = _parse_arrow(data, str(p), False)
            if ok:  # read alike (Arrow reads "nan" as a null: it leaves that file to the careful parser)
                careful = _parse_checked(data, str(p), False)
                assert careful.docnos.tolist() == ["d1", "d2"]
                assert fast is None or fast.docnos.to_pylist() == ["d1", "d2"]
                assert read_run(p).ranking("q1").tolist() == ["d1", "d2"]
            else:
                assert fast is None  # left to the careful parser, which refuses it
                with pytest.raises(FileFormatError, match=r"m.tsv:\d: score .* is not a number"):
                    read_run(p)


# ---------------------------------------------------------------------- prels: one document, two probabilities
def test_prels_document_with_two_inclusion_probabilities_is_refused(tmp_path):
    """``401 d1 1 a 0.01`` then ``401 d1 1 a 0.5`` kept the first π with a note about "the same grade": statP@10 = 10.
    Which π is right cannot be chosen for the user."""
    p = tmp_path / "prels.txt"
    p.write_text("401 d1 1 a 0.01\n401 d2 0 a 0.5\n401 d1 1 a 0.5\n")
    with pytest.raises(FileFormatError) as e:
        read_prels(p)
    assert str(e.value) == (f"{p}:3: document 'd1' already judged for topic '401' on line 1 with inclusion "
                            "probability 0.01")
    p.write_text("401 d1 1 a 0.5\n401 d2 0 a 0.5\n401 d1 1 b 0.50\n")  # the same judgment again: kept once
    with pytest.warns(DataNotice, match=r"prels.txt:3: 1 repeated judgment\(s\) with the same grade and inclusion "
                                        r"probability; kept one of each"):
        q = read_prels(p)
    assert q["401"].docnos.tolist() == ["d1", "d2"] and q["401"].inclusion.tolist() == [0.5, 0.5]
    with pytest.raises(FileFormatError, match=r"prels.txt:3: .*\(strict\)"):
        read_prels(p, strict=True)


# ---------------------------------------------------------------------- sample_eval.pl's topic rule
def _sample_and_runs(tmp_path, run_topics):
    sample = tmp_path / "sample.txt"
    sample.write_text("401 0 d1 1 1\n401 0 d2 1 0\n401 0 d3 2 -1\n401 0 d4 2 1\n"
                      "402 0 d5 1 1\n402 0 d6 1 0\n")
    run = tmp_path / "r.run"
    run.write_text("".join(f"{t} Q0 d{d} {k} {5 - k} r\n" for t, docs in zip(run_topics, (
        [2, 1, 4, 3], [6, 5]), strict=True) for k, d in enumerate(docs)))
    return sample, run


def test_sampled_strips_leading_zeros_of_run_topics_as_sample_eval_does(tmp_path):
    """sample_eval.pl strips leading zeros from the run's topic ids: run topic 0401 is the sample's topic 401.
    bayeval dropped it without a note (all-topic infAP 0.292 -> 0.428 on TREC-8's sample)."""
    sample, plain = _sample_and_runs(tmp_path, ["401", "402"])
    rc, want, err = run_cli("sampled", sample, plain, "--format", "csv", "--per-topic")
    assert rc == 0, err
    zeros = tmp_path / "zeros"
    zeros.mkdir()
    _, padded = _sample_and_runs(zeros, ["0401", "00402"])
    rc, got, err = run_cli("sampled", sample, padded, "--format", "csv", "--per-topic")
    assert rc == 0, err
    assert got == want and "401" in got and "402" in got
    assert "bayeval: note: runs: 2 topic id(s) matched to the sample's with their leading zeros stripped, as " \
           "sample_eval.pl does: 0401 → 401, 00402 → 402" in err


def test_sampled_refuses_two_run_topics_that_are_one_sample_topic(tmp_path):
    sample, run = _sample_and_runs(tmp_path, ["401", "402"])
    run.write_text(run.read_text() + "0401 Q0 d9 1 1 r\n")
    rc, _, err = run_cli("sampled", sample, run)
    lines = [ln for ln in err.splitlines() if not ln.startswith("bayeval: note")]
    assert rc == 2 and lines == ["bayeval: error: run 'r': topics '0401' and '401' are both topic '401' of the sample "
                                 "once leading zeros are stripped, as sample_eval.pl strips them; keep one"], err


# ---------------------------------------------------------------------- the Arrow path keeps tolerated files
def _no_careful_parser(monkeypatch):
    import bayeval.io.runs as runs

    def refuse(*args, **kwargs):
        raise AssertionError("the line-by-line parser was called")
    monkeypatch.setattr(runs, "_parse_checked", refuse)


@pytest.mark.parametrize("layout", ["trec", "msmarco"])
def test_one_repeated_document_keeps_the_file_on_the_arrow_path(tmp_path, monkeypatch, layout):
    """One document listed twice sent the whole file to the line-by-line parser (47 s for a 7-million-line run
    against 2.5 s); comment lines and a second tag did too. The Arrow path now reads such a file itself, with the
    careful parser's rows and its note naming the same line, and so does the rank cube's reader."""
    from bayeval.io import read_rank_cube
    from bayeval.io.runs import _parse_checked

    rng = np.random.default_rng(5)
    rows = [(t, f"D{d}", float(s)) for t in ("401", "402", "403") for d, s in
            zip(rng.choice(10_000, 300, replace=False), rng.integers(0, 40, 300), strict=True)]
    rows.insert(500, (rows[10][0], rows[10][1], 50.0))  # listed again, higher: this one is kept, line 11 dropped
    if layout == "trec":
        lines = [f"{t} Q0 {d} {k} {s} {'tag' if k != 700 else 'other'}" for k, (t, d, s) in enumerate(rows)]
    else:
        lines = [f"{t}\t{d}\t{int(50 - s)}" for t, d, s in rows]
    lines.insert(200, "# a comment")
    lines.insert(300, "   ")
    data = ("\n".join(lines) + "\n").encode()
    path = tmp_path / ("r.run" if layout == "trec" else "r.tsv")
    path.write_bytes(data)
    careful = _parse_checked(data, str(path), False)
    assert careful.duplicates == 1 and careful.duplicate_line == 11
    with warnings.catch_warnings(record=True) as notes:
        warnings.simplefilter("always")
        want = read_run(path)  # the careful parser is still there: the reference
    _no_careful_parser(monkeypatch)
    with warnings.catch_warnings(record=True) as fast_notes:
        warnings.simplefilter("always")
        run = read_run(path)
    assert [str(w.message) for w in fast_notes] == [str(w.message) for w in notes]
    assert any(f"{path}:11: 1 repeated document(s)" in str(w.message) for w in notes)
    assert run.topics == want.topics
    for t in run.topics:
        assert run.ranking(t).tolist() == want.ranking(t).tolist()
        assert run.topic_scores(t).tolist() == want.topic_scores(t).tolist()
    qrels = tmp_path / "q.txt"
    qrels.write_text("".join(f"{t} 0 {d} {int(s) % 2}\n" for t, d, s in rows[::7]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cube = read_rank_cube([path], read_qrels(qrels))
    assert cube.docs.shape[1] == 3 and (cube.docs[0] >= 0).sum() == len(rows) - 1


@pytest.mark.parametrize("text, line", [
    ("401 Q0 a 1 2 t\n# c\n401 Q0 b 2 1 t\n402 Q0 a 1 3 t\n401 Q0 a 3 5 t\n", 5),  # a repeat ranked above the first
    ("401 Q0 a 1 2 t\n401 Q0 b 2 1 u\n401 Q0 a 3 5 t\n", 2),  # a second tag first
    ("401 Q0 a 1 2 t\n401 Q0 b 2 1 t\n401 Q0 a 3 5 u\n", 3),  # both on one line: the tag is named
])
def test_strict_errors_of_the_arrow_path_are_the_careful_parsers(tmp_path, monkeypatch, text, line):
    from bayeval.io.runs import _parse_checked

    path = tmp_path / "r.run"
    path.write_text(text)
    with pytest.raises(FileFormatError) as careful:
        _parse_checked(text.encode(), str(path), True)
    _no_careful_parser(monkeypatch)
    with pytest.raises(FileFormatError) as fast:
        read_run(path, strict=True)
    assert str(fast.value) == str(careful.value) and str(fast.value).startswith(f"{path}:{line}: ")
