"""Probabilities of relevance for (topic, document) pairs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

from bayeval.data.topics import sort_topics
from bayeval.defaults import CLOSED_FORM_DRAWS
from bayeval.errors import BayevalInputError

__all__ = ["ProbabilityEstimate", "RelevanceProbabilities", "probabilities_for", "thin_draws"]



@runtime_checkable
class ProbabilityEstimate(Protocol):
    """What :mod:`bayeval.expected` takes from an estimate of p (a relevance model's
    :class:`~bayeval.relevance.RelevanceEstimate`): the per-topic arrays a moment method uses."""

    def arrays_for(self, method: str | None) -> list[np.ndarray]:
        """Per topic, aligned with the topic's documents: the point p (n_t,) for ``method=None``, else what
        ``method`` uses (:func:`probabilities_for`)."""
        ...


def thin_draws(arrays, n: int):
    """At most ``n`` evenly spaced rows of every topic's posterior draws of p (the same rows in every topic).

    The closed-form methods cost one pass per posterior draw (law of total variance); a few dozen evenly
    spaced draws estimate the between-draw variance to about √(2/n) relative error. 1-D arrays (a point
    p) are returned unchanged.

    >>> [a.shape for a in thin_draws([np.zeros((200, 3)), np.zeros((200, 5))], 25)]
    [(25, 3), (25, 5)]
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise BayevalInputError(f"closed_form_draws: must be an integer >= 2, got {n!r}")
    arrays = list(arrays)
    if not arrays or np.ndim(arrays[0]) != 2 or np.shape(arrays[0])[0] <= n:
        return arrays
    keep = np.unique(np.linspace(0, np.shape(arrays[0])[0] - 1, n).round().astype(np.int64))
    return [np.asarray(a)[keep] for a in arrays]


def probabilities_for(method: str | None, point, draws=None, closed_form_draws: int = CLOSED_FORM_DRAWS) -> list:
    """The one policy of which p a moment method uses: without posterior draws (or ``method=None``) the point
    p; with draws, all of them for Monte Carlo (``"mc"``) and ``closed_form_draws`` evenly spaced ones
    (:func:`thin_draws`) for a closed form, whose moments per draw are combined by the law of total
    variance (docs/expected.md)."""
    if draws is None or method is None:
        return list(point)
    return list(draws) if method == "mc" else thin_draws(draws, closed_form_draws)


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
