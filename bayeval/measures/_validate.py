"""Argument checks shared by the kernels (validation at the public boundary)."""

from __future__ import annotations

import numpy as np

from bayeval.errors import BayevalInputError

__all__ = ["as_rank_matrix", "check_count", "check_counts", "check_cutoff", "check_same_shape", "per_row_ratio"]


def as_rank_matrix(values, argument: str, dtype=bool) -> np.ndarray:
    """``values`` as a 2-D ``(systems, ranks)`` array of ``dtype``; a 1-D array is one system."""
    arr = np.asarray(values, dtype=dtype)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise BayevalInputError(f"{argument}: expected a (systems, ranks) array, got shape {arr.shape}")
    return arr


def check_cutoff(k, argument: str = "k", optional: bool = False) -> int | None:
    """A positive integer rank cutoff (``None`` allowed when ``optional``)."""
    if k is None and optional:
        return None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise BayevalInputError(f"{argument}: must be a positive integer, got {k!r}")
    return int(k)


def check_count(n, argument: str) -> int:
    """A non-negative integer count."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise BayevalInputError(f"{argument}: must be a non-negative integer, got {n!r}")
    return int(n)


def check_counts(n, argument: str, rows: int) -> np.ndarray:
    """A non-negative integer count, or one per row: an int64 array of shape ``(rows,)``."""
    if np.ndim(n) == 0:
        return np.full(rows, check_count(n, argument), dtype=np.int64)
    arr = np.asarray(n)
    if arr.shape != (rows,) or arr.dtype.kind not in "iu" or (arr.size and arr.min() < 0):
        raise BayevalInputError(f"{argument}: expected a non-negative integer or {rows} of them, got {n!r}")
    return arr.astype(np.int64)


def per_row_ratio(total: np.ndarray, count: np.ndarray) -> np.ndarray:
    """``total / count`` row by row, 0 where ``count`` is 0 (a measure over R = 0 relevant documents)."""
    return np.divide(total, count, out=np.zeros(len(count)), where=count > 0)


def check_same_shape(arr: np.ndarray, reference: np.ndarray, argument: str, reference_name: str = "rel") -> None:
    """Raise unless ``arr`` has ``reference``'s shape."""
    if arr.shape != reference.shape:
        raise BayevalInputError(f"{argument}: shape {arr.shape} differs from {reference_name}'s {reference.shape}")

