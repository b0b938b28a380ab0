"""Estimating measures from judgments sampled at random with known inclusion probabilities.

* :func:`inferred_measures` — xinfAP, infNDCG and iP@k from a stratified sample (Yilmaz, Kanoulas & Aslam,
  SIGIR 2008), exactly as NIST's ``sample_eval.pl`` computes them.
* :func:`stat_measures` — statAP and statP@k with design-based variance estimates from judgments with inclusion
  probabilities (Aslam, Pavlu & Yilmaz, SIGIR 2006).
* :func:`corrected_measures` — statAP with the ratio's second-order bias removed, with the jackknife variance of
  the corrected estimate (the sample alone).
* :func:`power_interval` (:func:`power_exponent`, :func:`power_bounds`) — the interval of a mean whose standard
  error grows with it (as statAP's does), normal on the variance-stabilising power scale ``m^γ``.
* :func:`assisted_measures` — model-assisted (prediction-powered) AP and P@k: a model's predictions for every
  pooled document corrected by the random sample, with design-based variances, covariances and P(Δ < 0).
* :func:`anchored_measures` — AP anchored at a model's expected AP, the terms of its expansion around the
  model's p (up to pairs of documents) estimated from the sample: no random denominator, so it holds at small
  per-topic samples where the ratio estimates are biased.
* :func:`minimum_per_topic`, :func:`assisted_form`, :func:`minimum_notices` — the judgments a topic below which
  each estimator's intervals are not known to hold, and the form of the model-assisted estimate for a sample's
  size (:mod:`bayeval.sampling.sample_sizes`).
* :func:`stratum_rates` — a working model from the sample alone (each stratum's rate in its topic), to anchor
  at without a relevance model.
* :func:`cross_fitted_predictions` — the model's p for each pooled document from a fit on the other folds'
  sampled judgments (K-fold cross-fitting), so that no prediction has seen the judgment that corrects it.
* :func:`evaluate_assisted` — the two above in one call on one's own sample (a stratified sample or prels),
  with non-random judgments that the model may learn from but that never correct it: every run's MAP and
  P@k, every pair's ΔMAP, with design-based intervals and P(Δ < 0).
* :func:`combine_differences`, :func:`combine_means` — the model's estimates and the sample's combined by
  empirical Bayes (Fay & Herriot 1979): each quantity leans on the model as far as the sample says it errs.
* :func:`recalibrate` — the model's p recalibrated on the pool by the random sample (inverse-probability-
  weighted logistic recalibration).

Designs that draw such samples (rank strata, proportional to p): :mod:`bayeval.sampling.design`. How narrow a
model-assisted interval can be with given predictions and design, the truth known: :mod:`bayeval.sampling.oracle`.
Formulas and papers: docs/sampling.md.
"""

from bayeval.sampling.anchored import anchored_measures
from bayeval.sampling.assisted import AssistedEvaluation, assisted_measures
from bayeval.sampling.combined import CombinedEstimate, combine_differences, combine_means
from bayeval.sampling.corrected import corrected_measures
from bayeval.sampling.crossfit import cross_fitted_predictions
from bayeval.sampling.inferred import InferredEvaluation, inferred_measures
from bayeval.sampling.intervals import power_bounds, power_exponent, power_interval
from bayeval.sampling.model_assisted import AssistedResult, evaluate_assisted
from bayeval.sampling.recalibration import Recalibration, recalibrate
from bayeval.sampling.sample_sizes import MINIMUM_PER_TOPIC, assisted_form, minimum_notices, minimum_per_topic
from bayeval.sampling.statistical import StatEvaluation, stat_measures
from bayeval.sampling.stratum_rates import stratum_rates

__all__ = ["MINIMUM_PER_TOPIC", "AssistedEvaluation", "AssistedResult", "CombinedEstimate", "InferredEvaluation",
           "Recalibration", "StatEvaluation", "anchored_measures", "assisted_form", "assisted_measures",
           "combine_differences", "combine_means", "corrected_measures", "cross_fitted_predictions",
           "evaluate_assisted", "inferred_measures", "minimum_notices", "minimum_per_topic", "power_bounds",
           "power_exponent", "power_interval", "recalibrate", "stat_measures", "stratum_rates"]
