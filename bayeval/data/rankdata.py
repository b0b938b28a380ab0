"""The one internal representation: per topic, documents × systems ranks, judged mask, grades.

Everything downstream (measures, expected measures, relevance models, selection) reads a
:class:`RankData`. For one topic (:class:`TopicRanks`) the documents are the *universe* of the
topic: every document some system retrieves (within ``depth`` when given) plus every judged
document, retrieved or not (a judged relevant document no system retrieves still counts in R).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa

from bayeval.data.probabilities import RelevanceProbabilities
from bayeval.data.qrels import Qrels
from bayeval.data.run import Run, RunSet
from bayeval.data.topics import sort_topics
from bayeval.errors import BayevalInputError

__all__ = ["RankData", "TopicRanks"]


@dataclass(frozen=True, eq=False)
class TopicRanks:
    """Ranks of one topic's documents in every system.

    Attributes
    ----------
    topic : str
    systems : tuple of str
        System (run) names, the columns.
    docnos : ndarray of object, shape (n,)
        The topic's documents (retrieved by some system, or judged).
    ranked : ndarray of int32, shape (S, D)
        ``ranked[s, r]`` is the index (into ``docnos``) of the document system ``s`` puts at rank
        ``r + 1``; ``-1`` past the end of its list.
    lengths : ndarray of int32, shape (S,)
        How many documents each system retrieved (after depth truncation).
    judged : ndarray of bool, shape (n,)
    grades : ndarray of int64, shape (n,)
        Judged grade; 0 for unjudged documents (use ``judged`` to tell them apart).
    relevance_level : int
        Minimum grade counted as relevant.
    has_results : ndarray of bool, shape (S,)
        Whether the run has any result for the topic *before* truncation (trec_eval averages a
        run's measures over the topics it has results for).
    """

    topic: str
    systems: tuple[str, ...]
    docnos: np.ndarray
    ranked: np.ndarray
    lengths: np.ndarray
    judged: np.ndarray
    grades: np.ndarray
    relevance_level: int
    has_results: np.ndarray

    def __post_init__(self) -> None:
        for arr in (self.docnos, self.ranked, self.lengths, self.judged, self.grades, self.has_results):
            arr.flags.writeable = False

    @property
    def n_docs(self) -> int:
        return len(self.docnos)

    @property
    def n_systems(self) -> int:
        return len(self.systems)

    @cached_property
    def ranks(self) -> np.ndarray:
        """Dense ``(n, S)`` int32 matrix of 1-based ranks; 0 where the system did not retrieve the doc."""
        out = np.zeros((self.n_docs, self.n_systems), dtype=np.int32)
        for s in range(self.n_systems):
            k = int(self.lengths[s])
            out[self.ranked[s, :k], s] = np.arange(1, k + 1, dtype=np.int32)
        out.flags.writeable = False
        return out

    @cached_property
    def relevant(self) -> np.ndarray:
        """Judged relevant: ``judged & grade >= relevance_level``."""
        return self.judged & (self.grades >= self.relevance_level)

    @property
    def num_rel(self) -> int:
        return int(np.count_nonzero(self.relevant))

    @property
    def num_nonrel(self) -> int:
        """Judged nonrelevant documents (negative grades included)."""
        return int(np.count_nonzero(self.judged & ~self.relevant))

    def system_index(self, name: str) -> int:
        try:
            return self.systems.index(name)
        except ValueError:
            raise KeyError(name) from None

    def ranking(self, system: int | str) -> np.ndarray:
        """Document indices in the system's rank order."""
        s = self.system_index(system) if isinstance(system, str) else int(system)
        return self.ranked[s, : int(self.lengths[s])]

    def ranked_values(self, values: np.ndarray, fill=0) -> np.ndarray:
        """``values`` (per document) laid out as ``(S, D)`` in rank order; ``fill`` past each list's end."""
        values = np.asarray(values)
        padded = np.append(values, np.asarray(fill, dtype=values.dtype))
        return padded[self.ranked]  # index -1 selects the fill value

    def probabilities(self, probs: RelevanceProbabilities | None = None, default: float = 0.5) -> np.ndarray:
        """Per-document probability of relevance: 1/0 for judged docs, else ``probs`` or ``default``."""
        if not 0.0 <= default <= 1.0:
            raise BayevalInputError("default_p: must lie in [0, 1]")
        if probs is None:
            p = np.full(self.n_docs, float(default))
        else:
            p = probs.lookup(self.topic, self.docnos, default)
        p[self.judged] = self.relevant[self.judged].astype(np.float64)
        return p


@dataclass(frozen=True, eq=False)
class RankData(Sequence):
    """Per-topic rank matrices of a set of systems, aligned with the judgments.

    Build with :meth:`RankData.build`. Indexing by position or topic id gives a
    :class:`TopicRanks`.

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=3, n_systems=4, n_docs=50, depth=20, seed=1)
    >>> rd = RankData.build(col.runs, col.qrels)
    >>> len(rd), rd.systems == col.runs.names
    (3, True)
    """

    systems: tuple[str, ...]
    topics: tuple[str, ...]
    per_topic: tuple[TopicRanks, ...]
    depth: int | None = None

    @classmethod
    def build(cls, runs: RunSet | Sequence[Run], qrels: Qrels | None = None, *, depth: int | None = None,
              topics: Sequence[str] | None = None) -> RankData:
        """Align ``runs`` with ``qrels``.

        Parameters
        ----------
        runs : RunSet or sequence of Run
        qrels : Qrels, optional
            Judgments; without them nothing is judged.
        depth : int, optional
            Keep only each run's top ``depth`` documents (``None``: everything, as trec_eval).
        topics : sequence of str, optional
            Topics to keep. Default: as trec_eval, topics that have judgments and results from
            at least one run (every run topic when ``qrels`` is None).
        """
        runs = runs if isinstance(runs, RunSet) else RunSet(tuple(runs))
        if len(runs) == 0:
            raise BayevalInputError("runs: at least one run is needed")
        if depth is not None and (not isinstance(depth, (int, np.integer)) or depth < 1):
            raise BayevalInputError(f"depth: must be a positive integer, got {depth!r}")
        run_topics = set(runs.topics)
        if topics is None:
            keep = run_topics & set(qrels.topics) if qrels is not None else run_topics
            topic_list = sort_topics(keep)
        else:
            topic_list = [str(t) for t in topics]
        if not topic_list:
            raise BayevalInputError("topics: the runs and the qrels have no topic in common")
        level = qrels.relevance_level if qrels is not None else 1
        names = runs.names
        per_topic = []
        empty = pa.array([], type=pa.string())
        for t in topic_list:
            slices = []
            lengths = np.zeros(len(runs), dtype=np.int32)
            has = np.zeros(len(runs), dtype=bool)
            for s, run in enumerate(runs):
                has[s] = t in run
                r = run.ranking_array(t, depth)
                lengths[s] = len(r)
                slices.append(r)
            tj = qrels.topic_judgments.get(t) if qrels is not None else None
            if tj is not None and len(tj):
                slices.append(pa.array(tj.docnos, type=pa.string()))
            # factorise every docno of the topic at once (Arrow hashing, no Python strings per row)
            encoded = pa.concat_arrays(slices or [empty]).dictionary_encode()
            codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int32)
            uniques = encoded.dictionary.to_numpy(zero_copy_only=False)
            n = len(uniques)
            width = int(lengths.max()) if len(lengths) else 0
            ranked = np.full((len(runs), width), -1, dtype=np.int32)
            pos = 0
            for s, k in enumerate(lengths):
                ranked[s, :k] = codes[pos : pos + k]
                pos += k
            judged = np.zeros(n, dtype=bool)
            grades = np.zeros(n, dtype=np.int64)
            if tj is not None:
                qc = codes[pos:]
                judged[qc] = True
                grades[qc] = tj.grades
            per_topic.append(TopicRanks(t, names, uniques, ranked, lengths,
                                        judged, grades, level, has))
        return cls(names, tuple(topic_list), tuple(per_topic), depth)

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, str):
            try:
                return self.per_topic[self.topics.index(key)]
            except ValueError:
                raise KeyError(key) from None
        return self.per_topic[key]

    def __len__(self) -> int:
        return len(self.per_topic)

    def __iter__(self) -> Iterator[TopicRanks]:
        return iter(self.per_topic)

    def system_index(self, name: str) -> int:
        try:
            return self.systems.index(name)
        except ValueError:
            raise KeyError(name) from None

    def __repr__(self) -> str:
        return (f"RankData(systems={len(self.systems)}, topics={len(self.topics)}, "
                f"depth={self.depth}, docs={sum(tr.n_docs for tr in self.per_topic)})")
