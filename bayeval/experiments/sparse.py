"""The sparse-label study: one judged relevant document per topic, as in an MS MARCO-style dev set.

From a collection with deep judgments, each trial keeps one relevant judgment per topic, chosen at random
(a sparse-label set: nothing judged nonrelevant), and evaluates every run two ways:

* **trec_eval on the sparse labels** — every other document counts as nonrelevant;
* **bayeval** — a relevance model fitted to the sparse labels (by default the sparse-label model,
  :mod:`bayeval.relevance.sparse_labels`) gives each unjudged document a probability of
  relevance; the expected measure ranks the runs and P(Δ<0) says how sure each pairwise call is.

Both are scored against the deep judgments on the same topics: Kendall's τ of the run ranking and the RMSE of
the mean measure; bayeval's P(Δ<0) with proper scores (Brier, log score), reliability bins with Wilson
intervals, and the share and accuracy of calls at ≥ 0.95 and ≥ 0.99 (:mod:`bayeval.stats.forecast`).
Report: docs/sparse-labels.md.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.cluster import dask_client
from bayeval.data.qrels import Qrels, TopicJudgments
from bayeval.data.rankcube import RankCube
from bayeval.data.rankdata import RankData
from bayeval.data.run import RunSet
from bayeval.errors import BayevalInputError
from bayeval.expected import compare_systems, expected_measures
from bayeval.expected.cube import cells_from_rankdata, expected_reciprocal_rank_pairs
from bayeval.expected.cube_ap import CUBE_AP_METHODS
from bayeval.expected.cube_measures import CUBE_PAIRS, expected_cube_pairs
from bayeval.measures import Measure, evaluate
from bayeval.measures.cube import evaluate_cube
from bayeval.relevance import estimate_probabilities
from bayeval.stats.agreement import kendall_tau, rmse
from bayeval.stats.forecast import forecast_scores, reliability_bins

__all__ = ["SparseStudy", "run_sparse_study", "sparse_labels"]


def sparse_labels(qrels: Qrels, rng: np.random.Generator) -> Qrels:
    """Keep one relevant judgment per topic, chosen uniformly at random; topics with none are dropped.

    Examples
    --------
    >>> q = Qrels.from_frame(pd.DataFrame({"topic": ["1", "1", "1", "2"], "docno": ["a", "b", "c", "d"],
    ...                                    "grade": [1, 0, 2, 0]}))
    >>> s = sparse_labels(q, np.random.default_rng(0))
    >>> s.topics, len(s["1"]), bool(s["1"].grades[0] >= 1)
    (('1',), 1, True)
    """
    kept = {}
    for t in qrels.topics:
        tj = qrels[t]
        rel = np.flatnonzero(np.asarray(tj.grades) >= qrels.relevance_level)
        if len(rel):
            i = int(rng.choice(rel))
            kept[t] = TopicJudgments(np.asarray(tj.docnos[i : i + 1], dtype=object),
                                     np.asarray(tj.grades[i : i + 1], dtype=np.int64))
    if not kept:
        raise BayevalInputError("qrels: no topic has a relevant judgment")
    return Qrels(kept, qrels.relevance_level)


@dataclass(frozen=True, eq=False)
class SparseStudy:
    """Results of :func:`run_sparse_study`.

    Attributes
    ----------
    measure, model : str
    trials : pandas.DataFrame
        One row per trial: ``tau_trec_eval``, ``tau_bayeval``, ``rmse_trec_eval``, ``rmse_bayeval``, ``topics``.
    pairs : pandas.DataFrame
        One row per trial and pair: ``p_less`` (bayeval's P(Δ<0) on the sparse labels), ``true_delta`` (Δ on
        the deep judgments), ``sparse_delta`` (Δ of trec_eval on the sparse labels).
    """

    measure: str
    model: str
    trials: pd.DataFrame
    pairs: pd.DataFrame

    def scores(self):
        """:class:`~bayeval.stats.forecast.ForecastScores` of bayeval's P(Δ<0) over every trial and pair."""
        return forecast_scores(self.pairs["p_less"].to_numpy(), self.pairs["true_delta"].to_numpy())

    def reliability(self) -> pd.DataFrame:
        """Reliability bins (Wilson intervals) of bayeval's P(Δ<0)."""
        return reliability_bins(self.pairs["p_less"].to_numpy(), self.pairs["true_delta"].to_numpy())

    def summary(self) -> str:
        t = self.trials.mean(numeric_only=True)
        sparse_right = float(np.mean(np.sign(self.pairs["sparse_delta"]) == np.sign(self.pairs["true_delta"])))
        return (f"{self.measure}, model {self.model}, {len(self.trials)} trial(s), {int(t['topics'])} topics\n"
                f"Kendall τ vs deep: trec_eval on sparse labels {t['tau_trec_eval']:.3f}, "
                f"bayeval expected {t['tau_bayeval']:.3f}\n"
                f"RMSE vs deep mean: trec_eval {t['rmse_trec_eval']:.4f}, bayeval {t['rmse_bayeval']:.4f}\n"
                f"pairs: trec_eval-on-sparse sign right {100 * sparse_right:.1f}%; bayeval {self.scores().summary()}")


