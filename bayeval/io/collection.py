"""A test collection on disk: run files, qrels, optional run metadata and texts (:func:`load_collection`).

Given as a directory, the layout of ``../shared/data``: ``DIR/runs/input.<tag>[.gz]``, ``DIR/qrels.txt[.gz]``
and, optionally, ``DIR/runs.tsv`` (``run``, ``group``, ``type`` = automatic/manual, ...) and
``DIR/texts.tsv[.gz]``; the simulation studies read it so. Runs are read lazily and cached per process, so a
worker that runs many trials reads each run file once.

Given as files, as every command on the user's data takes them (``QRELS RUN...``): the qrels and the runs are
read at once, with the readers' ``run_names`` and ``strict`` rules (docs/data.md).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from bayeval.data.qrels import Qrels
from bayeval.data.run import Run, RunSet
from bayeval.data.topics import sort_topics
from bayeval.errors import BayevalInputError
from bayeval.io.qrels import read_qrels
from bayeval.io.runs import _notify, read_run, read_run_files, run_file_names
from bayeval.io.tables import manual_runs

__all__ = ["TestCollection", "load_collection"]


@lru_cache(maxsize=512)
def _read_run_cached(path: str):
    return read_run(path)


@lru_cache(maxsize=8)
def _read_qrels_cached(path: str, level: int):
    return read_qrels(path, relevance_level=level)


@lru_cache(maxsize=512)
def _condensed_run_cached(path: str, qrels_path: str, level: int):
    return _condensed(_read_run_cached(path), _read_qrels_cached(qrels_path, level))


def _condensed(run: Run, qrels: Qrels) -> Run:
    """``run`` keeping only documents the qrels judge (order kept): a condensed list."""
    keep = np.zeros(len(run.scores), dtype=bool)
    for t, topic in enumerate(run.topics):
        a, b = int(run.offsets[t]), int(run.offsets[t + 1])
        if topic in qrels.topics:
            keep[a:b] = np.isin(run.docnos[a:b], qrels[topic].docnos)
    lengths = np.diff(run.offsets)
    topic = np.repeat(np.array(run.topics, dtype=object), lengths)
    if not keep.any():
        raise BayevalInputError(f"condense: run {run.name!r} retrieves no document the qrels judge")
    return Run.from_arrays(run.name, topic[keep], run.docnos[keep], run.scores[keep])


@dataclass(frozen=True)
class TestCollection:
    """Run files and complete qrels of one collection (the simulated assessor and the truth).

    Attributes
    ----------
    name : str
        Short name (the directory name by default), written into every trial row.
    run_paths : tuple of (str, str)
        ``(run name, file path)``, sorted by name; runs are named as :func:`bayeval.io.read_runs` names
        them (the tag, or the file name when another file has the same tag).
    qrels_path : str
    relevance_level : int
        Lowest grade that counts as relevant.
    manual : tuple of str
        Tags of manual runs (from ``runs.tsv``; empty when unknown).
    texts_path : str or None
        ``texts.tsv[.gz]`` beside the runs (``docno<TAB>text``), for similarity-based estimation.
    condense : bool
        Score against *condensed* lists: every run keeps only the documents the qrels judge (order kept),
        so the qrels are the complete truth of what the runs retrieve. Use it where the official qrels are
        shallow: the truth of the studies is then MAP as if every retrieved document were judged, the
        question E[MAP] answers (docs/notes/calibration-record.md, "Two questions").
    read : tuple (Qrels, RunSet) or None
        The qrels and runs already read (a collection given as files); ``None``: read lazily from the paths.
    """

    __test__ = False  # not a pytest class

    name: str
    run_paths: tuple[tuple[str, str], ...]
    qrels_path: str
    relevance_level: int = 1
    manual: tuple[str, ...] = field(default=())
    texts_path: str | None = None
    condense: bool = False
    read: tuple[Qrels, RunSet] | None = field(default=None, repr=False, compare=False)

    @property
    def run_names(self) -> tuple[str, ...]:
        return tuple(t for t, _ in self.run_paths)

    def runs(self, names=None):
        """A :class:`~bayeval.data.RunSet` of the named runs (default: all), in the order given (cached per
        process)."""
        names = self.run_names if names is None else names
        paths = dict(self.run_paths)
        read = None if self.read is None else {r.name: r for r in self.read[1]}
        out = []
        for n in names:
            if n not in paths:
                raise BayevalInputError(f"runs: {n!r} is not a run of collection {self.name!r}")
            if read is not None:
                run = _condensed(read[n], self.read[0]) if self.condense else read[n]
            else:
                run = (_condensed_run_cached(paths[n], self.qrels_path, self.relevance_level) if self.condense
                       else _read_run_cached(paths[n]))
            if run.name != n:  # a tag shared with another file: named by the file, as read_runs names it
                run = Run(n, run.topics, run.offsets, run.docno_array, run.scores)
            out.append(run)
        return RunSet(tuple(out))

    def qrels(self) -> Qrels:
        """The qrels (cached per process)."""
        if self.read is not None:
            return self.read[0]
        return _read_qrels_cached(self.qrels_path, self.relevance_level)

    def topics(self) -> tuple[str, ...]:
        """Topics of the qrels that have at least one relevant document."""
        q = self.qrels()
        return tuple(sort_topics(t for t in q.topics if q.num_rel(t) > 0))

    def sample_runs(self, k: int, rng: np.random.Generator) -> tuple[str, ...]:
        """``k`` distinct run tags drawn uniformly at random (order = draw order)."""
        names = self.run_names
        if not 2 <= k <= len(names):
            raise BayevalInputError(f"k: must be between 2 and the {len(names)} runs of {self.name!r}, got {k}")
        return tuple(names[i] for i in rng.choice(len(names), size=k, replace=False))


def load_collection(path: str | os.PathLike, *, name: str | None = None, relevance_level: int = 1,
                    runs: str | Sequence[str | os.PathLike] = "runs", condense: bool = False,
                    run_names: str = "auto", strict: bool = False) -> TestCollection:
    """A test collection: a directory (the simulation studies) or a qrels file and run files (the commands).

    With ``runs`` a string, ``path`` is a directory and nothing is read yet but ``runs.tsv`` and the first line
    of each run file, which names the run as :func:`bayeval.io.read_runs` does (docs/data.md). Optional files:
    ``runs.tsv`` (a run table with columns ``run`` and ``type``: manual runs; :func:`bayeval.io.read_run_table`)
    and ``texts.tsv[.gz]`` (document texts).

    With ``runs`` a sequence of run files and directories, ``path`` is the qrels file: qrels and runs are read
    at once (:func:`bayeval.io.read_qrels`, :func:`bayeval.io.read_runs`) and must share a topic.

    Parameters
    ----------
    path : path
        Directory with ``runs/`` (one TREC run file per system) and ``qrels.txt[.gz]``; or a qrels file.
    name : str, optional
        Name in the trial table (default: the directory's name, ``-condensed`` appended with ``condense``).
    relevance_level : int
        Lowest relevant grade (Robust 2003's graded qrels: 1).
    runs : str or sequence of paths
        Sub-directory of the run files; or the run files and directories of them.
    condense : bool
        Keep only the documents the qrels judge in every run (:class:`TestCollection` ``condense``).
    run_names : {"auto", "tag", "file"}
        How runs are named (:func:`bayeval.io.read_runs`).
    strict : bool
        Make every tolerated irregularity an error naming file and line (runs and qrels given as files).

    Raises
    ------
    BayevalInputError
        When the directory, its run files or its qrels are missing, a file is malformed, or the qrels and
        runs given as files have no topic in common.
    """
    if not isinstance(runs, (str, os.PathLike)):
        return _read_files(path, runs, name=name, relevance_level=relevance_level, condense=condense,
                           run_names=run_names, strict=strict)
    if strict:
        raise BayevalInputError("strict: applies to a collection given as files (its runs are read lazily)")
    root = Path(path)
    if not root.is_dir():
        raise BayevalInputError(f"collection: {root} is not a directory")
    rdir = root / runs
    if not rdir.is_dir():
        raise BayevalInputError(f"collection: {rdir} (run files) is missing")
    pairs = sorted(run_file_names(rdir, run_names))
    if len(pairs) < 2:
        raise BayevalInputError(f"collection: {rdir} holds fewer than 2 run files")
    qrels = next((root / q for q in ("qrels.txt.gz", "qrels.txt", "qrels") if (root / q).is_file()), None)
    if qrels is None:
        raise BayevalInputError(f"collection: no qrels.txt[.gz] in {root}")
    manual = sorted(manual_runs(root / "runs.tsv")) if (root / "runs.tsv").is_file() else []
    texts = next((root / t for t in ("texts.tsv.gz", "texts.tsv") if (root / t).is_file()), None)
    default_name = root.name + ("-condensed" if condense else "")
    return TestCollection(name or default_name, tuple(pairs), str(qrels), int(relevance_level), tuple(manual),
                          None if texts is None else str(texts), bool(condense))


def _read_files(qrels_path, runs, *, name, relevance_level, condense, run_names, strict) -> TestCollection:
    """:func:`load_collection` of a qrels file and run files, read at once."""
    qrels = read_qrels(qrels_path, relevance_level=relevance_level, strict=strict)
    files = read_run_files(runs, run_names=run_names, strict=strict)
    _notify(files)
    read = RunSet(tuple(rf.run for rf in files))
    if not set(read.topics) & set(qrels.topics):
        raise BayevalInputError(f"{qrels_path}: no topic in common with the runs")
    default_name = Path(qrels_path).parent.name + ("-condensed" if condense else "")
    return TestCollection(name or default_name, tuple((rf.run.name, rf.path) for rf in files), str(qrels_path),
                          int(relevance_level), condense=bool(condense), read=(qrels, read))
