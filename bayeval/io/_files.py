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

What is read is bounded: a regular file up to :func:`file_limit` bytes of text (:data:`FILE_LIMIT`, 1 GiB,
or ``$BAYEVAL_FILE_LIMIT``), a pipe up to :data:`PIPE_LIMIT` (64 MiB); devices such as ``/dev/zero`` and sockets
are refused at once, so an endless input ends in one line, not in exhausted memory. Text is held once
(gzip is decompressed in pieces into one growing buffer), never as a second copy of the file.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import stat
import warnings
import zlib

import numba
import numpy as np

from bayeval.errors import BayevalInputError, DataNotice, FileFormatError

__all__ = ["FILE_LIMIT", "FILE_LIMIT_VARIABLE", "PIPE_LIMIT", "QUOTE_LIMIT", "check_file", "data_lines", "decode",
           "file_limit", "first_data_line", "first_line_fields", "identifier", "is_comment", "line_numbers",
           "quoted", "read_bytes", "read_text", "scan_lines", "split_lines"]

QUOTE_LIMIT = 80
# control characters (C0, DEL, C1 as UTF-8) and the byte-order mark: refused inside identifiers
_CONTROL_CHAR = re.compile("[\x00-\x1f\x7f-\x9f\ufeff]")

_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 20  # bytes read at a time
_PIECE = 8 << 20  # bytes decompressed at a time
_SNIFF = 1 << 16  # bytes of a first line that deciding a layout reads

FILE_LIMIT = 1 << 30
"""The most bytes of text read from one file (after decompression), unless ``$BAYEVAL_FILE_LIMIT`` says otherwise."""
FILE_LIMIT_VARIABLE = "BAYEVAL_FILE_LIMIT"
PIPE_LIMIT = 64 << 20
"""The most bytes read from a pipe (a FIFO, a process substitution ``<(zcat run.gz)``): save more to a file."""


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


def file_limit() -> int:
    """The most bytes of text bayeval reads from one file: :data:`FILE_LIMIT`, or ``$BAYEVAL_FILE_LIMIT``.

    The variable takes a number of bytes with an optional ``K``, ``M`` or ``G`` (powers of 1024): ``4G``.

    Raises
    ------
    BayevalInputError
        Naming the variable when its value is not such a size.
    """
    text = os.environ.get(FILE_LIMIT_VARIABLE, "").strip()
    if not text:
        return FILE_LIMIT
    m = re.fullmatch(r"([0-9]{1,15})\s*([KMG]?)i?B?", text, flags=re.IGNORECASE)
    if m is None or int(m.group(1)) == 0:
        raise BayevalInputError(f"{FILE_LIMIT_VARIABLE}: expected a size such as 4G or 500M, got {quoted(text)}")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2).upper()]


def _size_text(n: int) -> str:
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


def _too_large(path: str, limit: int, what: str) -> FileFormatError:
    if what == "from a pipe":
        return FileFormatError(path, None, f"more than {_size_text(limit)} from a pipe (the limit for pipes; save "
                                           "the data to a file)")
    return FileFormatError(path, None, f"more than {_size_text(limit)} of text{what} (the limit per file; "
                                       f"{FILE_LIMIT_VARIABLE}=4G raises it)")


_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def check_file(path: str | os.PathLike, *, size_limit: bool = True) -> None:
    """Refuse, in one line, what no reader can take: a missing path, a directory, a device, a socket, a pipe, and
    (``size_limit``) a file beyond :func:`file_limit`. For readers that open the file themselves (npz, parquet).

    Raises
    ------
    BayevalInputError
    """
    fh, _ = _open(path, pipes=False, size_limit=size_limit)
    fh.close()


