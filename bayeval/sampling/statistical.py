"""statAP and statP@k from judgments sampled with known inclusion probabilities (:func:`stat_measures`).

Aslam, Pavlu & Yilmaz (SIGIR 2006), "A statistical method for system evaluation using incomplete judgments":
Horvitz-Thompson estimates of R, of precision at k and of AP's numerator from documents sampled independently
(Poisson sampling: each document in or out on its own draw), with design-based variance estimates
(docs/sampling.md). The judgments are a prels file (:func:`bayeval.io.read_prels`) or the sampled part of a
stratified sample (:meth:`bayeval.data.StratifiedSample.judged`), each with its inclusion probability.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from bayeval.data.qrels import Qrels
from bayeval.data.rankdata import RankData
from bayeval.data.run import Run, RunSet
from bayeval.errors import BayevalInputError
from bayeval.sampling._stat_kernels import stat_topic

__all__ = ["StatEvaluation", "stat_measures"]


@dataclass(frozen=True)
class StatEvaluation:
    """statAP / statP@k estimates with their variance estimates.

    Attributes
    ----------
    systems, topics : tuple of str
    measures : tuple of str
        ``statAP``, ``statP{k}`` …
    values, variances : dict of str to ndarray, shape (S, T)
        Per-topic estimates and variance estimates (NaN where the run has no result for the topic).
    r_hat, r_var : ndarray, shape (T,)
        Estimated number of relevant documents per topic and its variance estimate.
    """

    systems: tuple[str, ...]
    topics: tuple[str, ...]
    measures: tuple[str, ...]
    values: dict[str, np.ndarray]
    variances: dict[str, np.ndarray]
    r_hat: np.ndarray
    r_var: np.ndarray

    def mean(self, measure: str) -> tuple[np.ndarray, np.ndarray]:
        """``(mean, variance of the mean)`` over the topics each run has results for, shape (S,) each
        (topics are sampled independently, so the variances add: ``Var = Σ_t Var_t / T²``)."""
        vals, var = self.values[measure], self.variances[measure]
        has = ~np.isnan(vals)
        n = np.maximum(has.sum(axis=1), 1)
        return np.where(has, vals, 0.0).sum(axis=1) / n, np.where(has, var, 0.0).sum(axis=1) / (n * n)

    def interval(self, measure: str, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Normal ``level`` interval of each run's mean (estimate ± z · standard error)."""
        if not 0 < level < 1:
            raise BayevalInputError(f"level: must lie in (0, 1), got {level!r}")
        m, v = self.mean(measure)
        h = stats.norm.ppf(0.5 + level / 2) * np.sqrt(v)
        return m - h, m + h

    def to_frame(self, per_topic: bool = False) -> pd.DataFrame:
        """Long frame ``run, topic, measure, value, se`` (``topic == "all"``: means and their standard errors)."""
        rows = []
        for m in self.measures:
            mean, var = self.mean(m)
            for s, name in enumerate(self.systems):
                if per_topic:
                    for t, topic in enumerate(self.topics):
                        if not np.isnan(self.values[m][s, t]):
                            rows.append((name, topic, m, self.values[m][s, t], np.sqrt(self.variances[m][s, t])))
                rows.append((name, "all", m, mean[s], np.sqrt(var[s])))
        return pd.DataFrame(rows, columns=["run", "topic", "measure", "value", "se"])


def stat_measures(runs: RunSet | Sequence[Run], judgments: Qrels, *, cutoffs: tuple[int, ...] = (10, 30, 100),
                  depth: int = 1000) -> StatEvaluation:
    """statAP and statP@k, with variance estimates, of every run.

    Parameters
    ----------
    runs : RunSet or sequence of Run
    judgments : Qrels
        The sampled documents with their grades and inclusion probabilities (``judgments[t].inclusion``);
        documents absent from it are unsampled (their relevance is inferred, never assumed).
    cutoffs : tuple of int, default (10, 30, 100)
    depth : int, default 1000

    Raises
    ------
    BayevalInputError
        When the judgments carry no inclusion probabilities.
    """
    runs = runs if isinstance(runs, RunSet) else RunSet(tuple(runs))
    if any(tj.inclusion is None for tj in judgments.topic_judgments.values()):
        raise BayevalInputError("judgments: statAP needs inclusion probabilities (read a prels file)")
    if not isinstance(depth, (int, np.integer)) or depth < 1:
        raise BayevalInputError(f"depth: must be a positive integer, got {depth!r}")
    cutoffs = tuple(int(k) for k in cutoffs)
    if any(k < 1 for k in cutoffs):
        raise BayevalInputError(f"cutoffs: must be positive integers, got {cutoffs!r}")
    data = RankData.build(runs, judgments, depth=int(depth))
    S, T = len(runs), len(data.topics)
    measures = ("statAP", *[f"statP{k}" for k in cutoffs])
    values = {m: np.full((S, T), np.nan) for m in measures}
    variances = {m: np.full((S, T), np.nan) for m in measures}
    r_hat, r_var = np.zeros(T), np.zeros(T)
    level = judgments.relevance_level
    for ti, tr in enumerate(data):
        tj = judgments[tr.topic]
        pos = pd.Index(tj.docnos).get_indexer(tr.docnos)
        inside = pos >= 0
        pi = np.where(inside, tj.inclusion[np.maximum(pos, 0)], 1.0)
        rel = inside & (tj.grades[np.maximum(pos, 0)] >= level)
        x_doc = rel.astype(np.float64)
        y_doc = x_doc / pi
        v_doc = np.where(inside, (1.0 - pi) / (pi * pi), 0.0)
        r_hat[ti] = float(np.sum(tj.inclusion ** -1.0 * (tj.grades >= level)))
        r_var[ti] = float(np.sum((1 - tj.inclusion) / tj.inclusion ** 2 * (tj.grades >= level)))
        res = stat_topic(tr.ranked_values(y_doc, 0.0), tr.ranked_values(x_doc, 0.0), tr.ranked_values(v_doc, 0.0),
                         tr.lengths.astype(np.int64), r_hat[ti], r_var[ti], cutoffs)
        ok = tr.has_results
        for m in measures:
            values[m][ok, ti] = res[m][ok]
            variances[m][ok, ti] = res[f"{m}_var"][ok]
    return StatEvaluation(tuple(runs.names), tuple(data.topics), measures, values, variances, r_hat, r_var)
