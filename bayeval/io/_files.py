"""Reading whole text files, plain or gzip-compressed, as bytes or lines.

The helpers every reader of :mod:`bayeval.io` shares (exported from :mod:`bayeval.io`):
gzip is detected by its magic bytes, a leading UTF-8 byte-order mark is dropped, lines end
in ``\\n`` or ``\\r\\n``, and :func:`is_comment` says which lines carry no data (blank lines and
lines whose first non-blank character is ``#``) — docs/data.md lists the rules.

Every member of a multi-member gzip file is read (what ``cat a.gz b.gz`` and bgzip write); bytes after the
last member that are not zero padding are refused. A byte-order mark at the start of a later line (``cat`` of
two files that each begin with one) is dropped with one :class:`~bayeval.errors.DataNotice` (refused under
``strict``). :func:`identifier` reads a topic id or docno: UTF-8 with no control character (U+0000–U+001F,
U+007F–U+009F) and no byte-order mark. :func:`quoted` quotes a field in a message, at most 80 characters.
"""

from __future__ import annotations

import gzip
import os
import re
import warnings
import zlib
from pathlib import Path

import numba
import numpy as np

from bayeval.errors import BayevalInputError, DataNotice, FileFormatError

__all__ = ["QUOTE_LIMIT", "decode", "first_data_line", "identifier", "is_comment", "quoted", "read_bytes",
           "read_text", "scan_fields", "split_lines"]

QUOTE_LIMIT = 80
# control characters (C0, DEL, C1 as UTF-8) and the byte-order mark: refused inside identifiers
_CONTROL_CHAR = re.compile("[\x00-\x1f\x7f-\x9f\ufeff]")

_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"


def quoted(field: object, limit: int = QUOTE_LIMIT) -> str:
    """``repr`` of a field for a message, cut to ``limit`` characters (``…`` and the full length marked).

    >>> quoted("x" * 100)[-16:]
    "xxxx'… (100 ch.)"
    """
    if isinstance(field, bytes):
        field = field.decode("utf-8", "replace")
    if not isinstance(field, str):
        text = repr(field)
        return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} ch.)"
    if len(field) <= limit:
        return repr(field)
    return f"{field[:limit]!r}… ({len(field)} ch.)"


def _gunzip(raw: bytes, path: str) -> bytes:
    """Every member of a gzip file, concatenated; trailing bytes other than zero padding refused."""
    out = []
    rest = raw
    try:
        while True:
            d = zlib.decompressobj(47)  # gzip (or zlib) header
            out.append(d.decompress(rest))
            if not d.eof:
                raise FileFormatError(path, None, "corrupt gzip data (truncated: the compressed stream ends early)")
            rest = d.unused_data
            if rest[:2] == _GZIP_MAGIC:
                continue
            if rest.strip(b"\x00"):
                raise FileFormatError(path, None, f"{len(rest)} byte(s) of trailing garbage after the gzip data")
            break
    except zlib.error as exc:
        raise FileFormatError(path, None, f"corrupt gzip data ({exc})") from None
    return b"".join(out)


def _bom_lines(data: bytes, path: str, strict: bool) -> bytes:
    """Drop byte-order marks at the start of lines after the first (a note; ``strict``: an error)."""
    if b"\xef" not in data:  # one memchr: most files hold no BOM byte at all
        return data
    k = data.find(b"\n" + _BOM)
    if k < 0:
        return data
    line = data.count(b"\n", 0, k) + 2
    if strict:
        raise FileFormatError(path, line, "byte-order mark at the start of the line (two files joined?) (strict)")
    n = data.count(b"\n" + _BOM)
    warnings.warn(f"{path}:{line}: {n} byte-order mark(s) at the start of a line (two files joined?); dropped",
                  DataNotice, stacklevel=4)
    return data.replace(b"\n" + _BOM, b"\n")


def read_bytes(path: str | os.PathLike, *, strict: bool = False) -> bytes:
    """Return the decompressed content of ``path`` (gzip detected by its magic bytes, a UTF-8 BOM dropped).

    Every gzip member is read. A byte-order mark at the start of a later line is dropped with a
    :class:`~bayeval.errors.DataNotice`, or refused with ``strict``.

    Raises
    ------
    BayevalInputError
        When the file is missing or is a directory.
    FileFormatError
        On corrupt or truncated gzip data.
    """
    p = Path(path)
    if not p.exists():
        raise BayevalInputError(f"{p}: no such file")
    if p.is_dir():
        raise BayevalInputError(f"{p}: is a directory, expected a file")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise BayevalInputError(f"{p}: cannot read ({exc.strerror})") from None
    if raw[:2] == _GZIP_MAGIC:
        raw = _gunzip(raw, str(p))
    return _bom_lines(raw[3:] if raw[:3] == _BOM else raw, str(p), strict)


def read_text(path: str | os.PathLike, *, strict: bool = False) -> str:
    """The whole file as text (plain or gzip; UTF-8, a BOM dropped).

    Raises
    ------
    FileFormatError
        When the content is not UTF-8, naming the line of the first bad byte.
    """
    data = read_bytes(path, strict=strict)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FileFormatError(str(path), line, f"not valid UTF-8 text ({exc.reason})") from None


def split_lines(data: bytes) -> list[bytes]:
    """Split into lines, keeping line numbering (a trailing newline adds no line)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def is_comment(line: bytes) -> bool:
    """Whether a line carries no data: blank, or its first non-blank character is ``#``."""
    s = line.lstrip()
    return not s or s[:1] == b"#"


