"""Labels of (topic, document) pairs from an automatic assessor (:class:`AssessorLabels`): an LLM's grades, a
cross-encoder's scores, a crowd's votes — any pairs, judged by a person or not.

They are not judgments: :mod:`bayeval.relevance.assessor` learns what they say about relevance from the pairs a
person judged too, and uses them as an expert for the others.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.data.topics import sort_topics
from bayeval.errors import BayevalInputError

__all__ = ["LABEL_KINDS", "SCORE_BINS", "AssessorLabels", "score_bin_edges"]

#: What an assessor's values are: ordinal integer ``"grades"`` (any scale) or real ``"scores"``.
LABEL_KINDS = ("grades", "scores")
#: Quantile bins of an assessor's scores (kind ``"scores"``), learned on the pairs a person judged too: the
#: categories of :func:`bayeval.relevance.fit_assessor_map` and the columns of :func:`bayeval.io.check_labels`.
SCORE_BINS = 5


def score_bin_edges(values, bins: int = SCORE_BINS) -> np.ndarray:
    """The inner edges of ``bins`` quantile bins of ``values`` (ties merge bins): a score s falls in bin
    ``searchsorted(edges, s, "right")``.

    >>> score_bin_edges(np.arange(10.0), 2).tolist()
    [4.5]
    """
    return np.unique(np.quantile(values, np.arange(1, bins) / bins))


@dataclass(frozen=True, eq=False)
class AssessorLabels:
    """One automatic assessor's labels of (topic, docno) pairs.

    Attributes
    ----------
    name : str
        The assessor's name (a column name in tables, ``NAME`` of ``--labels NAME=FILE``).
    kind : {"grades", "scores"}
        ``"grades"``: ordinal integers on any scale (every value an integer); ``"scores"``: real numbers (a
        probability, a cross-encoder's logit), finite.
    by_topic : mapping of str to (ndarray, ndarray)
        Per topic the labelled docnos (object array, distinct) and their values (float64), aligned.

    Examples
    --------
    >>> lab = AssessorLabels.from_frame(pd.DataFrame({"topic": ["1", "1", "2"], "docno": ["a", "b", "a"],
    ...                                               "value": [2, 0, 3]}), "llm", "grades")
    >>> lab.topics, lab.n_pairs, lab.lookup("1", ["b", "x", "a"]).tolist()
    (('1', '2'), 3, [0.0, nan, 2.0])
    """

    name: str
    kind: str
    by_topic: Mapping

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise BayevalInputError(f"name: a non-empty string, got {self.name!r}")
        if self.kind not in LABEL_KINDS:
            raise BayevalInputError(f"kind: one of {', '.join(map(repr, LABEL_KINDS))}, got {self.kind!r}")
        out = {}
        for t, pair in dict(self.by_topic).items():
            docnos, values = pair
            d = np.asarray(docnos, dtype=object)
            v = np.asarray(values, dtype=np.float64)
            if d.ndim != 1 or d.shape != v.shape:
                raise BayevalInputError(f"by_topic[{t!r}]: docnos and values must be 1-d arrays of one length")
            if not np.all(np.isfinite(v)):
                raise BayevalInputError(f"by_topic[{t!r}]: every value must be finite")
            if self.kind == "grades" and not np.all(v == np.round(v)):
                raise BayevalInputError(f"by_topic[{t!r}]: grades must be integers")
            if len(pd.unique(d)) != len(d):
                raise BayevalInputError(f"by_topic[{t!r}]: a document is labelled twice")
            d.flags.writeable = False
            v.flags.writeable = False
            out[str(t)] = (d, v)
        object.__setattr__(self, "by_topic", {t: out[t] for t in sort_topics(out)})

    # construction ----------------------------------------------------------------------------
    @classmethod
    def from_frame(cls, frame: pd.DataFrame, name: str, kind: str) -> AssessorLabels:
        """Build from columns ``topic``, ``docno``, ``value``.

        Raises
        ------
        BayevalInputError
            On a missing column, a value that is not a finite number (not an integer for ``"grades"``), or a
            pair labelled twice.
        """
        missing = {"topic", "docno", "value"} - set(frame.columns)
        if missing:
            raise BayevalInputError(f"frame: missing column(s) {sorted(missing)}")
        try:
            values = frame["value"].to_numpy(dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise BayevalInputError(f"frame: column 'value' must hold numbers ({exc})") from exc
        f = pd.DataFrame({"topic": frame["topic"].astype(str), "docno": frame["docno"].astype(str),
                          "value": values})
        dup = f.duplicated(["topic", "docno"])
        if dup.any():
            row = f[dup].iloc[0]
            raise BayevalInputError(f"frame: document {row.docno!r} labelled twice for topic {row.topic!r}")
        return cls(name, kind, {str(t): (g["docno"].to_numpy(dtype=object), g["value"].to_numpy())
                                for t, g in f.groupby("topic", sort=False)})

    def to_frame(self) -> pd.DataFrame:
        """Columns ``topic, docno, value``, topics in natural order."""
        parts = [pd.DataFrame({"topic": t, "docno": d, "value": v}) for t, (d, v) in self.by_topic.items()]
        if not parts:
            return pd.DataFrame({"topic": [], "docno": [], "value": []})
        return pd.concat(parts, ignore_index=True)

    # queries ---------------------------------------------------------------------------------
    @property
    def topics(self) -> tuple[str, ...]:
        """The labelled topics, in natural order."""
        return tuple(self.by_topic)

    @property
    def n_pairs(self) -> int:
        """How many (topic, docno) pairs are labelled."""
        return sum(len(d) for d, _ in self.by_topic.values())

    def values(self) -> np.ndarray:
        """Every label value, topics in order (float64)."""
        parts = [v for _, v in self.by_topic.values()]
        return np.concatenate(parts) if parts else np.zeros(0)

    @functools.cached_property
    def _index(self) -> dict[str, pd.Index]:
        return {t: pd.Index(d) for t, (d, _) in self.by_topic.items()}

    def lookup(self, topic: str, docnos, missing: float = np.nan) -> np.ndarray:
        """The values of ``docnos`` for ``topic`` (float64, aligned with ``docnos``); ``missing`` where a
        document (or the whole topic) is not labelled."""
        docnos = np.asarray(docnos, dtype=object)
        out = np.full(len(docnos), missing, dtype=np.float64)
        idx = self._index.get(str(topic))
        if idx is None or not len(docnos):
            return out
        pos = idx.get_indexer(docnos)
        hit = pos >= 0
        out[hit] = self.by_topic[str(topic)][1][pos[hit]]
        return out

    def judged_pairs(self, judgments) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """Per topic of ``judgments`` (a :class:`~bayeval.data.Qrels`, in its order): the label values and the
        human grades of its pairs both judged and labelled (empty arrays where none)."""
        out = []
        for t in judgments.topics:
            tj = judgments[t]
            v = self.lookup(t, tj.docnos)
            ok = ~np.isnan(v)
            out.append((t, v[ok], tj.grades[ok]))
        return out

    def __repr__(self) -> str:
        return f"AssessorLabels(name={self.name!r}, kind={self.kind!r}, topics={len(self.by_topic)}, " \
               f"pairs={self.n_pairs})"
