"""Per-topic scores of runs for one measure (:class:`TopicScores`): what the analysis reads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.data.topics import sort_topics
from bayeval.errors import BayevalInputError
from bayeval.measures import Measure

__all__ = ["TopicScores"]

ALL = "all"


@dataclass(frozen=True, eq=False)
class TopicScores:
    """A runs × topics matrix of one measure's per-topic values.

    Attributes
    ----------
    runs : tuple of str
    topics : tuple of str
    values : ndarray of float64, shape (R, T)
        ``values[r, t]``; NaN where unknown.
    measure : str
        Name of the measure (e.g. ``"AP"``), for labels.

    Examples
    --------
    >>> f = pd.DataFrame({"run": ["a", "a", "b", "b"], "topic": ["1", "2", "1", "2"],
    ...                   "value": [0.5, 0.25, 0.75, 0.0]})
    >>> s = TopicScores.from_frame(f)
    >>> s.values.tolist(), s.mean().tolist()
    ([[0.5, 0.25], [0.75, 0.0]], [0.375, 0.375])
    """

    runs: tuple[str, ...]
    topics: tuple[str, ...]
    values: np.ndarray
    measure: str = "AP"

    def __post_init__(self) -> None:
        runs = tuple(str(r) for r in self.runs)
        topics = tuple(str(t) for t in self.topics)
        values = np.array(self.values, dtype=np.float64)
        if values.shape != (len(runs), len(topics)):
            raise BayevalInputError(f"values: shape {values.shape} does not match (runs, topics) = "
                                    f"{(len(runs), len(topics))}")
        for name, items in (("runs", runs), ("topics", topics)):
            if len(set(items)) != len(items):
                raise BayevalInputError(f"{name}: names must be unique")
        values.flags.writeable = False
        object.__setattr__(self, "runs", runs)
        object.__setattr__(self, "topics", topics)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "measure", str(self.measure))

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, measure: str | None = None, *, fill: float | None = None,
                   source: str = "frame") -> TopicScores:
        """Build from a tidy table with columns ``run, topic, value`` (and optionally ``measure``).

        This is the layout of :meth:`bayeval.measures.Evaluation.to_frame` and of
        ``bayeval measures --per-topic --format csv``; rows with topic ``all`` (means) are ignored.

        Parameters
        ----------
        frame : DataFrame
        measure : str, optional
            Which measure to keep when the table has a ``measure`` column with several.
        fill : float, optional
            Value for (run, topic) combinations absent from the table (``0.0``: trec_eval's ``-c``
            convention for a run that returned nothing). Default: keep them NaN, and the analysis
            refuses NaN for the topics it uses.
        source : str
            Name used in error messages (a file path).
        """
        missing = {"run", "topic", "value"} - set(frame.columns)
        if missing:
            raise BayevalInputError(f"{source}: missing column(s) {sorted(missing)}; expected run, topic, value")
        f = frame
        if "measure" in f.columns:
            names = list(dict.fromkeys(f["measure"].astype(str)))
            if measure is None:
                if len(names) > 1:
                    raise BayevalInputError(f"measure: {source} holds several measures ({', '.join(names)}); "
                                            "choose one")
                measure = names[0] if names else "AP"
            elif str(measure) not in names:
                raise BayevalInputError(f"measure: {measure!r} is not in {source} (it holds {', '.join(names)})")
            f = f[f["measure"].astype(str) == str(measure)]
        measure = "AP" if measure is None else str(measure)
        f = f[f["topic"].astype(str) != ALL]
        runs = f["run"].astype(str).to_numpy()
        topics = f["topic"].astype(str).to_numpy()
        try:
            vals = pd.to_numeric(f["value"]).to_numpy(dtype=np.float64)
        except (TypeError, ValueError):
            raise BayevalInputError(f"{source}: column 'value' must be numeric") from None
        key = pd.DataFrame({"r": runs, "t": topics})
        dup = key.duplicated()
        if dup.any():
            i = int(np.flatnonzero(dup.to_numpy())[0])
            raise BayevalInputError(f"{source}: run {runs[i]!r} has two values for topic {topics[i]!r}")
        run_names = list(dict.fromkeys(runs))
        topic_names = sort_topics(topics)
        ri = {r: i for i, r in enumerate(run_names)}
        ti = {t: i for i, t in enumerate(topic_names)}
        out = np.full((len(run_names), len(topic_names)), np.nan if fill is None else float(fill))
        out[[ri[r] for r in runs], [ti[t] for t in topics]] = vals
        return cls(tuple(run_names), tuple(topic_names), out, measure)

    @classmethod
    def from_evaluation(cls, evaluation, measure=None) -> TopicScores:
        """One measure of a :class:`bayeval.measures.Evaluation` (default its first).

        Topics a run returned nothing for count 0, as in ``Evaluation.values`` (trec_eval ``-c``).
        """
        ms = [str(m) for m in evaluation.measures]
        if measure is None:
            i = 0
        else:
            name = str(Measure.parse(measure))
            if name not in ms:
                raise BayevalInputError(f"measure: {name} was not evaluated; evaluated: {', '.join(ms)}")
            i = ms.index(name)
        return cls(evaluation.systems, evaluation.topics, evaluation.values[i], ms[i])

    def select(self, runs: Sequence[str] | None = None, topics: Sequence[str] | None = None) -> TopicScores:
        """The sub-matrix of the given runs and topics (in the order given)."""
        ri = list(range(len(self.runs))) if runs is None else [self._index(self.runs, r, "run") for r in runs]
        ti = list(range(len(self.topics))) if topics is None else \
            [self._index(self.topics, t, "topic") for t in topics]
        return TopicScores(tuple(self.runs[i] for i in ri), tuple(self.topics[i] for i in ti),
                           self.values[np.ix_(ri, ti)], self.measure)

    @staticmethod
    def _index(items: tuple[str, ...], key: str, what: str) -> int:
        try:
            return items.index(str(key))
        except ValueError:
            raise BayevalInputError(f"scores: no {what} {key!r}") from None

    def mean(self) -> np.ndarray:
        """``(R,)`` mean over topics."""
        return self.values.mean(axis=1)

    def to_frame(self) -> pd.DataFrame:
        """Columns ``run, topic, measure, value`` (the layout :meth:`from_frame` reads)."""
        R, T = self.values.shape
        return pd.DataFrame({"run": np.repeat(np.asarray(self.runs, dtype=object), T),
                             "topic": np.tile(np.asarray(self.topics, dtype=object), R),
                             "measure": self.measure, "value": self.values.ravel()})

    def __repr__(self) -> str:
        return f"TopicScores(measure={self.measure!r}, runs={len(self.runs)}, topics={len(self.topics)})"
