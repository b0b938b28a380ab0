"""Readers: TREC runs, qrels, MQ prels, probability files — formats, order, and errors."""

from __future__ import annotations

import gzip
import re
import warnings

import numpy as np
import pytest

from bayeval.errors import BayevalInputError, DataNotice, FileFormatError
from bayeval.io.probabilities import read_probabilities, write_probabilities
from bayeval.io.qrels import read_prels, read_qrels, write_qrels
from bayeval.io.runs import read_run, read_run_files, read_runs, run_name_from_file, write_run


def _write(path, text, gz=False):
    if gz:
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return path


RUN = """\
1 Q0 d3 1 2.5 tagA
1 Q0 d1 2 3.0 tagA
1 Q0 d2 3 2.5 tagA
2 Q0 d9 0 1 tagA
"""


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("sep", [" ", "\t", "  \t "])
def test_run_is_ranked_by_score_then_docno_descending(tmp_path, gz, sep):
    # d1 has the highest score; d3 and d2 tie at 2.5 -> docno descending puts d3 before d2,
    # whatever the rank column says (trec_eval ignores it).
    text = RUN.replace(" ", sep)
    run = read_run(_write(tmp_path / "r.txt", text, gz))
    assert run.name == "tagA"
    assert run.topics == ("1", "2")
    assert run.ranking("1").tolist() == ["d1", "d3", "d2"]
    assert run.topic_scores("1").tolist() == [3.0, 2.5, 2.5]
    assert run.ranking("2").tolist() == ["d9"]
    assert run.ranking("3").tolist() == []


def test_run_q0_column_may_be_zero_and_topics_sort_naturally(tmp_path):
    p = _write(tmp_path / "r", "10 0 a 1 1.0 t\n9 0 b 1 1.0 t\n")
    assert read_run(p).topics == ("9", "10")


def test_run_name_override_and_mixed_tags_warn(tmp_path):
    p = _write(tmp_path / "r", "1 Q0 a 1 1.0 t1\n1 Q0 b 2 0.5 t2\n")
    with pytest.warns(DataNotice, match="different run tags"):
        assert read_run(p).name == "t1"
    with pytest.warns(DataNotice, match="different run tags"):
        assert read_run(p, name="mine").name == "mine"


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ("1 Q0 a 1 1.0 t\n1 Q0 b 2 t\n", 2, "expected 6 columns"),
        ("1 Q0 a 1 1.0 t\n\n1 Q0 b 2 high t\n", 3, "is not a number"),
        ("1 Q0 a 1 nan t\n", 1, "not a finite number"),
        ("1 Q0 a 1 1.0 t\n1 Q0 b 2 0.5 t\n1 Q0 a 3 0.1 t\n", 3, "already listed for topic '1' on line 1"),
        ("1 Q0 a 1 1.0 t\n1 Q0 b 2 0.5 u\n", 2, "run tag 'u' differs"),
        ("# header\n1\td\t1\n1\te\tx\n", 3, "rank 'x' is not an integer"),
        ("1 d 1 0.5\n1 e 2 high\n", 2, "score 'high' is not a number"),
        ("1 d 1\n1 Q0 e 2 1.0 t\n", 2, "expected 3 columns 'qid docid rank' as on line 1"),
        ("1 Q0 d 1 2\n", 1, "expected 6 columns 'topic Q0 docno rank score tag' (TREC) or 3 or 4"),
    ],
)
def test_malformed_run_names_file_and_line(tmp_path, text, line, fragment):
    p = _write(tmp_path / "bad.run", text)
    with pytest.raises(FileFormatError, match=re.escape(fragment)) as info:
        read_run(p, strict=True)
    assert info.value.line == line
    assert str(info.value).startswith(f"{p}:{line}: ")


def test_empty_and_missing_run_files(tmp_path):
    with pytest.raises(FileFormatError, match="empty file"):
        read_run(_write(tmp_path / "e", "\n  \n"))
    with pytest.raises(BayevalInputError, match="no such file"):
        read_run(tmp_path / "missing")


