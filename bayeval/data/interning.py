"""Interning strings held in Arrow memory into integer codes, incrementally, with no Python object per string.

:class:`StringCodes` is an open-addressing hash table (FNV-1a, linear probing) over the bytes of Arrow
string arrays, compiled with numba: coding a run of 7 million document ids costs one pass over its bytes,
whatever number of ids were coded before (Arrow's ``index_in`` rebuilds a hash table of the whole
value set on every call). Codes are given in order of first appearance; :meth:`StringCodes.lookup` finds
codes without adding strings.

:func:`repeats_within_groups` asks the same table, one group of rows at a time, whether a string occurs twice
in a group (a document listed twice for one topic of a run), and :func:`repeat_mask` marks every repeat, in one
pass over the bytes: Arrow's
``dictionary_encode`` of the whole column, which the readers used for it, cost twenty times more.
"""

from __future__ import annotations

import numba
import numpy as np
import pyarrow as pa

__all__ = ["StringCodes", "repeat_mask", "repeats_within_groups"]

_EMPTY = -1


@numba.njit(cache=True, nogil=True)
def _hash(data, start, end):  # pragma: no cover - compiled
    h = np.uint64(14695981039346656037)
    prime = np.uint64(1099511628211)
    for i in range(start, end):
        h = (h ^ np.uint64(data[i])) * prime
    return h


@numba.njit(cache=True, nogil=True)
def _probe(data, a, b, table, s_offsets, s_data):  # pragma: no cover - compiled
    """``(slot, code)`` of the string ``data[a:b]``: its slot and code, or the empty slot it would take and -1."""
    mask = np.uint64(len(table) - 1)
    slot = _hash(data, a, b) & mask
    while True:
        c = table[slot]
        if c == -1:
            return slot, c
        sa, sb = s_offsets[c], s_offsets[c + 1]
        if sb - sa == b - a:
            same = True
            for j in range(b - a):
                if s_data[sa + j] != data[a + j]:
                    same = False
                    break
            if same:
                return slot, c
        slot = (slot + np.uint64(1)) & mask


@numba.njit(cache=True, nogil=True)
def _intern(data, a, b, table, s_offsets, s_data, n_items, n_bytes):  # pragma: no cover - compiled
    """``(code, n_items, n_bytes)``: the code of ``data[a:b]``, appended to the store when new."""
    slot, c = _probe(data, a, b, table, s_offsets, s_data)
    if c != -1:
        return c, n_items, n_bytes
    table[slot] = n_items
    s_offsets[n_items] = n_bytes
    for j in range(a, b):
        s_data[n_bytes] = data[j]
        n_bytes += 1
    s_offsets[n_items + 1] = n_bytes
    return n_items, n_items + 1, n_bytes


@numba.njit(cache=True, nogil=True)
def _code(offsets, data, table, s_offsets, s_data, n_items, n_bytes, out):  # pragma: no cover - compiled
    """Code every string ``data[offsets[i]:offsets[i+1]]``; new strings are appended to the store."""
    for i in range(len(offsets) - 1):
        out[i], n_items, n_bytes = _intern(data, offsets[i], offsets[i + 1], table, s_offsets, s_data, n_items,
                                           n_bytes)
    return n_items, n_bytes


@numba.njit(cache=True, nogil=True)
def _find(offsets, data, table, s_offsets, s_data, out):  # pragma: no cover - compiled
    """Code of every string ``data[offsets[i]:offsets[i+1]]`` in the store, -1 when absent (nothing added)."""
    for i in range(len(offsets) - 1):
        out[i] = _probe(data, offsets[i], offsets[i + 1], table, s_offsets, s_data)[1]


@numba.njit(cache=True, nogil=True)
def _shallow_size(offsets, starts, rows, width, limit):  # pragma: no cover - compiled
    """Strings and bytes :func:`_code_lists` may add: the first ``min(width, limit)`` of each kept list."""
    n_str = 0
    n_bytes = 0
    for g in range(len(rows)):
        if rows[g] < 0:
            continue
        hi = min(starts[g + 1], starts[g] + min(width, limit))
        n_str += hi - starts[g]
        n_bytes += offsets[hi] - offsets[starts[g]]
    return n_str, n_bytes


