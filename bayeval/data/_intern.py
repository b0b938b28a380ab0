"""Interning strings held in Arrow memory into integer codes, incrementally, with no Python object per string.

:class:`StringCodes` is an open-addressing hash table (FNV-1a, linear probing) over the bytes of Arrow
string arrays, compiled with numba: coding a run of 7 million document ids costs one pass over its bytes,
whatever number of ids were coded before (Arrow's ``index_in`` rebuilds a hash table of the whole
value set on every call). Codes are given in order of first appearance.
"""

from __future__ import annotations

import numba
import numpy as np
import pyarrow as pa

__all__ = ["StringCodes"]

_EMPTY = -1


@numba.njit(cache=True)
def _hash(data, start, end):  # pragma: no cover - compiled
    h = np.uint64(14695981039346656037)
    prime = np.uint64(1099511628211)
    for i in range(start, end):
        h = (h ^ np.uint64(data[i])) * prime
    return h


@numba.njit(cache=True)
def _code(offsets, data, table, s_offsets, s_data, n_items, n_bytes, out):  # pragma: no cover - compiled
    """Code every string ``data[offsets[i]:offsets[i+1]]``; new strings are appended to the store."""
    mask = np.uint64(len(table) - 1)
    for i in range(len(offsets) - 1):
        a, b = offsets[i], offsets[i + 1]
        slot = _hash(data, a, b) & mask
        while True:
            c = table[slot]
            if c == -1:
                table[slot] = n_items
                s_offsets[n_items] = n_bytes
                for j in range(a, b):
                    s_data[n_bytes] = data[j]
                    n_bytes += 1
                s_offsets[n_items + 1] = n_bytes
                out[i] = n_items
                n_items += 1
                break
            sa, sb = s_offsets[c], s_offsets[c + 1]
            if sb - sa == b - a:
                same = True
                for j in range(b - a):
                    if s_data[sa + j] != data[a + j]:
                        same = False
                        break
                if same:
                    out[i] = c
                    break
            slot = (slot + np.uint64(1)) & mask
    return n_items, n_bytes


@numba.njit(cache=True)
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
        if isinstance(strings, pa.ChunkedArray):
            strings = strings.combine_chunks()
        if strings.null_count:
            raise ValueError("strings: nulls cannot be coded")
        strings = strings.cast(pa.large_string())
        n = len(strings)
        _, off_buf, data_buf = strings.buffers()
        offsets = np.frombuffer(off_buf, dtype=np.int64)[strings.offset : strings.offset + n + 1]
        data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
        n_new_bytes = int(offsets[-1] - offsets[0]) if n else 0
        self._reserve(self._n + n, self._bytes + n_new_bytes)
        out = np.empty(n, dtype=np.int64)
        self._n, self._bytes = _code(offsets, data, self._table, self._offsets, self._data, self._n, self._bytes, out)
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
