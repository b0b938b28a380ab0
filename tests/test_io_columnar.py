"""The vectorised MS MARCO-layout reader against an independent line-by-line parser, and its fallbacks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayeval.errors import FileFormatError
from bayeval.io.columnar import parse_msmarco
from bayeval.io.runs import read_run


def simple_parse(text: str) -> dict[str, list[str]]:
    """Independent reference: per query, docids by rank ascending, equal ranks by docid descending (bytes)."""
    rows: dict[str, list[tuple[int, bytes]]] = {}
    for line in text.splitlines():
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        rows.setdefault(f[0], []).append((int(f[2]), f[1].encode()))
    out = {}
    for q, items in rows.items():
        by_rank: dict[int, list[bytes]] = {}
        for r, d in items:
            by_rank.setdefault(r, []).append(d)
        out[q] = [d.decode() for r in sorted(by_rank) for d in sorted(by_rank[r], reverse=True)]
    return out


def as_dict(run) -> dict[str, list[str]]:
    return {t: list(run.ranking(t)) for t in run.topics}


_ids = st.text(alphabet="abcXYZ019é_-.", min_size=1, max_size=4)


@st.composite
def msmarco_files(draw):
    n_q = draw(st.integers(1, 5))
    queries = draw(st.lists(_ids, min_size=n_q, max_size=n_q, unique=True))
    lines = []
    for q in queries:
        docs = draw(st.lists(_ids, min_size=1, max_size=8, unique=True))
        ranks = draw(st.lists(st.integers(1, 4), min_size=len(docs), max_size=len(docs)))  # ties
        lines += [(q, d, r) for d, r in zip(docs, ranks, strict=True)]
    order = draw(st.permutations(range(len(lines))))  # queries not contiguous, ranks out of order
    sep = draw(st.sampled_from(["\t", " "]))
    score = draw(st.booleans())
    end = draw(st.sampled_from(["\n", "\r\n"]))
    text = end.join(sep.join([q, d, str(r)] + (["%.3f" % (1.0 / r)] if score else [])) for q, d, r in
                    (lines[i] for i in order)) + end
    return text


@settings(max_examples=150, deadline=None)
@given(msmarco_files())
def test_vectorised_reader_matches_simple_parser(tmp_path_factory, text):
    data = text.encode()
    assert parse_msmarco(data) is not None  # the vectorised path is the one tested
    path = tmp_path_factory.mktemp("r") / "run.tsv"
    path.write_bytes(data)
    run = read_run(path)
    assert as_dict(run) == simple_parse(text)
    ranks = {(q, d): -int(line.split()[2]) for line in text.splitlines() for q, d in [line.split()[:2]]}
    for t in run.topics:
        assert run.topic_scores(t).tolist() == [float(ranks[(t, d)]) for d in run.ranking(t)]


@pytest.mark.parametrize("text", [
    "# comment\nq1\td1\t1\n",           # comment line
    "q1\td1\t1\nq1\td1\t2\n",          # a document twice for one query
    "q1\td1\t2\n  # c\n\t\nq1\td1\t1\n",  # an indented comment, a blank line with a tab, a repeat ranked above
])
def test_tolerated_irregularities_read_by_the_vectorised_reader(tmp_path, text):
    """Comment lines and a document listed twice stay on the vectorised path (docs/data.md): the careful parser's
    rows, and the same note naming the same line."""
    from bayeval.io.runs import _parse_checked

    c = parse_msmarco(text.encode())
    assert c is not None
    careful = _parse_checked(text.encode(), "x", strict=False)
    assert c.docnos.to_pylist() == careful.docnos.tolist() and c.scores.tolist() == careful.scores.tolist()
    assert len(c.dropped) == careful.duplicates
    path = tmp_path / "run.tsv"
    path.write_text(text)
    with warnings.catch_warnings(record=True) as fast_notes:
        warnings.simplefilter("always")
        run = read_run(path)
    assert as_dict(run) == {t: _dedup(v) for t, v in simple_parse(text).items()}
    with warnings.catch_warnings(record=True) as careful_notes:
        warnings.simplefilter("always")
        path.write_text("q0 first 1 2\n" + text)  # four columns, then three: only the careful parser reads it
        with pytest.raises(FileFormatError):
            read_run(path)
    assert [str(w.message) for w in fast_notes] == [f"{path}:{careful.duplicate_line}: {careful.duplicates} "
                                                    "repeated document(s) within a topic; kept the first in ranked "
                                                    "order (trec_eval refuses such files)"] * bool(careful.duplicates)
    assert not careful_notes


@pytest.mark.parametrize("text", [
    "q1\td1\t1\nq1 d2\t2\n",           # mixed separators
    "q1\td1\t1.5\n",                   # rank not an integer
    "q1\t\td1\n",                      # empty field
    "q1\td1\t1\n\tq1\td2\t2\n",        # leading separator
    "q1\td1\t1\tx\n",                  # score not a number
])
def test_irregular_files_left_to_the_careful_parser(tmp_path, text):
    assert parse_msmarco(text.encode()) is None
    path = tmp_path / "run.tsv"
    path.write_text(text)
    try:
        run = read_run(path)
    except FileFormatError as exc:  # one line naming file:line
        assert f"{path}:" in str(exc) and "\n" not in str(exc)
    else:
        assert as_dict(run) == {t: v[:len(set(v))] for t, v in
                                ((t, _dedup(v)) for t, v in simple_parse(text).items())}


def _dedup(docs):
    seen, out = set(), []
    for d in docs:
        if d not in seen:
            seen.add(d)
            out.append(d)
    return out


def test_bad_rank_error_names_line(tmp_path):
    path = tmp_path / "run.tsv"
    path.write_text("q1\td1\t1\nq1\td2\ttwo\n")
    with pytest.raises(FileFormatError, match=r"run\.tsv:2: rank 'two' is not an integer"):
        read_run(path)


def test_large_file_same_as_careful_shape(tmp_path):
    rng = np.random.default_rng(3)
    q = rng.integers(0, 300, 20_000)
    d = rng.integers(0, 10**6, 20_000)
    r = rng.integers(1, 50, 20_000)
    keep = np.unique(q * 10**6 + d, return_index=True)[1]
    text = "".join(f"{a}\tD{b}\t{c}\n" for a, b, c in zip(q[keep], d[keep], r[keep], strict=True))
    path = tmp_path / "big.tsv"
    path.write_text(text)
    assert as_dict(read_run(path)) == simple_parse(text)


def test_trec_eval_order_against_a_python_sort():
    """Grouped by topic, score descending, ties by docno bytes descending; a repeated document: None."""
    import pyarrow as pa

    from bayeval.io.columnar import trec_eval_order

    rng = np.random.default_rng(11)
    for trial in range(300):
        n = int(rng.integers(1, 30))
        tcode = rng.integers(0, 4, n)
        if trial % 3 == 0:
            tcode = np.sort(tcode)  # contiguous groups
        scores = rng.integers(0, 4, n).astype(float)
        if trial % 3 == 1:
            scores = -np.sort(-scores)  # already non-increasing (a file as a ranker writes it)
        docs = [f"d{x}" if x % 5 else f"é{x}" for x in rng.integers(0, 40, n)]
        key = {(t, d) for t, d in zip(tcode.tolist(), docs, strict=True)}
        got = trec_eval_order(tcode, scores, pa.array(docs))
        if len(key) < n:
            assert got is None
            continue
        order, starts, codes = got
        order = np.arange(n) if order is None else order
        groups = np.split(order, starts[1:])
        assert sorted(codes.tolist()) == sorted(set(tcode.tolist()))
        for g, c in zip(groups, codes, strict=True):
            # score descending, then docno bytes descending (a longer docno after its prefix)
            want = sorted(np.flatnonzero(tcode == c), key=lambda i: (-scores[i], [-b for b in docs[i].encode()] + [1]))
            assert g.tolist() == want


def _reference_scan(data: bytes):
    """The checks scan_lines makes, written plainly with regular expressions over the lines: a data line is one
    that is not blank and whose first non-blank byte is not '#'."""
    import re

    lines = data.split(b"\n")

    def kind(k, ln):  # data, empty, blank with spaces or tabs, comment (a CR ends a line only before a LF)
        if k == len(lines) - 1 and re.fullmatch(rb"[ \t]*\r", ln):
            return "data"  # a lone CR at the end of the file
        if re.fullmatch(rb"\r?", ln):
            return "empty"
        if re.fullmatch(rb"[ \t]+\r?", ln):
            return "blank"
        return "comment" if ln.lstrip(b" \t")[:1] == b"#" else "data"

    kinds = [kind(k, ln) for k, ln in enumerate(lines)]
    data_lines = [ln for ln, c in zip(lines, kinds, strict=True) if c == "data"]
    skipped = sum(c in ("blank", "comment") for c in kinds)
    joined = b"\n".join(data_lines)
    lone_cr = any(re.search(rb"\r(?!$)", ln) for ln in data_lines) or (kinds[-1] == "data" and lines[-1][-1:] == b"\r")
    sep = None if lone_cr or (b" " in joined and b"\t" in joined) else ("\t" if b"\t" in joined else " ")
    control = any(re.search(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x9f]|\xef\xbb\xbf", ln)
                  for ln in data_lines)
    empty = any(re.search(rb"(^|\r)[ \t]|[ \t][ \t]|[ \t](\r|$)", ln) for ln in data_lines)
    return sep, not (control or empty), skipped


def test_scan_lines_against_regular_expressions():
    from bayeval.io._files import data_lines, line_numbers, scan_lines

    rng = np.random.default_rng(2)
    alphabet = [b"a", b"1", b" ", b"\t", b"\n", b"\r\n", b"\r", b"\x01", b"\x0b", b"\xc2\x80", b"\xc2\x9f", b"\xc2\xa0",
                b"\xef\xbb\xbf", b"\xef\xbc\x81", b"\x7f", b"#"]
    weights = np.array([20, 20, 6, 6, 4, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3], float)
    for _ in range(3000):
        k = int(rng.integers(0, 14))
        data = b"".join(alphabet[i] for i in rng.choice(len(alphabet), k, p=weights / weights.sum()))
        sep, plain, skipped = scan_lines(data)
        want = _reference_scan(data)
        assert (sep, plain, skipped) == want, data
        if sep is not None and plain:
            kept = data_lines(data)
            # the rows Arrow reads are the data lines, and line_numbers finds them in the file
            rows = [ln for ln in kept.split(b"\n") if ln not in (b"", b"\r")]
            lines = data.split(b"\n")
            numbers = [i + 1 for i, ln in enumerate(lines) if ln.strip() and ln.lstrip()[:1] != b"#"]
            assert rows == [lines[i - 1] for i in numbers], data
            assert line_numbers(data, list(range(len(numbers)))).tolist() == numbers, data


def test_trec_fast_path_takes_tied_and_shuffled_files():
    """Tied scores out of docno order and shuffled lines stay on the Arrow path, with the careful parser's result."""
    from bayeval.io.runs import _parse_arrow, _parse_checked

    rng = np.random.default_rng(8)
    for trial in range(40):
        lines = []
        for q in rng.choice(50, int(rng.integers(1, 6)), replace=False):
            docs = rng.choice(500, int(rng.integers(1, 30)), replace=False)
            scores = np.round(rng.normal(size=len(docs)), 1)  # many ties
            lines += [f"{q} Q0 D{d} {r + 1} {s} tag" for r, (d, s) in enumerate(zip(docs, scores, strict=True))]
        if trial % 2:
            lines = [lines[i] for i in rng.permutation(len(lines))]
        data = ("\n".join(lines) + "\n").encode()
        fast, careful = _parse_arrow(data, "x", True), _parse_checked(data, "x", strict=True)
        assert fast is not None  # groups may come in another order (the Run puts topics in natural order)

        def groups(p, docnos):
            ends = list(p.starts[1:]) + [len(p.scores)]
            return {t: (docnos[a:b], p.scores[a:b].tolist()) for t, a, b in zip(p.topics, p.starts, ends, strict=True)}

        assert groups(fast, fast.docnos.to_pylist()) == groups(careful, careful.docnos.tolist())


@pytest.mark.parametrize("rank, ok", [("0x1", False), ("1_0", False), ("+1", True), ("-1", True), ("٣", False)])
def test_rank_forms_arrow_reads_otherwise_go_to_the_careful_parser(tmp_path, rank, ok):
    """Arrow's integer parser reads "0x1" as 1: only plain digits take the fast path, and the careful parser reads the
    rest by the number rule of docs/data.md (a sign allowed; no "1_0", which Python's int() reads as 10)."""
    data = f"q1\td1\t2\nq1\td2\t{rank}\n".encode()
    assert parse_msmarco(data) is None
    p = tmp_path / "run.tsv"
    p.write_bytes(data)
    if ok:  # the careful parser reads a signed integer
        assert read_run(p).topic_scores("q1").tolist() == sorted([-2.0, -float(int(rank))], reverse=True)
    else:
        with pytest.raises(FileFormatError, match=r"run.tsv:2: rank"):
            read_run(p)
