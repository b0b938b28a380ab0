"""Document texts and embeddings readers (bayeval.io.texts)."""

import gzip
import warnings

import numpy as np
import pytest

from bayeval.errors import DataNotice, FileFormatError
from bayeval.io import read_embeddings, read_texts


def test_texts_tab_layout_gzip_bom_crlf_comments(tmp_path):
    f = tmp_path / "texts.tsv.gz"
    f.write_bytes(gzip.compress("\ufeffd1\tone\ttwo\r\n# a comment\n\nd2\t\n".encode()))
    assert read_texts(f) == {"d1": "one\ttwo", "d2": ""}


def test_texts_json_lines_accept_docno_or_doc_id(tmp_path):
    f = tmp_path / "texts.jsonl"
    f.write_text('{"docno": "a", "text": "x"}\n\n{"doc_id": 7, "text": "y"}\n')
    assert read_texts(f) == {"a": "x", "7": "y"}
    f.write_text('{"docno": "a", "text": "x"}\n{"docno": "b"}\n')
    with pytest.raises(FileFormatError, match=r"texts.jsonl:2: expected a JSON object"):
        read_texts(f)


def test_texts_repeated_documents_keep_first_with_one_notice_or_strict_error(tmp_path):
    f = tmp_path / "t.tsv"
    f.write_text("a\tfirst\nb\tb\na\tsecond\nb\tagain\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert read_texts(f) == {"a": "first", "b": "b"}
    notes = [w for w in caught if issubclass(w.category, DataNotice)]
    assert len(notes) == 1 and "t.tsv:3: 2 repeated document(s)" in str(notes[0].message)
    with pytest.raises(FileFormatError, match=r"t.tsv:3: document 'a' listed twice \(first on line 1\)"):
        read_texts(f, strict=True)


@pytest.mark.parametrize("text,line", [("a\tx\nno tab\n", 2), ("\t x\n", 1), ("a\tx\n\xff\tbad\n", 2)])
def test_texts_malformed_lines_name_file_and_line(tmp_path, text, line):
    f = tmp_path / "t.tsv"
    f.write_bytes(text.encode("latin-1"))
    with pytest.raises(FileFormatError, match=rf"t.tsv:{line}: "):
        read_texts(f)


def test_embeddings_roundtrip_and_errors(tmp_path):
    f = tmp_path / "e.npz"
    np.savez(f, docnos=np.array(["a", "b"]), vectors=np.eye(2))
    emb = read_embeddings(f)
    assert list(emb) == ["a", "b"] and np.array_equal(emb["b"], [0.0, 1.0])
    np.savez(f, docnos=np.array(["a", "b"]), vectors=np.eye(3))
    with pytest.raises(FileFormatError, match="e.npz: 'vectors' must be"):
        read_embeddings(f)
    bad = tmp_path / "bad.npz"
    bad.write_text("not an archive")
    with pytest.raises(FileFormatError, match="bad.npz: expected an .npz"):
        read_embeddings(bad)


def test_requires_python_agrees_with_the_toml_reader():
    # relevance/config.py reads TOML with tomllib (3.11+) or, before 3.11, tomli: the metadata must say so
    import pathlib
    import re

    from bayeval.relevance.config import tomllib  # the reader the package uses: tomllib, or tomli before 3.11

    meta = tomllib.loads((pathlib.Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    floor = re.fullmatch(r">=\s*3\.(\d+)", meta["requires-python"])
    assert floor is not None
    if int(floor.group(1)) < 11:
        assert any(d.replace(" ", "").startswith("tomli") and "python_version<'3.11'" in d.replace(" ", "")
                   for d in meta["dependencies"])
