r"""What every all-pairs path on the rank cube shares: the result, posterior draws, the topic chunks on Dask.

The cube paths (:mod:`~bayeval.expected.cube` for RR@k, :mod:`~bayeval.expected.cube_ap` for AP,
:mod:`~bayeval.expected.cube_recall` for recall@k, :mod:`~bayeval.expected.cube_ndcg` for nDCG@k) each have a *topic
task*: for a slice of topics and one probability per cell, the per-system and topic E and Var of the measure, and
per pair the sums over those topics of :math:`E[\Delta_t]` and :math:`\mathrm{Var}[\Delta_t]`. This module runs the
task on the whole cube or on topic chunks as Dask tasks (:func:`run_topic_task`), once per posterior draw, and
combines the draws by the law of total variance (:func:`combine_draws`), as :func:`bayeval.expected.compare_systems`
combines them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from bayeval.cluster import dask_client
from bayeval.data.probabilities import thin_draws
from bayeval.data.rankcube import RankCube
from bayeval.errors import BayevalInputError
from bayeval.expected._results import p_less_normal

__all__: list[str] = []


@dataclass(frozen=True, eq=False)
class CubePairMoments:
    """E and Var of a measure per system and topic, and of the difference of its means for pairs of systems.

    Attributes
    ----------
    method : str
        The moment method (``"delta"``, ``"paper"``, ``"exact"``; nDCG@k is exact under each, RR@k always ``"exact"``).
    systems, topics : tuple of str
    expected, variance : ndarray, shape (S, T)
        Per system and topic.
    all_expected, all_variance : ndarray, shape (S,)
        Of the mean over topics: mean of E, sum of Var over T² (plus the variance over draws of the mean).
    index_a, index_b : ndarray of int64, shape (P,)
    delta_expected, delta_variance, p_less : ndarray, shape (P,)
        Of the difference of the means over all topics (ΔMAP, ΔnDCG@k, ΔR@k, ΔMRR@k).
    n_draws : int or None
        Posterior draws of p combined (``None``: one p).
    exact_topics : int
        Topics computed by the per-topic engine (ratio measures: expansion of the delta method not valid, or
        ``"exact"``); 0 for nDCG@k and RR@k.
    measure : str
        The measure (``"AP"``, ``"recall@1000"``, ``"nDCG@10"``, ``"RR@10"``).
    """

    method: str
    systems: tuple[str, ...]
    topics: tuple[str, ...]
    expected: np.ndarray
    variance: np.ndarray
    all_expected: np.ndarray
    all_variance: np.ndarray
    index_a: np.ndarray
    index_b: np.ndarray
    delta_expected: np.ndarray
    delta_variance: np.ndarray
    p_less: np.ndarray
    n_draws: int | None = None
    exact_topics: int = 0
    measure: str = "AP"

    def __post_init__(self) -> None:
        for name in ("expected", "variance", "all_expected", "all_variance", "index_a", "index_b",
                     "delta_expected", "delta_variance", "p_less"):
            getattr(self, name).flags.writeable = False


def check_cube(cube, what: str) -> None:
    """A RankCube whose unjudged documents are told apart down the whole lists (``what`` needs every one)."""
    if not isinstance(cube, RankCube):
        raise BayevalInputError(f"cube: expected a RankCube, got {type(cube).__name__}")
    if cube.code_depth is not None and cube.code_depth < cube.docs.shape[2]:
        raise BayevalInputError(f"cube: code_depth {cube.code_depth} is shallower than its depth "
                                f"{cube.docs.shape[2]}: {what} needs every unjudged document told apart "
                                "(RankCube.from_runs(..., code_depth=None))")


def check_cutoff(cutoff) -> int:
    if isinstance(cutoff, bool) or not isinstance(cutoff, (int, np.integer)) or cutoff < 1:
        raise BayevalInputError(f"cutoff: must be a positive integer, got {cutoff!r}")
    return int(cutoff)


def pair_indices(pairs, n_s: int) -> tuple[np.ndarray, np.ndarray]:
    """``(ia, ib)`` int64 system indices of the pairs: every a < b for ``"all"``, else the rows of a (P, 2) array."""
    if isinstance(pairs, str):
        if pairs != "all":
            raise BayevalInputError("pairs: 'all' or an array of (a, b) system indices")
        ia, ib = np.triu_indices(n_s, k=1)
    else:
        arr = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        if arr.size and (arr.min() < 0 or arr.max() >= n_s):
            raise BayevalInputError(f"pairs: system indices must lie in [0, {n_s})")
        ia, ib = arr[:, 0], arr[:, 1]
    return np.ascontiguousarray(ia, dtype=np.int64), np.ascontiguousarray(ib, dtype=np.int64)


def draw_rows(cube: RankCube, p_unjudged, closed_form_draws: int) -> tuple[list, bool]:
    """The probability arrays to run one pass each on: ``[p_unjudged]``, or the thinned posterior draws.

    Returns ``(rows, drawn)``; with a leading draws axis, ``closed_form_draws`` evenly spaced ones
    (:func:`bayeval.data.probabilities.thin_draws`).
    """
    if np.ndim(p_unjudged) != 4:
        return [p_unjudged], False
    arr = np.asarray(p_unjudged, dtype=np.float64)
    if arr.shape[1:] != cube.docs.shape:
        raise BayevalInputError(f"p_unjudged: posterior draws must have shape (draws, *{cube.docs.shape}), "
                                f"got {arr.shape}")
    if arr.shape[0] < 2:
        raise BayevalInputError(f"p_unjudged: at least 2 posterior draws, got {arr.shape[0]}")
    rows = thin_draws([arr.reshape(arr.shape[0], -1)], closed_form_draws)[0].reshape(-1, *arr.shape[1:])
    return list(rows), True


def csr_by_topic(topic: np.ndarray, values: np.ndarray, n_topics: int) -> tuple[np.ndarray, np.ndarray]:
    """``values`` grouped by ``topic`` (stable): ``(values in topic order, ptr (T+1,))``."""
    topic = np.asarray(topic, dtype=np.int64)
    order = np.argsort(topic, kind="stable")
    ptr = np.concatenate([[0], np.cumsum(np.bincount(topic, minlength=n_topics))]).astype(np.int64)
    return np.ascontiguousarray(values[order]), ptr


_KERNEL_LOCK = threading.Lock()


def locked(task, *args):
    """``task(*args)`` with no other cube task running in this process at the same time.

    A Dask worker with several threads would otherwise launch the numba kernels' parallel regions from two
    threads at once, which the threading layers do not all support (the process aborts: seen with two threads in
    one in-process worker). The kernels use every core themselves, so nothing is lost.
    """
    with _KERNEL_LOCK:
        return task(*args)


def run_topic_task(task, cube_args: tuple, csr_args: tuple, topic_args: tuple, fixed: tuple, *, scheduler=None,
                   chunks: int | None = None, timeout: float = 30.0):
    """``task(*cube_args, *csr_args, *topic_args, *fixed)`` on every topic, locally or in topic chunks on Dask.

    ``cube_args``: arrays with topics on axis 1 ((S, T, D) cells); ``csr_args``: ``(values, ptr)`` pairs grouped
    by topic (:func:`csr_by_topic`); ``topic_args``: arrays with topics on axis 0. The task returns
    ``(sys_e (S, T), sys_v (S, T), sum_e (P,), sum_v (P,), flagged int)``; on Dask the per-topic arrays are put
    back in topic order and the sums added (the same numbers as locally up to the order of the sums, 1e-12).
    """
    def args_for(a: int, b: int) -> list:
        out = [x[:, a:b] for x in cube_args]
        for values, ptr in csr_args:
            out += [values[ptr[a]:ptr[b]], ptr[a:b + 1] - ptr[a]]
        return out + [x[a:b] for x in topic_args] + list(fixed)

    n_t = cube_args[0].shape[1]
    if scheduler is None:
        return locked(task, *args_for(0, n_t))
    with dask_client(scheduler, timeout) as client:
        n_workers = max(1, len(client.scheduler_info().get("workers", {})))
        n_chunks = max(1, min(n_t, chunks or 4 * n_workers))
        bounds = np.linspace(0, n_t, n_chunks + 1).astype(int)
        futures = [client.submit(locked, task, *args_for(a, b), pure=False)
                   for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]
        parts = client.gather(futures)
    return (np.concatenate([x[0] for x in parts], axis=1), np.concatenate([x[1] for x in parts], axis=1),
            sum(x[2] for x in parts), sum(x[3] for x in parts), sum(x[4] for x in parts))


def combine_draws(parts: list, drawn: bool, cube: RankCube, ia: np.ndarray, ib: np.ndarray, method: str,
                  measure: str) -> CubePairMoments:
    r"""One topic task's output per draw, combined over topics and draws (law of total variance).

    Per draw d the sums :math:`S^E_d`, :math:`S^V_d` over the T topics give
    :math:`E = \frac1D\sum_d S^E_d/T` and :math:`\mathrm{Var} = \frac1D\sum_d S^V_d/T^2
    + \mathrm{var}_d(S^E_d/T)` (the draw is shared by every topic); per system and topic
    :math:`\frac1D\sum_d E_d` and :math:`\frac1D\sum_d \mathrm{Var}_d + \mathrm{var}_d(E_d)`.
    """
    denom = max(len(cube.topics), 1)
    e_d = np.stack([x[0] for x in parts])  # (D, S, T)
    v_d = np.stack([x[1] for x in parts])
    de_d = np.stack([x[2] for x in parts]) / denom  # (D, P)
    dv_d = np.stack([x[3] for x in parts]) / denom**2
    de = de_d.mean(axis=0)
    dv = dv_d.mean(axis=0) + de_d.var(axis=0)
    e = e_d.mean(axis=0)
    v = v_d.mean(axis=0) + e_d.var(axis=0)
    all_v = v_d.mean(axis=0).sum(axis=1) / denom**2 + e_d.mean(axis=2).var(axis=0)
    return CubePairMoments(method, cube.systems, cube.topics, e, v, e.mean(axis=1), all_v, ia, ib, de, dv,
                           p_less_normal(de, dv), len(parts) if drawn else None, max(int(x[4]) for x in parts),
                           measure)
