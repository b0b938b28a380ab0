"""Statistics that judge evaluations, shared by the design, bias and experiments packages.

- :mod:`~bayeval.stats.agreement` — Kendall's τ (τ-b, ties counted as agreeing, or over chosen pairs) and
  RMSE between two scorings of the same systems.
- :mod:`~bayeval.stats.paired` — paired tests over topics (t, Wilcoxon, randomization, bootstrap), many pairs at
  once, and the t-test with uncertain per-topic differences (topics and relevance in one probability);
- :mod:`~bayeval.stats.multiple` — Bonferroni, Holm and Benjamini–Hochberg adjustments of a family of p-values.
- :mod:`~bayeval.stats.forecast` — Brier and log score of :math:`P(\\Delta<0)`, reliability bins with
  Wilson intervals, sharpness, and the calls (confidence, correctness) the papers' tables count.
- :mod:`~bayeval.stats.quadrature` — Gauss–Laguerre nodes and log-weights (``laguerre_nodes``), shared by
  the exact moments of ``bayeval.expected`` and the anchored estimate of ``bayeval.sampling``.
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
from bayeval.stats.multiple import ADJUSTMENTS, adjust_pvalues
from bayeval.stats.paired import PAIRED_TESTS, RESAMPLES, UncertainT, paired_pvalues, uncertain_paired_t

__all__ = [
    "ADJUSTMENTS",
    "LOG_EPS",
    "PAIRED_TESTS",
    "RESAMPLES",
    "RELIABILITY_EDGES",
    "RELIABILITY_LABELS",
    "ForecastScores",
    "UncertainT",
    "adjust_pvalues",
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
    "uncertain_paired_t",
    "wilson_interval",
]
