"""Probabilities of relevance for (topic, document) pairs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.data.topics import sort_topics
from bayeval.errors import BayevalInputError

__all__ = ["RelevanceProbabilities"]


@dataclass(frozen=True, eq=False)
class RelevanceProbabilities:
    """Point probabilities of relevance, per topic: ``{topic: {docno: p}}``.

    Documents not listed get the ``default`` given where the probabilities are used.

    Examples
    --------
    >>> rp = RelevanceProbabilities.from_frame(pd.DataFrame(
    ...     {"topic": ["1", "1"], "docno": ["a", "b"], "prob": [0.25, 0.5]}))
    >>> rp.lookup("1", np.array(["b", "z"], dtype=object), default=0.1)
    array([0.5, 0.1])
    """

    by_topic: Mapping[str, Mapping[str, float]]

    def __post_init__(self) -> None:
        clean = {}
        for t, m in self.by_topic.items():
            vals = np.fromiter(m.values(), dtype=np.float64, count=len(m))
            if len(vals) and not np.all((vals >= 0) & (vals <= 1)):
                raise BayevalInputError(f"probabilities: topic {t!r} has values outside [0, 1]")
            clean[str(t)] = dict(m)
        object.__setattr__(self, "by_topic", clean)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> RelevanceProbabilities:
        """Columns ``topic``, ``docno``, ``prob``."""
        missing = {"topic", "docno", "prob"} - set(frame.columns)
        if missing:
            raise BayevalInputError(f"frame: missing column(s) {sorted(missing)}")
        out: dict[str, dict[str, float]] = {}
        for t, d, p in zip(frame["topic"].astype(str), frame["docno"].astype(str),
                           frame["prob"].astype(float), strict=True):
            out.setdefault(t, {})[d] = p
        return cls(out)

    @property
    def topics(self) -> tuple[str, ...]:
        return tuple(sort_topics(self.by_topic))

    def lookup(self, topic: str, docnos: np.ndarray, default: float) -> np.ndarray:
        """Probabilities of ``docnos`` for ``topic``; ``default`` for documents not listed."""
        m = self.by_topic.get(str(topic), {})
        return np.fromiter((m.get(d, default) for d in docnos), dtype=np.float64, count=len(docnos))

    def to_frame(self) -> pd.DataFrame:
        rows = [(t, d, p) for t in self.topics for d, p in self.by_topic[t].items()]
        return pd.DataFrame(rows, columns=["topic", "docno", "prob"])
