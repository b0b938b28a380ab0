"""The Cranfield 1400 collection in its SMART-format files.

``cran.all.1400.gz`` and ``cran.qry.gz`` hold records that start with ``.I <id>`` and carry fields
``.T`` (title), ``.A`` (authors), ``.B`` (bibliography) and ``.W`` (text), each field's marker on a line
of its own; ``cranqrel.gz`` holds ``query docno code`` lines, the queries numbered 1..225 in file order
(the ``.I`` numbers of ``cran.qry`` skip values), codes 1 (complete answer) … 4 (minimum interest)
and −1. Invalid UTF-8 is replaced, as the files are old ASCII with a few stray bytes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from bayeval.errors import BayevalInputError, FileFormatError
from bayeval.io._files import decode, is_comment, quoted, read_bytes, split_lines
from bayeval.io._numbers import as_integer

__all__ = ["CranfieldCollection", "read_cranfield", "read_smart_records"]

_FIELDS = (".T", ".A", ".B", ".W")


@dataclass(frozen=True, eq=False)
class CranfieldCollection:
    """Cranfield texts, queries and relevance codes.

    Attributes
    ----------
    titles, texts : dict docno → str
        Title and title + abstract of every document (whitespace collapsed).
    queries : dict query id → str
        Queries numbered 1..225 in file order (as ``cranqrel`` numbers them).
    codes : dict (query id, docno) → int
        ``cranqrel`` relevance codes (1 = complete answer … 4 = minimum interest, −1).
    """

    titles: dict
    texts: dict
    queries: dict
    codes: dict


def read_smart_records(path: str | os.PathLike) -> list[dict[str, str]]:
    """Records of a SMART-format file: ``{"I": id, "T": ..., "W": ...}`` (plain or gzip).

    Raises
    ------
    FileFormatError
        Naming file and line: an ``.I`` line without an id, a field before the first ``.I``.
    """
    path = str(path)
    text = read_bytes(path).decode("utf-8", "replace")
    recs: list[dict[str, str]] = []
    cur: dict[str, str] | None = None
    key = None
    for lineno, line in enumerate(text.split("\n"), start=1):  # only \n ends a line, as in every reader
        line += "\n"
        if line.startswith(".I"):
            fields = line.split()
            if len(fields) < 2:
                raise FileFormatError(path, lineno, "'.I' without a record id")
            cur = {"I": fields[1]}
            recs.append(cur)
            key = None
        elif line[:2] in _FIELDS and len(line.strip()) == 2:
            if cur is None:
                raise FileFormatError(path, lineno, f"field {quoted(line.strip())} before the first '.I' record")
            key = line[1]
            cur[key] = ""
        elif cur is not None and key is not None:
            cur[key] += line
    if not recs:
        raise FileFormatError(path, None, "no '.I' records")
    return recs


def read_cranfield(path: str | os.PathLike) -> CranfieldCollection:
    """Read ``cran.all.1400.gz``, ``cran.qry.gz`` and ``cranqrel.gz`` from the directory ``path``.

    Raises
    ------
    BayevalInputError
        When a file is missing; :class:`FileFormatError` (file and line) when one is malformed.
    """
    path = Path(path)
    for name in ("cran.all.1400.gz", "cran.qry.gz", "cranqrel.gz"):
        if not (path / name).is_file():
            raise BayevalInputError(f"path: {path / name} not found (the Cranfield directory holds {name})")
    docs = read_smart_records(path / "cran.all.1400.gz")
    titles = {r["I"]: " ".join(r.get("T", "").split()) for r in docs}
    texts = {r["I"]: " ".join((r.get("T", "") + " " + r.get("W", "")).split()) for r in docs}
    queries = {str(k + 1): " ".join(r.get("W", "").split())
               for k, r in enumerate(read_smart_records(path / "cran.qry.gz"))}
    codes = {}
    qrel = str(path / "cranqrel.gz")
    for lineno, raw in enumerate(split_lines(read_bytes(qrel)), start=1):
        if is_comment(raw):
            continue
        f = raw.split()
        if len(f) < 3:
            raise FileFormatError(qrel, lineno, f"expected 'query docno code', found {len(f)} columns")
        code = as_integer(f[2])
        if code is None:
            raise FileFormatError(qrel, lineno, f"code {quoted(f[2])} is not an integer")
        codes[(decode(f[0], qrel, lineno), decode(f[1], qrel, lineno))] = code
    return CranfieldCollection(titles, texts, queries, codes)
