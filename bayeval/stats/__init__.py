"""Statistics that judge evaluations, shared by the design, bias and experiments packages.

- :mod:`~bayeval.stats.agreement` — Kendall's τ (τ-b, ties counted as agreeing, or over chosen pairs) and
  RMSE between two scorings of the same systems.
- :mod:`~bayeval.stats.paired` — paired t and Wilcoxon signed-rank tests, many pairs at once.
- :mod:`~bayeval.stats.forecast` — Brier and log score of :math:`P(\\Delta<0)`, reliability bins with
  Wilson intervals, sharpness, and the calls (confidence, correctness) the papers' tables count.
"""

from bayeval.stats.agreement import kendall_tau, pairwise_tau, rmse
from bayeval.stats.forecast import (
    LOG_EPS,
    RELIABILITY_EDGES,
    RELIABILITY_LABELS,
    ForecastScores,
    brier_score,
    calls,
    forecast_scores,
    log_score,
    outcomes,
    reliability_bins,
    sharpness,
    wilson_interval,
)
from bayeval.stats.paired import PAIRED_TESTS, paired_pvalues

__all__ = [
    "LOG_EPS",
    "PAIRED_TESTS",
    "RELIABILITY_EDGES",
    "RELIABILITY_LABELS",
    "ForecastScores",
    "brier_score",
    "calls",
    "forecast_scores",
    "kendall_tau",
    "log_score",
    "outcomes",
    "pairwise_tau",
    "paired_pvalues",
    "reliability_bins",
    "rmse",
    "sharpness",
    "wilson_interval",
]
