"""xinfAP, infNDCG, iP@k from a stratified sample: the reader, and parity with NIST's sample_eval.pl.

Parity: ``../shared/data/trec8/sampled/`` holds a stratified sample of the TREC-8 qrels and
``sample_eval.pl``'s output on it for all 129 runs (per topic and ``all``, 4 decimals): every value it prints
must agree within 5e-5.
"""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from bayeval.data import Run
from bayeval.errors import FileFormatError
from bayeval.io import read_runs
from bayeval.io.sampled import read_stratified_sample, write_stratified_sample
from bayeval.sampling import inferred_measures

TOL = 5e-5 + 1e-9

SAMPLE = """\
1 0 a 1 1
1 0 b 1 0
# a comment
1 0 c 2 -1
1 0 d 2 2
1 0 e 2 -1
2 0 a s2 -1
2 0 f s1 1
"""


def _simple_parse(text):
    """Independent reader: ``{topic: [(docno, stratum, rel)]}``."""
    out = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        t, _, d, c, r = line.split()
        out.setdefault(t, []).append((d, c, int(r)))
    return out


@pytest.mark.parametrize("gz", [False, True])
def test_reader_agrees_with_a_simple_parser(tmp_path, gz):
    path = tmp_path / "s.txt"
    if gz:
        with gzip.open(path, "wt") as fh:
            fh.write(SAMPLE)
    else:
        path.write_text(SAMPLE)
    sample = read_stratified_sample(path)
    expect = _simple_parse(SAMPLE)
    assert sample.topics == ("1", "2")
    for t, rows in expect.items():
        ts = sample[t]
        assert list(ts.docnos) == [d for d, _, _ in rows]
        assert [ts.labels[c] for c in ts.strata] == [c for _, c, _ in rows]
        assert list(ts.grades) == [r for _, _, r in rows]
    t1 = sample["1"]
    assert list(t1.stratum_sizes) == [2, 3] and list(t1.stratum_sampled) == [2, 1]
    np.testing.assert_allclose(t1.inclusion, [1, 1, 1 / 3, 1 / 3, 1 / 3])
    judged = sample.judged()
    assert list(judged["1"].docnos) == ["a", "b", "d"]
    np.testing.assert_allclose(judged["1"].inclusion, [1, 1, 1 / 3])
    write_stratified_sample(sample, tmp_path / "back.txt")
    assert _simple_parse((tmp_path / "back.txt").read_text()) == expect


@pytest.mark.parametrize("text, fragment", [
    ("1 0 a 1\n", "s:1: expected 5 columns"),
    ("1 0 a 1 0\n1 0 b 1 x\n", "s:2: rel 'x' is not an integer >= -1"),
    ("1 0 a 1 -2\n", "s:1: rel '-2'"),
    ("1 0 a 1 0\n1 0 a 2 1\n", "s:2: document 'a' listed twice for topic '1' (first on line 1)"),
    ("# nothing\n\n", "s: empty file"),
])
def test_reader_errors_name_file_and_line(tmp_path, text, fragment):
    path = tmp_path / "s"
    path.write_text(text)
    with pytest.raises(FileFormatError) as info:
        read_stratified_sample(path)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_fully_sampled_pool_gives_trec_eval_precision(tmp_path):
    # every pooled document sampled: iP@k is P@k up to the 1e-5 smoothing, inum_rel is R
    path = tmp_path / "s"
    path.write_text("1 0 a 1 1\n1 0 b 1 0\n1 0 c 1 1\n1 0 d 2 0\n")
    run = Run.from_arrays("r", np.array(["1"] * 4), np.array(["a", "b", "c", "x"]), np.array([4.0, 3, 2, 1]))
    ev = inferred_measures([run], read_stratified_sample(path))
    assert ev.summary["inum_rel"][0] == 2
    assert abs(ev.per_topic["iP10"][0, 0] - 0.2) < 1e-5
    # AP of a, c among (a, b, c): (1 + 2/3) / 2
    assert abs(ev.per_topic["infAP"][0, 0] - (1 + 2 / 3) / 2) < 1e-4


@pytest.fixture(scope="module")
def trec8_sampled(shared_data):
    d = shared_data / "trec8"
    if not (d / "sampled" / "prels.txt.gz").is_file():
        pytest.skip("no stratified sample in ../shared/data/trec8/sampled")
    return inferred_measures(read_runs(d / "runs"), read_stratified_sample(d / "sampled" / "prels.txt.gz")), \
        d / "sampled" / "sample_eval"


@pytest.mark.data
def test_sample_eval_parity_on_trec8(trec8_sampled):
    ev, out_dir = trec8_sampled
    assert len(ev.systems) == 129 and len(ev.topics) == 50
    col = {t: i for i, t in enumerate(ev.topics)}
    seen, bad = set(), []
    for s, name in enumerate(ev.systems):
        with gzip.open(out_dir / f"input.{name}.txt.gz", "rt") as fh:
            for line in fh:
                measure, topic, value = line.split()
                ours = ev.summary[measure][s] if topic == "all" else ev.per_topic[measure][s, col[topic]]
                seen.add(measure)
                if not abs(ours - float(value)) <= TOL:
                    bad.append((name, measure, topic, ours, value))
    assert not bad, f"{len(bad)} values differ, first {bad[:5]}"
    assert len(seen) == 8 + 11  # every measure it prints
