"""Automatic assessors' label files: read_labels against a tiny independent parser, and its errors."""

from __future__ import annotations

import gzip
import warnings

import numpy as np
import pandas as pd
import pytest

from bayeval.data import AssessorLabels
from bayeval.errors import BayevalInputError, DataNotice, FileFormatError
from bayeval.io import labels_name, read_labels


def _reference(text: str) -> tuple[dict, bool]:
    """The plainest reading of a label file: whitespace columns, the docno second-last but one, the value last."""
    out, integral = {}, True
    for line in text.splitlines():
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        value = float(f[-1])
        integral &= value == int(value)
        out[(f[0], f[-2])] = value
    return out, integral


def _random_file(rng, ncols: int, grades: bool) -> str:
    lines = ["# a comment", ""]
    for t in range(int(rng.integers(1, 5))):
        docs = rng.choice(1000, size=int(rng.integers(1, 30)), replace=False)
        for d in docs:
            v = int(rng.integers(-1, 5)) if grades else float(np.round(rng.normal(), 4))
            fields = [f"q{t}", "0", f"doc-{d}", str(v)] if ncols == 4 else [f"q{t}", f"doc-{d}", str(v)]
            lines.append(("\t" if rng.random() < 0.3 else " ").join(fields))
            if rng.random() < 0.05:
                lines.append(lines[-1])  # a repeat with the same value: kept once
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(12))
def test_read_labels_agrees_with_an_independent_parser(tmp_path, seed):
    rng = np.random.default_rng(seed)
    ncols, grades = (4, 3)[seed % 2], seed % 3 != 0
    text = _random_file(rng, ncols, grades)
    path = tmp_path / ("labels.txt.gz" if seed % 4 == 0 else "labels.txt")
    if seed % 4 == 0:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataNotice)
        lab = read_labels(path)
    want, integral = _reference(text)
    got = {(r.topic, r.docno): r.value for r in lab.to_frame().itertuples()}
    assert got == want
    assert lab.kind == ("grades" if integral else "scores")
    assert lab.name == "labels"


def test_a_repeat_with_the_same_value_is_noticed_and_refused_when_strict(tmp_path):
    p = tmp_path / "l.txt"
    p.write_text("1 0 a 2\n1 0 b 0\n1 0 a 2\n")
    with pytest.warns(DataNotice, match=r"l.txt:3: 1 repeated"):
        lab = read_labels(p)
    assert lab.n_pairs == 2
    with pytest.raises(FileFormatError, match=r"l.txt:3: .*already labelled .* on line 1 \(strict\)"):
        read_labels(p, strict=True)


@pytest.mark.parametrize(("text", "match"), [
    ("1 0 a 2\n1 0 b 0 7\n", r"l.txt:2: expected 4 columns"),
    ("1 0 a 2 5 6\n", r"l.txt:1: expected 4 columns .* or 3 columns"),
    ("1 a 2\n1 b x\n", r"l.txt:2: label 'x' is not a finite number"),
    ("1 a 2\n1 b nan\n", r"l.txt:2: label 'nan' is not a finite number"),
    ("1 0 a 2\n\n# c\n1 0 a 1\n", r"l.txt:4: document 'a' already labelled for topic '1' on line 1 with label 2"),
    ("# only a comment\n", r"l.txt: empty file"),
])
def test_malformed_label_files_name_file_and_line(tmp_path, text, match):
    p = tmp_path / "l.txt"
    p.write_text(text)
    with pytest.raises(FileFormatError, match=match):
        read_labels(p)


def test_kind_is_read_or_checked(tmp_path):
    p = tmp_path / "scores.tsv"
    p.write_text("1 a 0.25\n1 b 2\n")
    assert read_labels(p).kind == "scores"
    assert read_labels(p, kind="scores", name="ce").name == "ce"
    with pytest.raises(FileFormatError, match=r"scores.tsv:1: grade '0.25' is not an integer"):
        read_labels(p, kind="grades")
    q = tmp_path / "g.txt"
    q.write_text("1 a 2.0\n1 b 2\n")
    assert read_labels(q).kind == "grades"
    assert read_labels(q, kind="scores").kind == "scores"
    with pytest.raises(BayevalInputError, match="kind: one of"):
        read_labels(q, kind="probabilities")


def test_default_names():
    assert labels_name("/x/labels-umbrela.txt.gz") == "labels-umbrela"
    assert labels_name("llm") == "llm"
    assert labels_name(".hidden") == ".hidden"


def test_assessor_labels_frame_round_trip_and_lookup():
    f = pd.DataFrame({"topic": [2, 1, 1], "docno": ["a", "a", "b"], "value": [0.5, 1.0, 3.0]})
    lab = AssessorLabels.from_frame(f, "x", "scores")
    assert lab.topics == ("1", "2")
    back = lab.to_frame()
    assert list(back.columns) == ["topic", "docno", "value"]
    assert AssessorLabels.from_frame(back, "x", "scores").to_frame().equals(back)
    np.testing.assert_array_equal(lab.lookup("1", ["b", "zz", "a"], missing=-1.0), [3.0, -1.0, 1.0])
    assert np.isnan(lab.lookup("9", ["a"])).all()
    with pytest.raises(BayevalInputError, match="grades must be integers"):
        AssessorLabels.from_frame(f, "x", "grades")
    with pytest.raises(BayevalInputError, match="labelled twice"):
        AssessorLabels.from_frame(pd.concat([f, f.iloc[:1]]), "x", "scores")
    with pytest.raises(BayevalInputError, match="kind: one of"):
        AssessorLabels.from_frame(f, "x", "probabilities")
    with pytest.raises(BayevalInputError, match="missing column"):
        AssessorLabels.from_frame(f.drop(columns="value"), "x", "scores")