@numba.njit(cache=True, nogil=True)
def _code_lists(offsets, data, starts, rows, limit, n_fixed, other, table, s_offsets, s_data, n_items, n_bytes,
                out):  # pragma: no cover - compiled
    """Lay list ``g`` (strings ``starts[g]:starts[g+1]``) on row ``rows[g]`` of ``out`` (see ``code_lists``)."""
    width = out.shape[1]
    for g in range(len(rows)):
        row = rows[g]
        if row < 0:
            continue
        lo = starts[g]
        hi = min(starts[g + 1], lo + width)
        for i in range(lo, hi):
            if i - lo < limit:
                c, n_items, n_bytes = _intern(data, offsets[i], offsets[i + 1], table, s_offsets, s_data, n_items,
                                              n_bytes)
            else:
                c = _probe(data, offsets[i], offsets[i + 1], table, s_offsets, s_data)[1]
                if c < 0 or c >= n_fixed:
                    c = other
            out[row, i - lo] = c
    return n_items, n_bytes


@numba.njit(cache=True, nogil=True)
def _repeats(offsets, data, rows, starts, out, stop):  # pragma: no cover - compiled
    """Mark ``out[k]`` where position ``k`` (in ``rows`` order) holds a string that occurred earlier in its group;
    return the first such position (-1: none). ``stop``: return at the first one, marking nothing.

    Group ``g`` is ``rows[starts[g]:starts[g+1]]`` (``rows`` empty: the strings in order); a small
    open-addressing table of row numbers per group, probed by :func:`_probe` with the column itself as the store.
    """
    n_groups = len(starts) - 1
    size = 16
    for g in range(n_groups):
        while size < 2 * (starts[g + 1] - starts[g]):
            size *= 2
    table = np.full(size, -1, dtype=np.int64)
    first = -1
    for g in range(n_groups):
        lo, hi = starts[g], starts[g + 1]
        m = 16
        while m < 2 * (hi - lo):
            m *= 2
        view = table[:m]
        view[:] = -1
        for k in range(lo, hi):
            i = rows[k] if len(rows) else k
            slot, j = _probe(data, offsets[i], offsets[i + 1], view, offsets, data)
            if j != -1:
                if first < 0:
                    first = k
                    if stop:
                        return first
                out[k] = True
            else:
                view[slot] = i
    return first


@numba.njit(cache=True, nogil=True)
def _rehash(table, s_offsets, s_data, n_items):  # pragma: no cover - compiled
    mask = np.uint64(len(table) - 1)
    for c in range(n_items):
        slot = _hash(s_data, s_offsets[c], s_offsets[c + 1]) & mask
        while table[slot] != -1:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = c


