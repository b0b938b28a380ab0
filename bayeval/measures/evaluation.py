"""Evaluate runs on a :class:`~bayeval.data.RankData`: the trec_eval-equivalent path.

:func:`evaluate` turns each topic into trec_eval's relevance codes once
(:class:`~bayeval.measures._inputs.RankingInputs`) and applies the array kernels of the measure
families to all systems of the topic at once. The result is a frozen :class:`Evaluation`. The rank cube's
evaluation (:mod:`bayeval.measures.cube`) applies the same kernels (:func:`measure_values`) to all topics of
one system at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.data.rankdata import RankData, TopicRanks
from bayeval.errors import BayevalInputError
from bayeval.measures._inputs import RankingInputs
from bayeval.measures._summation import sequential_sum
from bayeval.measures.average_precision import average_precision
from bayeval.measures.bpref import bpref
from bayeval.measures.incomplete import inferred_ap, judged_at, rank_effectiveness
from bayeval.measures.measure import Measure, Provider, parse_measures
from bayeval.measures.ndcg import ndcg_from_ideal
from bayeval.measures.precision import precision_at, r_precision, recall_at
from bayeval.measures.reciprocal_rank import reciprocal_rank

__all__ = ["TREC_EVAL", "Evaluation", "evaluate", "measure_values", "topic_measure"]

_Kernel = Callable[[RankingInputs, int | None], np.ndarray]  # (rankings, cutoff) -> (R,) values, one per row

_KERNELS: dict[str, _Kernel] = {
    "AP": lambda x, k: average_precision(x.relevant, x.num_rel, k),
    "P": lambda x, k: precision_at(x.relevant, k),
    "recall": lambda x, k: recall_at(x.relevant, x.num_rel, k),
    "R-prec": lambda x, k: r_precision(x.relevant, x.num_rel),
    "RR": lambda x, k: reciprocal_rank(x.relevant, k),
    "bpref": lambda x, k: bpref(x.relevant, x.nonrelevant, x.num_rel, x.num_nonrel),
    "infAP": lambda x, k: inferred_ap(x.relevant, x.nonrelevant, x.num_rel, x.pool_unjudged),
    "RankEff": lambda x, k: rank_effectiveness(x.relevant, x.nonrelevant, x.num_rel, x.num_nonrel),
    "nDCG": lambda x, k: ndcg_from_ideal(x.gains, x.ideal_dcg(k), k),
    "judged": lambda x, k: judged_at(x.judged, k),
}
TREC_EVAL = Provider("trec_eval-exact value", tuple(_KERNELS), condensed=True, rel=True)
"""The families :func:`evaluate` computes as trec_eval does (every one also condensed, ``(j)``, and at a relevance
level of its own, ``rel=L``)."""


def measure_values(inputs: RankingInputs, m: Measure) -> np.ndarray:
    """``(R,)`` the measure ``m`` (a :data:`TREC_EVAL` measure) of every ranking of ``inputs``: the one place
    where a measure meets its kernel, whichever layout the rows come from."""
    x = inputs.condensed if m.condensed else inputs
    return _KERNELS[m.name](x.at_level(m.rel), m.cutoff)


def topic_measure(tr: TopicRanks, measure: Measure | str) -> np.ndarray:
    """One measure for every system on one topic, as trec_eval computes it.

    Unjudged documents count as nonrelevant, or are removed from the ranking for a condensed
    measure such as ``P@20(j)``.

    Parameters
    ----------
    tr : TopicRanks
        One topic of a :class:`~bayeval.data.RankData`.
    measure : Measure or str

    Returns
    -------
    ndarray of float64, shape (S,)

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=1, n_systems=3, n_docs=30, depth=10, seed=2)
    >>> topic_measure(RankData.build(col.runs, col.qrels)[0], "P@5").shape
    (3,)
    """
    if not isinstance(tr, TopicRanks):
        raise BayevalInputError(f"tr: expected a TopicRanks, got {type(tr).__name__}")
    return measure_values(RankingInputs.from_topic(tr), TREC_EVAL.require(measure))


@dataclass(frozen=True, eq=False)
class Evaluation:
    """Per-topic values of several measures for several runs (the result of :func:`evaluate`).

    Attributes
    ----------
    measures : tuple of Measure
    systems : tuple of str
        Run names.
    topics : tuple of str
        The evaluated topics: those with judgments and results from at least one run.
    values : ndarray of float64, shape (M, S, T)
        ``values[m, s, t]``; 0 where run ``s`` has no results for topic ``t``.
    has_results : ndarray of bool, shape (S, T)
        Whether run ``s`` returned anything for topic ``t``.

    Notes
    -----
    :meth:`mean` averages a run over the topics it has results for, among the evaluated topics:
    trec_eval's default (``-c`` off). Missing topics are not counted as 0; to do so, average
    ``values`` over the topic axis yourself (trec_eval ``-c`` when every judged topic is evaluated).

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=4, n_systems=2, n_docs=40, depth=20, seed=5)
    >>> ev = evaluate(RankData.build(col.runs, col.qrels), "AP,P@10")
    >>> ev
    Evaluation(measures=['AP', 'P@10'], systems=2, topics=4)
    >>> ev.mean().shape, list(ev.to_frame().columns)
    ((2, 2), ['run', 'topic', 'measure', 'value'])
    >>> ev.value("P@10", ev.systems[0]) == float(ev.mean()[1, 0])
    True
    """

    measures: tuple[Measure, ...]
    systems: tuple[str, ...]
    topics: tuple[str, ...]
    values: np.ndarray
    has_results: np.ndarray

    def __post_init__(self) -> None:
        measures = tuple(Measure.parse(m) for m in self.measures)
        systems = tuple(str(s) for s in self.systems)
        topics = tuple(str(t) for t in self.topics)
        values = np.array(self.values, dtype=np.float64)
        has = np.array(self.has_results, dtype=bool)
        if values.shape != (len(measures), len(systems), len(topics)):
            raise BayevalInputError(f"values: shape {values.shape} does not match (measures, systems, topics) = "
                                    f"{(len(measures), len(systems), len(topics))}")
        if has.shape != values.shape[1:]:
            raise BayevalInputError(f"has_results: shape {has.shape} does not match (systems, topics) = "
                                    f"{values.shape[1:]}")
        values.flags.writeable = False
        has.flags.writeable = False
        for name, value in (("measures", measures), ("systems", systems), ("topics", topics), ("values", values),
                            ("has_results", has)):
            object.__setattr__(self, name, value)

    # -------------------------------------------------------------------- lookup
    def _measure_index(self, measure: Measure | str) -> int:
        m = Measure.parse(measure)
        try:
            return self.measures.index(m)
        except ValueError:
            raise BayevalInputError(f"measure: {m} was not evaluated; evaluated: "
                                    f"{', '.join(str(x) for x in self.measures)}") from None

    def _system_index(self, run: str) -> int:
        try:
            return self.systems.index(run)
        except ValueError:
            raise BayevalInputError(f"run: unknown run {run!r} ({len(self.systems)} runs evaluated)") from None

    def _topic_index(self, topic: str) -> int:
        try:
            return self.topics.index(str(topic))
        except ValueError:
            raise BayevalInputError(f"topic: topic {topic!r} was not evaluated") from None

    # -------------------------------------------------------------------- results
    def mean(self) -> np.ndarray:
        """``(M, S)`` means over the topics each run has results for (0 for a run with none).

        This is trec_eval's ``all`` value with its default ``-c`` off; the topics are added in topic
        order, as trec_eval adds them, so the mean is the same double.
        """
        n = self.has_results.sum(axis=1)
        sums = sequential_sum(np.where(self.has_results[None], self.values, 0.0))
        return np.divide(sums, n, out=np.zeros(sums.shape), where=n > 0)

    def value(self, measure: Measure | str, run: str, topic: str | None = None) -> float:
        """One value: run ``run``'s ``measure`` on ``topic``, or its mean when ``topic`` is None.

        A topic the run has no results for gives 0.0 (see ``has_results``).

        Raises
        ------
        BayevalInputError
            Naming the argument when the measure, run or topic is not part of the evaluation.
        """
        m = self._measure_index(measure)
        s = self._system_index(run)
        if topic is None:
            return float(self.mean()[m, s])
        return float(self.values[m, s, self._topic_index(topic)])

    def to_frame(self, per_topic: bool = True) -> pd.DataFrame:
        """Tidy table with columns ``run, topic, measure, value``.

        Rows with topic ``all`` hold the means (:meth:`mean`); with ``per_topic`` the values of
        every topic a run has results for come first, in topic order (as ``trec_eval -q`` prints).
        Rows are ordered by run, then measure, in the order of the evaluation.
        """
        M, S, T = self.values.shape
        names = np.asarray([str(m) for m in self.measures], dtype=object)
        runs = np.asarray(self.systems, dtype=object)
        topics = np.asarray(self.topics + ("all",), dtype=object)
        # one block of T + 1 slots per (run, measure): topic values, then the mean
        full = np.concatenate([self.values, self.mean()[:, :, None]], axis=2).transpose(1, 0, 2)  # (S, M, T+1)
        keep = np.zeros((S, M, T + 1), dtype=bool)
        keep[:, :, T] = True
        if per_topic:
            keep[:, :, :T] = self.has_results[:, None, :]
        si, mi, ti = np.nonzero(keep)
        return pd.DataFrame({"run": runs[si], "topic": topics[ti], "measure": names[mi], "value": full[si, mi, ti]})

    def summary(self, digits: int = 4) -> str:
        """Plain-text table of the means: one row per run, one column per measure.

        Examples
        --------
        >>> from bayeval.synthetic import make_collection
        >>> col = make_collection(n_topics=2, n_systems=2, n_docs=30, depth=10, seed=3)
        >>> print(evaluate(RankData.build(col.runs, col.qrels), "P@5").summary())  # doctest: +ELLIPSIS
        Mean over the topics each run has results for (2 topics evaluated)
        run...P@5
        ...
        """
        header = ["run", *(str(m) for m in self.measures)]
        rows = [[name, *(f"{v:.{digits}f}" for v in col)] for name, col in zip(self.systems, self.mean().T,
                                                                                  strict=True)]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

        def line(cells: list[str]) -> str:
            return "  ".join([cells[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(cells[1:], widths[1:],
                                                                                       strict=True))])

        return "\n".join([f"Mean over the topics each run has results for ({len(self.topics)} topics evaluated)",
                          line(header), *(line(r) for r in rows)])

    def __repr__(self) -> str:
        return (f"Evaluation(measures={[str(m) for m in self.measures]}, systems={len(self.systems)}, "
                f"topics={len(self.topics)})")


def evaluate(data: RankData, measures: str | Measure | Iterable[str | Measure] = ("AP", "P@10", "nDCG@10")
             ) -> Evaluation:
    """Compute measures exactly as trec_eval 9.x does.

    Parameters
    ----------
    data : RankData
        Runs aligned with judgments (:meth:`RankData.build`); its topics are the evaluated topics.
    measures : str, Measure or iterable
        ``"AP,P@10"``, one :class:`Measure`, or a list of names / measures.

    Returns
    -------
    Evaluation
        Per-topic values and, via :meth:`Evaluation.mean`, trec_eval's ``all`` values.

    Notes
    -----
    Conventions, all trec_eval's: documents ranked by score descending, ties by docno descending
    (done when the runs are read); a document absent from the qrels is nonrelevant; a qrels grade
    >= the relevance level is relevant; a negative grade marks a document "in the pool but not
    judged": nonrelevant for AP, P@k, nDCG …, skipped by bpref, counted as pooled by infAP and removed
    from condensed lists. R (``num_rel``) counts relevant documents retrieved or not; every measure
    but nDCG is 0 on a topic with R = 0 (nDCG can be positive there when grades below the relevance
    level carry gain).

    References
    ----------
    .. [1] trec_eval 9.x, https://github.com/usnistgov/trec_eval.

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
    ms = tuple(TREC_EVAL.require(m, "measures") for m in parse_measures(measures))
    values = np.zeros((len(ms), len(data.systems), len(data.topics)))
    has = np.zeros((len(data.systems), len(data.topics)), dtype=bool)
    for t, tr in enumerate(data):
        has[:, t] = tr.has_results
        inputs = RankingInputs.from_topic(tr)
        for i, m in enumerate(ms):
            values[i, :, t] = measure_values(inputs, m)
    return Evaluation(ms, data.systems, data.topics, values, has)
