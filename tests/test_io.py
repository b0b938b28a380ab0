"""Readers: TREC runs, qrels, MQ prels, probability files — formats, order, and errors."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from bayeval.errors import BayevalInputError, FileFormatError
from bayeval.io.probabilities import read_probabilities, write_probabilities
from bayeval.io.qrels import read_prels, read_qrels, write_qrels
from bayeval.io.runs import read_run, read_runs, write_run


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
    with pytest.warns(UserWarning, match="different run tags"):
        assert read_run(p).name == "t1"
    assert read_run(p, name="mine").name == "mine"


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ("1 Q0 a 1 1.0 t\n1 Q0 b 2 t\n", 2, "expected 6 columns"),
        ("1 Q0 a 1 1.0 t\n\n1 Q0 b 2 high t\n", 3, "is not a number"),
        ("1 Q0 a 1 nan t\n", 1, "not a finite number"),
        ("1 Q0 a 1 1.0 t\n1 Q0 b 2 0.5 t\n1 Q0 a 3 0.1 t\n", 3, "already listed"),
    ],
)
def test_malformed_run_names_file_and_line(tmp_path, text, line, fragment):
    p = _write(tmp_path / "bad.run", text)
    with pytest.raises(FileFormatError, match=fragment) as info:
        read_run(p)
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
    with pytest.raises(BayevalInputError, match="named 'B'"):
        read_runs(d)


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
    with pytest.raises(FileFormatError, match=r"q4:2: .*already judged"):
        read_qrels(_write(tmp_path / "q4", "1 0 a 1\n1 0 a 0\n"))
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
