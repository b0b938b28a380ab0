"""A test collection on disk for simulation studies: run files, complete qrels, optional run metadata.

The layout is the one of ``../shared/data``: ``DIR/runs/input.<tag>[.gz]``, ``DIR/qrels.txt[.gz]`` and,
optionally, ``DIR/runs.tsv`` (``run``, ``group``, ``type`` = automatic/manual, ...). Runs are read lazily
and cached per process, so a worker that runs many trials reads each run file once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from bayeval.errors import BayevalInputError

__all__ = ["TestCollection", "load_collection"]


@lru_cache(maxsize=512)
def _read_run_cached(path: str):
    from bayeval.io import read_run

    return read_run(path)


@lru_cache(maxsize=8)
def _read_qrels_cached(path: str, level: int):
    from bayeval.io import read_qrels

    return read_qrels(path, relevance_level=level)


@lru_cache(maxsize=512)
def _condensed_run_cached(path: str, qrels_path: str, level: int):
    """The run of ``path`` keeping only documents the qrels judge (order kept): a condensed list."""
    from bayeval.data import Run

    run = _read_run_cached(path)
    qrels = _read_qrels_cached(qrels_path, level)
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
        question E[MAP] answers (docs/calibration.md, "Two questions").
    """

    __test__ = False  # not a pytest class

    name: str
    run_paths: tuple[tuple[str, str], ...]
    qrels_path: str
    relevance_level: int = 1
    manual: tuple[str, ...] = field(default=())
    texts_path: str | None = None
    condense: bool = False

    @property
    def run_names(self) -> tuple[str, ...]:
        return tuple(t for t, _ in self.run_paths)

    def runs(self, names):
        """A :class:`~bayeval.data.RunSet` of the named runs, in the order given (cached per process)."""
        from bayeval.data import RunSet

        paths = dict(self.run_paths)
        out = []
        for n in names:
            if n not in paths:
                raise BayevalInputError(f"runs: {n!r} is not a run of collection {self.name!r}")
            run = (_condensed_run_cached(paths[n], self.qrels_path, self.relevance_level) if self.condense
                   else _read_run_cached(paths[n]))
            if run.name != n:  # a tag shared with another file: named by the file, as read_runs names it
                from bayeval.data import Run

                run = Run(n, run.topics, run.offsets, run.docno_array, run.scores)
            out.append(run)
        return RunSet(tuple(out))

    def qrels(self):
        """The complete qrels (cached per process)."""
        return _read_qrels_cached(self.qrels_path, self.relevance_level)

    def topics(self) -> tuple[str, ...]:
        """Topics of the qrels that have at least one relevant document."""
        from bayeval.data.topics import sort_topics

        q = self.qrels()
        return tuple(sort_topics(t for t in q.topics if q.num_rel(t) > 0))

    def sample_runs(self, k: int, rng: np.random.Generator) -> tuple[str, ...]:
        """``k`` distinct run tags drawn uniformly at random (order = draw order)."""
        names = self.run_names
        if not 2 <= k <= len(names):
            raise BayevalInputError(f"k: must be between 2 and the {len(names)} runs of {self.name!r}, got {k}")
        return tuple(names[i] for i in rng.choice(len(names), size=k, replace=False))


def load_collection(path: str | os.PathLike, *, name: str | None = None, relevance_level: int = 1,
                    runs: str = "runs", condense: bool = False) -> TestCollection:
    """Describe the collection in directory ``path`` (nothing is read yet but ``runs.tsv`` and the first line
    of each run file, which names the run as :func:`bayeval.io.read_runs` does: docs/data.md).

    Optional files: ``runs.tsv`` (a run table with columns ``run`` and ``type``: manual runs;
    :func:`bayeval.io.read_run_table`) and ``texts.tsv[.gz]`` (document texts).

    Parameters
    ----------
    path : path
        Directory with ``runs/`` (one TREC run file per system) and ``qrels.txt[.gz]``.
    name : str, optional
        Name in the trial table (default: the directory's name, ``-condensed`` appended with ``condense``).
    relevance_level : int
        Lowest relevant grade (Robust 2003's graded qrels: 1).
    runs : str
        Sub-directory of the run files.
    condense : bool
        Keep only the documents the qrels judge in every run (:class:`TestCollection` ``condense``).

    Raises
    ------
    BayevalInputError
        When the directory, its run files or its qrels are missing.
    """
    root = Path(path)
    if not root.is_dir():
        raise BayevalInputError(f"collection: {root} is not a directory")
    rdir = root / runs
    if not rdir.is_dir():
        raise BayevalInputError(f"collection: {rdir} (run files) is missing")
    from bayeval.io.runs import run_file_names

    pairs = sorted(run_file_names(rdir))
    if len(pairs) < 2:
        raise BayevalInputError(f"collection: {rdir} holds fewer than 2 run files")
    qrels = next((root / q for q in ("qrels.txt.gz", "qrels.txt", "qrels") if (root / q).is_file()), None)
    if qrels is None:
        raise BayevalInputError(f"collection: no qrels.txt[.gz] in {root}")
    manual: list[str] = []
    info = root / "runs.tsv"
    if info.is_file():
        from bayeval.io.tables import manual_runs

        manual = sorted(manual_runs(info))
    texts = next((root / t for t in ("texts.tsv.gz", "texts.tsv") if (root / t).is_file()), None)
    default_name = root.name + ("-condensed" if condense else "")
    return TestCollection(name or default_name, tuple(pairs), str(qrels), int(relevance_level), tuple(manual),
                          None if texts is None else str(texts), bool(condense))