def test_read_runs_from_directory_and_duplicate_names(tmp_path):
    d = tmp_path / "runs"
    d.mkdir()
    _write(d / "a.gz", "1 Q0 x 1 1 A\n", gz=True)
    _write(d / "b", "1 Q0 x 1 1 B\n")
    rs = read_runs(d)
    assert rs.names == ("A", "B")
    _write(d / "c", "1 Q0 y 1 1 B\n")
    with pytest.warns(DataNotice, match=r"runs: 2 run\(s\) share their tag .*: B → b, B → c"):
        assert read_runs(d).names == ("A", "b", "c")
    assert read_runs(d, run_names="file").names == ("a", "b", "c")
    with pytest.raises(BayevalInputError, match=r"runs: two runs are named 'B' \(.*b and .*c\)"):
        read_runs(d, run_names="tag")
    with pytest.raises(BayevalInputError, match=r"runs/b: run tag 'B' is also the tag of .*runs/c \(strict"):
        read_runs(d, strict=True)
    with pytest.raises(BayevalInputError, match="run_names: expected one of auto, tag, file"):
        read_runs(d, run_names="name")


def test_run_names_from_files():
    assert run_name_from_file("x/input.INQ603.gz") == "INQ603"
    assert run_name_from_file("bm25.run.txt") == "bm25"
    assert run_name_from_file("msm.tsv") == "msm" and run_name_from_file(".gz") == ".gz"


