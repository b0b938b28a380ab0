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

from bayeval.errors import BayevalInputError, DataNotice, FileFormatError

__all__ = ["QUOTE_LIMIT", "decode", "first_data_line", "has_control", "identifier", "is_comment", "quoted",
           "read_bytes", "read_text", "split_lines"]

QUOTE_LIMIT = 80
# control characters (C0, DEL, C1 as UTF-8) and the byte-order mark: refused inside identifiers
_CONTROL_CHAR = re.compile("[\x00-\x1f\x7f-\x9f\ufeff]")
_CONTROL_IN_TEXT = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x9f]|\xef\xbb\xbf")
# bytes that cannot start such a character: deleted by bytes.translate, a fast first test
_SAFE = bytes(b for b in range(256) if b not in (*range(0, 9), 11, 12, *range(14, 32), 127, 0xC2, 0xEF))

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


def single_separator(data: bytes) -> str | None:
    """The one field separator of a file that Arrow's CSV reader may parse as it is: ``" "`` or ``"\\t"``.

    ``None`` when the file mixes spaces and tabs, or holds a lone carriage return (Arrow ends a line there): the
    careful parsers decide such files. With exactly one separator character, a doubled, leading or trailing one
    changes the column count (Arrow raises) or leaves an empty field (refused after parsing).
    """
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
        return None
    if b"\t" not in data:
        return " "
    if b" " not in data:
        return "\t"
    return None


def has_control(data: bytes) -> bool:
    """Whether ``data`` holds a control character other than tab, line feed and carriage return, or a BOM."""
    rest = data.translate(None, _SAFE)
    return bool(rest) and _CONTROL_IN_TEXT.search(data) is not None


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
