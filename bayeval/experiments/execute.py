"""Running many independent trials: in this process, on local cores, or on a Dask cluster.

Every trial is a pure function of (collection, config, trial number) — its randomness comes from
``SeedSequence(config.seed, spawn_key=(trial,))`` — so where and in which order trials run does not
change the table. Finished trials are written to the output file as they arrive (atomically, at most
every ``flush_seconds``), and a study started again on the same file skips the trials it already holds.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayeval.cluster import dask_client
from bayeval.errors import BayevalInputError
from bayeval.experiments.robustness import RobustnessConfig
from bayeval.experiments.similarity import SimilarityStudyConfig
from bayeval.io.collection import TestCollection
from bayeval.io.trials import completed_trials, read_table, write_table
from bayeval.progress import track

__all__ = ["StudyRun", "run_study"]


@dataclass(frozen=True, eq=False)
class StudyRun:
    """The outcome of :func:`run_study`.

    Attributes
    ----------
    frame : pandas.DataFrame
        Every row of the study's file (earlier trials included), columns ``config.columns``.
    ran : tuple of int
        Trials run by this call.
    skipped : tuple of int
        Trials found already in the file.
    failed : tuple of (int, str)
        Trials that raised, with the error (they are not in ``frame``; a later call retries them).
    seconds : float
        Wall-clock time of this call.
    backend : str
        ``"serial"``, ``"processes"`` or ``"dask"``.
    workers : int
    """

    frame: pd.DataFrame
    ran: tuple[int, ...]
    skipped: tuple[int, ...]
    failed: tuple[tuple[int, str], ...] = field(default=())
    seconds: float = 0.0
    backend: str = "serial"
    workers: int = 1

    def summary(self) -> str:
        per = self.seconds / len(self.ran) if self.ran else float("nan")
        s = (f"{len(self.ran)} trials run ({self.backend}, {self.workers} worker(s)) in {self.seconds:.1f} s "
             f"({per:.1f} s per trial); {len(self.skipped)} already done; {len(self.failed)} failed")
        for t, msg in self.failed[:5]:
            s += f"\n  trial {t}: {msg.strip().splitlines()[-1]}"
        return s


STUDIES = (RobustnessConfig, SimilarityStudyConfig)


def _task(collection: TestCollection, config, trial: int):
    """One trial, errors returned instead of raised (a failed trial must not stop a study)."""
    try:
        return trial, config.run_trial(collection, trial), None
    except BayevalInputError as exc:  # bad data or settings: its one line says all
        return trial, None, f"bayeval: error: {exc}"
    except Exception:  # noqa: BLE001 - reported per trial
        return trial, None, traceback.format_exc()


def _serial(jobs, collection, config) -> Iterable:
    for t in jobs:
        yield _task(collection, config, t)


@contextlib.contextmanager
def _single_threaded_children():
    """One trial per process: the worker processes started inside keep numba/BLAS to one thread each, so workers
    do not oversubscribe the cores. The caller's environment is restored on exit (a notebook that ran a study
    keeps its own thread settings; numba refuses a changed NUMBA_NUM_THREADS once its threads run)."""
    names = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    before = {name: os.environ.get(name) for name in names}
    for name in names:
        os.environ.setdefault(name, "1")
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _processes(jobs, collection, config, workers: int) -> Iterable:
    ex = ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"))
    try:
        with _single_threaded_children():  # the workers are spawned by the submits and inherit it
            futures = [ex.submit(_task, collection, config, t) for t in jobs]
        for fut in as_completed(futures):
            yield fut.result()
    except BaseException:  # interrupted (Ctrl-C, a timeout's SIGTERM) or abandoned: stop the workers now
        for proc in list(getattr(ex, "_processes", {}).values()):  # no public handle before Python 3.14
            proc.terminate()
        ex.shutdown(wait=True, cancel_futures=True)
        raise
    ex.shutdown(wait=True)


def _dask(jobs, collection, config, scheduler, timeout: float) -> Iterable:
    from distributed import as_completed as d_as_completed

    with dask_client(scheduler, timeout=timeout) as client:
        futures = [client.submit(_task, collection, config, t, pure=False, key=f"robustness-{config.seed}-{t}")
                   for t in jobs]
        for fut in d_as_completed(futures):
            yield fut.result()


def run_study(collection: TestCollection, config: RobustnessConfig | SimilarityStudyConfig,
              trials: int | Iterable[int], *,
              out: str | os.PathLike | None = None, workers: int = 1, scheduler=None, progress: bool | None = None,
              flush_seconds: float = 10.0, connect_timeout: float = 20.0,
              on_trial: Callable[[int, pd.DataFrame], None] | None = None) -> StudyRun:
    """Run the trials of a study, in parallel, resuming from ``out``.

    Parameters
    ----------
    collection : TestCollection
    config : RobustnessConfig or SimilarityStudyConfig
        The study (carterette2007's robustness study, or Carterette & Allan 2007's similarity study)
        and its settings.
    trials : int or iterable of int
        ``n`` for trials ``0 .. n-1``, or the trial numbers.
    out : path, optional
        Parquet or csv file of the trial table. Trials already in it (same collection and seed, every
        method present) are skipped; new ones are added as they finish.
    workers : int
        Local worker processes (``1``: run in this process). Ignored with ``scheduler``.
    scheduler : str or distributed.Client, optional
        Address of a Dask scheduler (``"tcp://host:8786"``) or a client: trials become Dask tasks.
        The workers must see the collection's files at the same paths.
    progress : bool, optional
        A rich progress bar (default: when stderr is a terminal).
    flush_seconds : float
        Write the table at most this often while trials arrive (and always at the end).
    connect_timeout : float
        Seconds to wait for the Dask scheduler.
    on_trial : callable, optional
        Called with ``(trial, rows)`` for each finished trial.

    Returns
    -------
    StudyRun

    Examples
    --------
    >>> from bayeval.experiments.robustness import RobustnessConfig
    >>> cfg = RobustnessConfig(k=3, methods=("mtc",), confidences=("delta",))
    >>> isinstance(cfg, RobustnessConfig)
    True
    """
    if not isinstance(collection, TestCollection):
        raise BayevalInputError(f"collection: expected a TestCollection, got {type(collection).__name__}")
    if not isinstance(config, STUDIES):
        raise BayevalInputError(f"config: expected a RobustnessConfig or SimilarityStudyConfig, "
                                f"got {type(config).__name__}")
    columns = config.columns
    wanted = _wanted_trials(trials)
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise BayevalInputError(f"workers: must be a positive integer, got {workers!r}")
    old = _previous_table(out, collection, config)
    done = completed_trials(old, collection=collection.name, seed=config.seed, methods=config.methods)
    skipped = tuple(t for t in wanted if t in done)
    jobs = [t for t in wanted if t not in done]
    # rows of a trial that is incomplete (some methods missing) are replaced
    keep = ~((old["collection"] == collection.name) & (old["seed"] == config.seed) & old["trial"].isin(jobs))
    parts = [old[keep]] if len(old) else []

    if scheduler is not None:
        backend, n_workers, stream = "dask", 0, _dask(jobs, collection, config, scheduler, connect_timeout)
    elif workers == 1 or len(jobs) <= 1:
        backend, n_workers, stream = "serial", 1, _serial(jobs, collection, config)
    else:
        backend, n_workers, stream = "processes", int(workers), _processes(jobs, collection, config, int(workers))

    t0 = time.perf_counter()
    stream = track(stream, total=len(jobs), description=f"{config.study} trials ({collection.name})",
                   enabled=progress, keep=True)
    ran, failed = _collect(stream, parts, out, columns, flush_seconds, on_trial)
    if backend == "dask":
        n_workers = _dask_workers(scheduler)
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(columns))
    keys = [c for c in ("collection", "seed", "trial", "method", "confidence", "run_a", "run_b") if c in columns]
    frame = frame.sort_values(keys, kind="stable", ignore_index=True)
    return StudyRun(frame, tuple(sorted(ran)), skipped, tuple(sorted(failed)), time.perf_counter() - t0, backend,
                    n_workers)


def _wanted_trials(trials: int | Iterable[int]) -> list[int]:
    """The trial numbers asked for: ``0 .. n-1`` for a count ``n``, else the given numbers sorted, once each."""
    if isinstance(trials, (int, np.integer)) and not isinstance(trials, bool):
        if trials < 0:
            raise BayevalInputError(f"trials: must be >= 0, got {trials}")
        return list(range(int(trials)))
    try:
        wanted = sorted({int(t) for t in trials})
    except (TypeError, ValueError) as exc:
        raise BayevalInputError(f"trials: a count or trial numbers, got {trials!r}") from exc
    if any(t < 0 for t in wanted):
        raise BayevalInputError("trials: trial numbers must be >= 0")
    return wanted


def _previous_table(out: str | os.PathLike | None, collection: TestCollection,
                    config: RobustnessConfig | SimilarityStudyConfig) -> pd.DataFrame:
    """The trial table already in ``out`` (empty when there is none), refused where it holds trials of this
    collection and seed run with other settings (:meth:`resume_settings`)."""
    if out is None or not os.path.exists(out):
        return pd.DataFrame(columns=list(config.columns))
    old = read_table(out, config.columns)
    mine = old[(old["collection"] == collection.name) & (old["seed"] == config.seed)]
    for col, val in config.resume_settings().items():
        if len(mine) and not (mine[col] == val).all():
            raise BayevalInputError(f"out: {out} holds trials of seed {config.seed} with another {col} "
                                    f"({sorted(mine[col].unique())}); use another file or seed")
    return old


def _collect(stream, parts: list[pd.DataFrame], out: str | os.PathLike | None, columns,
             flush_seconds: float, on_trial: Callable[[int, pd.DataFrame], None] | None
             ) -> tuple[list[int], list[tuple[int, str]]]:
    """Append each finished trial's rows to ``parts`` as they arrive, writing the table to ``out`` at most
    every ``flush_seconds`` and at the end (also when interrupted); ``(ran, failed)``."""
    last_flush = time.perf_counter()
    ran, failed = [], []
    dirty = False
    try:
        for trial, rows, err in stream:
            if err is not None:
                failed.append((trial, err))
            else:
                parts.append(rows)
                ran.append(trial)
                dirty = True
                if on_trial is not None:
                    on_trial(trial, rows)
            now = time.perf_counter()
            if out is not None and dirty and now - last_flush >= flush_seconds:
                write_table(pd.concat(parts, ignore_index=True), out, columns)
                last_flush, dirty = now, False
    finally:
        stream.close()  # an interrupted study stops its workers here (and the table keeps what finished)
        if out is not None and dirty:
            write_table(pd.concat(parts, ignore_index=True), out, columns)
    return ran, failed


def _dask_workers(scheduler) -> int:
    """The number of workers of a Dask client (informative only: 0 for an address or when unknown)."""
    try:
        from distributed import Client

        return len(scheduler.scheduler_info().get("workers", {})) if isinstance(scheduler, Client) else 0
    except Exception:  # noqa: BLE001 - informative only
        return 0