def decode(field: bytes, path: str, lineno: int) -> str:
    """A field as UTF-8 text, or a :class:`FileFormatError` naming ``path:lineno``."""
    try:
        return field.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileFormatError(path, lineno, f"not valid UTF-8 text ({exc.reason})") from exc


_SEP_SPACE, _SEP_TAB, _NEWLINE, _CR, _CONTROL, _LEAD_C2, _LEAD_EF = 1, 2, 3, 4, 5, 6, 7
_BYTE_CLASS = np.zeros(256, dtype=np.uint8)  # 0: an ordinary byte
_BYTE_CLASS[[*range(0, 9), 11, 12, *range(14, 32), 127]] = _CONTROL
_BYTE_CLASS[[32, 9, 10, 13, 0xC2, 0xEF]] = [_SEP_SPACE, _SEP_TAB, _NEWLINE, _CR, _LEAD_C2, _LEAD_EF]


@numba.njit(cache=True, nogil=True)
def _scan(b, cls):  # pragma: no cover - compiled
    """One pass: (spaces, tabs, lone CR, control character or BOM, empty field). See :func:`scan_fields`."""
    n = len(b)
    n_space = n_tab = 0
    lone_cr = control = empty = False
    after_field = False  # the previous byte ends a field's text (not a separator, not a line end)
    for i in range(n):
        k = cls[b[i]]
        if k == 0:
            after_field = True
            continue
        if k == _SEP_SPACE or k == _SEP_TAB:
            if k == _SEP_SPACE:
                n_space += 1
            else:
                n_tab += 1
            if not after_field:
                empty = True  # a separator at a line's start or after another one
            after_field = False
            continue
        if k == _NEWLINE or k == _CR:
            if i > 0 and (cls[b[i - 1]] == _SEP_SPACE or cls[b[i - 1]] == _SEP_TAB):
                empty = True  # a separator ending a line
            if k == _CR and (i + 1 >= n or b[i + 1] != 10):
                lone_cr = True
            after_field = False
            continue
        if k == _CONTROL:
            control = True
        elif k == _LEAD_C2:
            if i + 1 < n and 0x80 <= b[i + 1] <= 0x9F:
                control = True
        elif k == _LEAD_EF:
            if i + 2 < n and b[i + 1] == 0xBB and b[i + 2] == 0xBF:
                control = True
        after_field = True
    if n and (cls[b[n - 1]] == _SEP_SPACE or cls[b[n - 1]] == _SEP_TAB):
        empty = True
    return n_space, n_tab, lone_cr, control, empty


def scan_fields(data: bytes) -> tuple[str | None, bool]:
    """What Arrow's CSV reader needs to know of a run or qrels file before it may parse it, in one pass.

    Returns
    -------
    separator : str or None
        ``" "`` or ``"\\t"`` when the file uses one field separator only; ``None`` when it mixes spaces
        and tabs or holds a lone carriage return (Arrow ends a line there): the careful parsers decide.
    plain : bool
        No control character other than tab, line feed and carriage return (C0, DEL, C1 as UTF-8), no
        byte-order mark, and no empty field: no separator at the start or end of a line or next to another
        one. Whitespace splitting (the careful parsers, docs/data.md) reads such a line with fewer columns
        than Arrow does, so only a plain file may take the Arrow path.

    Examples
    --------
    >>> scan_fields(b"1 Q0 d1 1 2.5 r\\n"), scan_fields(b"1\\td1\\t1\\r\\n")
    ((' ', True), ('\\t', True))
    >>> scan_fields(b"1  d1 1\\n"), scan_fields(b"1 d1\\t1\\n"), scan_fields(b"1 d\\x01 1\\n")
    ((' ', False), (None, True), (' ', False))
    """
    n_space, n_tab, lone_cr, control, empty = _scan(np.frombuffer(data, dtype=np.uint8), _BYTE_CLASS)
    sep = None if lone_cr or (n_space and n_tab) else ("\t" if n_tab else " ")
    return sep, not (control or empty)


def identifier(field: bytes | str, what: str, path: str, lineno: int) -> str:
    """A topic id or docno as text: UTF-8 with no control character or byte-order mark (docs/data.md).

    Raises
    ------
    FileFormatError
        Naming ``path:lineno``, the kind of identifier (``what``) and the offending character.
    """
    text = decode(field, path, lineno) if isinstance(field, bytes) else field
    m = _CONTROL_CHAR.search(text)
    if m is not None:
        raise FileFormatError(path, lineno, f"{what} {quoted(text)} contains U+{ord(m.group()):04X} (control "
                                            "characters and byte-order marks are refused)")
    return text


def first_data_line(path: str | os.PathLike) -> bytes:
    """The first line of ``path`` that is not a comment (``b""`` if none), reading no further (gzip streamed).

    Raises
    ------
    BayevalInputError
        When the file is missing or is a directory; :class:`FileFormatError` on corrupt gzip data.
    """
    p = Path(path)
    if not p.is_file():
        raise BayevalInputError(f"{p}: {'is a directory, expected a file' if p.is_dir() else 'no such file'}")
    with open(p, "rb") as fh:
        gz = fh.read(2) == _GZIP_MAGIC
    try:
        with (gzip.open(p, "rb") if gz else open(p, "rb")) as fh:
            for k, raw in enumerate(fh):
                raw = raw[3:] if k == 0 and raw[:3] == _BOM else raw
                if not is_comment(raw):
                    return raw
    except (OSError, EOFError, zlib.error) as exc:
        raise FileFormatError(str(p), None, f"corrupt gzip data ({exc})") from None
    return b""