class StringCodes:
    """Integer codes for strings, given incrementally (module notes).

    Examples
    --------
    >>> sc = StringCodes()
    >>> sc.code(pa.array(["b", "a", "b"])).tolist(), sc.code(pa.array(["c", "a"])).tolist()
    ([0, 1, 0], [2, 1])
    >>> sc.strings().to_pylist()
    ['b', 'a', 'c']
    """

    def __init__(self) -> None:
        self._table = np.full(1024, _EMPTY, dtype=np.int64)
        self._offsets = np.zeros(513, dtype=np.int64)
        self._data = np.zeros(4096, dtype=np.uint8)
        self._n = 0
        self._bytes = 0

    def __len__(self) -> int:
        return self._n

    def code(self, strings: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """``(n,)`` int64 codes of ``strings`` (no nulls), giving new strings the next codes."""
        offsets, data = _buffers(strings)
        n = len(offsets) - 1
        n_new_bytes = int(offsets[-1] - offsets[0]) if n else 0
        self._reserve(self._n + n, self._bytes + n_new_bytes)
        out = np.empty(n, dtype=np.int64)
        self._n, self._bytes = _code(offsets, data, self._table, self._offsets, self._data, self._n, self._bytes, out)
        return out

    def lookup(self, strings: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """``(n,)`` int64 codes of ``strings`` already coded, -1 for the others (nothing is added).

        Examples
        --------
        >>> sc = StringCodes()
        >>> _ = sc.code(pa.array(["b", "a"]))
        >>> sc.lookup(pa.array(["a", "z", "b"])).tolist()
        [1, -1, 0]
        """
        offsets, data = _buffers(strings)
        out = np.empty(len(offsets) - 1, dtype=np.int64)
        _find(offsets, data, self._table, self._offsets, self._data, out)
        return out

    def code_lists(self, strings: pa.Array | pa.ChunkedArray, starts: np.ndarray, rows: np.ndarray, out: np.ndarray,
                   *, code_depth: int | None = None, known: int | None = None, other: int = -2) -> np.ndarray:
        """Code ranked lists straight into the rows of a matrix, in one pass over the bytes.

        List ``g`` is ``strings[starts[g]:starts[g+1]]`` (the last runs to the end); its first ``out.shape[1]``
        strings are coded into ``out[rows[g], :]`` (``rows[g] < 0``: skipped; cells past a list's end are left
        as they are). The first ``code_depth`` strings of a list are coded as :meth:`code` codes them (new ones
        get the next codes); below, a string keeps its code only when it is one of the first ``known`` codes
        (else ``other``), and nothing is added.

        Parameters
        ----------
        strings : pyarrow string array, no nulls
        starts : ndarray of int, shape (G,)
        rows : ndarray of int, shape (G,)
        out : ndarray of int32, shape (rows, width)
            Written in place and returned.
        code_depth : int, optional
            Default: every string is coded.
        known : int, optional
            Default: every code given so far.
        other : int

        Examples
        --------
        >>> sc = StringCodes()
        >>> _ = sc.code(pa.array(["j"]))
        >>> out = np.full((2, 3), -1, dtype=np.int32)
        >>> sc.code_lists(pa.array(["a", "j", "b", "c", "j"]), np.array([0, 3]), np.array([1, 0]), out,
        ...               code_depth=1, known=1).tolist()
        [[2, 0, -1], [1, 0, -2]]
        """
        offsets, data = _buffers(strings)
        n = len(offsets) - 1
        bounds = np.append(np.asarray(starts, dtype=np.int64), n)
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) != len(bounds) - 1 or (len(bounds) > 1 and (bounds[0] != 0 or np.any(np.diff(bounds) < 0))):
            raise ValueError("starts, rows: one start per list, from 0, not decreasing")
        if out.dtype != np.int32 or out.ndim != 2 or (len(rows) and rows.max() >= out.shape[0]):
            raise ValueError("out: an int32 matrix with a row for every list")
        limit = out.shape[1] if code_depth is None else int(code_depth)
        known = self._n if known is None else int(known)
        if limit > 0:
            add_items, add_bytes = _shallow_size(offsets, bounds, rows, out.shape[1], limit)
            self._reserve(self._n + int(add_items), self._bytes + int(add_bytes))
        self._n, self._bytes = _code_lists(offsets, data, bounds, rows, limit, known, other, self._table, self._offsets,
                                           self._data, self._n, self._bytes, out)
        return out

    def _reserve(self, items: int, n_bytes: int) -> None:
        if len(self._offsets) < items + 1:
            self._offsets = np.resize(self._offsets, max(items + 1, 2 * len(self._offsets)))
        if len(self._data) < n_bytes:
            self._data = np.resize(self._data, max(n_bytes, 2 * len(self._data)))
        if len(self._table) < 2 * items:
            size = 1 << int(np.ceil(np.log2(max(4 * items, 1024))))
            self._table = np.full(size, _EMPTY, dtype=np.int64)
            _rehash(self._table, self._offsets, self._data, self._n)

    def strings(self) -> pa.Array:
        """The coded strings, code ``c`` at position ``c``."""
        offsets = pa.py_buffer(np.ascontiguousarray(self._offsets[: self._n + 1]))
        data = pa.py_buffer(np.ascontiguousarray(self._data[: self._bytes]))
        return pa.Array.from_buffers(pa.large_string(), self._n, [None, offsets, data]).cast(pa.string())


def _buffers(strings: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """Offsets (``n + 1``, int32 or int64 as Arrow keeps them, into the data buffer) and the bytes of a string array
    without nulls (no copy)."""
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    if strings.null_count:
        raise ValueError("strings: nulls cannot be coded")
    large = pa.types.is_large_string(strings.type) or pa.types.is_large_binary(strings.type)
    if not large and not (pa.types.is_string(strings.type) or pa.types.is_binary(strings.type)):
        raise TypeError(f"strings: expected a string or binary array, got {strings.type}")
    n = len(strings)
    _, off_buf, data_buf = strings.buffers()
    offsets = np.frombuffer(off_buf, dtype=np.int64 if large else np.int32)[strings.offset : strings.offset + n + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    return offsets, data


def _grouped(
    strings: pa.Array | pa.ChunkedArray, starts: np.ndarray, rows: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The string buffers, ``rows`` and the group bounds of :func:`repeats_within_groups`, checked."""
    offsets, data = _buffers(strings)
    n = len(offsets) - 1
    rows = np.zeros(0, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    if len(rows) not in (0, n) or (n == 0 and len(rows)):
        raise ValueError("rows: must have one entry per string")
    bounds = np.append(np.asarray(starts, dtype=np.int64), n)
    if len(bounds) > 1 and (bounds[0] != 0 or np.any(np.diff(bounds) < 0)):
        raise ValueError("starts: must start at 0 and not decrease")
    return offsets, data, rows, bounds


def repeats_within_groups(strings: pa.Array | pa.ChunkedArray, starts: np.ndarray,
                          rows: np.ndarray | None = None) -> int:
    """The first position whose string already occurred in its group, or -1 when no group repeats a string.

    Parameters
    ----------
    strings : pyarrow string or binary array, no nulls
    starts : ndarray of int
        Group ``g`` is positions ``starts[g]`` to ``starts[g+1] - 1`` (the last runs to the end).
    rows : ndarray of int, optional
        Position ``k`` holds ``strings[rows[k]]`` (default: ``strings`` in order), so that groups of a
        permuted column are checked without copying it.

    Returns
    -------
    int
        A position ``k`` (in the order of ``rows``), the first in its group whose string came earlier in
        the same group; -1 when none. Strings are compared byte for byte (a hash only finds candidates).

    Examples
    --------
    >>> repeats_within_groups(pa.array(["a", "b", "a", "c"]), np.array([0, 2]))
    -1
    >>> repeats_within_groups(pa.array(["a", "b", "c", "b"]), np.array([0]))
    3
    """
    offsets, data, rows, bounds = _grouped(strings, starts, rows)
    n = len(offsets) - 1
    return int(_repeats(offsets, data, rows, bounds, np.zeros(0, dtype=np.bool_), True)) if n else -1


def repeat_mask(strings: pa.Array | pa.ChunkedArray, starts: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Which positions hold a string that already occurred in their group: every repeat, not only the first.

    The same pass as :func:`repeats_within_groups` (same arguments), marking each repeat: with groups in ranked
    order, the unmarked positions keep the first occurrence of each string in each group (a run file's reader
    keeps the first of a document listed twice, docs/data.md).

    Returns
    -------
    ndarray of bool, shape (n,)
        In the order of ``rows``.

    Examples
    --------
    >>> repeat_mask(pa.array(["a", "b", "a", "a", "c", "c"]), np.array([0, 4])).tolist()
    [False, False, True, True, False, True]
    """
    offsets, data, rows, bounds = _grouped(strings, starts, rows)
    n = len(offsets) - 1
    out = np.zeros(n, dtype=np.bool_)
    if n:
        _repeats(offsets, data, rows, bounds, out, False)
    return out
