"""Reading whole text files, plain or gzip-compressed, as bytes or lines.

The helpers every reader of :mod:`bayeval.io` shares (exported from :mod:`bayeval.io`):
gzip is detected by its magic bytes, a leading UTF-8 byte-order mark is dropped, lines end
in ``\\n`` or ``\\r\\n``, and :func:`is_comment` says which lines carry no data (blank lines and
lines whose first non-blank character is ``#``) — docs/data.md lists the rules.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

from bayeval.errors import BayevalInputError, FileFormatError

__all__ = ["decode", "first_data_line", "is_comment", "read_bytes", "read_text", "split_lines"]

_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"


def read_bytes(path: str | os.PathLike) -> bytes:
    """Return the decompressed content of ``path`` (gzip detected by its magic bytes, a UTF-8 BOM dropped).

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
        try:
            # wbits=47 accepts gzip (and zlib) headers; much faster than gzip.open().read()
            raw = zlib.decompress(raw, 47) if len(raw) < (1 << 31) else gzip.decompress(raw)
        except (zlib.error, OSError, EOFError) as exc:
            raise FileFormatError(str(p), None, f"corrupt gzip data ({exc})") from exc
    return raw[3:] if raw[:3] == _BOM else raw


def read_text(path: str | os.PathLike) -> str:
    """The whole file as text (plain or gzip; UTF-8, a BOM dropped).

    Raises
    ------
    FileFormatError
        When the content is not UTF-8, naming the line of the first bad byte.
    """
    data = read_bytes(path)
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
