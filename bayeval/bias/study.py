"""Biased-pool studies (Büttcher et al. 2007): leave-one-group-out and manual-only removal, with repairs.

Both studies score runs twice — on the original qrels and on *reduced* qrels that lack what some runs
alone contributed — and report how far each measure moves: the average and maximum change of a run's
rank, the RMS error of its score, the share of runs whose score changes significantly (paired t-test over
topics) and Kendall's τ between the rankings (the paper's Tables 2 and 3). Given predictors, the same
statistics are reported for *repaired* scores (Tables 7 and 8): measures on completed qrels
(``completed:<name>``) and, for predictors with probabilities, bayeval's expected measures
(``expected:<name>``).

- :func:`leave_one_group_out` — for each group G remove the judged documents only G contributed and score
  G's runs; each run's new score is ranked among the other runs' original scores.
- :func:`manual_only` — remove the documents only manual runs contributed and re-score every run; ranks,
  RMS error and significance are over the manual runs, τ over all runs and over the manual runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.bias.completion import Predictor, complete_qrels, unjudged_candidates
from bayeval.bias.expected import expected_scores
from bayeval.bias.pool import Contributions, RunGroups, _check_depth, pooled_runs
from bayeval.bias.reduce import automatic_only_qrels, leave_group_out_qrels
from bayeval.bias.statistics import rank_among, ranks
from bayeval.data.qrels import Qrels
from bayeval.data.rankdata import RankData
from bayeval.data.run import RunSet
from bayeval.errors import BayevalInputError
from bayeval.measures import evaluate, parse_measures
from bayeval.progress import track
from bayeval.stats import kendall_tau, paired_pvalues, rmse

__all__ = ["DEFAULT_MEASURES", "SCENARIOS", "BiasStudy", "leave_one_group_out", "manual_only"]

DEFAULT_MEASURES = ("RR", "P@10", "P@20", "nDCG@20", "AP", "bpref", "P@20(j)", "RankEff")
"""The measures of the paper's Tables 2 and 3 (RR is trec_eval's MRR per topic)."""

SCENARIOS = ("leave-one-group-out", "manual-only")
_SIGNIFICANCE = 0.05


@dataclass(frozen=True, eq=False)
class BiasStudy:
    """Scores of runs on the original and on biased (and repaired) qrels, with the paper's statistics.

    Attributes
    ----------
    scenario : {"leave-one-group-out", "manual-only"}
    measures : tuple of str
    methods : tuple of str
        ``"reduced"`` (the measure on the reduced qrels), ``"completed:<predictor>"``,
        ``"expected:<predictor>"``.
    runs, groups, kinds : tuple of str
        The studied runs, each run's group and type (``automatic`` / ``manual``).
    topics : tuple of str
    original : ndarray, shape (M, S, T)
        Per-topic values on the original qrels.
    scores : ndarray, shape (K, M, S, T)
        Per-topic values under each method (NaN where a method does not define the measure, e.g. an
        expected bpref).
    has_results : ndarray of bool, shape (S, T)
    reductions : pandas.DataFrame
        One row per reduced qrels: ``removed_from`` (the group, or ``manual``), judged and relevant
        documents before and after.
    pool_depth : int
    """

    scenario: str
    measures: tuple[str, ...]
    methods: tuple[str, ...]
    runs: tuple[str, ...]
    groups: tuple[str, ...]
    kinds: tuple[str, ...]
    topics: tuple[str, ...]
    original: np.ndarray
    scores: np.ndarray
    has_results: np.ndarray
    reductions: pd.DataFrame
    pool_depth: int

    def __post_init__(self) -> None:
        if self.scenario not in SCENARIOS:
            raise BayevalInputError(f"scenario: must be one of {SCENARIOS}, got {self.scenario!r}")
        m, s, t = len(self.measures), len(self.runs), len(self.topics)
        orig = np.array(self.original, dtype=np.float64)
        sc = np.array(self.scores, dtype=np.float64)
        has = np.array(self.has_results, dtype=bool)
        if orig.shape != (m, s, t) or sc.shape != (len(self.methods), m, s, t) or has.shape != (s, t):
            raise BayevalInputError("original, scores, has_results: shapes disagree with measures, runs, topics")
        if not len(self.groups) == len(self.kinds) == s:
            raise BayevalInputError("groups, kinds: one entry per run")
        for name, arr in (("original", orig), ("scores", sc), ("has_results", has)):
            arr.flags.writeable = False
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "reductions", self.reductions.copy())

    # ------------------------------------------------------------------ derived values
    def _mean(self, values: np.ndarray) -> np.ndarray:
        """Mean over the last (topic) axis, over the topics each run has results for."""
        n = np.maximum(self.has_results.sum(axis=1), 1)
        return np.where(self.has_results, values, 0.0).sum(axis=-1) / n

    def mean_original(self) -> np.ndarray:
        """(M, S) mean over the topics each run has results for, on the original qrels."""
        return self._mean(self.original)

    def mean_scores(self) -> np.ndarray:
        """(K, M, S) the same under each method (NaN where undefined)."""
        return self._mean(self.scores)

    @property
    def focus(self) -> np.ndarray:
        """Runs the rank, RMS and significance statistics are over: every run (leave-one-group-out) or
        the manual runs (manual-only)."""
        if self.scenario == "manual-only":
            return np.array([k == "manual" for k in self.kinds])
        return np.ones(len(self.runs), dtype=bool)

    def ranks_original(self) -> np.ndarray:
        """(M, S) rank of every run on the original qrels (1 = best; ties share the better rank)."""
        return np.stack([ranks(x) for x in self.mean_original()])

    def ranks_new(self) -> np.ndarray:
        """(K, M, S) rank under each method: among the other runs' original scores (leave-one-group-out)
        or in the re-scored ranking of all runs (manual-only)."""
        orig = self.mean_original()
        new = self.mean_scores()
        out = np.zeros(new.shape, dtype=np.int64)
        for k in range(new.shape[0]):
            for m in range(new.shape[1]):
                if self.scenario == "leave-one-group-out":
                    out[k, m] = rank_among(new[k, m], orig[m])
                else:
                    out[k, m] = ranks(new[k, m])
        return out

    def p_values(self) -> np.ndarray:
        """(K, M, S) two-sided paired t-test over a run's topics, original vs method (NaN where the method has
        no scores); p = 1 where the test is undefined (no change, or fewer than two topics)."""
        out = np.full(self.scores.shape[:3], np.nan)
        for k in range(self.scores.shape[0]):
            for m in range(self.scores.shape[1]):
                if not np.isnan(self.scores[k, m]).any():
                    p = paired_pvalues(self.scores[k, m], self.original[m], mask=self.has_results)
                    out[k, m] = np.where(np.isnan(p), 1.0, p)
        return out

    # ------------------------------------------------------------------ tables
    def to_frame(self) -> pd.DataFrame:
        """Tidy table, one row per (method, measure, run): ``method, measure, run, group, type, original,
        new, shift, rank_original, rank_new, rank_change`` (positive = the run moves up) and ``p_value``.
        Methods that do not define a measure have no rows for it."""
        orig, new = self.mean_original(), self.mean_scores()
        r0, r1, pv = self.ranks_original(), self.ranks_new(), self.p_values()
        rows = []
        for k, method in enumerate(self.methods):
            for m, measure in enumerate(self.measures):
                if np.isnan(new[k, m]).any():
                    continue
                for s, run in enumerate(self.runs):
                    rows.append((method, measure, run, self.groups[s], self.kinds[s], orig[m, s], new[k, m, s],
                                 new[k, m, s] - orig[m, s], int(r0[m, s]), int(r1[k, m, s]),
                                 int(r0[m, s] - r1[k, m, s]), pv[k, m, s]))
        return pd.DataFrame(rows, columns=["method", "measure", "run", "group", "type", "original", "new", "shift",
                                           "rank_original", "rank_new", "rank_change", "p_value"])

    def table(self) -> pd.DataFrame:
        r"""The paper's Table 2 / 3 (and 7 / 8) per (method, measure).

        Columns: ``avg_rank_change`` (mean absolute rank change of the focus runs), ``max_up`` /
        ``max_down`` (largest move up / down), ``rms_error`` :math:`\sqrt{\frac1N\sum(o-n)^2}`,
        ``mean_shift`` (mean of n − o: the sign of the bias), ``significant`` (share of focus runs with
        p < 0.05), ``tau_all`` (Kendall's τ between the original scores and the new scores of all runs —
        for leave-one-group-out every run scored as if it had been left out), and for manual-only
        ``tau_manual`` (manual runs only).
        """
        orig, new = self.mean_original(), self.mean_scores()
        r0, r1, pv = self.ranks_original(), self.ranks_new(), self.p_values()
        f = self.focus
        rows = []
        for k, method in enumerate(self.methods):
            for m, measure in enumerate(self.measures):
                if np.isnan(new[k, m]).any():
                    continue
                change = (r0[m] - r1[k, m])[f]
                row = {"method": method, "measure": measure, "runs": int(f.sum()),
                       "avg_rank_change": float(np.abs(change).mean()),
                       "max_up": int(max(change.max(), 0)), "max_down": int(max(-change.min(), 0)),
                       "rms_error": rmse(orig[m, f], new[k, m, f]),
                       "mean_shift": float(np.mean(new[k, m, f] - orig[m, f])),
                       "significant": float(np.mean(pv[k, m, f] < _SIGNIFICANCE)),
                       "tau_all": kendall_tau(orig[m], new[k, m], ties="agree")}
                if self.scenario == "manual-only":
                    row["tau_manual"] = kendall_tau(orig[m, f], new[k, m, f], ties="agree")  # NaN below 2 runs
                rows.append(row)
        return pd.DataFrame(rows)

    def summary(self, digits: int = 4) -> str:
        """The :meth:`table` as text, with what was removed."""
        red = self.reductions
        head = (f"{self.scenario}: {len(self.runs)} runs ({int(self.focus.sum())} studied), {len(self.topics)} "
                f"topics, pool depth {self.pool_depth}; removed {int((red.judged - red.judged_after).sum())} "
                f"judgments ({int((red.relevant - red.relevant_after).sum())} relevant) in {len(red)} reduced qrels")
        return head + "\n" + self.table().to_string(index=False, float_format=lambda v: f"{v:.{digits}f}")

    def __repr__(self) -> str:
        return (f"BiasStudy({self.scenario!r}, runs={len(self.runs)}, measures={list(self.measures)}, "
                f"methods={list(self.methods)})")


# ---------------------------------------------------------------------------------------------- runners

def _runset(runs) -> RunSet:
    if isinstance(runs, RunSet):
        return runs
    try:
        return RunSet.of(runs)
    except Exception:  # noqa: BLE001 — any failure means the argument is not a collection of runs
        raise BayevalInputError(f"runs: expected a RunSet or a sequence of Run, got {type(runs).__name__}") from None


def _check_predictors(predictors) -> tuple:
    predictors = tuple(predictors or ())
    names = []
    for p in predictors:
        if not hasattr(p, "predict") or not isinstance(getattr(p, "name", None), str):
            raise BayevalInputError(f"predictors: {p!r} has no name/predict (see bayeval.bias.Predictor)")
        names.append(p.name)
    if len(set(names)) != len(names):
        raise BayevalInputError(f"predictors: names must differ, got {names}")
    return predictors


def _probability_arrays(data: RankData, predictions) -> list[np.ndarray]:
    """Per topic of ``data``: the predicted p of candidate documents, 0 for every other unjudged one."""
    out = []
    for tr in data:
        p = np.zeros(tr.n_docs)
        pred = predictions.get(tr.topic)
        if pred is not None and len(pred.docnos):
            pos = pd.Index(tr.docnos).get_indexer(pred.docnos)
            ok = pos >= 0
            p[pos[ok]] = pred.probability[ok]
        out.append(p)
    return out


def _study(scenario: str, runs, qrels: Qrels, groups: RunGroups, reductions, *, measures, pool_depth: int,
           study_runs, predictors: Sequence[Predictor], expected_method: str, progress) -> BiasStudy:
    runs = _runset(runs)
    if not isinstance(qrels, Qrels):
        raise BayevalInputError(f"qrels: expected a Qrels, got {type(qrels).__name__}")
    if not isinstance(groups, RunGroups):
        raise BayevalInputError(f"groups: expected a RunGroups, got {type(groups).__name__}")
    pool_depth = _check_depth(pool_depth)
    ms = [str(m) for m in parse_measures(measures)]
    predictors = _check_predictors(predictors)
    groups.check_runs(runs.names)
    full = RankData.build(runs, qrels)
    if study_runs is None:
        study_runs = pooled_runs(full, pool_depth)
    study_runs = tuple(str(r) for r in study_runs)
    unknown = [r for r in study_runs if r not in runs.names]
    if unknown:
        raise BayevalInputError(f"study_runs: unknown run(s) {unknown[:5]}")
    if len(study_runs) < 2:
        raise BayevalInputError(f"study_runs: need at least two runs to rank, got {len(study_runs)} "
                                f"(runs fully judged to depth {pool_depth}: pass study_runs= or a smaller depth)")
    topics = full.topics
    base = RankData.build(runs.select(study_runs), qrels, topics=topics)
    original = evaluate(base, ms).values
    methods = ["reduced"]
    for p in predictors:
        methods.append(f"completed:{p.name}")
        methods.append(f"expected:{p.name}")
    scores = np.full((len(methods), len(ms), len(study_runs), len(topics)), np.nan)
    has_expected = np.zeros(len(methods), dtype=bool)
    index = {r: i for i, r in enumerate(study_runs)}
    red_rows = []
    todo = list(reductions(full, study_runs))
    for label, reduced, rescore in track(todo, total=len(todo), description=scenario,
                                         enabled=None if progress is None else bool(progress)):
        red_rows.append((label, *_counts(qrels), *_counts(reduced)))
        if not rescore:
            continue
        idx = [index[r] for r in rescore]
        sub = runs.select(rescore)
        data = RankData.build(sub, reduced, topics=topics)
        scores[0][:, idx, :] = evaluate(data, ms).values
        if not predictors:
            continue
        model_data = RankData.build(runs, reduced, depth=pool_depth, topics=topics)
        candidates = unjudged_candidates(model_data, rescore, pool_depth)
        for j, predictor in enumerate(predictors):
            predictions = predictor.predict(model_data, candidates)
            completed = complete_qrels(reduced, predictions)
            scores[1 + 2 * j][:, idx, :] = evaluate(RankData.build(sub, completed, topics=topics), ms).values
            if all(p.probability is not None for p in predictions.values()):
                has_expected[2 + 2 * j] = True
                scores[2 + 2 * j][:, idx, :] = expected_scores(data, _probability_arrays(data, predictions), ms,
                                                               method=expected_method)
    keep = [k for k, method in enumerate(methods) if not method.startswith("expected:") or has_expected[k]]
    red = pd.DataFrame(red_rows, columns=["removed_from", "judged", "relevant", "judged_after", "relevant_after"])
    return BiasStudy(scenario, tuple(ms), tuple(methods[k] for k in keep), study_runs,
                     tuple(groups.group[r] for r in study_runs), tuple(groups.kind[r] for r in study_runs),
                     topics, original, scores[keep], np.stack([tr.has_results for tr in base], axis=1),
                     red, pool_depth)


def _counts(qrels: Qrels) -> tuple[int, int]:
    return (sum(qrels.num_judged(t) for t in qrels.topics), sum(qrels.num_rel(t) for t in qrels.topics))


def leave_one_group_out(runs, qrels: Qrels, contributions: Contributions, groups: RunGroups, *,
                        measures=DEFAULT_MEASURES, pool_depth: int = 100, study_runs: Sequence[str] | None = None,
                        predictors: Sequence[Predictor] = (), expected_method: str = "exact",
                        progress: bool | None = None) -> BiasStudy:
    r"""Leave-one-group-out: score each group's runs on the qrels without that group's unique documents.

    For each group G with studied runs, the judged documents that only G contributed are removed
    (:func:`~bayeval.bias.reduce.leave_group_out_qrels`) and G's runs are scored on what is left; each
    run's new score is ranked among the other runs' original scores (the situation of a new system
    compared with published results). With ``predictors``, the documents G's runs retrieve within the
    pool depth that are now unjudged are predicted from the remaining judgments (every run enters the
    predictor's data): ``completed:<name>`` scores on the completed qrels, ``expected:<name>`` the
    expected measures from the predicted probabilities.

    Parameters
    ----------
    runs : RunSet or sequence of Run
        All runs (the predictors see all of them).
    qrels : Qrels
        The original judgments.
    contributions : Contributions
        Which groups contributed each judged document (:func:`~bayeval.bias.pool.read_contributions` or
        :func:`~bayeval.bias.pool.contributions_from_runs`).
    groups : RunGroups
        Group and type of every run.
    measures : str or sequence
        Default: the paper's MRR, P@10, P@20, nDCG@20, AP, bpref, P@20(j), RankEff.
    pool_depth : int
        Depth of the pool (TREC-8: 100); also how deep predictions reach.
    study_runs : sequence of str, optional
        Runs to study (default: :func:`~bayeval.bias.pool.pooled_runs` — runs fully judged to the pool
        depth, as the paper's 42 runs).
    predictors : sequence of Predictor
        :class:`~bayeval.bias.completion.ModelPredictor`,
        :class:`~bayeval.bias.classifiers.TextClassifierPredictor`, …
    expected_method : {"exact", "delta", "paper"}
        Moments of AP under uncertain relevance (see :func:`bayeval.expected.expected_measures`).
    progress : bool, optional
        Progress bar (default: on a terminal).

    Returns
    -------
    BiasStudy

    Notes
    -----
    Table 2 of the paper: average absolute rank change, maximum move up/down, RMS error
    :math:`\sqrt{\frac1N\sum_i (o_i - n_i)^2}` over all studied runs, share of runs whose per-topic
    scores differ significantly (paired t-test, p < 0.05); see :meth:`BiasStudy.table`.

    References
    ----------
    .. [1] S. Büttcher, C. L. A. Clarke, P. C. K. Yeung, I. Soboroff, "Reliable information retrieval
       evaluation with incomplete and biased judgements", SIGIR 2007, §5.2–5.3, Tables 2 and 7.
    .. [2] J. Zobel, "How reliable are the results of large-scale information retrieval experiments?",
       SIGIR 1998.

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> from bayeval.bias.pool import contributions_from_runs
    >>> col = make_collection(n_topics=3, n_systems=4, n_docs=60, depth=30, judged_depth=10, seed=1)
    >>> g = RunGroups.singletons(col.runs.names)
    >>> contrib = contributions_from_runs(RankData.build(col.runs, col.judgments), g, 10)
    >>> study = leave_one_group_out(col.runs, col.judgments, contrib, g, measures="AP,P@10,bpref", pool_depth=10)
    >>> study.table()[["measure", "runs"]].values.tolist()
    [['AP', 4], ['P@10', 4], ['bpref', 4]]
    """
    if not isinstance(contributions, Contributions):
        raise BayevalInputError(f"contributions: expected a Contributions, got {type(contributions).__name__}")
    contributed = set(contributions.groups)

    def reductions(full, study):
        for g in dict.fromkeys(groups.group[r] for r in study):
            reduced = leave_group_out_qrels(qrels, contributions, g) if g in contributed else qrels
            yield g, reduced, tuple(r for r in study if groups.group[r] == g)

    return _study("leave-one-group-out", runs, qrels, groups, reductions, measures=measures, pool_depth=pool_depth,
                  study_runs=study_runs, predictors=predictors, expected_method=expected_method, progress=progress)


def manual_only(runs, qrels: Qrels, contributions: Contributions, groups: RunGroups, *,
                measures=DEFAULT_MEASURES, pool_depth: int = 100, study_runs: Sequence[str] | None = None,
                predictors: Sequence[Predictor] = (), expected_method: str = "exact",
                progress: bool | None = None) -> BiasStudy:
    """Manual-only removal: re-score every run on the qrels without the documents only manual runs contributed.

    The reduced qrels are :func:`~bayeval.bias.reduce.automatic_only_qrels`; every studied run is scored
    on them (and, with ``predictors``, on completed qrels / by expected measures, predicting every
    unjudged document some studied run retrieves within the pool depth). Rank changes, RMS error and
    significance are over the manual runs; Kendall's τ over all runs and over the manual runs (the
    paper's Tables 3 and 8).

    Parameters
    ----------
    runs, qrels, contributions, groups, measures, pool_depth, study_runs, predictors, expected_method, progress
        As :func:`leave_one_group_out`.

    Returns
    -------
    BiasStudy

    Raises
    ------
    BayevalInputError
        When no studied run is manual.

    References
    ----------
    .. [1] S. Büttcher et al., SIGIR 2007, §5.2 "Automatic runs vs. manual runs", Tables 3, 4 and 8.
    """
    if not isinstance(contributions, Contributions):
        raise BayevalInputError(f"contributions: expected a Contributions, got {type(contributions).__name__}")

    def reductions(full, study):
        if not any(groups.kind[r] == "manual" for r in study):
            raise BayevalInputError("groups: no studied run is manual; the manual-only study needs some")
        pooled = pooled_runs(full, pool_depth)
        yield "manual", automatic_only_qrels(qrels, contributions, groups, full, pool_depth, pooled), tuple(study)

    return _study("manual-only", runs, qrels, groups, reductions, measures=measures, pool_depth=pool_depth,
                  study_runs=study_runs, predictors=predictors, expected_method=expected_method, progress=progress)
