"""Statistics that judge evaluations: proper scores of probabilistic forecasts of pairwise order.

- :mod:`~bayeval.stats.forecast` — Brier and log score of :math:`P(\\Delta<0)`, reliability bins with
  Wilson intervals, sharpness, and the calls (confidence, correctness) the papers' tables count.
"""

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

__all__ = [
    "LOG_EPS",
    "RELIABILITY_EDGES",
    "RELIABILITY_LABELS",
    "ForecastScores",
    "brier_score",
    "calls",
    "forecast_scores",
    "log_score",
    "outcomes",
    "reliability_bins",
    "sharpness",
    "wilson_interval",
]