def _reciprocal_rank_cutoff(measure: str) -> int | None:
    """k of ``"RR@k"``/``"MRR@k"`` (computed on the rank cube, docs/scale.md); None for other measures."""
    spec = Measure.parse(measure)
    return spec.cutoff if spec.name == "RR" and spec.rel is None and not spec.condensed else None


def _trial_reciprocal_rank(runs, deep, sparse, rng, k, model, max_pairs, depth):
    """A trial for RR@k: trec_eval's RR@k on the cube and ΔMRR@k with the model's posterior draws of p for
    every pair (:func:`~bayeval.expected.cube.expected_reciprocal_rank_pairs`, law of total variance)."""
    cube = RankCube.from_runs(runs, sparse, depth=k if depth is None else min(k, depth))
    data = RankData.build(runs, sparse, depth=depth, topics=cube.topics)
    deep_kept = Qrels({t: deep[t] for t in cube.topics}, deep.relevance_level)
    truth = evaluate_cube(RankCube.from_runs(runs, deep_kept, depth=cube.docs.shape[2]), f"RR@{k}").mean()[0]
    trec = evaluate_cube(cube, f"RR@{k}").mean()[0]
    est = estimate_probabilities(data, model, seed=int(rng.integers(2**31)))
    cells = cells_from_rankdata(cube, data, est.arrays_for("delta"))
    ia, ib = np.triu_indices(len(cube.systems), k=1)
    if max_pairs is not None and max_pairs < len(ia):
        keep = np.sort(rng.choice(len(ia), size=max_pairs, replace=False))
        ia, ib = ia[keep], ib[keep]
    res = expected_reciprocal_rank_pairs(cube, cells, cutoff=k, pairs=np.column_stack([ia, ib]))
    return data, truth, trec, res.all_expected, ia, ib, res.p_less


def _trial(i: int, runs: RunSet, deep: Qrels, seed: int, measure: str, model: str, method: str,
           max_pairs: int | None, depth: int | None) -> tuple[dict, pd.DataFrame]:
    """One trial: the sparse labels of ``np.random.default_rng([seed, i])``, both evaluations, their scores."""
    rng = np.random.default_rng([seed, i])
    t0 = time.perf_counter()
    sparse = sparse_labels(deep, rng)
    k = _reciprocal_rank_cutoff(measure)
    if k is not None:
        data, truth, trec, bayes, ia, ib, p_less = _trial_reciprocal_rank(runs, deep, sparse, rng, k, model,
                                                                          max_pairs, depth)
        return _trial_frames(i, data, truth, trec, bayes, ia, ib, p_less, t0)
    data = RankData.build(runs, sparse, depth=depth)
    truth = evaluate(RankData.build(runs, deep, topics=data.topics, depth=depth), measure).mean()[0]
    trec = evaluate(data, measure).mean()[0]
    est = estimate_probabilities(data, model, seed=int(rng.integers(2**31)))
    bayes = expected_measures(data, est, measures=(measure,), method=method).all_expected[0]
    ia, ib = np.triu_indices(len(data.systems), k=1)
    if max_pairs is not None and max_pairs < len(ia):
        keep = np.sort(rng.choice(len(ia), size=max_pairs, replace=False))
        ia, ib = ia[keep], ib[keep]
    spec = Measure.parse(measure)
    if method in CUBE_AP_METHODS and CUBE_PAIRS.supports(spec):
        # every pair on the rank cube (docs/scale.md): the per-topic path's numbers, no Python loop over topics
        cube = RankCube.from_runs(runs, sparse, depth=depth)
        cells, pairs = cells_from_rankdata(cube, data, est.arrays_for(method)), np.column_stack([ia, ib])
        p_less = expected_cube_pairs(cube, cells, spec, method=method, pairs=pairs).p_less
    else:
        p_less = compare_systems(data, est, pairs=list(zip(ia.tolist(), ib.tolist(), strict=True)),
                                 measure=measure, method=method).all_p_less
    return _trial_frames(i, data, truth, trec, bayes, ia, ib, p_less, t0)