def _open(path: str | os.PathLike, *, pipes: bool = True, size_limit: bool = True):
    """``(file, size)``: ``path`` opened for reading, ``size`` its size (``None`` for a pipe).

    A regular file larger than :func:`file_limit` is refused before anything is read; devices (``/dev/zero``),
    sockets and directories are refused, and pipes (a FIFO, a process substitution ``<(zcat x.gz)``) unless
    ``pipes``.
    """
    name = str(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise BayevalInputError(f"{name}: no such file") from None
    except OSError as exc:
        raise BayevalInputError(f"{name}: cannot read ({exc.strerror})") from None
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise BayevalInputError(f"{name}: is a directory, expected a file")
    if stat.S_ISREG(mode):
        limit = file_limit()
        if size_limit and st.st_size > limit + len(_BOM):  # a leading byte-order mark is not text
            raise _too_large(name, limit, "")
        size = st.st_size
    elif stat.S_ISFIFO(mode):
        if not pipes:
            raise BayevalInputError(f"{name}: a pipe, which can be read only once here; save it to a file")
        size = None
    else:
        kind = next((k for test, k in _KINDS if test(mode)), "not a file")
        raise BayevalInputError(f"{name}: not a regular file ({kind}); give a file")
    try:
        return open(path, "rb"), size  # noqa: SIM115 - closed by the caller
    except OSError as exc:
        raise BayevalInputError(f"{name}: cannot read ({exc.strerror})") from None


def _read_capped(fh, cap: int, size: int | None = None) -> bytes | None:
    """The rest of ``fh``, or ``None`` when it holds more than ``cap`` bytes (never more than ``cap`` held).

    ``size`` (what is left of a regular file) makes the common case one allocation of that size; otherwise
    chunks are appended to one growing buffer (:class:`io.BytesIO`, whose value is returned without a copy).
    """
    first = b""
    if size is not None:
        first = fh.read(min(size, cap) + 1)
        if len(first) <= min(size, cap):
            return first
        if len(first) > cap:
            return None
    buf = io.BytesIO()
    buf.write(first)
    del first
    while True:
        chunk = fh.read(_CHUNK)
        if not chunk:
            return buf.getvalue()
        if buf.tell() + len(chunk) > cap:
            return None
        buf.write(chunk)


class _Text:
    """Decompressed text, its leading byte-order mark dropped, refused beyond ``cap`` bytes; kept (``keep``) or only
    counted. One piece is kept as it is; a second starts a buffer that takes over the first without copying it
    (:class:`io.BytesIO` on the only reference to a bytes object grows it in place)."""

    def __init__(self, cap: int, path: str, what: str, keep: bool = True) -> None:
        self.cap, self.path, self.what, self.keep = cap, path, what, keep
        self.head = b""  # the first bytes while fewer than three are known
        self.decided = False  # whether the byte-order mark is decided
        self.first: bytes | None = None
        self.buf: io.BytesIO | None = None
        self.size = 0

    def room(self) -> int:
        """How many more bytes may come (three more before the mark is decided)."""
        return max(self.cap - self.size + (0 if self.decided else len(_BOM)), 0) + 1

    def add(self, piece: bytes) -> None:
        if not self.decided:
            if self.head or len(piece) < len(_BOM):
                self.head += piece
                if len(self.head) < len(_BOM):
                    return
                piece, self.head = self.head, b""
            self.decided = True
            if piece[:3] == _BOM:
                piece = piece[3:]
        self.size += len(piece)
        if self.size > self.cap:
            raise _too_large(self.path, self.cap, self.what)
        if not self.keep or not piece:
            return
        if self.first is None and self.buf is None:
            self.first = piece
            return
        if self.buf is None:
            self.buf, self.first = io.BytesIO(self.first), None  # the buffer holds the only reference
            self.buf.seek(0, io.SEEK_END)
        self.buf.write(piece)

    def value(self) -> bytes:
        if self.head:  # a text of one or two bytes
            head, self.head, self.decided = self.head, b"", True
            self.add(head)
        if self.buf is not None:
            return self.buf.getvalue()
        return self.first if self.first is not None else b""


def _gunzip(fh, path: str, text: _Text) -> bytes:
    """Decompress every gzip member of ``fh`` into ``text`` and return it; refuse trailing bytes other than zero
    padding and a member cut short. The text comes in pieces of at most 8 MiB (as fast as one piece per member, and
    never a second copy of the text: zlib's one-piece output is assembled from blocks); the compressed bytes are
    read at once when the text is kept, in pieces of 1 MiB as they are needed when it is only counted."""
    pending = fh.read() if text.keep else fh.read(_CHUNK)
    try:
        while True:  # one member per pass
            d = zlib.decompressobj(47)  # gzip (or zlib) header
            while not d.eof:
                piece = d.decompress(pending, min(text.room(), _PIECE))
                pending = d.unconsumed_tail
                if piece:
                    text.add(piece)
                    del piece
                elif not pending and not d.eof:
                    pending = fh.read(_CHUNK)
                    if not pending:
                        raise FileFormatError(path, None, "corrupt gzip data (truncated: the compressed stream "
                                                          "ends early)")
            rest = d.unused_data
            while len(rest) < 2:
                more = fh.read(_CHUNK)
                if not more:
                    break
                rest += more
            if rest[:2] == _GZIP_MAGIC:
                pending = rest
                continue
            trailing, garbage = len(rest), bool(rest.strip(b"\x00"))
            while more := fh.read(_CHUNK):
                trailing += len(more)
                garbage = garbage or bool(more.strip(b"\x00"))
            if garbage:
                raise FileFormatError(path, None, f"{trailing} byte(s) of trailing garbage after the gzip data")
            break
    except zlib.error as exc:
        raise FileFormatError(path, None, f"corrupt gzip data ({exc})") from None
    return text.value()


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

    At most :func:`file_limit` bytes of text are read from a file (1 GiB unless ``$BAYEVAL_FILE_LIMIT`` says
    otherwise) and :data:`PIPE_LIMIT` from a pipe (a FIFO, a process substitution): a larger file is refused
    before it is read, a gzip file as soon as its text passes the limit (before any is held when its gzip
    trailer says so). Devices (``/dev/zero``) and sockets are refused. The text is held once: no second copy
    of the file is made on the way (docs/data.md).

    Raises
    ------
    BayevalInputError
        When the file is missing, a directory, a device or a socket.
    FileFormatError
        On corrupt or truncated gzip data, or text beyond the limit.
    """
    name = str(path)
    fh, size = _open(path)
    with fh:
        if size is None:  # a pipe: read once, within its limit, then as a file
            cap, what = PIPE_LIMIT, "from a pipe"
            raw = _read_capped(fh, cap)
            if raw is None:
                raise _too_large(name, cap, what)
            fh, size = io.BytesIO(raw), len(raw)
            del raw
        else:
            cap, what = file_limit(), ""
        head = fh.read(3)
        if head[:2] == _GZIP_MAGIC:
            what = what if what else " once decompressed"
            if size >= 18:  # the last member's length mod 2**32 (ISIZE): a lower bound of the text
                fh.seek(-4, os.SEEK_END)
                if int.from_bytes(fh.read(4), "little") > cap + len(_BOM):
                    fh.seek(0)
                    _gunzip(fh, name, _Text(cap, name, what, keep=False))  # counts, holding nothing: refuses
            fh.seek(0)
            data = _gunzip(fh, name, _Text(cap, name, what))
        elif isinstance(fh, io.BytesIO):  # a pipe's bytes, already within the limit
            data = fh.getvalue() if head != _BOM else fh.read()
        else:
            if head != _BOM:
                fh.seek(0)
            data = _read_capped(fh, cap, size - fh.tell())
            if data is None:
                raise _too_large(name, cap, what)
    return _bom_lines(data, name, strict)


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
def _line_kind(b, i):  # pragma: no cover - compiled
    """``(kind, end)`` of the line starting at ``i``: kind 0 data, 1 empty (nothing or a carriage return),
    2 blank with spaces or tabs, 3 comment (first non-blank byte ``#``); ``end`` is its line feed (or ``len(b)``)."""
    n = len(b)
    k = i
    while k < n and (b[k] == 32 or b[k] == 9):
        k += 1
    end = k
    while end < n and b[end] != 10:
        end += 1
    if k == n or b[k] == 10 or (b[k] == 13 and k + 1 < n and b[k + 1] == 10):
        return (1 if k == i else 2), end
    if b[k] == 35:
        return 3, end
    return 0, end


@numba.njit(cache=True, nogil=True)
def _scan(b, cls):  # pragma: no cover - compiled
    """One pass: (spaces, tabs, lone CR, control character or BOM, empty field, lines to drop) over the data
    lines (:func:`_line_kind`'s classes, decided at each line's first non-blank byte). See :func:`scan_lines`."""
    n = len(b)
    n_space = n_tab = skipped = 0
    lone_cr = control = empty = False
    i = 0
    while i < n:
        k = i
        while k < n and (b[k] == 32 or b[k] == 9):
            k += 1
        c = b[k] if k < n else 10
        if c == 10 or c == 35 or (c == 13 and k + 1 < n and b[k + 1] == 10):  # blank or comment: no data
            if c == 35 or k > i:
                skipped += 1  # Arrow would read it as a row
            while k < n and b[k] != 10:
                k += 1
            i = k + 1
            continue
        if k > i:
            empty = True  # a separator at a line's start
            for j in range(i, k):
                if b[j] == 32:
                    n_space += 1
                else:
                    n_tab += 1
        after_field = False  # the previous byte ends a field's text (not a separator, not a line end)
        end = n
        for j in range(k, n):
            kind = cls[b[j]]
            if kind == 0:
                after_field = True
                continue
            if kind == _NEWLINE:
                end = j
                break
            if kind == _SEP_SPACE or kind == _SEP_TAB:
                if kind == _SEP_SPACE:
                    n_space += 1
                else:
                    n_tab += 1
                if not after_field:
                    empty = True  # a separator after another one
                after_field = False
                continue
            if kind == _CR:
                if j > k and (cls[b[j - 1]] == _SEP_SPACE or cls[b[j - 1]] == _SEP_TAB):
                    empty = True  # a separator ending a line
                if j + 1 >= n or b[j + 1] != 10:
                    lone_cr = True
                after_field = False
                continue
            if kind == _CONTROL:
                control = True
            elif kind == _LEAD_C2:
                if j + 1 < n and 0x80 <= b[j + 1] <= 0x9F:
                    control = True
            elif kind == _LEAD_EF:
                if j + 2 < n and b[j + 1] == 0xBB and b[j + 2] == 0xBF:
                    control = True
            after_field = True
        if end > k and (cls[b[end - 1]] == _SEP_SPACE or cls[b[end - 1]] == _SEP_TAB):
            empty = True  # a separator ending a line
        i = end + 1
    return n_space, n_tab, lone_cr, control, empty, skipped


@numba.njit(cache=True, nogil=True)
def _drop(b, out):  # pragma: no cover - compiled
    """Copy ``b`` into ``out`` without its blank lines holding spaces or tabs and its comment lines."""
    n = len(b)
    i = o = 0
    while i < n:
        kind, end = _line_kind(b, i)
        stop = min(end + 1, n)
        if kind < 2:
            out[o:o + stop - i] = b[i:stop]
            o += stop - i
        i = stop
    return o


@numba.njit(cache=True, nogil=True)
def _line_numbers(b, rows, out):  # pragma: no cover - compiled
    """``out[k]``: the file line (1-based) of data line ``rows[k]`` (0-based; ``rows`` ascending)."""
    n = len(b)
    i = 0
    line = row = k = 0
    while i < n and k < len(rows):
        kind, end = _line_kind(b, i)
        line += 1
        if kind == 0:
            while k < len(rows) and rows[k] == row:
                out[k] = line
                k += 1
            row += 1
        i = end + 1


def first_line_fields(data: bytes) -> int:
    """The number of whitespace-separated fields of the first non-blank line of ``data`` (0: none).

    >>> first_line_fields(b"\\n  \\nq1 d1 1\\n")
    3
    """
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        fields = data[start:end].split()
        if fields:
            return len(fields)
        start = end + 1
    return 0


def scan_lines(data: bytes) -> tuple[str | None, bool, int]:
    """What Arrow's CSV reader needs to know of a run file before it may parse it, in one pass.

    Data lines are the lines that are not blank and whose first non-blank byte is not ``#`` (docs/data.md);
    the others carry nothing.

    Returns
    -------
    separator : str or None
        ``" "`` or ``"\\t"`` when the data lines use one field separator only; ``None`` when they mix spaces
        and tabs or hold a lone carriage return (Arrow ends a line there): the careful parsers decide.
    plain : bool
        No data line holds a control character other than tab, line feed and carriage return (C0, DEL, C1 as
        UTF-8), a byte-order mark, or an empty field (a separator at the start or end of the line or next to
        another one). Whitespace splitting (the careful parsers) reads such a line with fewer columns than
        Arrow does, so only a plain file may take the Arrow path.
    skipped : int
        Lines Arrow would read as rows although they carry no data: comment lines, and blank lines holding
        spaces or tabs (Arrow skips empty lines itself). :func:`data_lines` copies the file without them.

    Examples
    --------
    >>> scan_lines(b"1 Q0 d1 1 2.5 r\\n"), scan_lines(b"# c\\n1\\td1\\t1\\r\\n  \\n")
    ((' ', True, 0), ('\\t', True, 2))
    >>> scan_lines(b"1  d1 1\\n"), scan_lines(b"1 d1\\t1\\n"), scan_lines(b"1 d\\x01 1\\n")
    ((' ', False, 0), (None, True, 0), (' ', False, 0))
    """
    n_space, n_tab, lone_cr, control, empty, skipped = _scan(np.frombuffer(data, dtype=np.uint8), _BYTE_CLASS)
    sep = None if lone_cr or (n_space and n_tab) else ("\t" if n_tab else " ")
    return sep, not (control or empty), int(skipped)


def data_lines(data: bytes) -> bytes:
    """``data`` without the lines :func:`scan_lines` counts as ``skipped`` (comments, blank lines with spaces).

    >>> data_lines(b"# c\\n1 d1 1\\n  \\n\\n2 d2 1")
    b'1 d1 1\\n\\n2 d2 1'
    """
    b = np.frombuffer(data, dtype=np.uint8)
    out = np.empty(len(b), dtype=np.uint8)
    return out[:_drop(b, out)].tobytes()


def line_numbers(data: bytes, rows) -> np.ndarray:
    """The file lines (1-based) of data lines ``rows`` (0-based, in order: the rows Arrow reads from
    :func:`data_lines`), found in one pass that stops at the last one asked for.

    >>> line_numbers(b"# c\\n1 d1 1\\n\\n2 d2 1\\n", [0, 1]).tolist()
    [2, 4]
    """
    rows = np.asarray(rows, dtype=np.int64)
    order = np.argsort(rows, kind="stable")
    out = np.zeros(len(rows), dtype=np.int64)
    found = np.zeros(len(rows), dtype=np.int64)
    _line_numbers(np.frombuffer(data, dtype=np.uint8), rows[order], found)
    out[order] = found
    return out


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

    At most the first 64 KiB of that line are returned (what deciding a file's layout needs), and no more of
    the file is held. The file is checked as :func:`read_bytes` checks it; a pipe is refused (it could not be
    read again).

    Raises
    ------
    BayevalInputError
        When the file is missing, a directory, a device, a pipe or beyond the limit; :class:`FileFormatError`
        on corrupt gzip data.
    """
    fh, _ = _open(path, pipes=False)
    with fh:
        gz = fh.read(2) == _GZIP_MAGIC
        fh.seek(0)
        try:
            with gzip.GzipFile(fileobj=fh, mode="rb") if gz else contextlib.nullcontext(fh) as src:
                first = True
                while raw := src.readline(_SNIFF):
                    raw = raw[3:] if first and raw[:3] == _BOM else raw
                    first = False
                    whole = raw.endswith(b"\n")
                    if not is_comment(raw):
                        return raw
                    while not whole and (rest := src.readline(_SNIFF)):  # the rest of a long comment line
                        whole = rest.endswith(b"\n")
        except (OSError, EOFError, zlib.error) as exc:
            raise FileFormatError(str(path), None, f"corrupt gzip data ({exc})") from None
    return b""
