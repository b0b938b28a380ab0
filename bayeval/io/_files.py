"""Reading whole text files, plain or gzip-compressed, as bytes."""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

from bayeval.errors import BayevalInputError, FileFormatError

_GZIP_MAGIC = b"\x1f\x8b"


def read_bytes(path: str | os.PathLike) -> bytes:
    """Return the decompressed content of ``path`` (gzip detected by its magic bytes)."""
    p = Path(path)
    if not p.exists():
        raise BayevalInputError(f"{p}: no such file")
    if p.is_dir():
        raise BayevalInputError(f"{p}: is a directory, expected a file")
    raw = p.read_bytes()
    if raw[:2] == _GZIP_MAGIC:
        try:
            # wbits=47 accepts gzip (and zlib) headers; much faster than gzip.open().read()
            return zlib.decompress(raw, 47) if len(raw) < (1 << 31) else gzip.decompress(raw)
        except (zlib.error, OSError, EOFError) as exc:
            raise FileFormatError(str(p), None, f"corrupt gzip data ({exc})") from exc
    return raw


def split_lines(data: bytes) -> list[bytes]:
    """Split into lines, keeping line numbering (a trailing newline adds no line)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def decode(field: bytes, path: str, lineno: int) -> str:
    try:
        return field.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileFormatError(path, lineno, f"not valid UTF-8 text ({exc.reason})") from exc