def _trial_frames(i, data, truth, trec, bayes, ia, ib, p_less, t0) -> tuple[dict, pd.DataFrame]:
    row = {"trial": i, "topics": len(data.topics), "tau_trec_eval": kendall_tau(trec, truth),
           "tau_bayeval": kendall_tau(bayes, truth), "rmse_trec_eval": rmse(trec, truth),
           "rmse_bayeval": rmse(bayes, truth), "seconds": time.perf_counter() - t0}
    pairs = pd.DataFrame({"trial": i, "run_a": np.array(data.systems)[ia], "run_b": np.array(data.systems)[ib],
                          "p_less": p_less, "true_delta": truth[ia] - truth[ib],
                          "sparse_delta": trec[ia] - trec[ib]})
    return row, pairs


def run_sparse_study(runs: RunSet, deep: Qrels, *, trials: int = 3, seed: int = 0, measure: str = "AP",
                     model: str = "sparse", method: str = "delta", max_pairs: int | None = None,
                     depth: int | None = None, scheduler=None, connect_timeout: float = 30.0) -> SparseStudy:
    r"""Run the sparse-label study (module notes) on ``runs`` judged by ``deep``.

    Parameters
    ----------
    runs : RunSet
    deep : Qrels
        The deep judgments (the truth).
    trials : int
        Independent draws of the sparse labels; trial ``i`` uses ``np.random.default_rng([seed, i])``.
    measure : str
        A measure both :func:`~bayeval.measures.evaluate` and :func:`~bayeval.expected.compare_systems` know
        (``"AP"``, ``"P@10"``, ``"nDCG@10"``, …), or ``"RR@k"`` (MS MARCO's MRR@10): computed on the rank
        cube, ΔMRR@k with the model's posterior draws for every pair (docs/scale.md; ``method`` unused). ``"AP"``,
        ``"nDCG@k"`` and ``"recall@k"`` (with ``method`` delta, paper or exact) take the rank cube for the pairs
        too (:mod:`bayeval.expected.cube_ap`, :mod:`~bayeval.expected.cube_ndcg`,
        :mod:`~bayeval.expected.cube_recall`: compare_systems' numbers).
    model : str
        Relevance model for :func:`~bayeval.relevance.estimate_probabilities`; default ``"sparse"``, the
        sparse-label model (:mod:`bayeval.relevance.sparse_labels`; ``studies/models/sparse-trec.toml`` on a
        deep-pool ad hoc collection).
    method : str
        Moment method of :func:`~bayeval.expected.compare_systems`.
    max_pairs : int, optional
        Score a random subset of this many pairs per trial (all pairs by default).
    depth : int, optional
        Evaluate every run on its top ``depth`` documents, for the truth too (default: whole runs).
    scheduler : str or distributed.Client, optional
        A Dask scheduler address or client: each trial is one task (the same numbers as locally, since a trial
        depends only on ``seed`` and its index).
    connect_timeout : float
        Seconds to wait for the scheduler.

    Returns
    -------
    SparseStudy
    """
    if not isinstance(trials, (int, np.integer)) or trials < 1:
        raise BayevalInputError(f"trials: must be a positive integer, got {trials!r}")
    args = (runs, deep, seed, measure, model, method, max_pairs, depth)
    if scheduler is None:
        results = [_trial(i, *args) for i in range(trials)]
    else:
        with dask_client(scheduler, connect_timeout) as client:
            results = client.gather([client.submit(_trial, i, *args, pure=False) for i in range(trials)])
    rows = [r for r, _ in results]
    pair_frames = [f for _, f in results]
    return SparseStudy(measure, getattr(model, "name", str(model)), pd.DataFrame(rows),
                       pd.concat(pair_frames, ignore_index=True))
