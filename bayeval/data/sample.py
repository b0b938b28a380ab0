"""A stratified random sample of a judging pool (:class:`StratifiedSample`), as NIST's ``sample_eval.pl`` reads it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from bayeval.data.qrels import Qrels, TopicJudgments
from bayeval.data.topics import TopicMapping, sort_topics

__all__ = ["NOT_SAMPLED", "StratifiedSample", "TopicSample"]

NOT_SAMPLED = -1
"""The grade that marks a pooled document that was not sampled (so not judged)."""


@dataclass(frozen=True, eq=False)
class TopicSample:
    """One topic's pool: every pooled document, its stratum, and its grade where sampled.

    Attributes
    ----------
    docnos : ndarray of object, shape (N,)
        Every pooled document of the topic (the *universe* of the sampling).
    strata : ndarray of int32, shape (N,)
        Stratum of each document, an index into ``labels``.
    labels : tuple of str
        Stratum labels as written in the file, in order of first appearance.
    grades : ndarray of int64, shape (N,)
        The judged grade where the document was sampled, :data:`NOT_SAMPLED` (-1) where it was not.
    """

    docnos: np.ndarray
    strata: np.ndarray
    labels: tuple[str, ...]
    grades: np.ndarray

    def __post_init__(self) -> None:
        for arr in (self.docnos, self.strata, self.grades):
            arr.flags.writeable = False

    def __len__(self) -> int:
        return len(self.docnos)

    @property
    def sampled(self) -> np.ndarray:
        """Whether each pooled document was sampled (judged)."""
        return self.grades >= 0

    @property
    def stratum_sizes(self) -> np.ndarray:
        """``N_c``: pooled documents per stratum."""
        return np.bincount(self.strata, minlength=len(self.labels))

    @property
    def stratum_sampled(self) -> np.ndarray:
        """``n_c``: sampled documents per stratum."""
        return np.bincount(self.strata[self.sampled], minlength=len(self.labels))

    @property
    def inclusion(self) -> np.ndarray:
        """Each document's estimated inclusion probability ``n_c / N_c`` (the sampling rate of its stratum)."""
        rate = self.stratum_sampled / np.maximum(self.stratum_sizes, 1)
        return rate[self.strata]


@dataclass(frozen=True, eq=False)
class StratifiedSample(TopicMapping):
    """A stratified sample of every topic's pool (topic -> :class:`TopicSample`), in natural topic order."""

    topic_samples: Mapping[str, TopicSample]
    _topics: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "topic_samples", dict(self.topic_samples))
        object.__setattr__(self, "_topics", tuple(sort_topics(self.topic_samples)))

    def __getitem__(self, topic: str) -> TopicSample:
        return self.topic_samples[str(topic)]

    def pool(self) -> Qrels:
        """Every pooled document with its grade, :data:`NOT_SAMPLED` where unsampled (a negative grade, so
        counted nonrelevant by the trec_eval measures)."""
        return Qrels({t: TopicJudgments(s.docnos, s.grades) for t, s in self.topic_samples.items()})

    def judged(self) -> Qrels:
        """The sampled documents only, as qrels with their inclusion probabilities (``n_c / N_c``)."""
        out = {}
        for t, s in self.topic_samples.items():
            keep = s.sampled
            out[t] = TopicJudgments(s.docnos[keep], s.grades[keep], s.inclusion[keep])
        return Qrels(out)