def test_directory_with_non_run_files_skips_them_with_one_notice(tmp_path):
    d = tmp_path / "runs"
    d.mkdir()
    _write(d / "a", "1 Q0 x 1 1 A\n")
    _write(d / "README.md", "# Runs\nThese are the runs of the track.\n")
    _write(d / "runs.tsv", "run\tgroup\ttype\nA\tg\tautomatic\n")
    (d / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    with pytest.warns(DataNotice, match=r"skipped 3 file\(s\) that are not runs: README.md, logo.png, runs.tsv"):
        assert read_runs(d).names == ("A",)
    with pytest.raises(FileFormatError, match="README.md:2: expected 6 columns"):
        read_runs(d, strict=True)
    with pytest.raises(FileFormatError, match="README.md:2: "):  # a file named on its own must be a run
        read_runs([d / "a", d / "README.md"])


def test_duplicate_documents_keep_first_in_ranked_order_with_one_notice(tmp_path):
    p = _write(tmp_path / "dup.run", "1 Q0 a 1 1.0 t\n1 Q0 b 2 3.0 t\n1 Q0 a 3 2.0 t\n2 Q0 c 1 1 t\n"
                                     "2 Q0 c 2 1 t\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = read_run(p)
    notes = [str(w.message) for w in caught if issubclass(w.category, DataNotice)]
    assert notes == [f"{p}:1: 2 repeated document(s) within a topic; kept the first in ranked order "
                     "(trec_eval refuses such files)"]
    # 'a' keeps its higher-ranked occurrence (score 2.0), as if the lower one were not there
    assert run.ranking("1").tolist() == ["b", "a"] and run.topic_scores("1").tolist() == [3.0, 2.0]
    assert run.ranking("2").tolist() == ["c"]
    (rf,) = read_run_files([p])
    assert (rf.duplicates, rf.duplicate_line) == (2, 1)


@pytest.mark.parametrize("text", ["1\td2\t2\n1\td1\t1\n2\td3\t1\n1\td0\t3\n",
                                  "1 d2 2 7.5\n1 d1 1 2.0\n2 d3 1 1\n1 d0 3 9\n"])
def test_msmarco_runs_are_ranked_by_rank_and_named_by_file(tmp_path, text):
    run = read_run(_write(tmp_path / "input.msm.tsv", "# qid docid rank\n" + text, gz=True))
    assert run.name == "msm"
    assert run.ranking("1").tolist() == ["d1", "d2", "d0"]
    assert run.topic_scores("1").tolist() == [-1.0, -2.0, -3.0]  # score = -rank; a score column is ignored
    assert run.ranking("2").tolist() == ["d3"]


def test_crlf_bom_comments_and_blank_lines(tmp_path):
    text = "\ufeff# produced by a toolkit\r\n1 Q0 d1 1 2.0 t\r\n\r\n1 Q0 d2 2 1.0 t\r\n"
    for gz in (False, True):
        run = read_run(_write(tmp_path / f"r{gz}", text, gz))
        assert run.name == "t" and run.ranking("1").tolist() == ["d1", "d2"]
    q = read_qrels(_write(tmp_path / "q", "\ufeff# judged\r\n1 0 d1 1\r\n\n1 0 d2 0\r\n"))
    assert q.num_rel("1") == 1 and q.num_judged("1") == 2


def test_truncated_gzip_is_one_line(tmp_path):
    p = tmp_path / "r.gz"
    p.write_bytes(gzip.compress(RUN.encode() * 50)[:-20])
    with pytest.raises(FileFormatError, match=r"r.gz: corrupt gzip data") as info:
        read_run(p)
    assert "\n" not in str(info.value)


def test_run_roundtrip(tmp_path):
    run = read_run(_write(tmp_path / "r", RUN))
    write_run(run, tmp_path / "out")
    again = read_run(tmp_path / "out")
    assert again.ranking("1").tolist() == run.ranking("1").tolist()
    np.testing.assert_array_equal(again.scores, run.scores)


def test_qrels_graded_negative_and_errors(tmp_path):
    p = _write(tmp_path / "q", "1 0 a 2\n1 0 b -1\n1 0 c 0\n2 0 a 1\n", gz=True)
    q = read_qrels(p)
    assert q.topics == ("1", "2")
    assert q.num_rel("1") == 1 and q.num_judged("1") == 3
    assert q.grade_of("1", "b") == -1 and q.grade_of("1", "zz") is None
    assert q.with_relevance_level(2).num_rel("2") == 0
    write_qrels(q, tmp_path / "q2")
    assert read_qrels(tmp_path / "q2").to_frame().equals(q.to_frame())
    with pytest.raises(FileFormatError, match=r"q3:2: relevance grade 'x'"):
        read_qrels(_write(tmp_path / "q3", "1 0 a 1\n1 0 b x\n"))
    with pytest.raises(FileFormatError, match=r"q4:2: .*already judged for topic '1' on line 1 with grade 1"):
        read_qrels(_write(tmp_path / "q4", "1 0 a 1\n1 0 a 0\n"))
    with pytest.warns(DataNotice, match=r"q6:3: 1 repeated judgment\(s\) with the same grade"):
        assert read_qrels(_write(tmp_path / "q6", "1 0 a 1\n1 0 b 0\n1 0 a 1\n")).num_judged("1") == 2
    with pytest.raises(FileFormatError, match=r"q6:3: .*already judged.*\(strict\)"):
        read_qrels(tmp_path / "q6", strict=True)
    with pytest.warns(DataNotice, match=r"q7:1: 5 columns; read as 'topic iteration docno grade' and ignored"):
        assert read_qrels(_write(tmp_path / "q7", "1 0 a 1 2019-01-01\n1 0 b 0 x\n")).num_rel("1") == 1
    with pytest.raises(FileFormatError, match=r"q7:1: expected 4 columns"):
        read_qrels(tmp_path / "q7", strict=True)
    with pytest.raises(FileFormatError, match=r"q8:2: expected 4 columns as on line 1, found 5"):
        read_qrels(_write(tmp_path / "q8", "1 0 a 1\n1 0 b 0 x\n"))
    with pytest.raises(FileFormatError, match=r"q5:1: expected 4 columns"):
        read_qrels(_write(tmp_path / "q5", "1 a 1\n"))


def test_prels_keep_inclusion_probabilities(tmp_path):
    p = _write(tmp_path / "p", "1 a 1 2 0.5\n1 b 0 1 1.0\n")
    q = read_prels(p)
    assert q["1"].inclusion.tolist() == [0.5, 1.0]
    assert q.num_rel("1") == 1
    with pytest.raises(FileFormatError, match=r"p2:1: inclusion probability"):
        read_prels(_write(tmp_path / "p2", "1 a 1 2 0\n"))


def test_probability_files(tmp_path):
    p = _write(tmp_path / "probs", "1 Q0 a 0.25\n1 Q0 b 1\n2 Q0 a 0\n")
    probs = read_probabilities(p)
    assert probs.lookup("1", np.array(["a", "zz"], dtype=object), 0.5).tolist() == [0.25, 0.5]
    write_probabilities(probs, tmp_path / "out")
    assert read_probabilities(tmp_path / "out").to_frame().equals(probs.to_frame())
    with pytest.raises(FileFormatError, match=r"bad:2: probability '1.5'"):
        read_probabilities(_write(tmp_path / "bad", "1 Q0 a 0.2\n1 Q0 b 1.5\n"))


# ------------------------------------------------------------------------------------------ bayeval check
def test_check_reports_irregularities_and_exits_zero(tmp_path, capsys):
    from bayeval.cli.main import main

    d = tmp_path / "runs"
    d.mkdir()
    _write(d / "input.a.gz", "1 Q0 x 1 2 cap\n1 Q0 y 2 2 cap\n1 Q0 x 3 1 cap\n3 Q0 z 1 1 cap\n", gz=True)
    _write(d / "b.run", "1 Q0 x 1 1 cap\n2 Q0 x 1 1 cap\n")
    _write(d / "msm.tsv", "1\ty\t1\n1\tw\t2\n")
    _write(d / "README", "These are the runs.\n")
    q = _write(tmp_path / "qrels", "1 0 x 1\n1 0 y 0\n2 0 x 1\n4 0 x 1\n")
    assert main(["check", str(q), str(d)]) == 0
    out = capsys.readouterr().out
    assert "runs    3 read (2 trec, 1 msmarco), 0 could not be read" in out
    assert "topics  2 evaluated (judged and answered by some run); only in runs: 1 (3); only in qrels: 1 (4)" in out
    assert "skipped 1 file(s) that are not runs: README" in out
    assert "input.a.gz:3: 1 repeated document(s)" in out and "2 run(s) share their tag" in out
    lines = {ln.split()[0]: ln for ln in out.splitlines() if ln[:2] in ("a ", "b ", "ms")}
    # a: topic 1 ranks x, y (both judged), topic 3 has no judgments -> judged@10 = 2/10; one tie (x, y at 2)
    assert lines["a"].split()[1:8] == ["trec", "2", "2", "1", "1", "0.20", "0.02"]
    assert "tag cap shared: named by file; 1 repeated dropped (line 3)" in lines["a"]
    # msm: topic 1 ranks y (judged) then w (not): unjudged share of the top 100 = 1/2
    assert lines["msm"].split()[1:10] == ["msmarco", "1", "2", "0", "0", "0.10", "0.01", "0.50", "answers"]
    assert main(["check", str(q), str(d), "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("run,file,layout,topics,docs_per_topic,repeated,ties,judged@10")


def test_check_names_every_bad_file_and_exits_two(tmp_path, capsys):
    from bayeval.cli.main import main

    good = _write(tmp_path / "good", "1 Q0 x 1 1 g\n")
    bad1 = _write(tmp_path / "bad1", "1 Q0 x 1 1 b\n1 Q0 y 2 nan b\n")
    bad2 = _write(tmp_path / "bad2", "1 Q0 x 1 1\n")
    q = _write(tmp_path / "qrels", "1 0 x 1\n")
    assert main(["check", str(q), str(good), str(bad1), str(bad2)]) == 2
    out = capsys.readouterr().out
    assert f"{bad1}:2: score 'nan' is not a finite number" in out
    assert f"{bad2}:1: expected 6 columns" in out and "runs    1 read (1 trec), 2 could not be read" in out
    assert main(["check", str(tmp_path / "none"), str(good)]) == 2
    assert "none: no such file" in capsys.readouterr().out
    assert main(["check", str(q), str(good), str(bad1), "--strict"]) == 2


def test_simulation_study_names_runs_as_the_cli_and_reports_a_bad_run_in_one_line(tmp_path, capsys):
    from bayeval.cli.main import main
    from bayeval.experiments import load_collection
    from bayeval.synthetic import make_collection

    col = make_collection(n_topics=4, n_systems=4, n_docs=40, depth=15, seed=3)
    root = tmp_path / "col"
    (root / "runs").mkdir(parents=True)
    for i, run in enumerate(col.runs):
        write_run(run, root / "runs" / f"input.{run.name}", tag="capreolus" if i < 2 else None)
    write_qrels(col.qrels, root / "qrels.txt")
    first = root / "runs" / f"input.{col.runs[0].name}"
    first.write_text(first.read_text() + first.read_text().splitlines()[0] + "\n")  # a repeated document
    with pytest.warns(DataNotice, match="share their tag"):
        loaded = load_collection(root)
    assert loaded.run_names == tuple(sorted(col.runs.names))  # shared tag -> file names, as read_runs does
    with pytest.warns(DataNotice, match="repeated document"):
        assert loaded.runs([col.runs[0].name])[0].name == col.runs[0].name
    bad = root / "runs" / f"input.{col.runs[3].name}"
    lines = bad.read_text().splitlines()
    fields = lines[1].split()
    fields[4] = "nan"
    lines[1] = " ".join(fields)
    bad.write_text("\n".join(lines) + "\n")
    rc = main(["experiment", "robustness", "run", str(root), "--out", str(tmp_path / "t.csv"), "--trials", "1",
               "--k", "4", "--depth", "10", "--methods", "mtc", "--confidences", "delta", "--budget", "10",
               "--workers", "1", "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert f"bayeval: error: {bad}:2: score 'nan' is not a finite number" in err.splitlines()


def test_is_qrels_file_tells_qrels_from_runs(tmp_path):
    from bayeval.io.qrels import is_qrels_file

    assert is_qrels_file(_write(tmp_path / "q.gz", "# judged\n1 0 d1 1\n", gz=True))
    assert is_qrels_file(_write(tmp_path / "q2", "1 Q0 123 0\n"))
    assert not is_qrels_file(_write(tmp_path / "r", "1 Q0 d1 1 2.5 t\n"))
    assert not is_qrels_file(_write(tmp_path / "msm", "1 d1 1 2.5\n"))  # MS MARCO run: a score last
    assert not is_qrels_file(tmp_path) and not is_qrels_file(tmp_path / "missing")


def test_one_load_collection_reads_a_directory_lazily_and_files_at_once_as_the_readers_do(tmp_path):
    from pathlib import Path

    from bayeval.io import load_collection
    from bayeval.synthetic import make_collection

    col = make_collection(n_topics=3, n_systems=3, n_docs=30, depth=10, seed=5)
    root = tmp_path / "col"
    (root / "runs").mkdir(parents=True)
    for run in reversed(col.runs):
        write_run(run, root / "runs" / f"input.{run.name}")
    write_qrels(col.qrels, root / "qrels.txt")
    lazy = load_collection(root)
    files = sorted(str(p) for p in (root / "runs").iterdir())
    eager = load_collection(root / "qrels.txt", runs=files)
    expect = read_runs(files)
    assert eager.run_names == expect.names and set(lazy.run_names) == set(expect.names)
    for a, b, c in zip(eager.runs(), expect, lazy.runs(expect.names), strict=True):
        assert a.name == b.name == c.name
        assert np.array_equal(a.docnos, b.docnos) and np.array_equal(a.docnos, c.docnos)
        assert np.array_equal(a.scores, c.scores)
    assert eager.qrels().topics == lazy.qrels().topics == read_qrels(root / "qrels.txt").topics
    # the options both callers need: strict reading of files; the topic check of the commands
    first = Path(files[0])
    first.write_text(first.read_text() + first.read_text().splitlines()[0] + "\n")
    with pytest.raises(BayevalInputError, match=rf"{first.name}:\d+: .*strict"):
        load_collection(root / "qrels.txt", runs=files, strict=True)
    other = tmp_path / "other.qrels"
    other.write_text("zz 0 d1 1\n")
    with pytest.raises(BayevalInputError, match="other.qrels: no topic in common with the runs"), \
            pytest.warns(DataNotice, match="repeated document"):
        load_collection(other, runs=files)
    with pytest.raises(BayevalInputError, match="strict: applies to a collection given as files"):
        load_collection(root, strict=True)
