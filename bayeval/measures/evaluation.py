"""Evaluate runs on a :class:`~bayeval.data.RankData`: the trec_eval-equivalent path."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.data.rankdata import RankData, TopicRanks
from bayeval.errors import BayevalInputError
from bayeval.measures.average_precision import average_precision
from bayeval.measures.bpref import bpref
from bayeval.measures.incomplete import inferred_ap, judged_at, rank_effectiveness
from bayeval.measures.measure import Measure, parse_measures
from bayeval.measures.ndcg import ndcg
from bayeval.measures.precision import precision_at, r_precision, recall_at
from bayeval.measures.reciprocal_rank import reciprocal_rank

__all__ = ["Evaluation", "evaluate", "topic_measure"]


def topic_measure(tr: TopicRanks, measure: Measure | str) -> np.ndarray:
    """One measure for every system on one topic (unjudged documents count as nonrelevant, or are
    removed from the ranking for a condensed measure such as ``P@20(j)``).

    Returns an ``(S,)`` array.
    """
    m = Measure.parse(measure)
    rel = tr.ranked_values(tr.relevant, fill=False)
    nonrel = tr.ranked_values(tr.judged & ~tr.relevant, fill=False)
    gain = np.where(tr.judged, np.clip(tr.grades, 0, None), 0).astype(np.float64)
    gains = tr.ranked_values(gain, fill=0.0)
    if m.name == "judged":
        return judged_at(rel | nonrel, m.cutoff)
    if m.condensed:
        rel, nonrel, gains = _condense(rel | nonrel, rel, nonrel, gains)
    R = tr.num_rel
    if m.name == "AP":
        return average_precision(rel, R, m.cutoff)
    if m.name == "P":
        return precision_at(rel, m.cutoff)
    if m.name == "recall":
        return recall_at(rel, R, m.cutoff)
    if m.name == "R-prec":
        return r_precision(rel, R)
    if m.name == "RR":
        return reciprocal_rank(rel)
    if m.name == "bpref":
        return bpref(rel, nonrel, R, tr.num_nonrel)
    if m.name == "infAP":
        return inferred_ap(rel, nonrel, R)
    if m.name == "RankEff":
        return rank_effectiveness(rel, nonrel, R, tr.num_nonrel)
    if m.name == "nDCG":
        return ndcg(gains, gain[tr.judged], m.cutoff)
    raise BayevalInputError(f"measure: {m} is not implemented")  # pragma: no cover - Measure validates names


def _condense(keep: np.ndarray, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """Move the kept ranks of each row to the front, in order (the condensed list); pad with 0/False."""
    order = np.argsort(~keep, axis=1, kind="stable")
    kept = np.take_along_axis(keep, order, axis=1)
    return tuple(np.where(kept, np.take_along_axis(a, order, axis=1), np.zeros((), a.dtype)) for a in arrays)


@dataclass(frozen=True, eq=False)
class Evaluation:
    """Per-topic values of several measures for several runs.

    Attributes
    ----------
    measures : tuple of Measure
    systems : tuple of str
    topics : tuple of str
    values : ndarray, shape (M, S, T)
    has_results : ndarray of bool, shape (S, T)
        Whether run ``s`` returned anything for topic ``t``; a run's mean averages over these topics
        only (trec_eval's default ``-c off``).
    """

    measures: tuple[Measure, ...]
    systems: tuple[str, ...]
    topics: tuple[str, ...]
    values: np.ndarray
    has_results: np.ndarray

    def __post_init__(self) -> None:
        self.values.flags.writeable = False
        self.has_results.flags.writeable = False

    def mean(self) -> np.ndarray:
        """``(M, S)`` means over the topics each run has results for (0 for a run with none)."""
        w = self.has_results.astype(np.float64)
        n = w.sum(axis=1)
        return np.divide((self.values * w).sum(axis=2), n, out=np.zeros(self.values.shape[:2]), where=n > 0)

    def value(self, measure: Measure | str, run: str, topic: str | None = None) -> float:
        """One value; ``topic=None`` gives the run's mean."""
        m = self.measures.index(Measure.parse(measure))
        s = self.systems.index(run)
        if topic is None:
            return float(self.mean()[m, s])
        return float(self.values[m, s, self.topics.index(str(topic))])

    def to_frame(self, per_topic: bool = True) -> pd.DataFrame:
        """Tidy columns ``run, topic, measure, value``; topic ``all`` rows hold the means."""
        M, S, T = self.values.shape
        parts = []
        if per_topic:
            mask = np.broadcast_to(self.has_results[None], self.values.shape)
            mi, si, ti = np.nonzero(mask)
            parts.append(pd.DataFrame({
                "run": np.asarray(self.systems, dtype=object)[si], "topic": np.asarray(self.topics, dtype=object)[ti],
                "measure": np.asarray([str(m) for m in self.measures], dtype=object)[mi],
                "value": self.values[mi, si, ti]}))
        means = self.mean()
        mi, si = np.meshgrid(np.arange(M), np.arange(S), indexing="ij")
        parts.append(pd.DataFrame({
            "run": np.asarray(self.systems, dtype=object)[si.ravel()], "topic": "all",
            "measure": np.asarray([str(m) for m in self.measures], dtype=object)[mi.ravel()],
            "value": means.ravel()}))
        frame = pd.concat(parts, ignore_index=True)
        order = {n: i for i, n in enumerate(self.systems)}
        frame["_r"] = frame["run"].map(order)
        return frame.sort_values(["_r", "measure"], kind="stable").drop(columns="_r").reset_index(drop=True)

    def summary(self) -> str:
        """A plain-text table of the means, one row per run."""
        wide = pd.DataFrame(self.mean().T, index=list(self.systems), columns=[str(m) for m in self.measures])
        return f"{len(self.topics)} topics\n" + wide.to_string(float_format=lambda v: f"{v:.4f}")

    def __repr__(self) -> str:
        return (f"Evaluation(measures={[str(m) for m in self.measures]}, systems={len(self.systems)}, "
                f"topics={len(self.topics)})")


def evaluate(data: RankData, measures: str | Iterable[str | Measure] = ("AP", "P@10", "nDCG@10")) -> Evaluation:
    """Compute measures exactly as trec_eval does (unjudged documents are nonrelevant).

    Parameters
    ----------
    data : RankData
        Runs aligned with judgments (:meth:`RankData.build`).
    measures : str or iterable
        ``"AP,P@10"`` or a list of names / :class:`Measure` objects.

    Returns
    -------
    Evaluation

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=3, n_systems=2, n_docs=50, depth=20, seed=1)
    >>> ev = evaluate(RankData.build(col.runs, col.qrels), "AP,P@10")
    >>> ev.values.shape
    (2, 2, 3)
    """
    if not isinstance(data, RankData):
        raise BayevalInputError(f"data: expected a RankData, got {type(data).__name__}")
    ms = parse_measures(measures)
    values = np.zeros((len(ms), len(data.systems), len(data.topics)))
    has = np.zeros((len(data.systems), len(data.topics)), dtype=bool)
    for t, tr in enumerate(data):
        has[:, t] = tr.has_results
        for i, m in enumerate(ms):
            values[i, :, t] = topic_measure(tr, m)
    return Evaluation(ms, data.systems, data.topics, values, has)
