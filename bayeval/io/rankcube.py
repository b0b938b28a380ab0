"""Run files read one at a time: a stream of runs (:func:`iter_runs`) and the rank cube (:func:`read_rank_cube`).

At MS MARCO scale (6,980 queries × depth 1,000: 7 million lines a run) a collection of runs does not fit in
memory as text. :func:`iter_runs` reads the files in order, one run in memory at a time (and, with
``prefetch``, the next one being read on a second thread: the readers' work is in zlib, Arrow and numba,
outside the GIL). Runs are named as :func:`~bayeval.io.read_runs` names them, from the files' first lines
(:func:`~bayeval.io.runs.run_file_names`), and each is read by :func:`~bayeval.io.read_run` with the same
notices. :func:`read_rank_cube` codes the stream into a :class:`~bayeval.data.rankcube.RankCube`;
:func:`bayeval.measures.cube.evaluate_runs` scores it run by run without keeping it (docs/scale.md).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor

from bayeval.data.qrels import Qrels
from bayeval.data.rankcube import RankCube
from bayeval.data.run import Run
from bayeval.errors import BayevalInputError, DataNotice
from bayeval.io.runs import RUN_NAME_RULES, read_run, run_file_names

__all__ = ["iter_runs", "read_rank_cube"]


def _named_files(paths, run_names: str, strict: bool) -> list[tuple[str, str]]:
    """``(name, path)`` of every run file; with ``strict`` what naming would tolerate with a notice (a file in a
    directory that is no run, a tag shared by two files under ``"auto"``) is an error, as in ``read_runs``."""
    if run_names not in RUN_NAME_RULES:
        raise BayevalInputError(f"run_names: expected one of {', '.join(RUN_NAME_RULES)}, got {run_names!r}")
    if not strict:
        named = run_file_names(paths, run_names)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error", DataNotice)
            try:
                named = run_file_names(paths, run_names)
            except DataNotice as notice:
                raise BayevalInputError(f"{notice} (strict)") from None
    if not named:
        raise BayevalInputError("runs: no run files given")
    return named


def iter_runs(paths: str | os.PathLike | Iterable[str | os.PathLike], *, run_names: str = "auto",
              strict: bool = False, prefetch: bool = True) -> Iterator[Run]:
    """The runs of ``paths`` (files, or directories of them), read one at a time, in the order given.

    Parameters
    ----------
    paths : path or iterable of paths
    run_names : {"auto", "tag", "file"}
        The naming rule of :func:`~bayeval.io.read_runs`.
    strict : bool
        Make every tolerated irregularity an error naming file and line.
    prefetch : bool
        Read the next file on a second thread while the caller works on this one (memory: one more run).

    Raises
    ------
    BayevalInputError
        As :func:`~bayeval.io.read_runs` (naming is checked before the first file is read).

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> from bayeval.io import write_run
    >>> import tempfile, pathlib
    >>> col = make_collection(n_topics=2, n_systems=2, n_docs=20, depth=5, seed=1)
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for r in col.runs:
    ...     write_run(r, d / f"{r.name}.run")
    >>> [run.name for run in iter_runs(d)] == sorted(col.runs.names)
    True
    """
    named = _named_files(paths, run_names, strict)

    def read(item: tuple[str, str]) -> Run:
        name, path = item
        return read_run(path, name, strict=strict)

    if not prefetch or len(named) == 1:
        for item in named:
            yield read(item)
        return
    with ThreadPoolExecutor(max_workers=1) as pool:
        ahead = pool.submit(read, named[0])
        for i in range(len(named)):
            run = ahead.result()
            ahead = pool.submit(read, named[i + 1]) if i + 1 < len(named) else None
            yield run
            del run


def read_rank_cube(paths: str | os.PathLike | Iterable[str | os.PathLike], qrels: Qrels, *, depth: int | None = None,
                   code_depth: int | None = None, run_names: str = "auto", strict: bool = False,
                   prefetch: bool = True) -> RankCube:
    """Read run files one at a time (:func:`iter_runs`) and code them into a rank cube
    (:meth:`RankCube.from_runs <bayeval.data.rankcube.RankCube.from_runs>`: ``depth``, ``code_depth``).

    Memory: the cube's arrays plus one run's text (two with ``prefetch``).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bayeval.io import write_run
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=3, n_systems=2, n_docs=30, depth=10, seed=2)
    >>> paths = [pathlib.Path(tempfile.mkdtemp()) / f"{r.name}.run" for r in col.runs]
    >>> _ = [write_run(r, p) for r, p in zip(col.runs, paths)]
    >>> read_rank_cube(paths, col.qrels, depth=5).shape
    (2, 3, 5)
    """
    return RankCube.from_runs(iter_runs(paths, run_names=run_names, strict=strict, prefetch=prefetch), qrels,
                              depth=depth, code_depth=code_depth)
