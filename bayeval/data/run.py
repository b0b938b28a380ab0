"""A system's ranked results (:class:`Run`) and an ordered collection of them (:class:`RunSet`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa

from bayeval.data.topics import sort_topics
from bayeval.errors import BayevalInputError

__all__ = ["Run", "RunSet"]


@dataclass(frozen=True, eq=False)
class Run:
    """One system's ranking for every topic, already in trec_eval's order.

    Documents of a topic are ordered by score descending; ties are broken by docno in
    *descending* byte order, as trec_eval's ``form_res_rels.c`` does. The rank column of a
    TREC run file is ignored (trec_eval ignores it too).

    Attributes
    ----------
    name : str
        The run tag.
    topics : tuple of str
        Topics with at least one retrieved document, in natural order.
    offsets : ndarray of int64, shape (len(topics) + 1,)
        Documents of ``topics[t]`` are ``docnos[offsets[t]:offsets[t+1]]``.
    docno_array : pyarrow.StringArray
        Ranked document identifiers, topic after topic (kept in Arrow memory: a collection of
        millions of rows is never turned into Python strings unless asked for, see ``docnos``).
    scores : ndarray of float64
        Their scores.
    """

    name: str
    topics: tuple[str, ...]
    offsets: np.ndarray
    docno_array: pa.Array
    scores: np.ndarray
    _index: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.offsets) != len(self.topics) + 1:
            raise BayevalInputError("offsets: must have len(topics) + 1 entries")
        if len(self.docno_array) != len(self.scores) or int(self.offsets[-1]) != len(self.scores):
            raise BayevalInputError("docnos/scores: lengths disagree with offsets")
        object.__setattr__(self, "_index", {t: i for i, t in enumerate(self.topics)})
        for arr in (self.offsets, self.scores):
            arr.flags.writeable = False

    @cached_property
    def docnos(self) -> np.ndarray:
        """All ranked docnos as a numpy object array (topic after topic, see ``offsets``)."""
        out = self.docno_array.to_numpy(zero_copy_only=False)
        out.flags.writeable = False
        return out

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_frame(cls, frame: pd.DataFrame, name: str | None = None) -> Run:
        """Build a run from a frame with columns ``topic``, ``docno``, ``score``.

        Rows are sorted into trec_eval's order (score descending, docno descending).
        A column ``run`` supplies the name when ``name`` is not given.

        Raises
        ------
        BayevalInputError
            If a column is missing, a score is not finite, or a document appears twice
            for one topic.
        """
        missing = {"topic", "docno", "score"} - set(frame.columns)
        if missing:
            raise BayevalInputError(f"frame: missing column(s) {sorted(missing)}")
        if name is None:
            if "run" not in frame.columns or frame.empty:
                raise BayevalInputError("name: give a run name (the frame has no 'run' column)")
            name = str(frame["run"].iloc[0])
        topic = frame["topic"].astype(str).to_numpy(dtype=object)
        docno = frame["docno"].astype(str).to_numpy(dtype=object)
        try:
            score = frame["score"].to_numpy(dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise BayevalInputError(f"frame: column 'score' is not numeric ({exc})") from exc
        return cls.from_arrays(name, topic, docno, score)

    @classmethod
    def from_arrays(cls, name: str, topic: np.ndarray, docno: np.ndarray, score: np.ndarray) -> Run:
        """Build a run from parallel arrays (any order); see :meth:`from_frame`."""
        if not name:
            raise BayevalInputError("name: a run needs a non-empty name")
        score = np.asarray(score, dtype=np.float64)
        if not np.all(np.isfinite(score)):
            raise BayevalInputError(f"run {name!r}: scores must be finite numbers")
        topic = np.asarray(topic, dtype=object)
        docno = np.asarray(docno, dtype=object)
        if not (len(topic) == len(docno) == len(score)):
            raise BayevalInputError("topic/docno/score: arrays must have the same length")
        # lexsort: last key is primary. docno descending via negated ordinal codes.
        d_uniq, d_code = np.unique(docno.astype(str), return_inverse=True)
        t_uniq, t_code = np.unique(topic.astype(str), return_inverse=True)
        order = np.lexsort((-d_code, -score, t_code))
        t_sorted = t_code[order]
        dup = (t_sorted[1:] == t_sorted[:-1]) & (d_code[order][1:] == d_code[order][:-1])
        if dup.any():
            k = int(np.flatnonzero(dup)[0])
            raise BayevalInputError(
                f"run {name!r}: document {docno[order[k]]!r} appears twice for topic {topic[order[k]]!r}"
            )
        starts = np.flatnonzero(np.r_[True, t_sorted[1:] != t_sorted[:-1]])
        names = [str(t_uniq[t_sorted[s]]) for s in starts]
        return cls._from_sorted(name, names, starts, docno[order], score[order])

    @classmethod
    def _from_sorted(cls, name: str, names: list[str], starts: np.ndarray, docnos,
                     scores: np.ndarray) -> Run:
        """Assemble from rows grouped by topic (``names[g]`` starts at ``starts[g]``), each group
        already in trec_eval order; reorders the topics naturally."""
        starts = np.asarray(starts, dtype=np.int64)
        if not isinstance(docnos, (pa.Array, pa.ChunkedArray)):
            docnos = pa.array(np.asarray(docnos, dtype=object), type=pa.string())
        elif isinstance(docnos, pa.ChunkedArray):
            docnos = docnos.combine_chunks()
        ends = np.r_[starts[1:], len(scores)]
        natural = sort_topics(names)
        if len(natural) != len(names):
            raise BayevalInputError(f"run {name!r}: a topic's rows are not contiguous")
        if natural != list(names):
            pos = {t: i for i, t in enumerate(names)}
            perm = [pos[t] for t in natural]
            idx = np.concatenate([np.arange(starts[i], ends[i]) for i in perm])
            docnos, scores = docnos.take(pa.array(idx)), scores[idx]
            lengths = (ends - starts)[perm]
        else:
            lengths = ends - starts
        offsets = np.zeros(len(natural) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return cls(name, tuple(natural), offsets, docnos, np.ascontiguousarray(scores, dtype=np.float64))

    # ------------------------------------------------------------------ access
    def __contains__(self, topic: object) -> bool:
        return topic in self._index

    def __len__(self) -> int:
        """Number of retrieved (topic, document) rows."""
        return len(self.scores)

    def ranking(self, topic: str) -> np.ndarray:
        """Ranked docnos of ``topic`` (empty if the run has no results for it)."""
        i = self._index.get(str(topic))
        if i is None:
            return np.empty(0, dtype=object)
        return self.docnos[self.offsets[i] : self.offsets[i + 1]]

    def ranking_array(self, topic: str, depth: int | None = None) -> pa.Array:
        """Ranked docnos of ``topic`` (top ``depth`` only if given) as an Arrow array, without copying."""
        i = self._index.get(str(topic))
        if i is None:
            return pa.array([], type=pa.string())
        n = int(self.offsets[i + 1] - self.offsets[i])
        return self.docno_array.slice(int(self.offsets[i]), n if depth is None else min(n, depth))

    def topic_scores(self, topic: str) -> np.ndarray:
        """Scores of ``topic``'s ranking, aligned with :meth:`ranking`."""
        i = self._index.get(str(topic))
        if i is None:
            return np.empty(0, dtype=np.float64)
        return self.scores[self.offsets[i] : self.offsets[i + 1]]

    def to_frame(self) -> pd.DataFrame:
        """Rows ``topic, docno, rank, score, run`` with 1-based ranks in trec_eval's order."""
        lengths = np.diff(self.offsets)
        topic = np.repeat(np.array(self.topics, dtype=object), lengths)
        rank = np.arange(len(self.docnos)) - np.repeat(self.offsets[:-1], lengths) + 1
        return pd.DataFrame({"topic": topic, "docno": self.docnos, "rank": rank,
                             "score": self.scores, "run": self.name})

    def __repr__(self) -> str:
        return f"Run({self.name!r}, topics={len(self.topics)}, rows={len(self)})"


