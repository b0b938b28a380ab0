"""The methods of the sampling study, one registry (:data:`SAMPLING_STRATEGIES`).

A trial (:class:`SamplingTrial`) holds what every budget shares — the runs, the pool, the truth, the run pairs;
a budget's sample (:class:`BudgetSample`) holds what its methods share, each computed once when a method first
needs it: the model fitted on the sampled judgments, the cross-fitted predictions, the bias-corrected statAP.
Each method turns a budget's sample into a :class:`MethodEstimate` — every run's MAP and every trial pair's ΔMAP
with their variances and P(ΔMAP < 0). What each method is: :mod:`bayeval.experiments.sampling` and
docs/sampling.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from bayeval.data.probabilities import RelevanceProbabilities
from bayeval.data.qrels import Qrels, TopicJudgments
from bayeval.data.rankdata import RankData
from bayeval.data.run import RunSet
from bayeval.data.sample import StratifiedSample
from bayeval.expected import compare_systems, expected_measures
from bayeval.relevance import estimate_probabilities
from bayeval.sampling import (
    AssistedEvaluation,
    anchored_measures,
    assisted_form,
    assisted_measures,
    combine_differences,
    combine_means,
    corrected_measures,
    cross_fitted_predictions,
    power_exponent,
    recalibrate,
)
from bayeval.selection import QrelsAssessor, judge_until, make_selector

__all__ = ["SAMPLING_STRATEGIES", "BudgetSample", "MethodEstimate", "SamplingTrial", "StudyMethod",
           "combined_estimate", "design_estimate", "mtc_judgments", "point_probabilities"]


@dataclass(frozen=True, eq=False)
class SamplingTrial:
    """What every budget of one trial shares.

    Attributes
    ----------
    config : SamplingStudyConfig
    trial : int
    runs : RunSet
    topics : tuple of str
    base : RankData
        The runs without judgments, at the study's depth (the pool: every document some run ranks within it).
    qrels : Qrels
        The collection's judgments.
    truth : Qrels
        The complete judgments of the pool (:func:`bayeval.experiments.sampling.pool_judgments`).
    true_map : ndarray, shape (S,)
        Every run's MAP on ``truth``.
    manual : frozenset of str
        The manual runs.
    pair_a, pair_b : ndarray of int, shape (P,)
        The trial's run pairs (indices into ``runs``).
    """

    config: object
    trial: int
    runs: RunSet
    topics: tuple[str, ...]
    base: RankData
    qrels: Qrels
    truth: Qrels
    true_map: np.ndarray
    manual: frozenset
    pair_a: np.ndarray
    pair_b: np.ndarray

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.runs.names)

    def rank_data(self, judgments: Qrels) -> RankData:
        """The runs with ``judgments``, at the study's depth and on the trial's topics."""
        return RankData.build(self.runs, judgments, depth=self.config.depth, topics=self.topics)

    def fit(self, judgments: Qrels):
        """The study's relevance model fitted by MAP on ``judgments`` (the trial its seed)."""
        return estimate_probabilities(self.rank_data(judgments), self.config.model, fit="map", p_draws=None,
                                      seed=self.trial)


@dataclass(frozen=True)
class MethodEstimate:
    """One method's estimates on one budget's sample.

    Attributes
    ----------
    mean, variance : ndarray, shape (S,)
        Every run's MAP and its variance estimate.
    delta, delta_variance, p_less : ndarray, shape (P,)
        Every trial pair's ΔMAP, its variance estimate and P(ΔMAP < 0).
    judgments : int
        Judgments the method used.
    weight : float
        The weight the method reports (``assisted``: λ on the model; ``combined``: the runs' mean weight on the
        sample's estimate; NaN where none).
    power : float
        ``γ`` of the run intervals' power scale (1: symmetric).
    evaluation : AssistedEvaluation or None
        The design-based evaluation behind the estimates, where there is one (``combined`` reuses
        ``assisted``'s).
    """

    mean: np.ndarray
    variance: np.ndarray
    delta: np.ndarray
    delta_variance: np.ndarray
    p_less: np.ndarray
    judgments: int
    weight: float = np.nan
    power: float = 1.0
    evaluation: AssistedEvaluation | None = None


