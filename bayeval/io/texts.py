"""Document texts and document embeddings, read for similarity-based relevance estimation and judging.

Texts (:func:`read_texts`), plain or gzip, in one of two layouts chosen by the first data line:

* ``docno<TAB>text`` lines (the text is everything after the first tab, kept as is);
* JSON lines ``{"docno": ..., "text": ...}`` (``doc_id`` is accepted for ``docno``, as ir_datasets
  names it) — a file whose first data line starts with ``{``.

Blank lines and ``#`` comment lines are skipped in the tab layout, blank lines in JSON lines. A
document listed twice keeps its first text, with one :class:`~bayeval.errors.DataNotice` per file
(the count and the first repeated line); ``strict=True`` makes that an error (docs/data.md).

Embeddings (:func:`read_embeddings`): an ``.npz`` with arrays ``docnos`` (N,) and ``vectors`` (N, d).
"""

from __future__ import annotations

import json
import os
import warnings
import zipfile

import numpy as np

from bayeval.errors import DataNotice, FileFormatError
from bayeval.io._files import check_file, decode, identifier, is_comment, quoted, read_bytes, split_lines

__all__ = ["read_embeddings", "read_texts"]


def read_texts(path: str | os.PathLike, *, strict: bool = False) -> dict[str, str]:
    """Read document texts: ``docno<TAB>text`` lines or JSON lines with ``docno`` and ``text``.

    Parameters
    ----------
    path : path-like
        The texts file (plain or gzip).
    strict : bool, default False
        Refuse a document listed twice instead of keeping its first text.

    Returns
    -------
    dict
        docno → text, in file order.

    Raises
    ------
    FileFormatError
        Naming file and line: a line without a tab (or not a JSON object with ``docno`` and
        ``text``), an empty docno, text that is not UTF-8, an empty file; with ``strict``, a
        document listed twice.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "texts.jsonl"
    >>> _ = f.write_text('{"docno": "d1", "text": "first"}\\n{"doc_id": "d2", "text": "second"}\\n')
    >>> read_texts(f)
    {'d1': 'first', 'd2': 'second'}
    """
    path = str(path)
    out: dict[str, str] = {}
    first_line: dict[str, int] = {}
    repeats: list[tuple[int, str]] = []
    jsonl = None
    for lineno, raw in enumerate(split_lines(read_bytes(path, strict=strict)), start=1):
        if not raw.strip():
            continue
        if jsonl is None:
            jsonl = raw.lstrip()[:1] == b"{"
        if jsonl:
            docno, text = _json_record(raw, path, lineno)
        else:
            if is_comment(raw):
                continue
            line = decode(raw, path, lineno)
            line = line[:-1] if line.endswith("\r") else line
            docno, tab, text = line.partition("\t")
            docno = docno.strip()
            if not tab or not docno:
                raise FileFormatError(path, lineno, "expected 'docno<TAB>text'")
        docno = identifier(docno, "docno", path, lineno)
        if docno in out:
            if strict:
                raise FileFormatError(path, lineno, f"document {quoted(docno)} listed twice (first on line "
                                                    f"{first_line[docno]})")
            repeats.append((lineno, docno))
            continue
        out[docno] = text
        first_line[docno] = lineno
    if not out:
        raise FileFormatError(path, None, "empty file: no texts")
    if repeats:
        lineno, docno = repeats[0]
        warnings.warn(f"{path}:{lineno}: {len(repeats)} repeated document(s) (first {quoted(docno)}, listed on line "
                      f"{first_line[docno]}); kept the first text of each", DataNotice, stacklevel=2)
    return out


def _json_record(raw: bytes, path: str, lineno: int) -> tuple[str, str]:
    try:
        rec = json.loads(raw)
    except (ValueError, RecursionError):
        rec = None
    if isinstance(rec, dict):
        docno = rec.get("docno", rec.get("doc_id"))
        text = rec.get("text")
        if isinstance(docno, (str, int)) and not isinstance(docno, bool) and str(docno).strip() \
                and isinstance(text, str):
            return str(docno).strip(), text
    raise FileFormatError(path, lineno, "expected a JSON object with 'docno' (or 'doc_id') and a string 'text'")


def read_embeddings(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Read document embeddings: an ``.npz`` with ``docnos`` (N,) and ``vectors`` (N, d).

    Returns
    -------
    dict
        docno → vector (a row of ``vectors``).

    Raises
    ------
    FileFormatError
        When the file is not such an archive, the shapes disagree, a docno repeats or a vector
        is not finite.
    """
    path = str(path)
    check_file(path, size_limit=False)  # arrays are read as stored, not as text
    try:
        z = np.load(path, allow_pickle=False)
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise ValueError("not an .npz archive")
        with z:
            docnos, vectors = z["docnos"], z["vectors"]
    except (KeyError, ValueError, OSError, EOFError, zipfile.BadZipFile, NotImplementedError) as exc:
        reason = " ".join(str(exc).split())[:120]
        raise FileFormatError(path, None, f"expected an .npz with arrays 'docnos' and 'vectors' ({reason})") from None
    if vectors.ndim != 2 or docnos.ndim != 1 or len(vectors) != len(docnos):
        raise FileFormatError(path, None, f"'vectors' must be (N, d) with one row per docno; got {vectors.shape} "
                                          f"for {docnos.shape} docnos")
    if not np.issubdtype(vectors.dtype, np.number) or not np.all(np.isfinite(vectors)):
        raise FileFormatError(path, None, "'vectors' must hold finite numbers")
    names = [str(d) for d in docnos.tolist()]
    if len(set(names)) != len(names):
        raise FileFormatError(path, None, "a docno appears twice in 'docnos'")
    return dict(zip(names, vectors, strict=True))
