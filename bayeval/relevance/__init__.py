"""Probabilities of relevance of unjudged documents: Bayesian models with a fast path.

Four models, each with declarative priors (:mod:`bayeval.relevance.config`, ``models/*.toml``),
``build_model()`` (a PyMC model) and ``fit(method=...)`` (``"map"`` — the fast path, Newton/IRLS on
the same log posterior without PyMC —, ``"laplace"``, ``"mcmc"`` (NUTS), ``"vi"``), every fit giving the
same ArviZ InferenceData shape:

- :class:`RankCoefficients` — Bradley–Terry over rank positions per topic;
- :class:`PlattCalibration` — per-system Platt calibration;
- :class:`ExpertAggregation` — logistic expert aggregation (any extra expert columns);
- :class:`SimilarityRegression` — the cluster hypothesis on TF-IDF/embedding similarities;

the composed :class:`RTCEstimator` (rank coefficients → calibration → aggregation), the hierarchical
:class:`HierarchicalEstimator` (RTC's log-odds with learned topic and run effects), the baselines,
:func:`estimate_probabilities`, an automatic assessor's labels as an expert of any of them
(:func:`fit_assessor_map`, :func:`with_assessors`), :func:`bayesian_confidence`, held-out scoring and diagnostics.
PyMC is imported only when a model is built or sampled.
"""

from bayeval.relevance.aggregation import ExpertAggregation
from bayeval.relevance.assessor import AssessorMap, fit_assessor_map, with_assessors
from bayeval.relevance.baselines import smoothed_probabilities, uniform_probabilities
from bayeval.relevance.calibration import PlattCalibration
from bayeval.relevance.confidence import BayesianConfidence, bayesian_confidence, run_effect_draws
from bayeval.relevance.config import (
    AggregationPrior,
    CalibrationPrior,
    HierarchicalConfig,
    HierarchyPrior,
    RankPrior,
    RTCConfig,
    SimilarityConfig,
    SimilarityPrior,
    SmoothedConfig,
    UniformConfig,
    list_configs,
    load_config,
)
from bayeval.relevance.diagnostics import (
    PriorComparison,
    PriorPredictive,
    PriorSensitivity,
    compare_priors,
    prior_predictive_check,
    prior_sensitivity,
    reliability_diagram,
    reliability_table,
)
from bayeval.relevance.estimate import MODEL_KINDS, SimilarityEstimator, estimate_probabilities
from bayeval.relevance.heldout import HeldOutSplit, score_probabilities, shallow_pool_split
from bayeval.relevance.hierarchical import HierarchicalEstimator, HierarchicalFit, HierarchicalRelevance
from bayeval.relevance.prediction_fit import PredictionFit
from bayeval.relevance.rank_coefficients import RankCoefficients
from bayeval.relevance.results import FitResult, RelevanceEstimate
from bayeval.relevance.rtc import RTCEstimator, RTCFit
from bayeval.relevance.similarity import SimilarityRegression

__all__ = [
    "MODEL_KINDS",
    "AggregationPrior",
    "AssessorMap",
    "BayesianConfidence",
    "CalibrationPrior",
    "ExpertAggregation",
    "FitResult",
    "HeldOutSplit",
    "HierarchicalConfig",
    "HierarchicalEstimator",
    "HierarchicalFit",
    "HierarchicalRelevance",
    "HierarchyPrior",
    "PlattCalibration",
    "PredictionFit",
    "PriorComparison",
    "PriorPredictive",
    "PriorSensitivity",
    "RTCConfig",
    "RTCEstimator",
    "RTCFit",
    "RankCoefficients",
    "RankPrior",
    "RelevanceEstimate",
    "SimilarityConfig",
    "SimilarityEstimator",
    "SimilarityPrior",
    "SimilarityRegression",
    "SmoothedConfig",
    "UniformConfig",
    "bayesian_confidence",
    "compare_priors",
    "estimate_probabilities",
    "fit_assessor_map",
    "list_configs",
    "load_config",
    "prior_predictive_check",
    "prior_sensitivity",
    "reliability_diagram",
    "reliability_table",
    "run_effect_draws",
    "score_probabilities",
    "shallow_pool_split",
    "smoothed_probabilities",
    "uniform_probabilities",
    "with_assessors",
]