class BudgetSample:
    """One budget's sample of a trial and what its methods share, each computed once.

    Parameters
    ----------
    trial : SamplingTrial
    index : int
        The budget's place in the study's budgets (it seeds the cross-fitting folds).
    sample : StratifiedSample
    inclusion : dict of str to ndarray
        Every pooled document's inclusion probability, aligned with ``sample[t].docnos``.
    cross_fitted : RelevanceProbabilities, optional
        The cross-fitted predictions, when already computed on this sample (a study that stores its fits).
    known : mapping of str to MethodEstimate, optional
        Methods' estimates already computed on this sample (the same).
    """

    def __init__(self, trial: SamplingTrial, index: int, sample: StratifiedSample,
                 inclusion: dict[str, np.ndarray], *, cross_fitted: RelevanceProbabilities | None = None,
                 known: dict[str, MethodEstimate] | None = None) -> None:
        self.trial = trial
        self.index = int(index)
        self.sample = sample
        self.inclusion = inclusion
        self.n_judged = sum(int(s.sampled.sum()) for s in sample.values())
        self.n_pool = sum(len(s) for s in sample.values())
        self._done: dict[str, MethodEstimate] = dict(known or {})
        if cross_fitted is not None:
            self.__dict__["cross_fitted"] = cross_fitted   # the cached_property's value

    def judged_of(self, sample: StratifiedSample) -> Qrels:
        """The drawn judgments of ``sample`` (this budget's or a fold's) with their inclusion probabilities."""
        return Qrels({t: TopicJudgments(s.docnos[s.sampled], s.grades[s.sampled], self.inclusion[t][s.sampled])
                      for t, s in sample.items()}, self.trial.qrels.relevance_level)

    @cached_property
    def judged(self) -> Qrels:
        return self.judged_of(self.sample)

    @cached_property
    def model_fit(self):
        """The model fitted on every drawn judgment."""
        return self.trial.fit(self.judged)

    @cached_property
    def cross_fitted(self) -> RelevanceProbabilities:
        """Each pooled document's p from the fit on the other folds' drawn judgments."""
        cfg, t = self.trial.config, self.trial.trial
        return cross_fitted_predictions(self.sample, self._fold_fit, folds=max(cfg.folds, 2),
                                        seed=cfg.seed * 1_000_003 + t * 101 + self.index)

    def _fold_fit(self, sample: StratifiedSample) -> RelevanceProbabilities:
        return point_probabilities(self.trial.fit(self.judged_of(sample)))

    @cached_property
    def corrected(self) -> AssistedEvaluation:
        """Bias-corrected statAP (:func:`bayeval.sampling.corrected_measures`)."""
        cfg = self.trial.config
        return corrected_measures(self.trial.runs, self.sample, inclusion=self.inclusion, depth=cfg.depth,
                                  relevance_level=cfg.relevance_level)

    def estimate(self, method: str) -> MethodEstimate:
        """``method``'s estimates on this sample (computed once)."""
        if method not in self._done:
            self._done[method] = SAMPLING_STRATEGIES[method].compute(self)
        return self._done[method]


def point_probabilities(est) -> RelevanceProbabilities:
    """The model's point p of every document it scored (sampled ones included: the prediction, not the label)."""
    return RelevanceProbabilities({t: dict(zip(d, p.tolist(), strict=True))
                                   for t, d, p in zip(est.topics, est.docnos, est.p, strict=True)})


def design_estimate(ev: AssistedEvaluation, b: BudgetSample, power: bool = False) -> MethodEstimate:
    """The estimates of a design-based evaluation on ``b``'s sample: every run's MAP and its variance, the trial
    pairs' paired differences; ``power``: the runs' power-scale exponent (:func:`bayeval.sampling.power_exponent`)
    instead of 1."""
    m, v = ev.mean("AP")
    dd, se, p = ev.differences("AP")
    a, c = b.trial.pair_a, b.trial.pair_b
    gamma = power_exponent(m, np.sqrt(np.maximum(v, 0.0))) if power else 1.0
    return MethodEstimate(m, v, dd[a, c], se[a, c] ** 2, p[a, c], b.n_judged, ev.weight, gamma, ev)


def _model(est, judgments: Qrels, b: BudgetSample, used: int) -> MethodEstimate:
    """The model alone: E and Var of every run's MAP and of the pairs' ΔMAP, P(ΔMAP < 0) (delta method)."""
    data = b.trial.rank_data(judgments)
    evm = expected_measures(data, est, measures="AP", method="delta")
    pairs = list(zip(b.trial.pair_a.tolist(), b.trial.pair_b.tolist(), strict=True))
    cmp = compare_systems(data, est, pairs=pairs, method="delta")
    return MethodEstimate(evm.all_expected[0], evm.all_variance[0], cmp.all_expected, cmp.all_variance,
                          cmp.all_p_less, used)


def _sample(b: BudgetSample) -> MethodEstimate:
    cfg = b.trial.config
    ev = assisted_measures(b.trial.runs, b.sample, None, weight=0.0, inclusion=b.inclusion, cutoffs=(),
                           depth=cfg.depth, variance=cfg.variance, relevance_level=cfg.relevance_level)
    return design_estimate(ev, b)