@dataclass(frozen=True)
class RunSet(Sequence):
    """An ordered collection of runs with unique names."""

    runs: tuple[Run, ...]

    def __post_init__(self) -> None:
        runs = tuple(self.runs)
        object.__setattr__(self, "runs", runs)
        names = [r.name for r in runs]
        seen: set[str] = set()
        for n in names:
            if n in seen:
                raise BayevalInputError(f"runs: two runs are named {n!r}; run names must be unique")
            seen.add(n)

    @classmethod
    def of(cls, runs: Iterable[Run] | Mapping[str, Run]) -> RunSet:
        if isinstance(runs, Mapping):
            runs = runs.values()
        return cls(tuple(runs))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.runs)

    @property
    def topics(self) -> tuple[str, ...]:
        """Union of the runs' topics, natural order."""
        return tuple(sort_topics({t for r in self.runs for t in r.topics}))

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, str):
            for r in self.runs:
                if r.name == key:
                    return r
            raise KeyError(key)
        if isinstance(key, slice):
            return RunSet(self.runs[key])
        return self.runs[key]

    def __len__(self) -> int:
        return len(self.runs)

    def __iter__(self) -> Iterator[Run]:
        return iter(self.runs)

    def select(self, names: Iterable[str]) -> RunSet:
        """The runs named, in the order given."""
        return RunSet(tuple(self[n] for n in names))