def _assisted(b: BudgetSample) -> MethodEstimate:
    cfg = b.trial.config
    probs = point_probabilities(b.model_fit) if cfg.folds == 0 else b.cross_fitted
    form = cfg.form if cfg.form != "auto" else assisted_form({t: float(np.sum(v)) for t, v in b.inclusion.items()})
    if form == "anchored":
        ev = anchored_measures(b.trial.runs, b.sample, probs, inclusion=b.inclusion, cutoffs=(), depth=cfg.depth,
                               relevance_level=cfg.relevance_level)
    else:
        ev = assisted_measures(b.trial.runs, b.sample, probs, weight=None, inclusion=b.inclusion, cutoffs=(),
                               depth=cfg.depth, variance=cfg.variance, relevance_level=cfg.relevance_level)
    return design_estimate(ev, b)


def _model_alone(b: BudgetSample) -> MethodEstimate:
    return _model(b.model_fit, b.judged, b, b.n_judged)


def _model_recal(b: BudgetSample) -> MethodEstimate:
    est = recalibrate(b.cross_fitted, b.sample, inclusion=b.inclusion).estimate(b.model_fit)
    return _model(est, b.judged, b, b.n_judged)


def _mtc(b: BudgetSample) -> MethodEstimate:
    tr = b.trial
    names = tr.names
    pairs = [(names[a], names[c]) for a, c in zip(tr.pair_a, tr.pair_b, strict=True)]
    own = mtc_judgments(tr.base, tr.truth, pairs, b.n_judged)
    return _model(tr.fit(own), own, b, sum(len(own[t].docnos) for t in own.topics))


def _sample_bc(b: BudgetSample) -> MethodEstimate:
    return design_estimate(b.corrected, b)


def _sample_bcp(b: BudgetSample) -> MethodEstimate:
    return design_estimate(b.corrected, b, power=True)


def _combined(b: BudgetSample) -> MethodEstimate:
    return combined_estimate(b.estimate("model"), b.estimate("assisted"), b)


def combined_estimate(model: MethodEstimate, assisted: MethodEstimate, b: BudgetSample) -> MethodEstimate:
    """The model alone's and a design-based method's estimates on ``b``'s sample combined by empirical Bayes
    (:func:`bayeval.sampling.combine_differences`, :func:`bayeval.sampling.combine_means`; the study's share and
    run groups)."""
    cfg, tr = b.trial.config, b.trial
    dd, se_a, _ = assisted.evaluation.differences("AP")
    both = combine_differences(dd[tr.pair_a, tr.pair_b], se_a[tr.pair_a, tr.pair_b], model.delta,
                               np.sqrt(np.maximum(model.delta_variance, 0.0)), share=cfg.share)
    groups = np.array([n in tr.manual for n in tr.names]) if cfg.run_groups else None
    runs = combine_means(assisted.mean, assisted.evaluation.covariance["AP"], model.mean,
                         np.sqrt(np.maximum(model.variance, 0.0)), share=cfg.share, groups=groups)
    return MethodEstimate(runs.mean, runs.se ** 2, both.mean, both.se ** 2, both.p_less(), b.n_judged,
                          float(np.mean(runs.weight)))


def mtc_judgments(base: RankData, truth: Qrels, pairs: list[tuple[str, str]], budget: int) -> Qrels:
    """The judgments MTC (the ``mtc`` selector, ΔAP of the target ``pairs``) makes with ``budget`` of them,
    judged from ``truth`` — all of them, even after every pair is decided."""
    selector = make_selector("mtc", base, pairs=pairs, measure="AP")
    judge_until(selector, QrelsAssessor(truth), budget=int(budget), until=lambda sel: False, progress=False)
    return selector.judged_qrels(truth.relevance_level)


@dataclass(frozen=True)
class StudyMethod:
    """A method of the sampling study: ``compute(budget_sample) -> MethodEstimate``; ``first_trial_only``: computed
    in trial 0 only (a deterministic method, whose coverage is then over runs, not samples)."""

    compute: Callable[[BudgetSample], MethodEstimate]
    first_trial_only: bool = False


SAMPLING_STRATEGIES: dict[str, StudyMethod] = {
    "sample": StudyMethod(_sample),
    "model": StudyMethod(_model_alone),
    "assisted": StudyMethod(_assisted),
    "model-recal": StudyMethod(_model_recal),
    "mtc": StudyMethod(_mtc, first_trial_only=True),
    "sample-bc": StudyMethod(_sample_bc),
    "sample-bcp": StudyMethod(_sample_bcp),
    "combined": StudyMethod(_combined),
}
"""The study's methods by name, in the order of :data:`bayeval.experiments.sampling.SAMPLING_METHODS`."""
